/* io/slurp.c: see slurp.h. */
#include "io/slurp.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *kl_msg_oneline(char *msg)
{
  if (!msg) return msg;
  size_t n = 0;
  for (unsigned char *p = (unsigned char *)msg; *p; ++p, ++n)
    if (*p < 0x20 || *p == 0x7f) *p = ' ';
  while (n && msg[n - 1] == ' ') msg[--n] = '\0';
  return msg;
}

/* what a non-regular file is, for the message */
static const char *kind(mode_t m)
{
  return S_ISFIFO(m) ? "a FIFO" : S_ISDIR(m) ? "a folder" : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
         : S_ISSOCK(m)  ? "a socket"
                        : "not a plain file";
}

kelvin_status kl_io_open(const char *path, long max, int *fd, long long *size, char *why, size_t cap)
{
  *fd = -1;
  *size = 0;
  /* stat first: a FIFO or a device is refused before it is opened (opening a FIFO for reading blocks
   * until a writer comes; reading /dev/zero never ends). docs/design.md section 8.1 */
  struct stat sb;
  if (stat(path, &sb) != 0) {
    snprintf(why, cap, "cannot read: %s", strerror(errno));
    return KELVIN_ERR_IO;
  }
  if (!S_ISREG(sb.st_mode)) {
    snprintf(why, cap, "not a regular file (%s)", kind(sb.st_mode));
    return KELVIN_ERR_CONFIG;
  }
  /* the file may be replaced between stat and open: O_NONBLOCK so that a FIFO put there does not block
   * the open, then fstat on what was opened */
  const int d = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (d < 0) {
    snprintf(why, cap, "cannot read: %s", strerror(errno));
    return KELVIN_ERR_IO;
  }
  if (fstat(d, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    close(d);
    snprintf(why, cap, "not a regular file (%s)", kind(sb.st_mode));
    return KELVIN_ERR_CONFIG;
  }
  if (sb.st_size > max) {
    close(d);
    snprintf(why, cap, "the file is %lld bytes, more than the limit of %ld", (long long)sb.st_size, max);
    return KELVIN_ERR_CONFIG;
  }
  const int fl = fcntl(d, F_GETFL);
  if (fl >= 0) (void)fcntl(d, F_SETFL, fl & ~O_NONBLOCK);
  *fd = d;
  *size = (long long)sb.st_size;
  return KELVIN_OK;
}

kelvin_status kl_io_slurp(const char *path, long max, char **text, size_t *len, char *why, size_t cap)
{
  *text = NULL;
  *len = 0;
  int d;
  long long size;
  const kelvin_status os = kl_io_open(path, max, &d, &size, why, cap);
  if (os != KELVIN_OK) return os;
  FILE *f = fdopen(d, "rb");
  if (!f) {
    close(d);
    snprintf(why, cap, "cannot read: %s", strerror(errno));
    return KELVIN_ERR_IO;
  }
  size_t n = 0, room = (size_t)size + 1;
  char *buf = malloc(room + 1);
  if (!buf) {
    fclose(f);
    snprintf(why, cap, "out of memory");
    return KELVIN_ERR_NOMEM;
  }
  /* the file may grow while read: read to its end, within the limit */
  for (;;) {
    const size_t r = fread(buf + n, 1, room - n, f);
    n += r;
    if (r == 0) break;
    if (n == room) {
      if ((long)n > max) {
        free(buf);
        fclose(f);
        snprintf(why, cap, "the file is more than the limit of %ld bytes", max);
        return KELVIN_ERR_CONFIG;
      }
      room *= 2;
      char *b2 = realloc(buf, room + 1);
      if (!b2) {
        free(buf);
        fclose(f);
        snprintf(why, cap, "out of memory");
        return KELVIN_ERR_NOMEM;
      }
      buf = b2;
    }
  }
  const int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    snprintf(why, cap, "read error");
    return KELVIN_ERR_IO;
  }
  buf[n] = '\0';
  *text = buf;
  *len = n;
  return KELVIN_OK;
}
