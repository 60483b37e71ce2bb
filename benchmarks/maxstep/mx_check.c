/* benchmarks/maxstep/mx_check.c: the one stability criterion (docs/design.md section 7), applied to the
 * output samples of every engine alike (README.md, "Criterion" and "Apexes from samples"). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "benchmarks/maxstep/mx_eval.h"


/* apex (lowest-point height) of the ballistic parabola through a free sample */
static double parabola_apex(double z, double vz, double g) { return z + vz * vz / (2.0 * g); }

/* Match apex a (detected in order) to the reference: the index k > *kprev whose height is nearest in
 * ratio. Returns k, or -1 when the sequence is exhausted. */
static int match(const mx_ref *r, double a, int *kprev)
{
  int best = -1;
  double bd = INFINITY;
  for (int k = *kprev + 1; k < r->n; ++k) {
    const double d = fabs(log(a / r->apex[k]));
    if (d < bd) {
      bd = d;
      best = k;
    }
    if (r->apex[k] < 0.5 * a) break; /* the sequence only falls from here */
  }
  if (best >= 0) *kprev = best;
  return best;
}

/* Record a failed test (the first one wins) */
static void fail(mx_verdict *v, const char *why)
{
  if (v->stable) snprintf(v->why, sizeof v->why, "%.95s", why);
  v->stable = 0;
}

/* Check one detected apex a against the reference: updates the errors; returns 0 if it fails */
static int check_apex(const mx_ref *r, double a, int *kprev, mx_verdict *v)
{
  if (!isfinite(a)) return 0;
  const int k = match(r, a, kprev);
  if (k < 0 || r->apex[k] <= MX_APEX_MIN) return 1; /* below the checked range */
  const double e = fabs(a - r->apex[k]) / r->apex[k];
  v->napex++;
  if (e > v->apex_err) v->apex_err = e;
  return e <= MX_TOL;
}

