/* kelvin/robust.h: robust passes over the parts and process conditions a cell really gets (docs/design.md
 * section 10).
 *
 * The uncertainty.* settings (examples/optimise.yaml lists them) give distributions (normal, uniform, truncated
 * normal) of the part's registration, its weld bead and step, its roughness realisation, the moduli, the holder,
 * the tool's mass and radius and the restitution. A scenario is one draw of all of them: its own part, with its
 * own protrusion into the tool along the nominal path, and its own constants.
 *
 *   kelvin_grind_optimise  (kelvin/grind.h) with uncertainty.objective other than nominal (mean, mean_std, cvar,
 *                          worst, chance) and uncertainty.scenarios > 0 refines, after the nominal optimum, a
 *                          robust pass on that objective over the optimisation set (common random numbers:
 *                          every candidate sees the same scenarios; each NLopt evaluation is one device batch of
 *                          candidates x scenarios; optimiser.method nlopt). The pass "robust" is then the best
 *                          (kelvin_grind_best) and kelvin_grind_robust_pass names both. Then, unless
 *                          uncertainty.verify_scenarios is 0, it runs kelvin_grind_check on them.
 *   kelvin_grind_check     the out-of-sample check of the result's passes: a fresh scenario set (its own seed,
 *                          uncertainty.verify_seed; disjoint from the optimisation set by construction), each pass
 *                          rolled out on every scenario on the device and run in the 3-D engine on every
 *                          scenario's own part; per pass the distribution of its RMS force error, peak force and
 *                          contact loss, and the share of scenarios whose force stays in the band
 *                          [uncertainty.force_min, uncertainty.force_max] along the whole pass.
 *
 * Sources: 0 the device's 1-D model, 1 the 3-D engine. Errors are fractions of F_ref (the mean target). */
#ifndef KELVIN_ROBUST_H
#define KELVIN_ROBUST_H

#include <kelvin/grind.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KELVIN_CHECK_MAXPASS 4

/* After kelvin_grind_optimise: the nominal optimum (*nominal) and the robust pass (*robust) of a robust run, -1
 * each otherwise (outputs nullable); returns 1 for a robust run, else 0. */
KELVIN_API int kelvin_grind_robust_pass(const kelvin_grind *g, int *nominal, int *robust);

/* The robust objective of a pass over the optimisation set (NaN: not a robust run, or a bad index). */
KELVIN_API double kelvin_grind_pass_robust(const kelvin_grind *g, int pass);

/* Check the result's passes out of sample on scenarios fresh scenarios (0: uncertainty.verify_scenarios) on dev
 * and, with with_3d, in the 3-D CPU engine: after a robust run its nominal optimum and robust pass; otherwise the
 * best pass (after kelvin_grind_evaluate: "user"). Replaces an earlier check. Progress and stop as for
 * kelvin_grind_optimise (a tick per scenario batch of the 3-D runs). A 3-D run that fails on a scenario (its
 * engine diverges) is counted (kelvin_grind_check_failed) and out of the band, not an error. KELVIN_ERR_ARG
 * without results or with scenarios < 0; KELVIN_ERR_CONFIG for uncertainty settings that cannot be drawn (the
 * message names the key); the device's failures; KELVIN_ERR_STOPPED. */
KELVIN_API kelvin_status kelvin_grind_check(kelvin_grind *g, kelvin_device *dev, int scenarios, int with_3d);

/* The passes the last check covers into passes (KELVIN_CHECK_MAXPASS, nullable); their count, 0 without a check. */
KELVIN_API int kelvin_grind_check_passes(const kelvin_grind *g, int *passes);

/* Its scenarios (0 without a check), and the 3-D runs that failed (the first's message in *why, nullable; valid
 * until the next run). */
KELVIN_API int kelvin_grind_check_scenarios(const kelvin_grind *g);
KELVIN_API int kelvin_grind_check_failed(const kelvin_grind *g, const char **why);

/* The 3-D runs of the last check this process made: all of them (passes x scenarios) alone, its share of them on a
 * device with a shard (kelvin/shard.h); 0 without a check or 3-D runs. */
KELVIN_API int kelvin_grind_check_local(const kelvin_grind *g);

/* Wall time [s] of the last check's part on the device (source 0: drawing, preparing and rolling out the
 * scenarios) or in the 3-D engine (source 1); 0 without a check or 3-D runs. */
KELVIN_API double kelvin_grind_check_seconds(const kelvin_grind *g, int source);

typedef enum kelvin_check_metric {
  KELVIN_CHECK_RMS = 0, /* RMS force error over the samples, fraction of F_ref */
  KELVIN_CHECK_PEAK,    /* the largest scored force [N] */
  KELVIN_CHECK_LEAST,   /* the smallest scored force [N] */
  KELVIN_CHECK_LOSS,    /* share of the pass time out of contact */
  KELVIN_CHECK_BAND     /* 1 if the force stayed within the band along the whole pass, else 0 */
} kelvin_check_metric;

/* A metric of pass (an index among kelvin_grind_check_passes) from source on every scenario, into out
 * (kelvin_grind_check_scenarios values; NaN where a 3-D run failed). KELVIN_ERR_ARG for a bad pass, source or
 * metric, or without a check (or 3-D values of a device-only check). */
KELVIN_API kelvin_status kelvin_grind_check_values(const kelvin_grind *g, int pass, int source,
                                                   kelvin_check_metric m, double *out);

/* The scored force of pass from source at every sample on every scenario: out[s ns + k] (scenarios x ns). */
KELVIN_API kelvin_status kelvin_grind_check_force(const kelvin_grind *g, int pass, int source, double *out);

/* A metric's distribution over the scenarios (failed runs left out): mean, median, P95 (the ceil(0.95 S)-th
 * smallest value) with its 95 % distribution-free confidence interval, and the worst. */
typedef struct kelvin_check_summary {
  double mean, p50, p95, p95_lo, p95_hi, worst;
  int n; /* scenarios counted */
} kelvin_check_summary;

KELVIN_API kelvin_status kelvin_grind_check_summary(const kelvin_grind *g, int pass, int source,
                                                    kelvin_check_metric m, kelvin_check_summary *out);

/* The share of scenarios whose force stayed in the band along the whole pass (failed runs count as out), with its
 * 95 % Wilson score interval; and the band [N] itself (outputs nullable). */
KELVIN_API kelvin_status kelvin_grind_check_band(const kelvin_grind *g, int pass, int source, double *share,
                                                 double *lo, double *hi, double band[2]);

#ifdef __cplusplus
}
#endif
#endif
