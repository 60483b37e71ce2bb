/* optimiser/lm.c: per-sample commands by Levenberg-Marquardt with a coloured, banded Jacobian (lm.h). */
#include "optimiser/lm.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_matrix.h>

#include "core/clock.h"
#include "engine/gsl_guard.h"

#define KL_LM_MEMORY 1e-2 /* the decay of the rollout's memory at which the band is cut */
#define KL_LM_BMAX 48     /* widest band */
#define KL_LM_NLAMBDA 4   /* Marquardt dampings tried per step, one batch */

int kl_lm_band(const kl_problem *pb)
{
  const double *gp = pb->gp;
  double mmax = 0;
  for (int k = 0; k < pb->ns; ++k) mmax = fmax(mmax, pb->meff[k]);
  /* the contact's tangent damping at the static penetration of the reference force */
  const double d = kl_contact_static_depth(kl_problem_contact(pb), gp[KL_GP_FREF]);
  kl_real kt = 0, ct = 0;
  kl_grind_force(gp, d, 0.0, &kt, &ct);
  const double r = (gp[KL_GP_DH] + fmax(0.0, ct)) / (2.0 * mmax);
  const double dt = (pb->s[pb->ns - 1] - pb->s[0]) / (pb->ns - 1) / pb->set.v_max;
  int B = (int)ceil(log(1.0 / KL_LM_MEMORY) / fmax(r * dt, 1e-9)) + 1;
  if (B > KL_LM_BMAX) B = KL_LM_BMAX;
  if (B < 2) B = 2;
  const char *ev = getenv("KELVIN_LM_BAND"); /* for measuring the band's effect; not a setting */
  if (ev && atoi(ev) > 0) B = atoi(ev);
  if (B > pb->ns - 1) B = pb->ns - 1;
  return B;
}

/* the scored measure of candidate p of P from the batch's per-sample outputs so (KL_SO_N x ns x P) */
static void measure_of(const kl_problem *pb, const double *so, size_t P, size_t p, const double *x, double *tmp,
                       double *S)
{
  const size_t ns = (size_t)pb->ns;
  for (size_t f = 0; f < KL_SO_N; ++f)
    for (size_t k = 0; k < ns; ++k) tmp[f * ns + k] = so[(f * ns + k) * P + p];
  kl_problem_measure(pb, pb->set.measure, tmp, x, x + ns, S);
}

/* the weights of the residual groups (lm.h) */
typedef struct weights {
  double cF, cAs, cAh, cVs, cVh, cVp;
} weights;

static weights weights_of(const kl_problem *pb)
{
  const kl_settings *s = &pb->set;
  const double ns = pb->ns;
  weights w;
  w.cF = sqrt(s->w_rms / (ns - 1));
  w.cAs = sqrt(s->w_rough / (ns - 2));
  w.cAh = sqrt(s->w_acc / (ns - 2));
  w.cVs = sqrt(s->w_rough / (ns - 2));
  w.cVh = sqrt(s->w_acc / (ns - 1));
  w.cVp = sqrt(0.01 * s->w_time / ns);
  return w;
}

/* the banded Gauss-Newton system: H (n x (p + 1), H(i, d) = A(i, i + d)) and g = J' r */
typedef struct gn {
  int n, p;
  gsl_matrix *H;
  double *g;
  double phi;
} gn;

/* add one residual row r with nonzeros val at the interleaved variables idx (sorted ascending) */
static void gn_row(gn *q, int nnz, const int *idx, const double *val, double r)
{
  q->phi += r * r;
  if (!q->H) return;
  for (int a = 0; a < nnz; ++a) {
    q->g[idx[a]] += val[a] * r;
    for (int b = a; b < nnz; ++b) {
      const int d = idx[b] - idx[a];
      if (d <= q->p) *gsl_matrix_ptr(q->H, (size_t)idx[a], (size_t)d) += val[a] * val[b];
    }
  }
}

