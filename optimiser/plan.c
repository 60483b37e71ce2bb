/* optimiser/plan.c: passes planned to a target surface (plan.h; docs/design.md section 9.4). */
#include "optimiser/plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "kernels/kl_contact_static.h"
#include "kernels/kl_removal.h"
#include "optimiser/lm.h"
#include "optimiser/progress.h"
#include "optimiser/verify3d.h"

#define NTRIAL 1 /* candidates per batch of the run's own predictions */

//------------------------------------------------------------------------------------------------------
// the flat-part relations (docs/design.md section 9.4)

void kl_plan_limits_of(const kl_problem *pb, kl_plan_limits *lim)
{
  lim->tol = pb->set.rm_tolerance;
  lim->gouge = pb->set.rm_gouge;
  lim->max_passes = pb->set.rm_max_passes;
}

/* The removed cross-section per unit length of a pass is exactly A = k_p F v_rel / v (the law's volume, whatever
 * the pressure's shape). Its depth d at the centre: the disc spreads it over its width, d = A / L; under the ball
 * it is the parabola d (1 - w^2 / c^2) across the path, c^2 = a^2 + 2 R d (a the Hertz radius at F), so that
 * A = (4/3) d sqrt(a^2 + 2 R d): Hertz's (pi p0 / 2a)(a^2 - w^2) on a flat part (d << a^2 / 2R, the flat-part
 * depth 3F/(4a) k_p v_rel / v), the rigid ball's own groove d - w^2 / 2R once the pass cuts deeper than the
 * Hertz approach (docs/design.md section 9.4). */
static double area_of_depth(const kl_removal_law *law, double R, double F, double d)
{
  if (law->L > 0) return d * law->L;
  const double a = kl_removal_hertz_a(F, R, law->Es);
  return 4.0 / 3.0 * d * sqrt(a * a + 2.0 * R * d);
}

double kl_plan_flat_depth(const kl_removal_law *law, double R, double F, double v)
{
  if (!(F > 0)) return 0.0;
  const double A = law->kp * F * kl_removal_vrel(law->omega, law->rc, v) / v;
  if (law->L > 0) return A / law->L;
  /* bisection on d in [0, the flat-part depth] (area_of_depth is increasing in d and >= (4/3) d a) */
  double lo = 0, hi = 0.75 * A / kl_removal_hertz_a(F, R, law->Es);
  for (int i = 0; i < 200 && hi - lo > 1e-15 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (area_of_depth(law, R, F, mid) < A) lo = mid;
    else hi = mid;
  }
  return 0.5 * (lo + hi);
}

double kl_plan_flat_force(const kl_removal_law *law, double R, double depth, double v)
{
  if (!(depth > 0)) return 0.0;
  const double q = law->kp * kl_removal_vrel(law->omega, law->rc, v) / v; /* A = q F */
  if (law->L > 0) return depth * law->L / q;
  /* q F = area_of_depth(F, depth): q F grows linearly, the area as F^(1/3) at most; bisection from the groove's
   * own area (a = 0), a lower bound */
  double lo = area_of_depth(law, R, 0.0, depth) / q, hi = 2.0 * lo + 1e-12;
  while (q * hi < area_of_depth(law, R, hi, depth)) hi *= 2.0;
  for (int i = 0; i < 200 && hi - lo > 1e-15 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (q * mid < area_of_depth(law, R, mid, depth)) lo = mid;
    else hi = mid;
  }
  return 0.5 * (lo + hi);
}

void kl_plan_feed(const kl_problem *pb, const kl_removal_law *law, double R, const double *want, double *v)
{
  const kl_settings *s = &pb->set;
  const int ns = pb->ns;
  double vhi = s->v_max;
  if (pb->robot_vmax > 0 && pb->robot_vmax < vhi) vhi = fmax(s->v_min, pb->robot_vmax);
  const double g = law->kp * s->max_F, vs = law->omega * law->rc;
  for (int k = 0; k < ns; ++k) {
    /* F_max removes want at v where k_p F_max (vs + v) / v >= A(want): any v when A <= k_p F_max, else
     * v <= k_p F_max vs / (A - k_p F_max) */
    const double A = want[k] > 0 ? area_of_depth(law, R, s->max_F, want[k]) : 0.0;
    double vk = vhi;
    if (A > g) vk = g * vs / (A - g);
    v[k] = fmin(vhi, fmax(s->v_min, vk));
  }
  /* |v dv/ds| = |d(v^2/2)/ds| <= a_max: v_k^2 <= v_{k-1}^2 + 2 a_max ds forward, and the same backward */
  for (int k = 1; k < ns; ++k) v[k] = fmin(v[k], sqrt(v[k - 1] * v[k - 1] + 2.0 * s->a_max * (pb->s[k] - pb->s[k - 1])));
  for (int k = ns - 2; k >= 0; --k)
    v[k] = fmin(v[k], sqrt(v[k + 1] * v[k + 1] + 2.0 * s->a_max * (pb->s[k + 1] - pb->s[k])));
}

int kl_plan_design(const kl_problem *pb, const kl_removal_law *law, double R, const double *need, const double *e,
                   double *want, double *v, double *F)
{
  const int ns = pb->ns;
  const double dmax = kl_plan_flat_depth(law, R, pb->set.max_F, pb->set.v_min);
  double mx = 0;
  for (int k = 0; k < ns; ++k) mx = fmax(mx, need[k]);
  const int N = mx > 0 && dmax > 0 ? (int)fmax(1.0, ceil(mx / dmax - 1e-9)) : 0;
  for (int k = 0; k < ns; ++k) want[k] = N > 0 ? need[k] / N : 0.0;
  if (e && N > 0 && !(law->L > 0)) {
    /* the ball's reach: the rigid ball whose lowest point leaves e_k - want_k at s_k stands (s - s_k)^2 / 2R above
     * that at s, out to c_k (c^2 = a^2 + 2 R want: the groove's half-width), so it must not stand below another
     * sample's planned level there: want_k <= e_k - max over those of (e_j - want_j - (s_j - s_k)^2 / 2R), the
     * planned levels dilated by the ball (docs/design.md section 9.4) */
    const double a = kl_removal_hertz_a(pb->set.max_F, R, law->Es);
    double *w2 = malloc((size_t)ns * sizeof *w2);
    if (w2) {
      for (int k = 0; k < ns; ++k) {
        const double c2 = a * a + 2.0 * R * want[k];
        double lv = e[k] - want[k];
        for (int dir = -1; dir <= 1; dir += 2)
          for (int j = k + dir; j >= 0 && j < ns; j += dir) {
            const double d = pb->s[j] - pb->s[k];
            if (d * d > c2) break;
            lv = fmax(lv, e[j] - want[j] - d * d / (2.0 * R));
          }
        w2[k] = fmax(0.0, fmin(want[k], e[k] - lv));
      }
      memcpy(want, w2, (size_t)ns * sizeof *want);
      free(w2);
    }
  }
  kl_plan_feed(pb, law, R, want, v);
  for (int k = 0; k < ns; ++k) F[k] = fmin(pb->set.max_F, kl_plan_flat_force(law, R, want[k], v[k]));
  return N;
}

