/* io/slurp.h: a whole input file into memory, with the checks every reader shares: a regular file
 * (not a folder, FIFO or device: /dev/zero would never end) of at most a stated size. */
#ifndef KL_IO_SLURP_H
#define KL_IO_SLURP_H

#include <stddef.h>

#include "kelvin/kelvin.h"

/* Read path into a malloc'd, NUL-terminated *text of *len bytes (the file may hold NUL bytes: use len).
 * KELVIN_ERR_IO (cannot open or read: why says so), KELVIN_ERR_CONFIG (not a regular file, or more than
 * max bytes: why names the limit), KELVIN_ERR_NOMEM. why (cap bytes) holds no file name. */
kelvin_status kl_io_slurp(const char *path, long max, char **text, size_t *len, char *why, size_t cap);

/* Open path for reading, checked: stat first (a FIFO, device, socket or folder is refused before it is
 * opened, so nothing blocks), then open with O_NONBLOCK and fstat what was opened (the file may have been
 * replaced in between), at most max bytes. *fd (blocking again) and *size on KELVIN_OK; the caller closes.
 * KELVIN_ERR_IO (cannot open: why says so), KELVIN_ERR_CONFIG (not a regular file: why names what it is;
 * more than max bytes: why names the limit). why holds no file name. */
kelvin_status kl_io_open(const char *path, long max, int *fd, long long *size, char *why, size_t cap);

/* Make msg one line: line breaks, tabs and other control characters (from a file's text or a library's
 * message) become spaces, trailing blanks go. Returns msg. */
char *kl_msg_oneline(char *msg);

#endif
