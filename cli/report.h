/* cli/report.h: the outputs of `kelvin optimise` / `kelvin evaluate`, from the results of a kelvin_grind
 * run (kelvin/grind.h): trajectory CSV (s, position, normal, offset, speed, time, predicted and verified
 * force), robot waypoints (tool pose per sample), a JSON report (objective terms, evaluations, time per
 * stage, device, agreement) and a figure of target / naive / optimised / verified force along the
 * path. Files are written atomically. */
#ifndef KL_OPTIMISER_REPORT_H
#define KL_OPTIMISER_REPORT_H

#include <kelvin/grind.h>

#include "cli.h"

/* Write everything into dir; 0 or -1 (message printed). cfgfile may be NULL (built-in default). */
int kl_report_write(const kelvin_grind *g, const char *dir, const char *command, const char *device, const char *cfgfile);

/* The summary table on stdout (Markdown). */
void kl_report_print(const kelvin_grind *g);

/* 1 if the scored measure (target.measure) is the wrist sensor's, 0 the contact force's; *avg (nullable)
 * 1 if it is step-averaged. */
int kl_report_measure(const kelvin_grind *g, int *avg);

/* The correction stage's line below the table (kelvin optimise; nothing when it did not run). */
void kl_report_correction(const kelvin_grind *g);

/* What every report.json of optimise / evaluate starts with (this one and report_removal.c's): the command,
 * kl_json_meta's version, command line and config (or "(built-in default)"), and the device. */
struct cJSON;
void kl_report_json_head(struct cJSON *d, const char *command, const char *device, const char *cfgfile);

/* A number under key k of o, null when not finite. */
void kl_report_num(struct cJSON *o, const char *k, double v);

/* A number setting as the prepared problem uses it (derived defaults filled in); NaN if unknown. */
double kl_report_setting(const kelvin_grind *g, const char *key);

#endif