/* judge run tr of case c against reference r (mx_eval.h) */
void mx_check(const mx_case *c, const mx_ref *r, const mx_trace *tr, mx_verdict *v)
{
  memset(v, 0, sizeof *v);
  v->stable = 1;
  v->intact = 1;
  snprintf(v->why, sizeof v->why, "ok");
  v->apex_err_log = -1;
  v->fpeak_int = -1;
  v->fpeak_int_err = -1;
  v->pen_int_err = -1;
  const double g = c->g, H0 = c->z0;
  const int elastic = (c->cr == 1.0);
  if (tr->bad) {
    fail(v, tr->err[0] ? tr->err : "engine reported a non-finite state");
    v->intact = 0;
  }
  if (tr->n < 2) {
    fail(v, "no samples");
    return;
  }
  const double tlast = tr->t[tr->n - 1];

  //------- finite, no tunnelling -------
  double zmin = INFINITY, fmax_s = 0.0;
  for (long i = 0; i < tr->n; ++i) {
    if (!(isfinite(tr->z[i]) && isfinite(tr->vz[i]) && isfinite(tr->f[i]))) {
      fail(v, "non-finite state");
      v->intact = 0;
      v->apex_err = INFINITY;
      v->edrift = INFINITY;
      v->zmin = -INFINITY;
      return;
    }
    zmin = fmin(zmin, tr->z[i]);
    fmax_s = fmax(fmax_s, tr->f[i]);
  }
  v->zmin = zmin;
  if (zmin < -c->R) {
    fail(v, "tunnelling: lowest point below the plane by more than R");
    v->intact = 0;
  }

  //------- apexes from the samples: the parabola through the last rising free sample -------
  int kprev = -1, apex_ok = 1;
  long cand = -1;
  for (long i = 1; i < tr->n; ++i) {
    const int free = (tr->f[i] == 0.0 && tr->z[i] >= 0.0);
    if (!free) {
      if (cand >= 0) apex_ok &= check_apex(r, parabola_apex(tr->z[cand], tr->vz[cand], g), &kprev, v);
      cand = -1;
      continue;
    }
    if (tr->vz[i] > 0) {
      /* a rising sample past the apex the candidate's parabola predicts: a bounce fell between them */
      if (cand >= 0 && tr->t[i] > tr->t[cand] + tr->vz[cand] / g)
        apex_ok &= check_apex(r, parabola_apex(tr->z[cand], tr->vz[cand], g), &kprev, v);
      cand = i;
    } else if (cand >= 0) {
      apex_ok &= check_apex(r, parabola_apex(tr->z[cand], tr->vz[cand], g), &kprev, v);
      cand = -1;
    }
  }
  if (!apex_ok) fail(v, "apex off the exact height by more than 5 %");

  //------- energy drift (per unit weight: z + vz^2 / 2g, free samples) -------
  double drift = 0.0, lowest = H0, late_free = 0;
  for (long i = 0; i < tr->n; ++i) {
    if (!(tr->f[i] == 0.0 && tr->z[i] >= 0.0)) continue;
    const double e = parabola_apex(tr->z[i], tr->vz[i], g);
    if (elastic) {
      drift = fmax(drift, fabs(e - H0) / H0);
    } else {
      drift = fmax(drift, (e - lowest) / H0); /* a dissipative bounce never gains energy */
      lowest = fmin(lowest, e);
    }
    if (tr->t[i] > 0.75 * tlast) late_free = 1;
  }
  if (!elastic) {
    /* at the end the exact ball has settled (or nearly): what is left must be small */
    const long i = tr->n - 1;
    const double rest = r->n ? r->apex[r->n - 1] : 0.0;
    drift = fmax(drift, (parabola_apex(tr->z[i], tr->vz[i], g) - fmax(rest, 0.0)) / H0);
  } else if (!late_free) {
    fail(v, "came to rest (no free flight in the last quarter of the run)");
  }
  /* mid-flight windows: while the exact ball is in the middle half of flight k (expected apex above
   * 1 cm), every sample must be in free flight with the energy of flight k (or of a neighbour, for
   * the small shifts in timing every engine has) -- a ball that rests or lost a bounce fails here,
   * even at output steps too long to see its apexes */
  long i0 = 0;
  for (int k = 0; k < r->n; ++k)
    if (r->apex[k] > MX_APEX_MIN && r->tapex[k] < tlast) v->nexpect++;
  for (int k = 0; k < r->n; ++k) {
    if (r->apex[k] <= MX_APEX_MIN) continue;
    const double q = 0.5 * sqrt(2.0 * r->apex[k] / g); /* a quarter of the flight time */
    const double lo = r->tapex[k] - q, hi = r->tapex[k] + q;
    if (lo > tlast) break;
    while (i0 < tr->n && tr->t[i0] < lo) ++i0;
    for (long i = i0; i < tr->n && tr->t[i] <= hi; ++i) {
      if (!(tr->f[i] == 0.0 && tr->z[i] >= 0.0)) {
        fail(v, "not in flight while the exact ball is mid-flight (lost a bounce or came to rest)");
        drift = fmax(drift, 1.0);
        continue;
      }
      const double e = parabola_apex(tr->z[i], tr->vz[i], g);
      double err = INFINITY;
      for (int j = k - 1; j <= k + 1; ++j) {
        const double Hj = (j < 0) ? H0 : (j < r->n ? r->apex[j] : 0.0);
        if (Hj > 0) err = fmin(err, fabs(e - Hj) / Hj);
      }
      drift = fmax(drift, err);
    }
  }
  v->edrift = drift;
  if (drift > MX_TOL) fail(v, "energy drift above 5 %");

  //------- kelvin's apex log (exit speeds of its contact log), a second column -------
  if (tr->apex_log && tr->napex_log > 0) {
    double e = 0.0;
    for (int j = 0; j < tr->napex_log && j < r->n; ++j)
      if (r->apex[j] > MX_APEX_MIN) e = fmax(e, fabs(tr->apex_log[j] - r->apex[j]) / r->apex[j]);
    v->apex_err_log = e;
  }

  //------- peak force and penetration against the exact first contact -------
  /* the common measure: the output samples, for every engine */
  v->fpeak = fmax_s;
  v->fpeak_err = fabs(v->fpeak - r->fpeak) / r->fpeak;
  v->pen = fmax(0.0, -zmin);
  v->pen_err = fabs(v->pen - r->dmax) / r->dmax;
  /* the second column: the engine's internal steps, where it exposes them */
  v->fpeak_int = tr->fpeak_int;
  v->fpeak_int_err = tr->fpeak_int >= 0 ? fabs(tr->fpeak_int - r->fpeak) / r->fpeak : -1.0;
  v->pen_int_err = tr->dmax_int >= 0 ? fabs(tr->dmax_int - r->dmax) / r->dmax : -1.0;
}