//------------------------------------------------------------------------------------------------------
// the surface along the path

/* the grid row (u index) of arc length s */
static int row_of(const kl_surface *sf, double s)
{
  const long i = lround(s / sf->du);
  return i < 0 ? 0 : i >= sf->nu ? sf->nu - 1 : (int)i;
}

void kl_plan_need(const kl_problem *pb, const kl_surface *sf, const kl_removal_law *law, const kl_plan_limits *lim,
                  double *need)
{
  const int nw = sf->nw, jm = (nw - 1) / 2;
  const int jt = kl_surface_track(sf, law, pb); /* the track, as kl_surface_stats_of judges it */
  for (int k = 0; k < pb->ns; ++k) {
    const size_t i = (size_t)row_of(sf, pb->s[k]);
    double e = -INFINITY;
    for (int j = jm - jt; j <= jm + jt; ++j) {
      if (j < 0 || j >= nw) continue;
      const size_t c = i * (size_t)nw + (size_t)j;
      e = fmax(e, sf->stock[c] - sf->removed[c]);
    }
    /* the guard: never aim the path's own row (where a pass cuts deepest) below the target by more than half the
     * gouge allowed */
    const size_t cm = i * (size_t)nw + (size_t)jm;
    const double guard = sf->stock[cm] - sf->removed[cm] + 0.5 * lim->gouge;
    need[k] = fmax(0.0, fmin(e - 0.5 * lim->tol, guard));
  }
}

/* the path row's error at the samples */
static void row_error(const kl_problem *pb, const kl_surface *sf, double *out)
{
  const int jm = (sf->nw - 1) / 2;
  for (int k = 0; k < pb->ns; ++k) {
    const size_t c = (size_t)row_of(sf, pb->s[k]) * (size_t)sf->nw + (size_t)jm;
    out[k] = sf->stock[c] - sf->removed[c];
  }
}

//------------------------------------------------------------------------------------------------------
// plans

kl_plan_pass *kl_plan_add(kl_plan *plan, int ns, int ncell)
{
  if (plan->npass == plan->cap) {
    const int cap = plan->cap ? 2 * plan->cap : 8;
    kl_plan_pass *p = realloc(plan->pass, (size_t)cap * sizeof *p);
    if (!p) return NULL;
    plan->pass = p;
    plan->cap = cap;
  }
  kl_plan_pass *p = &plan->pass[plan->npass];
  memset(p, 0, sizeof *p);
  double **arr[] = {&p->o, &p->v, &p->Fset, &p->F, &p->t, &p->before, &p->after};
  int ok = 1;
  for (size_t j = 0; j < sizeof arr / sizeof arr[0]; ++j) ok &= (*arr[j] = calloc((size_t)ns, sizeof(double))) != NULL;
  p->removed = calloc((size_t)ncell, sizeof(float));
  plan->npass++; /* (counted even when incomplete, so that kl_plan_free releases it) */
  return ok && p->removed ? p : NULL;
}

static void free_pass(kl_plan_pass *p)
{
  free(p->o);
  free(p->v);
  free(p->Fset);
  free(p->F);
  free(p->t);
  free(p->before);
  free(p->after);
  free(p->removed);
}

void kl_plan_free(kl_plan *plan)
{
  if (!plan) return;
  for (int i = 0; i < plan->npass; ++i) free_pass(&plan->pass[i]);
  free(plan->pass);
  kl_surface_free(&plan->sf);
  free(plan->before0);
  memset(plan, 0, sizeof *plan);
}

void kl_plan_error_after(const kl_plan *plan, int p, int cells, const kl_problem *pb, double *out)
{
  const kl_surface *sf = &plan->sf;
  const size_t nc = (size_t)sf->nu * (size_t)sf->nw;
  const int jm = (sf->nw - 1) / 2;
  const int last = p >= plan->npass - 1;
  const size_t n = cells ? nc : (size_t)pb->ns;
  for (size_t q = 0; q < n; ++q) {
    const size_t c = cells ? q : (size_t)row_of(sf, pb->s[q]) * (size_t)sf->nw + (size_t)jm;
    double r = 0;
    if (plan->start && p >= 0) { /* closed loop: the engine's passes before p, then this plan's pass p */
      for (int i = 0; i < p && i < plan->start->npass; ++i) r += plan->start->pass[i].removed[c];
      if (p < plan->npass) r += plan->pass[p].removed[c];
    } else if (last && plan->npass > 0 && p >= 0)
      r = sf->removed[c];
    else
      for (int i = 0; i <= p && i < plan->npass; ++i) r += plan->pass[i].removed[c];
    out[q] = sf->stock[c] - r;
  }
}

//------------------------------------------------------------------------------------------------------
// the run

typedef struct prun {
  const kl_problem *pb;
  kl_host *h;
  kl_removal_law law;
  kl_plan_limits lim;
  kl_progress prog;
  kelvin_progress_fn progress; /* (the engine's watch) */
  void *ctx;
  kl_plan *eng;     /* closed loop: the 3-D engine's run of the passes, or NULL */
  kl_removal_law elaw; /* its law (the engine's surface's wear) */
  char *msg;
  int cap;
  kl_plan *plan;
  kl_problem *pe;   /* the problem on the evolved part (this pass) */
  kl_rollout *ro;   /* its rollouts */
  double *hh, *dh;  /* the evolved protrusion (ns) */
  double *ctrl, *obj, *so; /* a batch of NTRIAL candidates */
  double *prev;     /* the grid's removal before the pass (nu x nw) */
  double *need, *want, *c; /* per sample: need, want, compliance */
  double *o, *so1;  /* the current offsets and their prediction (KL_SO_N x ns) */
  double *drop, *drop1; /* the drops the pass's problem was opened with, and those its prediction carves (ns) */
  char said[160];   /* the last notice said (notice) */
} prun;

/* the rollouts' notices (the program's build), each different line once: a pass reopened on its own carving
 * builds its rollouts again, and a plan of twenty passes would say the same line a hundred times */