#define IO(k) (2 * (k))     /* interleaved index of o_k */
#define IV(k) (2 * (k) + 1) /* and of v_k */

/* the regularisation rows (exact derivatives) at x = [o; v] */
static void regularisation(const kl_problem *pb, const double *x, gn *q)
{
  const kl_settings *s = &pb->set;
  const int ns = pb->ns;
  const double *o = x, *v = x + ns;
  const weights w = weights_of(pb);
  const double A = s->o_acc, vmax = s->v_max, amax = s->a_max;
  for (int k = 1; k + 1 < ns; ++k) {
    double c;
    const double a = kl_lm_normal_accel(pb, o, v, k, &c);
    /* idx ascending: o_{k-1}, o_k, v_k, o_{k+1} */
    const int idx[4] = {IO(k - 1), IO(k), IV(k), IO(k + 1)};
    const double da[4] = {c, -2 * c, 2 * a / v[k], c};
    double val[4];
    for (int i = 0; i < 4; ++i) val[i] = w.cAs * da[i] / A;
    gn_row(q, 4, idx, val, w.cAs * a / A);
    const double ex = fabs(a) / A - 1.0;
    if (ex > 0) {
      const double sg = a > 0 ? 1.0 : -1.0;
      for (int i = 0; i < 4; ++i) val[i] = w.cAh * sg * da[i] / A;
      gn_row(q, 4, idx, val, w.cAh * ex);
    }
    const int iv[3] = {IV(k - 1), IV(k), IV(k + 1)};
    const double vv[3] = {w.cVs / vmax, -2 * w.cVs / vmax, w.cVs / vmax};
    gn_row(q, 3, iv, vv, w.cVs * (v[k + 1] - 2 * v[k] + v[k - 1]) / vmax);
  }
  for (int k = 1; k < ns; ++k) {
    const double ds = pb->s[k] - pb->s[k - 1];
    const double qa = (v[k] * v[k] - v[k - 1] * v[k - 1]) / (2 * ds), ex = fabs(qa) / amax - 1.0;
    if (ex > 0) {
      const double sg = qa > 0 ? 1.0 : -1.0;
      const int idx[2] = {IV(k - 1), IV(k)};
      const double val[2] = {-w.cVh * sg * v[k - 1] / ds / amax, w.cVh * sg * v[k] / ds / amax};
      gn_row(q, 2, idx, val, w.cVh * ex);
    }
  }
  for (int k = 0; k < ns; ++k) {
    const int idx[1] = {IV(k)};
    const double val[1] = {-w.cVp / vmax};
    gn_row(q, 1, idx, val, w.cVp * (vmax - v[k]) / vmax);
  }
}

double kl_lm_phi(const kl_problem *pb, const double *x, const double *so)
{
  const int ns = pb->ns;
  double *S = malloc((size_t)ns * sizeof *S);
  if (!S) return NAN;
  kl_problem_measure(pb, pb->set.measure, so, x, x + ns, S);
  const weights w = weights_of(pb);
  gn q = {2 * ns, 0, NULL, NULL, 0.0};
  for (int k = 1; k < ns; ++k) {
    const double r = w.cF * (S[k] - pb->ft[k]) / pb->gp[KL_GP_FREF];
    q.phi += r * r;
  }
  regularisation(pb, x, &q);
  free(S);
  return q.phi;
}

/* the feed within its acceleration limit: v_k^2 - v_{k-1}^2 <= 2 a_max ds either way, by lowering speeds
 * (a forward and a backward sweep, the way a feed profile is planned); the hinge rows of the limit are
 * inactive at a feasible point, so a Gauss-Newton step cannot see them: each step is made feasible */
