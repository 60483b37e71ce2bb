/* optimiser/removal.h: material removal on a grinding path (docs/design.md section 9, "Material removal"):
 * the part's surface near the path as a height field that passes lower, Preston's law with the Hertz
 * pressure over the contact patch (the law itself is kernels/kl_removal.h, shared by the device model's
 * deposit here and the 3-D engine's in optimiser/verify3d.c), and what a pass leaves.
 *
 * The grid is laid in path coordinates: u along the path's arc length s, w across it along the binormal
 * b = n x t at the nearest path sample (w > 0 to the left of the motion, seen from outside the part). Cell
 * (i, j), i = 0..nu-1, j = 0..nw-1, has its centre at u_i = i du, w_j = (j - (nw - 1) / 2) dw, so row
 * j = (nw - 1) / 2 (nw is odd) is the path itself. Heights are along the nominal normal n at the path
 * point at u_i. Three numbers per cell (nu x nw, index i * nw + j):
 *   stock   the actual part's height above the target surface before any removal [m]: the actual
 *           surface (the mesh of the prepared problem) above the CAD along n, minus removal.allowance;
 *   removed the depth removed so far along n [m] (>= 0);
 *   error   stock - removed: above the target (> 0, residual) or below it (< 0, a gouge) [m].
 * The tool's protrusion into the evolved part at path sample k is the prepared problem's h[k] plus the
 * drop kl_surface_drop (<= 0): the rigid tool lowered onto the removed cells under it. */
#ifndef KL_OPTIMISER_REMOVAL_H
#define KL_OPTIMISER_REMOVAL_H

#include "kelvin/kelvin.h"
#include "optimiser/problem.h"

/* The removal law's constants of a problem (from removal.*, tool.* and the materials). */
typedef struct kl_removal_law {
  double kp;        /* Preston's coefficient k_p [m^2/N] (removal.preston) */
  double omega;     /* spindle speed [rad/s] (tool.spindle_rpm * 2 pi / 60) */
  double rc;        /* the tool's radius at the contact about the spindle axis [m]: R sin(lead) for a ball-end
                     * spinning about its axis tilted by tool.lead_deg, R for a disc */
  double R;         /* tool radius [m] (the ball's, or the disc's) */
  double L;         /* disc width [m] (0: a ball-end, point contact) */
  double Es;        /* the contact's effective modulus E* [Pa] */
  double G;         /* grinding ratio, removed volume / worn tool volume (removal.grinding_ratio; 0: no wear) */
} kl_removal_law;

/* The height field. */
typedef struct kl_surface {
  int nu, nw;           /* cells along the path and across it (nw odd) */
  double du, dw;        /* spacing [m] */
  double *stock;        /* (nu x nw) [m] */
  double *removed;      /* (nu x nw) [m] */
  double tool_R;        /* the tool's radius now (shrinks with wear) [m] */
  double *bound;        /* private to optimiser/removal.c (NULL: computed on the fly): per row, upper bounds of stock
                         * (nu) and of stock - removed (nu), then the largest stock (1) */
} kl_surface;

/* The law of the prepared problem pb (its settings' removal section). KELVIN_ERR_CONFIG with a message
 * naming the key if the section is incomplete (removal.preston or tool.spindle_rpm not set). */
kelvin_status kl_removal_law_of(const kl_problem *pb, kl_removal_law *law, char *msg, int cap);

/* A grid over the whole path (u from 0 to pb->length) and across it to +-removal.width / 2 at
 * removal.resolution (the defaults derived from the Hertz patch at target.max_force: documented in
 * optimiser/schema.c), its stock sampled from pb->actual. KELVIN_ERR_CONFIG (a grid over the cell limit,
 * a cell off the part), KELVIN_ERR_NOMEM. */
kelvin_status kl_surface_init(const kl_problem *pb, const kl_removal_law *law, kl_surface *sf, char *msg, int cap);
kelvin_status kl_surface_copy(const kl_surface *from, kl_surface *to); /* deep copy; KELVIN_ERR_NOMEM */
void kl_surface_free(kl_surface *sf);                                  /* NULL-safe; leaves sf zeroed */

/* The drop (<= 0) [m] of the tool's protrusion over the evolved surface with the tool centre above the
 * path at arc length s: where the rigid tool first touches the evolved surface, max over the cells under it
 * of (stock - removed - rho^2 / (2 R)), less the same over the surface before any removal (stock alone);
 * rho is the cell's distance from the tool's axis point (ball), or its distance along the path (disc,
 * cells across its width only). 0 where nothing has been removed. */