static void notice(void *ctx, const char *line)
{
  prun *r = ctx;
  if (strncmp(r->said, line, sizeof r->said - 1) == 0) return;
  snprintf(r->said, sizeof r->said, "%s", line);
  kl_progress_say(&r->prog, 0, -1.0, "%s", line);
}

static void close_pass(prun *r)
{
  kl_rollout_destroy(r->ro);
  r->ro = NULL;
  kl_problem_free(r->pe);
  r->pe = NULL;
}

/* the problem on the evolved part and its rollouts, per-sample commands (the copy made so if the problem's are
 * splines), the feed v (ns) fixed by its bounds, and the step-averaged contact force the scored measure (the force
 * the deposit takes) */
static kelvin_status open_pass(prun *r, const double *v, const double *drop)
{
  const kl_problem *pb = r->pb;
  const int ns = pb->ns;
  close_pass(r);
  if (drop)
    memcpy(r->drop, drop, (size_t)ns * sizeof *r->drop);
  else
    kl_surface_drops(pb, &r->plan->sf, &r->law, r->drop);
  kl_protrusion_of_drop(pb, r->drop, r->hh, r->dh);
  kelvin_status st = kl_problem_with_protrusion(pb, r->hh, r->dh, r->plan->sf.tool_R, &r->pe, r->msg, r->cap);
  if (st != KELVIN_OK) return st;
  kl_problem *pe = r->pe;
  if (pe->basis || pe->nc != 2 * ns) {
    free(pe->basis);
    pe->basis = NULL;
    free(pe->lo);
    free(pe->hi);
    pe->lo = malloc((size_t)2 * ns * sizeof *pe->lo);
    pe->hi = malloc((size_t)2 * ns * sizeof *pe->hi);
    if (!pe->lo || !pe->hi) {
      snprintf(r->msg, (size_t)r->cap, "out of memory");
      return KELVIN_ERR_NOMEM;
    }
    pe->nc = 2 * ns;
    pe->set.method = KL_METHOD_LM;
    pe->set.n_o = pe->set.n_v = ns;
  }
  for (int k = 0; k < ns; ++k) {
    pe->lo[k] = pe->set.o_min;
    pe->hi[k] = pe->set.o_max;
    pe->lo[ns + k] = pe->hi[ns + k] = v[k];
  }
  pe->set.measure = KL_MEASURE_AVERAGED;
  pe->gp[KL_GP_AVG] = KL_MEASURE_AVERAGED;
  const kl_rollout_def def = {ns, 2 * ns, pe->gp, pe->geo, NULL, KL_ROLLOUT_HOST_BELOW_AUTO, notice, r};
  if ((st = kl_rollout_create(r->h, &def, &r->ro)) != KELVIN_OK) snprintf(r->msg, (size_t)r->cap, "%s", kl_host_errmsg(r->h));
  else kl_rollout_stop_flag(r->ro, &r->prog.stopped);
  return st;
}

/* P candidates' offsets o (P x ns) at the feed v (ns) on the evolved part: per-sample outputs into so
 * (KL_SO_N x ns x P, candidate fastest) and objective terms into r->obj */
static kelvin_status predict(prun *r, int P, const double *o, const double *v)
{
  const int ns = r->pb->ns;
  for (int p = 0; p < P; ++p)
    for (int k = 0; k < ns; ++k) {
      r->ctrl[(size_t)k * P + p] = o[(size_t)p * ns + k];
      r->ctrl[(size_t)(ns + k) * P + p] = v[k];
    }
  const kelvin_status st = kl_rollout_eval(r->ro, (size_t)P, r->ctrl, r->obj, r->so);
  if (st != KELVIN_OK) snprintf(r->msg, (size_t)r->cap, "%s", kl_host_errmsg(r->h));
  r->plan->rollouts += P;
  return st;
}


/* offsets within the bounds and the robot's normal acceleration (offset.max_accel), only ever lowered (less
 * force: the limit stays a constraint): a peak above the limit is lowered, a valley's neighbours are */
static void smooth(const kl_problem *pb, const double *v, double *o)
{
  const int ns = pb->ns;
  const double amax = pb->set.o_acc, lo = pb->set.o_min, hi = pb->set.o_max;
  for (int k = 0; k < ns; ++k) o[k] = fmin(hi, fmax(lo, o[k]));
  for (int sweep = 0; sweep < 500; ++sweep) {
    int changed = 0;
    for (int k = 1; k + 1 < ns; ++k) {
      const double ds = 0.5 * (pb->s[k + 1] - pb->s[k - 1]), c = v[k] * v[k] / (ds * ds);
      const double A = (o[k + 1] - 2 * o[k] + o[k - 1]) * c;
      if (A > amax * (1 + 1e-9)) { /* a valley: its neighbours down */
        const double d = 0.5 * (A - amax) / c;
        o[k - 1] = fmax(lo, o[k - 1] - d);
        o[k + 1] = fmax(lo, o[k + 1] - d);
        changed = 1;
      } else if (A < -amax * (1 + 1e-9)) { /* a peak: down */
        o[k] = fmax(lo, o[k] - 0.5 * (-amax - A) / c);
        changed = 1;
      }
    }
    if (!changed) break;
  }
}

/* the static offsets of the forces F (ns) on the evolved part (kl_problem_guess's relation on the evolved
 * protrusion): o = d*(F / kappa) + (F - F_g) / K_h - h; where F = 0 the tool clear of it by KL_PLAN_CLEARANCE */
static double static_offset(const prun *r, const kl_contact_desc *cd, double F, int k)
{
  const kl_problem *pb = r->pb;
  const double d = F > 0 ? kl_contact_static_depth(*cd, F / pb->kap[k]) : -KL_PLAN_CLEARANCE;
  return d + (F - pb->fg[k]) / pb->set.holder_K - r->hh[k];
}

static void static_offsets(const prun *r, const double *F, double *o)
{
  const kl_contact_desc cd = kl_problem_contact(r->pe);
  for (int k = 0; k < r->pb->ns; ++k) o[k] = static_offset(r, &cd, F[k], k);
}

/* the pass's offsets for the forces Fset at the feed v: static, then fitted by Levenberg-Marquardt (optimiser/lm.h:
 * the device's banded Jacobian, four dampings tried in one batch per step; KL_PLAN_ITERATIONS steps at most) so
 * that the step-averaged contact force follows F* (its interval's mean target), then lowered where the prediction
 * is above target.max_force; r->o and r->so1 get the pass and its prediction */