static void feed_feasible(const kl_problem *pb, double *v)
{
  const int ns = pb->ns;
  const double a = pb->set.a_max;
  for (int k = 1; k < ns; ++k) v[k] = fmin(v[k], sqrt(v[k - 1] * v[k - 1] + 2 * a * (pb->s[k] - pb->s[k - 1])));
  for (int k = ns - 2; k >= 0; --k) v[k] = fmin(v[k], sqrt(v[k + 1] * v[k + 1] + 2 * a * (pb->s[k + 1] - pb->s[k])));
  for (int k = 0; k < ns; ++k) v[k] = fmax(v[k], pb->lo[ns + k]);
}

typedef struct lm {
  const kl_problem *pb;
  kl_host *h;
  kl_rollout *ro;
  char *msg;
  int cap;
  size_t pcap;
  double *ctrl, *obj, *so, *tmp; /* batch scratch: (nc x P), (KL_OBJ_N x P), (KL_SO_N x ns x P), (KL_SO_N x ns) */
  long rollouts;
} lm;

/* roll out P candidates xs (P x nc, one per row), with per-sample outputs */
static kelvin_status batch(lm *L, size_t P, const double *xs)
{
  const size_t nc = (size_t)L->pb->nc, ns = (size_t)L->pb->ns;
  if (P > L->pcap) {
    free(L->ctrl);
    free(L->obj);
    free(L->so);
    L->ctrl = malloc(nc * P * sizeof *L->ctrl);
    L->obj = malloc(KL_OBJ_N * P * sizeof *L->obj);
    L->so = malloc(KL_SO_N * ns * P * sizeof *L->so);
    L->pcap = (L->ctrl && L->obj && L->so) ? P : 0;
    if (!L->pcap) {
      snprintf(L->msg, (size_t)L->cap, "out of memory for %zu rollouts of %zu samples", P, ns);
      return KELVIN_ERR_NOMEM;
    }
  }
  for (size_t p = 0; p < P; ++p)
    for (size_t j = 0; j < nc; ++j) L->ctrl[j * P + p] = xs[p * nc + j];
  const kelvin_status st = kl_rollout_eval(L->ro, P, L->ctrl, L->obj, L->so);
  if (st != KELVIN_OK) snprintf(L->msg, (size_t)L->cap, "%s", kl_host_errmsg(L->h));
  L->rollouts += (long)P;
  return st;
}

/* the tangent-linear rollout of x with nd offset directions dirs (nd x ns): the measure's derivatives into
 * dS (nd x ns), the outputs into L->so, L->obj as a batch of one */
static kelvin_status tangent_batch(lm *L, int nd, const double *x, const double *dirs, double *dS)
{
  if ((size_t)1 > L->pcap) {
    kelvin_status st = batch(L, 1, x); /* sizes the scratch */
    if (st != KELVIN_OK) return st;
  }
  const kelvin_status st = kl_rollout_tangent(L->ro, 1, x, nd, dirs, L->obj, L->so, dS);
  if (st != KELVIN_OK) snprintf(L->msg, (size_t)L->cap, "%s", kl_host_errmsg(L->h));
  L->rollouts += 1;
  return st;
}

/* sum of squares of candidate p of the last batch (HUGE_VAL for a failed rollout) */
static double phi_of(lm *L, size_t P, size_t p, const double *x, double *S)
{
  if (L->obj[KL_OBJ_STATUS * P + p] != 0.0) return HUGE_VAL;
  const int ns = L->pb->ns;
  measure_of(L->pb, L->so, P, p, x, L->tmp, S);
  const weights w = weights_of(L->pb);
  gn q = {2 * ns, 0, NULL, NULL, 0.0};
  for (int k = 1; k < ns; ++k) {
    const double r = w.cF * (S[k] - L->pb->ft[k]) / L->pb->gp[KL_GP_FREF];
    q.phi += r * r;
  }
  regularisation(L->pb, x, &q);
  return isfinite(q.phi) ? q.phi : HUGE_VAL;
}

