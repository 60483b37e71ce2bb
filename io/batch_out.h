/* io/batch_out.h: an impact batch's scenarios and results as one table file (docs/design.md section 8):
 * CSV (a header row, then one row per scenario) or HDF5 (one chunked, shuffled and deflated dataset per
 * column), with the same columns, in the same order, under the same names and units. Both are written
 * to a temporary beside the target ("<path>.tmp.<pid>") and renamed into place only when whole; a
 * failure or a stop removes the temporary. Prints nothing. */
#ifndef KL_IO_BATCH_OUT_H
#define KL_IO_BATCH_OUT_H

#include <stddef.h>

#include "host/impact_batch.h"
#include "kelvin/kelvin.h"

/* One column of the table: its name (the CSV header's), its unit and a line on its meaning. */
typedef struct kl_batch_col {
  const char *name, *unit, *doc;
} kl_batch_col;

#define KL_BATCH_NCOL 22
extern const kl_batch_col kl_batch_cols[KL_BATCH_NCOL];

/* x as printf's "%.17g" writes it (17 significant digits: every double reads back exactly) into buf
 * (at least 32 bytes), NUL-terminated; the length. */
int kl_fmt_double(char *buf, double x);

/* The status word as text: "ok", or the names of its bits joined by '|' ("bad_cr|no_converge"). buf
 * holds at least KL_STATUS_TEXT_MAX bytes; returns buf. */
#define KL_STATUS_TEXT_MAX 128
const char *kl_status_text(int status, char *buf);

/* Write every row of b to path as CSV or HDF5. fn (nullable) is called after each block of rows with
 * the fraction done and "writing NAME: N of P rows"; a nonzero return stops: KELVIN_ERR_STOPPED and no
 * file. KELVIN_ERR_IO (the message names the file and the reason), KELVIN_ERR_NOMEM. */
kelvin_status kl_batch_write_csv(const kl_impact_batch *b, const char *path, kelvin_progress_fn fn, void *ctx,
                                 char *msg, int cap);
kelvin_status kl_batch_write_hdf5(const kl_impact_batch *b, const char *path, kelvin_progress_fn fn, void *ctx,
                                  char *msg, int cap);

#endif