static kelvin_status offsets(prun *r, const double *Fset, const double *v)
{
  const kl_problem *pb = r->pb;
  const int ns = pb->ns;
  const kl_contact_desc cd = kl_problem_contact(r->pe);
  const double Fmax = pb->set.max_F;
  kelvin_status st;
  double *x = malloc((size_t)2 * ns * sizeof *x);
  if (!x) {
    snprintf(r->msg, (size_t)r->cap, "out of memory");
    return KELVIN_ERR_NOMEM;
  }
  for (int k = 0; k < ns; ++k) { /* the compliance along the axis at the target, holder and contact in series */
    r->c[k] = 1.0 / pb->set.holder_K + kl_contact_compliance(cd, fmax(Fset[k], 0.05 * Fmax) / pb->kap[k]) / pb->kap[k];
    r->pe->ft[k] = k > 0 ? 0.5 * (Fset[k - 1] + Fset[k]) : Fset[0];
  }
  static_offsets(r, Fset, r->o);
  smooth(pb, v, r->o);
  memcpy(x, r->o, (size_t)ns * sizeof *x);
  memcpy(x + ns, v, (size_t)ns * sizeof *x);
  kl_lm_stats ls;
  memset(&ls, 0, sizeof ls);
  st = kl_lm_solve(r->pe, r->h, r->ro, x, KL_PLAN_ITERATIONS, 0.0, NULL, &ls, r->msg, r->cap);
  r->plan->rollouts += ls.rollouts;
  if (st != KELVIN_OK) goto done;
  /* where neither the sample nor its neighbours ask for a force the tool stays clear by KL_PLAN_CLEARANCE (the fit
   * leaves offsets there free: light touches in the prediction and an engine that chatters over them); anywhere
   * else no more than twice as far (where a force is asked, a sample whose F* is a few hundredths of a newton
   * between two that ask none, the fit, unable to make so light a touch, sent it to the offset's bound: the robot
   * then swings 1.3 mm away and back in 20 ms, which the wrist sensor reads as the tool's inertia) */
  for (int k = 0; k < ns; ++k) {
    const int quiet = Fset[k] == 0 && (k == 0 || Fset[k - 1] == 0) && (k == ns - 1 || Fset[k + 1] == 0);
    const double clear = static_offset(r, &cd, 0.0, k);
    x[k] = quiet ? clear : fmax(x[k], clear - KL_PLAN_CLEARANCE);
  }
  memcpy(r->o, x, (size_t)ns * sizeof *r->o);
  smooth(pb, v, r->o);
  if ((st = predict(r, 1, r->o, v)) != KELVIN_OK) goto done;
  memcpy(r->so1, r->so, (size_t)KL_SO_N * ns * sizeof *r->so1);
  /* the limit: lowered where the prediction is above it (and the sample before), predicted again */
  for (int it = 0; it < 8; ++it) {
    int over = 0;
    for (int k = 0; k < ns; ++k) {
      const double e = fmax(r->so1[KL_SO_F * ns + k], r->so1[KL_SO_FAVG * ns + k]) - Fmax;
      if (e > 0) {
        const double d = (1.2 * e + 0.01 * Fmax) * r->c[k];
        r->o[k] -= d;
        if (k > 0) r->o[k - 1] -= d;
        over = 1;
      }
    }
    if (!over) break;
    smooth(pb, v, r->o);
    if ((st = predict(r, 1, r->o, v)) != KELVIN_OK) goto done;
    memcpy(r->so1, r->so, (size_t)KL_SO_N * ns * sizeof *r->so1);
  }
  st = KELVIN_OK;
done:
  free(x);
  return st;
}

/* The pass's own carving (docs/design.md section 9.4): the prediction r->so1 deposited on tmp (a copy of the
 * plan's surface) sample interval by interval as the tool moves, and into r->drop1 the drop the tool meets at
 * each sample as it reaches it. The 3-D engine's depth correction sees the material the pass has already
 * removed under the tool (on a stiff holder a groove of 0.1 mm takes 20 N off the force), so the device's
 * protrusion must too. *change: the largest difference against the drops the pass was opened with (r->drop). */
static kelvin_status carve(prun *r, kl_surface *tmp, double *change)
{
  const kl_problem *pb = r->pb;
  const int ns = pb->ns;
  const double *favg = r->so1 + KL_SO_FAVG * ns, *t = r->so1 + KL_SO_T * ns;
  if (kl_surface_copy(&r->plan->sf, tmp) != KELVIN_OK) goto nomem;
  kl_removal_law law = r->law;
  r->drop1[0] = kl_surface_drop(tmp, &law, pb->s[0]);
  for (int k = 1; k < ns; ++k) {
    if (isnan(kl_surface_deposit(tmp, &law, favg[k], pb->s[k - 1], 0.0, pb->s[k], 0.0, t[k] - t[k - 1]))) goto nomem;
    r->drop1[k] = kl_surface_drop(tmp, &law, pb->s[k]);
  }
  double worst = 0;
  for (int k = 0; k < ns; ++k) worst = fmax(worst, fabs(r->drop1[k] - r->drop[k]));
  *change = worst;
  return KELVIN_OK;
nomem:
  kl_surface_free(tmp);
  snprintf(r->msg, (size_t)r->cap, "out of memory");
  return KELVIN_ERR_NOMEM;
}

/* The prediction (r->so1) of the pass r->o at the feed v with its own carving: the drops it is opened on and the
 * drops its prediction carves must agree. Each sample's drop is a fixed point x = g(x), g the drop the prediction
 * on the drops x carves; plain iteration oscillates (deeper drop, less force, shallower carve: on a stiff holder
 * g' is about -0.9, and below -1 it diverges), so each sample takes the secant step of x - g(x) = 0,
 * x += (g - x) / (1 - g'), g' from its last two iterates (clamped to [-20, 0.5]; -1 at the first step: the mean
 * of x and g). Until they agree within a tenth of the tolerance (KL_PLAN_CARVE rounds at most). */
static kelvin_status predict_carved(prun *r, const double *v)
{
  const int ns = r->pb->ns;
  double *x = malloc((size_t)4 * ns * sizeof *x);
  if (!x) {
    snprintf(r->msg, (size_t)r->cap, "out of memory");
    return KELVIN_ERR_NOMEM;
  }
  double *g = x + ns, *xp = x + 2 * ns, *gp = x + 3 * ns;
  kelvin_status st = open_pass(r, v, NULL);
  for (int it = 0; st == KELVIN_OK; ++it) {
    if ((st = predict(r, 1, r->o, v)) != KELVIN_OK) break;
    memcpy(r->so1, r->so, (size_t)KL_SO_N * ns * sizeof *r->so1);
    if (it == KL_PLAN_CARVE) break;
    kl_surface tmp;
    memset(&tmp, 0, sizeof tmp);
    double change = 0;
    st = carve(r, &tmp, &change);
    kl_surface_free(&tmp);
    if (st != KELVIN_OK || change <= 0.1 * r->lim.tol) break;
    memcpy(x, r->drop, (size_t)ns * sizeof *x);
    memcpy(g, r->drop1, (size_t)ns * sizeof *g);
    for (int k = 0; k < ns; ++k) {
      double d = -1.0;
      if (it > 0 && x[k] != xp[k]) d = fmin(0.5, fmax(-20.0, (g[k] - gp[k]) / (x[k] - xp[k])));
      r->drop1[k] = fmin(0.0, x[k] + (g[k] - x[k]) / (1.0 - d));
    }
    memcpy(xp, x, (size_t)ns * sizeof *xp);
    memcpy(gp, g, (size_t)ns * sizeof *gp);
    st = open_pass(r, v, r->drop1);
  }
  free(x);
  return st;
}