kelvin_status kl_lm_solve(const kl_problem *pb, kl_host *h, kl_rollout *ro, double *x, int maxit, double maxtime,
                          kl_progress *progress, kl_lm_stats *stats, char *msg, int cap)
{
  const double t0 = kl_now();
  double *const jac_out = stats->jac_out;
  memset(stats, 0, sizeof *stats);
  stats->jac_out = jac_out;
  stats->stop = "";
  const int ns = pb->ns, n = 2 * ns, B = kl_lm_band(pb);
  const int p = 2 * B - 1 > 5 ? 2 * B - 1 : 5;
  const int tangent = pb->set.jacobian == KL_JACOBIAN_TANGENT && B <= KL_TL_MAX;
  const size_t nc = (size_t)pb->nc, PJ = (size_t)(2 * B + 1);
  stats->band = B;
  if (pb->basis || pb->nc != n) {
    snprintf(msg, (size_t)cap, "lm: the problem must have per-sample commands (optimiser.method: lm)");
    return KELVIN_ERR_ARG;
  }
  lm L = {pb, h, ro, msg, cap, 0, NULL, NULL, NULL, NULL, 0};
  kelvin_status st = KELVIN_OK;
  double *xs = malloc(PJ * nc * sizeof *xs), *S0 = malloc((size_t)ns * sizeof *S0), *S = malloc((size_t)ns * sizeof *S);
  double *step = malloc(nc * sizeof *step), *xt = malloc(KL_LM_NLAMBDA * nc * sizeof *xt), *dx = malloc((size_t)n * sizeof *dx);
  L.tmp = malloc(KL_SO_N * (size_t)ns * sizeof *L.tmp);
  double *Sc = malloc(PJ * (size_t)ns * sizeof *Sc), *dirs = calloc((size_t)B * ns, sizeof *dirs);
  double *dS = malloc((size_t)B * ns * sizeof *dS);
  if (dirs)
    for (int k = 0; k < ns; ++k) dirs[(size_t)(k % B) * ns + k] = 1.0; /* colour c: the samples j = c mod B */
  gn q = {n, p, gsl_matrix_alloc((size_t)n, (size_t)p + 1), calloc((size_t)n, sizeof(double)), 0.0};
  gsl_matrix *A = gsl_matrix_alloc((size_t)n, (size_t)p + 1);
  gsl_vector *rhs = gsl_vector_alloc((size_t)n), *sol = gsl_vector_alloc((size_t)n);
  if (!xs || !S0 || !S || !step || !xt || !dx || !L.tmp || !q.H || !q.g || !A || !rhs || !sol || !Sc || !dirs || !dS) {
    snprintf(msg, (size_t)cap, "out of memory");
    st = KELVIN_ERR_NOMEM;
    goto done;
  }
  kl_gsl_guard();
  /* forward-difference steps: 2 % of the reference force through the static compliance, 1 % of the top speed */
  const double F = pb->gp[KL_GP_FREF];
  const double comp = kl_contact_compliance(kl_problem_contact(pb), F) + 1.0 / pb->set.holder_K;
  const double dO = 0.02 * F * comp, dV = 0.01 * pb->set.v_max;
  for (int k = 0; k < ns; ++k) x[k] = fmin(pb->hi[k], fmax(pb->lo[k], x[k])), x[ns + k] = fmin(pb->hi[ns + k], fmax(pb->lo[ns + k], x[ns + k]));
  feed_feasible(pb, x + ns);
  if ((st = batch(&L, 1, x)) != KELVIN_OK) goto done;
  double phi = phi_of(&L, 1, 0, x, S0);
  stats->phi0 = phi;
  if (!(phi < HUGE_VAL)) {
    stats->stop = "the start's rollout failed";
    goto done;
  }
  double lambda = 1e-3;
  stats->stop = "most iterations";
  for (int it = 0; it < maxit; ++it) {
    if (maxtime > 0 && kl_now() - t0 > maxtime) {
      stats->stop = "maxtime";
      break;
    }
    /* the Jacobian: base + B offset colours + B speed colours in one batch (forward differences); or the
     * base with the B offset colours' exact derivatives in one tangent-linear rollout, and the B speed
     * colours by differences in a second batch */
    double t1 = kl_now();
    for (size_t c = 0; c < PJ; ++c) memcpy(xs + c * nc, x, nc * sizeof *x);
    for (int k = 0; k < ns; ++k) {
      const int c = k % B;
      step[k] = x[k] + dO <= pb->hi[k] ? dO : -dO;
      step[ns + k] = x[ns + k] + dV <= pb->hi[ns + k] ? dV : -dV;
      xs[(size_t)(1 + c) * nc + k] += step[k];
      xs[(size_t)(1 + B + c) * nc + ns + k] += step[ns + k];
    }
    int ok[2 * KL_LM_BMAX + 1];
    if (!tangent) {
      if ((st = batch(&L, PJ, xs)) != KELVIN_OK) goto done;
      for (size_t c = 0; c < PJ; ++c) {
        ok[c] = L.obj[KL_OBJ_STATUS * PJ + c] == 0.0;
        measure_of(pb, L.so, PJ, c, xs + c * nc, L.tmp, Sc + c * (size_t)ns);
      }
    } else {
      if ((st = tangent_batch(&L, B, x, dirs, dS)) != KELVIN_OK) goto done;
      ok[0] = L.obj[KL_OBJ_STATUS] == 0.0;
      measure_of(pb, L.so, 1, 0, x, L.tmp, Sc);
      if ((st = batch(&L, (size_t)B, xs + (size_t)(1 + B) * nc)) != KELVIN_OK) goto done;
      for (int c = 0; c < B; ++c) {
        ok[1 + B + c] = L.obj[KL_OBJ_STATUS * (size_t)B + (size_t)c] == 0.0;
        measure_of(pb, L.so, (size_t)B, (size_t)c, xs + (size_t)(1 + B + c) * nc, L.tmp, Sc + (size_t)(1 + B + c) * ns);
      }
    }
    gsl_matrix_set_zero(q.H);
    memset(q.g, 0, (size_t)n * sizeof *q.g);
    q.phi = 0;
    memcpy(S0, Sc, (size_t)ns * sizeof *S0);
    {
      const weights w = weights_of(pb);
      for (int k = 1; k < ns; ++k) {
        const double r = w.cF * (S0[k] - pb->ft[k]) / F;
        int idx[2 * KL_LM_BMAX];
        double val[2 * KL_LM_BMAX];
        int nnz = 0;
        const int j0 = k - B + 1 > 0 ? k - B + 1 : 0;
        for (int j = j0; j <= k; ++j) { /* the sample of each colour in (k - B, k], o_j then v_j */
          const size_t co = (size_t)(1 + j % B), cv = (size_t)(1 + B + j % B);
          const double okd = tangent ? dS[(size_t)(j % B) * ns + k]
                                     : ok[co] ? (Sc[co * ns + k] - S0[k]) / step[j] : 0.0;
          const double vkd = ok[cv] ? (Sc[cv * ns + k] - S0[k]) / step[ns + j] : 0.0;
          if (jac_out && it == 0) {
            jac_out[(size_t)k * B + (size_t)(k - j)] = okd;
            jac_out[(size_t)ns * B + (size_t)k * B + (size_t)(k - j)] = vkd;
          }
          idx[nnz] = IO(j), val[nnz++] = w.cF * okd / F;
          idx[nnz] = IV(j), val[nnz++] = w.cF * vkd / F;
        }
        gn_row(&q, nnz, idx, val, r);
      }
    }
    regularisation(pb, x, &q);
    stats->t_jacobian += kl_now() - t1;
    /* the steps for KL_LM_NLAMBDA dampings, one batch */
    t1 = kl_now();
    double dmean = 0;
    for (int i = 0; i < n; ++i) dmean += gsl_matrix_get(q.H, (size_t)i, 0) / n;
    int tried = 0;
    double lam[KL_LM_NLAMBDA];
    for (int t = 0; t < KL_LM_NLAMBDA; ++t) {
      lam[t] = lambda * pow(10.0, t - 1);
      gsl_matrix_memcpy(A, q.H);
      for (int i = 0; i < n; ++i) {
        const double dii = gsl_matrix_get(q.H, (size_t)i, 0);
        *gsl_matrix_ptr(A, (size_t)i, 0) += lam[t] * fmax(dii, 1e-9 * dmean) + 1e-15 * dmean;
        gsl_vector_set(rhs, (size_t)i, -q.g[i]);
      }
      if (gsl_linalg_cholesky_band_decomp(A) != GSL_SUCCESS || gsl_linalg_cholesky_band_solve(A, rhs, sol) != GSL_SUCCESS) {
        kl_gsl_guard(); /* a failed factorisation is this damping's, not the run's */
        lam[t] = NAN;
        memcpy(xt + (size_t)t * nc, x, nc * sizeof *x);
        continue;
      }
      double *y = xt + (size_t)t * nc;
      for (int k = 0; k < ns; ++k) {
        y[k] = fmin(pb->hi[k], fmax(pb->lo[k], x[k] + gsl_vector_get(sol, (size_t)IO(k))));
        y[ns + k] = fmin(pb->hi[ns + k], fmax(pb->lo[ns + k], x[ns + k] + gsl_vector_get(sol, (size_t)IV(k))));
      }
      feed_feasible(pb, y + ns);
      ++tried;
    }
    if (!tried) {
      stats->stop = "the Gauss-Newton system is singular";
      break;
    }
    if ((st = batch(&L, KL_LM_NLAMBDA, xt)) != KELVIN_OK) goto done;
    int best = -1;
    double fbest = phi;
    for (int t = 0; t < KL_LM_NLAMBDA; ++t) {
      if (!isfinite(lam[t])) continue;
      const double f = phi_of(&L, KL_LM_NLAMBDA, (size_t)t, xt + (size_t)t * nc, S);
      if (f < fbest) {
        fbest = f;
        best = t;
      }
    }
    stats->t_steps += kl_now() - t1;
    if (best < 0) { /* no damping lowered it: damp harder */
      lambda *= 1e3;
      if (lambda > 1e8) {
        stats->stop = "no step lowers the residuals";
        break;
      }
      continue;
    }
    const double rel = (phi - fbest) / phi;
    memcpy(x, xt + (size_t)best * nc, nc * sizeof *x);
    phi = fbest;
    lambda = fmax(1e-9, lam[best] / 3.0);
    stats->iterations++;
    if (kl_progress_say(progress, 1, maxit > 0 ? (double)(it + 1) / maxit : -1.0,
                        "lm %d: residuals %.4g (rms-equivalent %.3g %%), damping %.2g, %ld rollouts", stats->iterations, phi,
                        100 * sqrt(phi / fmax(pb->set.w_rms, 1e-300)), lam[best], L.rollouts)) {
      stats->stop = "stopped by the caller";
      snprintf(msg, (size_t)cap, "refinement: stopped by the caller");
      st = KELVIN_ERR_STOPPED;
      break;
    }
    if (rel < 1e-3 && it >= 2) {
      stats->stop = "converged (relative decrease < 1e-3)";
      break;
    }
  }
  stats->phi = phi;
done:
  stats->rollouts = L.rollouts;
  free(xs);
  free(S0);
  free(S);
  free(step);
  free(xt);
  free(dx);
  free(L.tmp);
  free(Sc);
  free(dirs);
  free(dS);
  free(L.ctrl);
  free(L.obj);
  free(L.so);
  if (q.H) gsl_matrix_free(q.H);
  free(q.g);
  if (A) gsl_matrix_free(A);
  if (rhs) gsl_vector_free(rhs);
  if (sol) gsl_vector_free(sol);
  return st;
}
