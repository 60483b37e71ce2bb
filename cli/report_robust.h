/* cli/report_robust.h: the outputs of a robust run or an out-of-sample check (kelvin/robust.h, docs/design.md
 * section 10): robust.csv (every pass, source and scenario), robust_bands.csv (the force's percentiles along the
 * path), robust.png (the bands of each pass and the histogram of its peak force), the "check" object of
 * report.json and the summary table on stdout. Files are written atomically, into the run's transaction. */
#ifndef KL_CLI_REPORT_ROBUST_H
#define KL_CLI_REPORT_ROBUST_H

#include <kelvin/robust.h>

#include "cli.h"

/* Write robust.csv, robust_bands.csv and robust.png into dir when the results have a check (else nothing);
 * 0 or -1 (message printed). */
int kl_robust_write(const kelvin_grind *g, const char *dir, const kl_cli_common *c);

/* The check's object for report.json (nothing without a check). */
struct cJSON;
void kl_robust_json(const kelvin_grind *g, struct cJSON *doc);

/* The summary on stdout (nothing without a check). */
void kl_robust_print(const kelvin_grind *g);

#endif