/* The removal's own correction (docs/design.md section 9.4): the predicted pass deposited on a copy of the surface;
 * where the path row's removal at a sample misses want (the rigid tool cuts ahead of its axis, the force lags its
 * target), the depth asked of the force there moves by the miss, F* follows at the same feed, and the offsets are
 * fitted again; KL_PLAN_AIM rounds at most, fewer once no sample misses by more than a tenth of the tolerance.
 * The floor: where the prediction takes a cell of the path's row below the guard's level (target - gouge / 2, as
 * kl_plan_need's guard) deeper than it was, by x, every sample whose groove reaches that cell (within
 * c = sqrt(a^2 + 2 R ask) along the path, a the contact's half-width at target.max_force) asks at least x less: the
 * tool cuts where its patch is, not only under its axis, so a sample that wants nothing can be cut by its
 * neighbours' force. */
static kelvin_status aim(prun *r, const double *v, double *Fset)
{
  const kl_problem *pb = r->pb;
  const int ns = pb->ns, jm = (r->plan->sf.nw - 1) / 2;
  const kl_surface *sf = &r->plan->sf;
  double *ask = malloc((size_t)ns * sizeof *ask);
  kl_surface tmp;
  memset(&tmp, 0, sizeof tmp);
  kelvin_status st = KELVIN_OK;
  if (!ask) goto nomem;
  memcpy(ask, r->want, (size_t)ns * sizeof *ask);
  const double lvl = -0.5 * r->lim.gouge, R = sf->tool_R;
  const double a = kl_removal_patch(pb->set.max_F, R, r->law.L, r->law.Es);
  for (int it = 0; it < KL_PLAN_AIM; ++it) {
    double change = 0;
    if ((st = carve(r, &tmp, &change)) != KELVIN_OK) break;
    double worst = 0;
    for (int k = 0; k < ns; ++k) {
      const size_t c = (size_t)row_of(sf, pb->s[k]) * (size_t)sf->nw + (size_t)jm;
      double miss = r->want[k] - (tmp.removed[c] - sf->removed[c]);
      /* the floor: the deepest this pass takes a path-row cell within the groove's reach below the guard's level */
      const double reach = sqrt(a * a + 2.0 * R * ask[k]);
      const int i0 = row_of(sf, pb->s[k] - reach), i1 = row_of(sf, pb->s[k] + reach);
      double x = 0;
      for (int i = i0; i <= i1; ++i) {
        const size_t q = (size_t)i * (size_t)sf->nw + (size_t)jm;
        const double e0 = sf->stock[q] - sf->removed[q], e1 = sf->stock[q] - tmp.removed[q];
        x = fmax(x, fmax(0.0, lvl - e1) - fmax(0.0, lvl - e0));
      }
      if (x > 0) miss = fmin(miss, -x);
      worst = fmax(worst, fabs(miss));
      ask[k] = fmax(0.0, ask[k] + miss);
    }
    kl_surface_free(&tmp);
    const int reopen = change > 0.1 * r->lim.tol; /* the pass's own carving moved its protrusion */
    if (worst <= 0.1 * r->lim.tol && !reopen) break;
    if (reopen && (st = open_pass(r, v, r->drop1)) != KELVIN_OK) break;
    for (int k = 0; k < ns; ++k) Fset[k] = fmin(pb->set.max_F, kl_plan_flat_force(&r->law, sf->tool_R, ask[k], v[k]));
    if ((st = offsets(r, Fset, v)) != KELVIN_OK) break;
  }
  free(ask);
  return st;
nomem:
  free(ask);
  kl_surface_free(&tmp);
  snprintf(r->msg, (size_t)r->cap, "out of memory");
  return KELVIN_ERR_NOMEM;
}

/* the record of a pass into ps, the surface sf after it (its removal against prev): the commands o, v (ns), F*
 * Fset (ns; NULL: NaN, a pass not planned for a force), the step-averaged force Favg and the instant one F (ns) at
 * the times t (ns), the passes still needed n (kl_plan_pass) */
static void record(const kl_problem *pb, const kl_removal_law *law, const kl_surface *sf, const double *prev,
                   const double *o, const double *v, const double *Fset, const double *Favg, const double *F,
                   const double *t, int n, kl_plan_pass *ps)
{
  const int ns = pb->ns;
  const size_t nc = (size_t)sf->nu * (size_t)sf->nw;
  double vol = 0;
  for (size_t c = 0; c < nc; ++c) {
    const double d = sf->removed[c] - prev[c];
    ps->removed[c] = (float)d;
    vol += d;
  }
  ps->volume = vol * sf->du * sf->dw;
  row_error(pb, sf, ps->after);
  kl_surface_stats_of(sf, law, pb, &ps->st);
  memcpy(ps->o, o, (size_t)ns * sizeof *ps->o);
  memcpy(ps->v, v, (size_t)ns * sizeof *ps->v);
  memcpy(ps->F, Favg, (size_t)ns * sizeof *ps->F);
  memcpy(ps->t, t, (size_t)ns * sizeof *ps->t);
  for (int k = 0; k < ns; ++k) {
    ps->Fset[k] = Fset ? Fset[k] : NAN;
    ps->force_max = fmax(ps->force_max, fmax(F[k], Favg[k]));
  }
  ps->time = t[ns - 1];
  ps->tool_R = sf->tool_R;
  ps->n = n;
}

