/* io/table.h: the one CSV reader (RFC 4180) and the CSV inputs built on it: a path as points and
 * normals, a target force profile, a pass (s, offset, speed). Every message is one line naming the
 * file, the line and the column: "path.csv:12: column 'nz': must be a finite number, got '1x'".
 *
 * The format: a header row naming the columns, then data rows with as many fields; fields separated by
 * commas, records by LF or CRLF; a field may be quoted ("a, b" with "" for a quote, line breaks
 * allowed); a UTF-8 byte order mark is skipped; blanks around an unquoted field are trimmed; lines
 * starting with '#' before the header are a preamble and skipped (kelvin's own outputs have none);
 * blank lines are skipped. Errors, never guesses: an empty field, a row with more or fewer fields than
 * the header, a quote inside an unquoted field, text after a closing quote, an unterminated quote, a
 * stray carriage return, more rows than the reader's limit. No line-length limit. Numbers are strict:
 * the whole field must be a finite decimal number ("0.0004abc", "inf", "nan", "0x10" are refused). */
#ifndef KL_IO_TABLE_H
#define KL_IO_TABLE_H

#include <stddef.h>

#include "kelvin/kelvin.h"

#define KL_CSV_MAX_COLS 1024
#define KL_CSV_MAX_BYTES (1L << 30) /* file size */
#define KL_CSV_MAX_ROWS 1000000L    /* default row limit of the path, target and pass readers */

/* One row: n fields, NUL-terminated (quotes removed); the line it starts on; index 0 is the header. */
typedef struct kl_csv_row {
  int n;
  const char *const *f;
  long line;
  long index;
} kl_csv_row;

/* Called for the header and each data row; returns KELVIN_OK to go on, anything else stops the parse
 * with that status (the callback wrote msg; the parser makes it one line, as a field it echoes may hold
 * a line break). */
typedef kelvin_status (*kl_csv_fn)(void *ctx, const kl_csv_row *row, char *msg, int cap);

/* Parse text (len bytes; name stands for the file in messages), at most max_rows data rows. */
kelvin_status kl_csv_parse_mem(const char *name, const char *text, size_t len, long max_rows, kl_csv_fn fn, void *ctx,
                               char *msg, int cap);

/* The same on a file (a regular file of at most KL_CSV_MAX_BYTES). KELVIN_ERR_IO if it cannot be read. */
kelvin_status kl_csv_parse_file(const char *path, long max_rows, kl_csv_fn fn, void *ctx, char *msg, int cap);

/* A column a reader wants: the names it accepts (kelvin's output name with its unit first, e.g.
 * {"s_m", "s", NULL}), whether it is required; idx is set by kl_csv_columns (-1: absent). */
typedef struct kl_csv_col {
  const char *const *names;
  int required;
  int idx;   /* column index, -1: absent */
  int which; /* which of names the header used (messages name the column as the file does) */
} kl_csv_col;

/* Find each column in the header row; a column given twice or a required one missing is an error naming
 * the accepted names. Other columns are ignored. */
kelvin_status kl_csv_columns(const char *file, const kl_csv_row *header, kl_csv_col *cols, int ncols, char *msg,
                             int cap);

/* The number in column col of row, strictly (see above). */
kelvin_status kl_csv_number(const char *file, const kl_csv_row *row, const kl_csv_col *col, double *out, char *msg,
                            int cap);

/* Strict finite decimal number from the whole of s; 0 ok, -1 otherwise. */
int kl_parse_number(const char *s, double *out);

/* Path rows (columns x_m|x, y_m|y, z_m|z, nx, ny, nz; others ignored): *npt points into malloc'd
 * (npt x 3) arrays *pts [m] and *nrms (unit normals within tol_n), and, if lines is not NULL, each
 * point's line. At least 2 rows, not all at one point; every coordinate within +-KL_PATH_MAX_COORD m.
 * KELVIN_ERR_CONFIG/IO/NOMEM with a message naming the file and line; arrays NULL on failure. */
#define KL_PATH_MAX_COORD 1e3 /* m: a path point's coordinates (a kilometre: far beyond any robot's reach) */
kelvin_status kl_read_path_csv(const char *path, double tol_n, int *npt, double **pts, double **nrms, long **lines,
                               char *msg, int cap);

/* Target rows (columns s_m|s, target_N|force_N|force): *n samples into malloc'd *s [m] (increasing) and
 * *F [N] (> 0). */
kelvin_status kl_read_target_csv(const char *path, int *n, double **s, double **F, char *msg, int cap);

/* A pass (columns s_m|s, offset_m|offset, speed_m_s|speed; kelvin's trajectory.csv reads as it is):
 * *n rows into malloc'd *s [m] (increasing), *o [m], *v [m/s] (> 0), and each row's line in *lines. */
kelvin_status kl_read_pass_csv(const char *path, int *n, double **s, double **o, double **v, long **lines, char *msg,
                               int cap);

#endif
