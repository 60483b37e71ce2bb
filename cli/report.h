/* cli/report.h: the outputs of `kelvin optimise` / `kelvin evaluate`: trajectory CSV (s, position,
 * normal, offset, speed, time, predicted and verified force), robot waypoints (tool pose per sample),
 * a JSON report (objective terms, evaluations, time per stage, device, agreement) and a figure of
 * target / naive / optimised / verified force along the path. Files are written atomically. */
#ifndef KL_OPTIMISER_REPORT_H
#define KL_OPTIMISER_REPORT_H

#include "cli/cli.h"
#include "optimiser/pipeline.h"

/* Write everything into dir; 0 or -1 (message printed). cfgfile may be NULL (built-in default). */
int kl_report_write(const kl_problem *pb, const kl_opt_result *res, const char *dir, const char *command,
                    const char *device, const char *cfgfile);

/* The summary table on stdout (Markdown). */
void kl_report_print(const kl_problem *pb, const kl_opt_result *res);

#endif