/* deposit the predicted pass (r->o, v, r->so1) into the plan's surface and record it */
static kelvin_status deposit(prun *r, const double *v, const double *Fset, int N)
{
  const kl_problem *pb = r->pb;
  const int ns = pb->ns;
  kl_surface *sf = &r->plan->sf;
  const size_t nc = (size_t)sf->nu * (size_t)sf->nw;
  memcpy(r->prev, sf->removed, nc * sizeof *r->prev);
  kl_plan_pass *ps = kl_plan_add(r->plan, ns, (int)nc);
  if (!ps) {
    snprintf(r->msg, (size_t)r->cap, "out of memory");
    return KELVIN_ERR_NOMEM;
  }
  row_error(pb, sf, ps->before);
  const double *favg = r->so1 + KL_SO_FAVG * ns, *t = r->so1 + KL_SO_T * ns, *Fi = r->so1 + KL_SO_F * ns;
  ps->volume_law = kl_surface_deposit_pass(sf, &r->law, pb, favg, t);
  record(pb, &r->law, sf, r->prev, r->o, v, Fset, favg, Fi, t, N, ps);
  return KELVIN_OK;
}

static void release(prun *r)
{
  close_pass(r);
  free(r->hh);
  free(r->dh);
  free(r->ctrl);
  free(r->obj);
  free(r->so);
  free(r->prev);
  free(r->need);
  free(r->want);
  free(r->c);
  free(r->o);
  free(r->so1);
  free(r->drop);
  free(r->drop1);
}

static kelvin_status begin(prun *r, const kl_problem *pb, kl_host *h, kelvin_progress_fn progress, void *ctx, kl_plan *plan,
                           const char *label, char *msg, int cap)
{
  memset(r, 0, sizeof *r);
  memset(plan, 0, sizeof *plan);
  snprintf(plan->label, sizeof plan->label, "%s", label);
  r->pb = pb;
  r->h = h;
  r->prog = kl_progress_of(progress, ctx);
  kl_progress_defer(&r->prog, kl_host_shard(h)); /* a sharded run: stops acted on together (optimiser/progress.h) */
  r->progress = progress;
  r->ctx = ctx;
  r->msg = msg;
  r->cap = cap;
  r->plan = plan;
  kl_plan_limits_of(pb, &r->lim);
  kelvin_status st = kl_removal_law_of(pb, &r->law, msg, cap);
  if (st != KELVIN_OK) return st;
  if ((st = kl_surface_init(pb, &r->law, &plan->sf, msg, cap)) != KELVIN_OK) return st;
  const size_t ns = (size_t)pb->ns, nc = (size_t)plan->sf.nu * (size_t)plan->sf.nw;
  r->hh = malloc(ns * sizeof *r->hh);
  r->dh = malloc(ns * sizeof *r->dh);
  r->ctrl = malloc(2 * ns * NTRIAL * sizeof *r->ctrl);
  r->obj = malloc(KL_OBJ_N * NTRIAL * sizeof *r->obj);
  r->so = malloc(KL_SO_N * ns * NTRIAL * sizeof *r->so);
  r->prev = malloc(nc * sizeof *r->prev);
  r->need = malloc(ns * sizeof *r->need);
  r->want = malloc(ns * sizeof *r->want);
  r->c = malloc(ns * sizeof *r->c);
  r->o = malloc(ns * sizeof *r->o);
  r->so1 = malloc(KL_SO_N * ns * sizeof *r->so1);
  r->drop = malloc(ns * sizeof *r->drop);
  r->drop1 = malloc(ns * sizeof *r->drop1);
  plan->before0 = malloc(ns * sizeof *plan->before0);
  if (!r->hh || !r->dh || !r->ctrl || !r->obj || !r->so || !r->prev || !r->need || !r->want || !r->c || !r->o || !r->so1 || !r->drop || !r->drop1 ||
      !plan->before0) {
    snprintf(msg, (size_t)cap, "out of memory for the removal plan (%zu grid cells)", nc);
    return KELVIN_ERR_NOMEM;
  }
  row_error(pb, &plan->sf, plan->before0);
  kl_surface_stats_of(&plan->sf, &r->law, pb, &plan->st0);
  return KELVIN_OK;
}

/* the record of an engine's pass (the commands of the device's pass pd; the surface sf after it, its removal against
 * prev; the engine's outputs vo, vr) into ps */
static void engine_record(const kl_problem *pb, const kl_removal_law *law, const kl_surface *sf, const double *prev,
                          const kl_plan_pass *pd, const kl_v3_out *vo, const kl_v3_removal *vr, kl_plan_pass *ps)
{
  ps->volume_law = vr->vol_law;
  record(pb, law, sf, prev, pd->o, pd->v, pd->Fset, vo->Favg, vo->F, vo->t, pd->n, ps);
}

/* closed loop: the plan's last pass (planned and predicted on the engine's surface) run in the 3-D engine on that
 * surface, r->eng's (kl_verify3d_plans, one plan of one pass, the watch with verify.time_limit) */
static kelvin_status engine_pass(prun *r)
{
  const kl_problem *pb = r->pb;
  const int ns = pb->ns;
  kl_plan *eng = r->eng;
  kl_surface *sf = &eng->sf;
  const size_t nc = (size_t)sf->nu * (size_t)sf->nw;
  const kl_plan_pass *pd = &r->plan->pass[r->plan->npass - 1];
  const double t0 = kl_now();
  double *buf = malloc((size_t)6 * ns * sizeof *buf);
  int *contact = malloc((size_t)ns * sizeof *contact);
  kl_plan_pass *ps = buf && contact ? kl_plan_add(eng, ns, (int)nc) : NULL;
  if (!ps) {
    free(buf);
    free(contact);
    snprintf(r->msg, (size_t)r->cap, "out of memory for the 3-D run of the removal plan");
    return KELVIN_ERR_NOMEM;
  }
  row_error(pb, sf, ps->before);
  memcpy(r->prev, sf->removed, nc * sizeof *r->prev);
  kl_v3_out vo;
  memset(&vo, 0, sizeof vo);
  vo.F = buf, vo.Favg = buf + ns, vo.Fc = buf + 2 * ns, vo.Fcavg = buf + 3 * ns, vo.t = buf + 4 * ns;
  vo.dev = buf + 5 * ns, vo.contact = contact;
  kl_v3_removal vr;
  memset(&vr, 0, sizeof vr);
  vr.sf = sf;
  vr.law = &r->elaw;
  char lab[48];
  snprintf(lab, sizeof lab, "%s pass %d", eng->label, eng->npass);
  const char *labels[1] = {lab};
  const double f0 = (double)(eng->npass - 1) / r->lim.max_passes, f1 = (double)eng->npass / r->lim.max_passes;
  kl_v3_watch w = {r->progress, r->ctx, f0, f1, labels, pb->set.verify_time_limit, 0};
  const int one = 1;
  const double *op = pd->o, *vp = pd->v;
  kl_v3_out *outp = &vo;
  kl_v3_removal *rmp = &vr;
  const kelvin_status st = kl_verify3d_plans(pb, 1, &one, &op, &vp, &outp, &rmp, &w, r->msg, r->cap);
  if (st == KELVIN_OK) engine_record(pb, &r->elaw, sf, r->prev, pd, &vo, &vr, ps);
  free(buf);
  free(contact);
  const double dt = kl_now() - t0;
  eng->seconds += dt;
  r->plan->seconds_engine += dt;
  return st;
}