double kl_surface_drop(const kl_surface *sf, const kl_removal_law *law, double s);

/* The drop (as kl_surface_drop) and, into *slope (nullable), its derivative in s [m/m]: each first touch is
 * its cell's (stock - removed) - (u_i - s)^2 / (2 R) (stock alone before any removal), so the slope is
 * (u_now - u_before) / R, u_now and u_before the touching cells' places along the path (0 where the drop is 0).
 * Exact between the places where the touching cell changes (where the drop has a kink). */
double kl_surface_drop_slope(const kl_surface *sf, const kl_removal_law *law, double s, double *slope);

/* The drop (kl_surface_drop) at each of pb's samples, into drop (ns). */
void kl_surface_drops(const kl_problem *pb, const kl_surface *sf, const kl_removal_law *law, double *drop);

/* The protrusion h (ns) and dh/ds (ns) of pb's tool into the evolved part from the drops (ns) per sample (of one
 * surface, kl_surface_drops; or each taken on the surface as the tool reaches its sample: the pass's own carving,
 * docs/design.md section 9.4): h = pb->h + drop, dh/ds by centred differences. h may be drop. */
void kl_protrusion_of_drop(const kl_problem *pb, const double *drop, double *h, double *dh);

/* The law at the surface's worn radius: where sf carries one (sf->tool_R > 0) that differs from law's, law's
 * radius and its r_c (in proportion) become it. */
void kl_surface_worn_law(const kl_surface *sf, kl_removal_law *law);

/* Deposit the removal of the contact force F [N] (constant over the move) while the tool's axis point moves
 * from (u0, w0) to (u1, w1) in dt seconds, in sub-steps of at most a quarter of the Hertz contact radius:
 * at each, the pressure over the cells is p = C sqrt(overlap), overlap the rigid tool's interference with
 * the evolved surface when lowered from its first touch by the flat-part Hertz approach a^2 / (2 R) (a the
 * Hertz radius at F; the disc: the half-width b of the line contact), C such that p integrates to F over
 * the cells. On a flat part this is Hertz's p0 sqrt(1 - r^2 / a^2) exactly; on a groove the pressure goes
 * where the tool touches. Each cell gets k_p p v_rel per unit time (kernels/kl_removal.h), v_rel = omega rc
 * + |move| / dt, and the surface changes as the tool moves. Where a sub-step's k_p F v_rel dt is more than the
 * material inside the tool lowered by the approach, the removal is geometry-limited: the tool sinks until the
 * material above its profile is that volume and carves it (docs/design.md section 9.1). Returns the volume the
 * law removes, k_p F v_rel dt [m^3] (what volume conservation checks the grid against; NaN out of memory). With wear (G > 0) the tool radius
 * shrinks by the worn volume (removed / G) spread over the tool's working band (docs/design.md section 9). */
double kl_surface_deposit(kl_surface *sf, kl_removal_law *law, double F, double u0, double w0, double u1, double w1,
                          double dt);

/* Deposit a pass the device model predicted: the step-averaged contact force favg and the times t at
 * the ns samples (the rollout's KL_SO_FAVG and KL_SO_T), the patch sliding along the path from sample
 * k - 1 to k. Returns the volume by the law (as kl_surface_deposit). */
double kl_surface_deposit_pass(kl_surface *sf, kl_removal_law *law, const kl_problem *pb, const double *favg,
                               const double *t);

/* What a surface leaves against its target. The track is the path's row (w = 0) and its neighbours within
 * the Hertz contact radius at target.force (the disc: its width): the residual is judged there; the gouge
 * over the whole grid. */
typedef struct kl_surface_stats {
  double residual_rms, residual_max; /* error above the target along the track: RMS of max(error, 0), max [m] */
  double gouge;                      /* the deepest the removal went below the target over the grid, as a depth
                                      * >= 0 [m]: the largest removed - max(stock, 0) (a part already below its
                                      * target is not a gouge until something is removed there) */
  double volume;                     /* removed volume over the grid, sum of removed x du dw [m^3] */
  double removed_max;                /* the deepest removal [m] */
} kl_surface_stats;

/* The track's half-width across the path in cells: the rows j with |j - (nw - 1) / 2| <= this are the track
 * (the Hertz contact radius at target.force on the tool's radius now; the disc: half its width). */
int kl_surface_track(const kl_surface *sf, const kl_removal_law *law, const kl_problem *pb);

void kl_surface_stats_of(const kl_surface *sf, const kl_removal_law *law, const kl_problem *pb, kl_surface_stats *st);

#endif
