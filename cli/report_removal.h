/* cli/report_removal.h: the outputs of `kelvin optimise` / `kelvin evaluate` on a config with a removal:
 * section (kelvin/removal.h, docs/design.md section 9): the removed depth and the surface error as grids
 * (removal.csv, surface.csv), each pass's commands and forces along the path (passes.csv), the track's
 * height before and after each pass (profile.csv), report.json and the figures removal.png, surface.png
 * and profile.png. Files are written atomically, into the run's output transaction (cli/cli.h). */
#ifndef KL_CLI_REPORT_REMOVAL_H
#define KL_CLI_REPORT_REMOVAL_H

#include <kelvin/removal.h>

#include "cli.h"

/* 1 if the loaded config asks for material removal (removal.preston > 0), else 0. */
int kl_removal_active(const kelvin_grind *g);

/* Write the removal outputs of the last kelvin_grind_plan or kelvin_grind_evaluate into dir; 0 or -1
 * (message printed). cfgfile may be NULL (built-in default). c: for the notices (gnuplot missing). */
int kl_removal_write(const kelvin_grind *g, const char *dir, const char *command, const char *device,
                     const char *cfgfile, const kl_cli_common *c);

/* The outputs of the other kind (removal 1: the force-tracking run's trajectory.csv, waypoints.csv,
 * COMMAND.png, ...; removal 0: removal.csv, surface.csv, ...) that an earlier run left in dir: removed
 * with the run's commit (kl_out_remove), so that no stale output stays beside the new ones. 0 or -1. */
int kl_removal_stale(const char *dir, const char *command, int removal);

/* The summary on stdout: one line per plan and level (the device model's prediction, the 3-D engine's). */
void kl_removal_print(const kelvin_grind *g);

#endif