static kelvin_status run(const kl_problem *pb, kl_host *h, int naive, kl_plan *eng, kelvin_progress_fn progress, void *ctx,
                         kl_plan *plan, char *msg, int cap)
{
  const double t0 = kl_now();
  prun r;
  kl_problem pm; /* closed loop: the problem planned to KL_PLAN_FORCE_MARGIN of target.max_force (a shallow copy) */
  const kl_problem *pb0 = pb;
  if (eng) {
    pm = *pb;
    pm.set.max_F *= KL_PLAN_FORCE_MARGIN;
    pb = &pm;
  }
  /* the grid from the problem as given: removal.width's default follows target.max_force, and every plan of a run
   * must have the same cells (kelvin_grind_removal_grid_size) */
  kelvin_status st = begin(&r, pb0, h, progress, ctx, plan, naive ? KL_PLAN_NAIVE : KL_PLAN_PLANNED, msg, cap);
  r.pb = pb;
  if (st == KELVIN_OK && eng) { /* the engine's run starts on the same surface */
    memset(eng, 0, sizeof *eng);
    snprintf(eng->label, sizeof eng->label, "%s", plan->label);
    r.eng = eng;
    r.elaw = r.law;
    plan->start = eng;
    eng->before0 = malloc((size_t)pb->ns * sizeof *eng->before0);
    if (!eng->before0 || kl_surface_copy(&plan->sf, &eng->sf) != KELVIN_OK) {
      snprintf(msg, (size_t)cap, "out of memory for the 3-D run of the removal plan");
      st = KELVIN_ERR_NOMEM;
    } else {
      memcpy(eng->before0, plan->before0, (size_t)pb->ns * sizeof *eng->before0);
      eng->st0 = plan->st0;
    }
  }
  const int ns = pb->ns;
  double *v = malloc((size_t)ns * sizeof *v), *Fset = malloc((size_t)ns * sizeof *Fset);
  if (st == KELVIN_OK && (!v || !Fset)) {
    snprintf(msg, (size_t)cap, "out of memory");
    st = KELVIN_ERR_NOMEM;
  }
  if (st != KELVIN_OK) goto done;
  const double um = 1e6;
  for (;;) {
    const kl_plan *judged = eng ? eng : plan; /* closed loop: what the engine left */
    const kl_surface_stats *cur = judged->npass ? &judged->pass[judged->npass - 1].st : &judged->st0;
    plan->reached = cur->residual_max <= r.lim.tol;
    if (eng) eng->reached = plan->reached;
    if (plan->reached || plan->npass >= r.lim.max_passes) break;
    if (eng && eng->npass) { /* closed loop: the next pass is planned on the surface the engine left */
      kl_surface_free(&plan->sf);
      if (kl_surface_copy(&eng->sf, &plan->sf) != KELVIN_OK) {
        snprintf(msg, (size_t)cap, "out of memory");
        st = KELVIN_ERR_NOMEM;
        goto done;
      }
    }
    kl_plan_need(pb, &plan->sf, &r.law, &r.lim, r.need);
    int N = 0;
    if (!naive) {
      double mx = 0;
      for (int k = 0; k < ns; ++k) mx = fmax(mx, r.need[k]);
      if (!(mx > 0)) break; /* above the tolerance between the samples only: nothing the samples can aim at */
    }
    if (naive) {
      for (int k = 0; k < ns; ++k) {
        r.o[k] = pb->naive_o;
        v[k] = pb->set.v_init;
      }
      if ((st = predict_carved(&r, v)) != KELVIN_OK) goto done;
    } else {
      row_error(pb, &plan->sf, r.c); /* (r->c: scratch until offsets() fills the compliance) */
      N = kl_plan_design(pb, &r.law, plan->sf.tool_R, r.need, r.c, r.want, v, Fset);
      if ((st = open_pass(&r, v, NULL)) != KELVIN_OK) goto done;
      if ((st = offsets(&r, Fset, v)) != KELVIN_OK || (st = aim(&r, v, Fset)) != KELVIN_OK) goto done;
    }
    if ((st = deposit(&r, v, naive ? NULL : Fset, N)) != KELVIN_OK) goto done;
    const kl_plan_pass *ps = &plan->pass[plan->npass - 1];
    char left[160] = "";
    if (!naive) snprintf(left, sizeof left, " (%d still needed)", N);
    if (eng) {
      /* replicated on every rank: a stop or a time limit on one ends all */
      st = kl_progress_agree(&r.prog, kl_host_shard(h), engine_pass(&r), "removal plan, 3-D engine", msg, cap);
      if (st != KELVIN_OK) goto done;
      const kl_plan_pass *pe = &eng->pass[eng->npass - 1];
      snprintf(left, sizeof left, " (%d still needed; 3-D engine: residual max %.1f um, gouge %.1f um, force max %.3g N, "
               "volume %.4g mm^3; device's prediction)", N, um * pe->st.residual_max, um * pe->st.gouge, pe->force_max,
               1e9 * pe->volume);
    }
    if (kl_progress_say(&r.prog, 0, (double)plan->npass / r.lim.max_passes,
                        "%s pass %d%s: residual max %.1f um (RMS %.1f um), gouge %.1f um, %.2f s, force max %.3g N",
                        plan->label, plan->npass, left, um * ps->st.residual_max, um * ps->st.residual_rms,
                        um * ps->st.gouge, ps->time, ps->force_max)) {
      snprintf(msg, (size_t)cap, "removal plan: stopped by the caller");
      st = KELVIN_ERR_STOPPED;
      goto done;
    }
  }
  /* with a shard, a stop recorded after the last batch ends every rank, as it would have ended one */
  st = kl_progress_agree(&r.prog, kl_host_shard(h), st, "removal plan", msg, cap);
done:
  plan->seconds = kl_now() - t0;
  free(v);
  free(Fset);
  release(&r);
  return st;
}

kelvin_status kl_plan_run(const kl_problem *pb, kl_host *h, int naive, kelvin_progress_fn progress, void *ctx, kl_plan *plan,
                          char *msg, int cap)
{
  return run(pb, h, naive, NULL, progress, ctx, plan, msg, cap);
}

kelvin_status kl_plan_run_closed(const kl_problem *pb, kl_host *h, kelvin_progress_fn progress, void *ctx, kl_plan *plan,
                                 kl_plan *eng, char *msg, int cap)
{
  return run(pb, h, 0, eng, progress, ctx, plan, msg, cap);
}

kelvin_status kl_plan_user(const kl_problem *pb, kl_host *h, const double *o, const double *v, kl_plan *plan, char *msg,
                           int cap)
{
  const double t0 = kl_now();
  prun r;
  kelvin_status st = begin(&r, pb, h, NULL, NULL, plan, "user", msg, cap);
  if (st == KELVIN_OK) {
    memcpy(r.o, o, (size_t)pb->ns * sizeof *r.o);
    st = predict_carved(&r, v);
  }
  if (st == KELVIN_OK) st = deposit(&r, v, NULL, 0);
  if (st == KELVIN_OK) plan->reached = plan->pass[0].st.residual_max <= r.lim.tol;
  plan->seconds = kl_now() - t0;
  release(&r);
  return st;
}

//------------------------------------------------------------------------------------------------------
// the 3-D engine

#define VMAX 4 /* plans verified at once */

kelvin_status kl_plan_verify(const kl_problem *pb, int n, const kl_plan *const *dev, kl_plan *const *out,
                             kelvin_progress_fn progress, void *ctx, char *msg, int cap)
{
  if (n < 1 || n > VMAX) {
    snprintf(msg, (size_t)cap, "kl_plan_verify: %d plans (1 to %d)", n, VMAX);
    return KELVIN_ERR_ARG;
  }
  const int ns = pb->ns;
  kl_removal_law law[VMAX];
  double *prev[VMAX] = {NULL};
  kl_v3_out vo[VMAX];
  kl_v3_removal vr[VMAX];
  double *buf = NULL;
  kl_progress prog = kl_progress_of(progress, ctx);
  kelvin_status st = KELVIN_OK;
  int maxp = 0;
  size_t nc = 0;
  for (int i = 0; i < n; ++i) {
    kl_plan *pl = out[i];
    memset(pl, 0, sizeof *pl);
    snprintf(pl->label, sizeof pl->label, "%s", dev[i]->label);
    if ((st = kl_removal_law_of(pb, &law[i], msg, cap)) != KELVIN_OK) goto done;
    if ((st = kl_surface_init(pb, &law[i], &pl->sf, msg, cap)) != KELVIN_OK) goto done;
    nc = (size_t)pl->sf.nu * (size_t)pl->sf.nw;
    pl->before0 = malloc((size_t)ns * sizeof *pl->before0);
    prev[i] = malloc(nc * sizeof *prev[i]);
    if (!pl->before0 || !prev[i]) goto nomem;
    row_error(pb, &pl->sf, pl->before0);
    kl_surface_stats_of(&pl->sf, &law[i], pb, &pl->st0);
    maxp = dev[i]->npass > maxp ? dev[i]->npass : maxp;
  }
  /* the engine's outputs of one pass per plan (ns each: F, Favg, Fc, Fcavg, t, dev) */
  buf = malloc((size_t)VMAX * 6 * ns * sizeof *buf);
  int *contact = malloc((size_t)VMAX * ns * sizeof *contact);
  if (!buf || !contact) {
    free(contact);
    goto nomem;
  }
  for (int j = 0; j < maxp; ++j) {
    int idx[VMAX], m = 0, one[VMAX];
    const double *op[VMAX], *vp[VMAX];
    kl_v3_out *outp[VMAX];
    kl_v3_removal *rmp[VMAX];
    char lab[VMAX][48];
    const char *labels[VMAX];
    for (int i = 0; i < n; ++i) {
      if (j >= dev[i]->npass) continue;
      const int q = m++;
      idx[q] = i;
      one[q] = 1;
      op[q] = dev[i]->pass[j].o;
      vp[q] = dev[i]->pass[j].v;
      double *b = buf + (size_t)q * 6 * ns;
      memset(&vo[q], 0, sizeof vo[q]);
      vo[q].F = b, vo[q].Favg = b + ns, vo[q].Fc = b + 2 * ns, vo[q].Fcavg = b + 3 * ns, vo[q].t = b + 4 * ns;
      vo[q].dev = b + 5 * ns, vo[q].contact = contact + (size_t)q * ns;
      memset(&vr[q], 0, sizeof vr[q]);
      vr[q].sf = &out[i]->sf;
      vr[q].law = &law[i];
      outp[q] = &vo[q];
      rmp[q] = &vr[q];
      snprintf(lab[q], sizeof lab[q], "%s pass %d", dev[i]->label, j + 1);
      labels[q] = lab[q];
      kl_plan_pass *ps = kl_plan_add(out[i], ns, (int)nc);
      if (!ps) {
        free(contact);
        goto nomem;
      }
      row_error(pb, &out[i]->sf, ps->before);
      memcpy(prev[i], out[i]->sf.removed, nc * sizeof *prev[i]);
    }
    kl_v3_watch w = {progress, ctx, (double)j / maxp, (double)(j + 1) / maxp, labels, pb->set.verify_time_limit, 0};
    st = kl_verify3d_plans(pb, m, one, op, vp, outp, rmp, &w, msg, cap);
    if (st != KELVIN_OK) {
      free(contact);
      goto done;
    }
    for (int q = 0; q < m; ++q) {
      const int i = idx[q];
      kl_plan *pl = out[i];
      kl_plan_pass *ps = &pl->pass[j];
      const kl_plan_pass *pd = &dev[i]->pass[j];
      engine_record(pb, &law[i], &pl->sf, prev[i], pd, &vo[q], &vr[q], ps);
      pl->reached = ps->st.residual_max <= pb->set.rm_tolerance;
      if (kl_progress_say(&prog, 0, (double)(j + 1) / maxp,
                          "3-D engine: %s pass %d: residual max %.1f um (device %.1f um), gouge %.1f um (device %.1f um), "
                          "%.2f s", pl->label, j + 1, 1e6 * ps->st.residual_max, 1e6 * pd->st.residual_max,
                          1e6 * ps->st.gouge, 1e6 * pd->st.gouge, ps->time)) {
        snprintf(msg, (size_t)cap, "removal plan, 3-D engine: stopped by the caller");
        st = KELVIN_ERR_STOPPED;
        free(contact);
        goto done;
      }
    }
  }
  free(contact);
  goto done;
nomem:
  snprintf(msg, (size_t)cap, "out of memory for the 3-D run of the removal plans");
  st = KELVIN_ERR_NOMEM;
done:
  for (int i = 0; i < n; ++i) free(prev[i]);
  free(buf);
  return st;
}
