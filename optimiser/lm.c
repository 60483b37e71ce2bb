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

/* the batch scratch for Q rollouts (ctrl for Q columns, enough for any P <= Q candidates), and the P candidates xs
 * (P x nc, one per row) into ctrl (nc x P) */
static kelvin_status load(lm *L, size_t P, size_t Q, const double *xs)
{
  const size_t nc = (size_t)L->pb->nc, ns = (size_t)L->pb->ns;
  if (Q > L->pcap) {
    free(L->ctrl);
    free(L->obj);
    free(L->so);
    L->ctrl = malloc(nc * Q * sizeof *L->ctrl);
    L->obj = malloc(KL_OBJ_N * Q * sizeof *L->obj);
    L->so = malloc(KL_SO_N * ns * Q * sizeof *L->so);
    L->pcap = (L->ctrl && L->obj && L->so) ? Q : 0;
    if (!L->pcap) {
      snprintf(L->msg, (size_t)L->cap, "out of memory for %zu rollouts of %zu samples", Q, ns);
      return KELVIN_ERR_NOMEM;
    }
  }
  for (size_t p = 0; p < P; ++p)
    for (size_t j = 0; j < nc; ++j) L->ctrl[j * P + p] = xs[p * nc + j];
  return KELVIN_OK;
}

/* roll out P candidates xs (P x nc, one per row), with per-sample outputs */
static kelvin_status batch(lm *L, size_t P, const double *xs)
{
  if (load(L, P, P, xs) != KELVIN_OK) return KELVIN_ERR_NOMEM;
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

/* the start of a refinement: x clamped to the bounds and its feed made feasible; the forward-difference steps, 2 %
 * of the reference force through the static compliance (*dO) and 1 % of the top speed (*dV) */
static void start(const kl_problem *pb, double *x, double *dO, double *dV)
{
  const int ns = pb->ns;
  const double F = pb->gp[KL_GP_FREF];
  const double comp = kl_contact_compliance(kl_problem_contact(pb), F) + 1.0 / pb->set.holder_K;
  *dO = 0.02 * F * comp, *dV = 0.01 * pb->set.v_max;
  for (int k = 0; k < ns; ++k)
    x[k] = fmin(pb->hi[k], fmax(pb->lo[k], x[k])), x[ns + k] = fmin(pb->hi[ns + k], fmax(pb->lo[ns + k], x[ns + k]));
  feed_feasible(pb, x + ns);
}

/* the Jacobian's 2B + 1 candidates (rows of xs): x, then x with the samples of each offset colour (j = c mod B) moved
 * by their step, then each speed colour's; the steps (2 ns, away from the upper bound) into step */
static void colours(const kl_problem *pb, const double *x, int B, double dO, double dV, double *xs, double *step)
{
  const int ns = pb->ns;
  const size_t nc = (size_t)pb->nc;
  for (size_t c = 0; c < (size_t)(2 * B + 1); ++c) memcpy(xs + c * nc, x, nc * sizeof *x);
  for (int k = 0; k < ns; ++k) {
    const int c = k % B;
    step[k] = x[k] + dO <= pb->hi[k] ? dO : -dO;
    step[ns + k] = x[ns + k] + dV <= pb->hi[ns + k] ? dV : -dV;
    xs[(size_t)(1 + c) * nc + k] += step[k];
    xs[(size_t)(1 + B + c) * nc + ns + k] += step[ns + k];
  }
}

/* the force rows of the Gauss-Newton system q, weighted by sw (1 for the nominal problem; a scenario's square root
 * of its weight): residuals sw cF (S_k - F*_k) / F_ref at k >= 1, S = Sc[0 .. ns) the base rollout's scored measure,
 * and their banded Jacobian by forward differences from the colours' measures Sc[c ns + k] (c = 1 + colour for the
 * offsets, 1 + B + colour for the speeds; ok[c] 0: a failed rollout, its column 0) over step; with dS (not NULL)
 * the offsets' exact derivatives dS[colour ns + k] instead; jac_out (not NULL) receives the Jacobian as
 * kl_lm_stats says */
static void force_rows(const kl_problem *pb, gn *q, int B, double sw, const double *Sc, const int *ok,
                       const double *step, const double *dS, double *jac_out)
{
  const int ns = pb->ns;
  const double F = pb->gp[KL_GP_FREF], c = sw * weights_of(pb).cF;
  for (int k = 1; k < ns; ++k) {
    const double r = c * (Sc[k] - pb->ft[k]) / F;
    int idx[2 * KL_LM_BMAX];
    double val[2 * KL_LM_BMAX];
    int nnz = 0;
    const int j0 = k - B + 1 > 0 ? k - B + 1 : 0;
    for (int j = j0; j <= k; ++j) { /* the sample of each colour in (k - B, k], o_j then v_j */
      const size_t co = (size_t)(1 + j % B), cv = (size_t)(1 + B + j % B);
      const double okd = dS ? dS[(size_t)(j % B) * ns + k] : ok[co] ? (Sc[co * ns + k] - Sc[k]) / step[j] : 0.0;
      const double vkd = ok[cv] ? (Sc[cv * ns + k] - Sc[k]) / step[ns + j] : 0.0;
      if (jac_out) {
        jac_out[(size_t)k * B + (size_t)(k - j)] = okd;
        jac_out[(size_t)ns * B + (size_t)k * B + (size_t)(k - j)] = vkd;
      }
      idx[nnz] = IO(j), val[nnz++] = c * okd / F;
      idx[nnz] = IV(j), val[nnz++] = c * vkd / F;
    }
    gn_row(q, nnz, idx, val, r);
  }
}

/* the KL_LM_NLAMBDA candidate steps from x for the dampings lambda 10^(t - 1) of the Gauss-Newton system q, each
 * clamped to the bounds and made feed-feasible, into xt (KL_LM_NLAMBDA x 2 ns); a damping whose factorisation
 * fails leaves x and lam[t] NaN. Returns how many were tried. A, rhs, sol: scratch of q's sizes. */
static int damped_steps(const kl_problem *pb, const gn *q, gsl_matrix *A, gsl_vector *rhs, gsl_vector *sol,
                        const double *x, double lambda, double *lam, double *xt)
{
  const int ns = pb->ns, n = q->n;
  const size_t nc = (size_t)pb->nc;
  double dmean = 0;
  for (int i = 0; i < n; ++i) dmean += gsl_matrix_get(q->H, (size_t)i, 0) / n;
  int tried = 0;
  for (int t = 0; t < KL_LM_NLAMBDA; ++t) {
    lam[t] = lambda * pow(10.0, t - 1);
    gsl_matrix_memcpy(A, q->H);
    for (int i = 0; i < n; ++i) {
      const double dii = gsl_matrix_get(q->H, (size_t)i, 0);
      *gsl_matrix_ptr(A, (size_t)i, 0) += lam[t] * fmax(dii, 1e-9 * dmean) + 1e-15 * dmean;
      gsl_vector_set(rhs, (size_t)i, -q->g[i]);
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
  return tried;
}

kelvin_status kl_lm_solve(const kl_problem *pb, kl_host *h, kl_rollout *ro, double *x, int maxit, double maxtime,
                          kl_progress *progress, kl_lm_stats *stats, char *msg, int cap)
{
  const double t0 = kl_progress_clock(kl_host_shard(h)); /* rank 0's with a shard (optimiser/progress.h) */
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
  double dO, dV;
  start(pb, x, &dO, &dV);
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
    if (maxtime > 0 && kl_progress_clock(kl_host_shard(h)) - t0 > maxtime) {
      stats->stop = "maxtime";
      break;
    }
    /* the Jacobian: base + B offset colours + B speed colours in one batch (forward differences); or the
     * base with the B offset colours' exact derivatives in one tangent-linear rollout, and the B speed
     * colours by differences in a second batch */
    double t1 = kl_now();
    colours(pb, x, B, dO, dV, xs, step);
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
    force_rows(pb, &q, B, 1.0, Sc, ok, step, tangent ? dS : NULL, it == 0 ? jac_out : NULL);
    regularisation(pb, x, &q);
    stats->t_jacobian += kl_now() - t1;
    /* the steps for KL_LM_NLAMBDA dampings, one batch */
    t1 = kl_now();
    double lam[KL_LM_NLAMBDA];
    const int tried = damped_steps(pb, &q, A, rhs, sol, x, lambda, lam, xt);
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

//------------------------------------------------------------------------------------------------------
// the robust refinement over scenarios (lm.h, kl_lm_solve_robust)

#define KL_LM_CHUNK 16 /* scenarios per batch: the Jacobian's outputs of (2B + 1) x 16 rollouts at a time */

/* the robust state: per scenario a view of the problem for its scored measure (its own mass, weight and holder),
 * the scenario set, and the scratch of the batches */
typedef struct rlm {
  lm L;
  const kl_scen_set *sc;
  kl_problem *view;    /* S views */
  double *vbuf;        /* their meff, fg (2 ns each) */
  double *phis;        /* per candidate and scenario: the force residuals' sum of squares (P x S) */
  double *S1, *work;   /* ns; 2 S */
  int *idx;            /* S: the scenarios that weigh */
  double *gpc, *geoc;  /* a chunk of them gathered (KL_LM_CHUNK scenarios) */
} rlm;

/* the view of scenario s: pb with the scenario's effective mass, weight and holder (what kl_problem_measure reads) */
static void view_of(const kl_problem *pb, const kl_scen_set *sc, int s, kl_problem *q, double *buf)
{
  const int ns = pb->ns;
  const double *gp = sc->gp + (size_t)s * KL_GP_N, *geo = sc->geo + (size_t)s * ns * KL_GG_N;
  *q = *pb;
  for (int k = 0; k < ns; ++k) {
    buf[k] = geo[(size_t)k * KL_GG_N + KL_GG_M];
    buf[ns + k] = geo[(size_t)k * KL_GG_N + KL_GG_FG];
  }
  q->meff = buf;
  q->fg = buf + ns;
  q->set.holder_K = gp[KL_GP_KH];
  q->set.holder_D = gp[KL_GP_DH];
}

/* P candidates xs (P x nc) on the C scenarios gp (C x KL_GP_N), geo (C x ns x KL_GG_N): one batch (outputs in R->L) */
static kelvin_status scen_batch(rlm *R, size_t P, const double *xs, const double *gp, const double *geo, int C)
{
  lm *L = &R->L;
  const size_t Q = P * (size_t)C;
  if (load(L, P, Q, xs) != KELVIN_OK) return KELVIN_ERR_NOMEM;
  kelvin_status st = kl_rollout_set_scenarios(L->ro, C, gp, geo);
  if (st == KELVIN_OK) st = kl_rollout_eval_scenarios(L->ro, P, L->ctrl, L->obj, L->so);
  if (st != KELVIN_OK) snprintf(L->msg, (size_t)L->cap, "%s", kl_host_errmsg(L->h));
  L->rollouts += (long)Q;
  return st;
}

/* the force residuals' sum of squares of rollout q of the last batch of Q (scenario s's view), its scored measure
 * into S; HUGE_VAL for a failed rollout */
static double force_phi(rlm *R, size_t Q, size_t q, int s, const double *x, double *S)
{
  lm *L = &R->L;
  if (L->obj[KL_OBJ_STATUS * Q + q] != 0.0) return HUGE_VAL;
  const kl_problem *pb = L->pb;
  measure_of(&R->view[s], L->so, Q, q, x, L->tmp, S);
  const weights w = weights_of(pb);
  double phi = 0;
  for (int k = 1; k < pb->ns; ++k) {
    const double r = w.cF * (S[k] - pb->ft[k]) / pb->gp[KL_GP_FREF];
    phi += r * r;
  }
  return isfinite(phi) ? phi : HUGE_VAL;
}

/* the robust value of P candidates xs over every scenario: R->phis (P x S) and f (P): the statistic of the
 * scenarios' force sums plus the regularisation */
static kelvin_status robust_values(rlm *R, size_t P, const double *xs, double *f)
{
  const kl_problem *pb = R->L.pb;
  const int S = R->sc->S;
  const size_t nc = (size_t)pb->nc;
  for (int s0 = 0; s0 < S; s0 += KL_LM_CHUNK) {
    const int C = S - s0 < KL_LM_CHUNK ? S - s0 : KL_LM_CHUNK;
    const kelvin_status st =
      scen_batch(R, P, xs, R->sc->gp + (size_t)s0 * KL_GP_N, R->sc->geo + (size_t)s0 * pb->ns * KL_GG_N, C);
    if (st != KELVIN_OK) return st;
    for (size_t p = 0; p < P; ++p)
      for (int c = 0; c < C; ++c)
        R->phis[p * S + (size_t)(s0 + c)] = force_phi(R, P * (size_t)C, p * (size_t)C + (size_t)c, s0 + c, xs + p * nc, R->S1);
  }
  for (size_t p = 0; p < P; ++p) {
    int bad = 0;
    for (int s = 0; s < S; ++s) bad |= !(R->phis[p * S + (size_t)s] < HUGE_VAL);
    gn q = {2 * pb->ns, 0, NULL, NULL, 0.0};
    regularisation(pb, xs + p * nc, &q);
    f[p] = bad ? HUGE_VAL : kl_robust_stat(&R->sc->spec, R->phis + p * S, S, NULL, R->work) + q.phi;
    if (!isfinite(f[p])) f[p] = HUGE_VAL;
  }
  return KELVIN_OK;
}

/* what kl_lm_robust_value and kl_lm_solve_robust allocate on R (unallocated members are NULL) */
static void rlm_free(rlm *R)
{
  free(R->view);
  free(R->vbuf);
  free(R->phis);
  free(R->S1);
  free(R->work);
  free(R->L.tmp);
  free(R->idx);
  free(R->gpc);
  free(R->geoc);
  free(R->L.ctrl);
  free(R->L.obj);
  free(R->L.so);
}

kelvin_status kl_lm_robust_value(const kl_problem *pb, kl_host *h, kl_rollout *ro, const kl_scen_set *sc, int P,
                                 const double *xs, double *f, char *msg, int cap)
{
  const int ns = pb->ns, S = sc ? sc->S : 0;
  if (pb->basis || pb->nc != 2 * ns || S < 1 || P < 1) {
    snprintf(msg, (size_t)cap, "lm: per-sample commands, at least one scenario and one pass are needed");
    return KELVIN_ERR_ARG;
  }
  rlm R;
  memset(&R, 0, sizeof R);
  R.L = (lm){pb, h, ro, msg, cap, 0, NULL, NULL, NULL, NULL, 0};
  R.sc = sc;
  R.view = malloc((size_t)S * sizeof *R.view);
  R.vbuf = malloc((size_t)S * 2 * ns * sizeof *R.vbuf);
  R.phis = malloc((size_t)P * S * sizeof *R.phis);
  R.S1 = malloc((size_t)ns * sizeof *R.S1);
  R.work = malloc(2 * (size_t)S * sizeof *R.work);
  R.L.tmp = malloc(KL_SO_N * (size_t)ns * sizeof *R.L.tmp);
  kelvin_status st = KELVIN_ERR_NOMEM;
  if (!R.view || !R.vbuf || !R.phis || !R.S1 || !R.work || !R.L.tmp) {
    snprintf(msg, (size_t)cap, "out of memory");
  } else {
    for (int s = 0; s < S; ++s) view_of(pb, sc, s, &R.view[s], R.vbuf + (size_t)s * 2 * ns);
    st = robust_values(&R, (size_t)P, xs, f);
  }
  rlm_free(&R);
  return st;
}

kelvin_status kl_lm_solve_robust(const kl_problem *pb, kl_host *h, kl_rollout *ro, const kl_scen_set *sc, double *x,
                                 int maxit, double maxtime, kl_progress *progress, kl_lm_stats *stats, char *msg,
                                 int cap)
{
  const double t0 = kl_progress_clock(kl_host_shard(h)); /* rank 0's with a shard (optimiser/progress.h) */
  memset(stats, 0, sizeof *stats);
  stats->stop = "";
  const int ns = pb->ns, n = 2 * ns, B = kl_lm_band(pb), S = sc ? sc->S : 0;
  const int p = 2 * B - 1 > 5 ? 2 * B - 1 : 5;
  const size_t nc = (size_t)pb->nc, PJ = (size_t)(2 * B + 1);
  stats->band = B;
  if (pb->basis || pb->nc != n) {
    snprintf(msg, (size_t)cap, "lm: the problem must have per-sample commands (optimiser.method: lm)");
    return KELVIN_ERR_ARG;
  }
  if (S < 1 || !(sc->spec.kind == KL_ROBUST_MEAN || sc->spec.kind == KL_ROBUST_MEAN_STD ||
                 sc->spec.kind == KL_ROBUST_CVAR || sc->spec.kind == KL_ROBUST_WORST)) {
    snprintf(msg, (size_t)cap, "uncertainty.objective: Levenberg-Marquardt takes mean, mean_std, cvar or worst over at "
                               "least one scenario (chance needs optimiser.method nlopt)");
    return KELVIN_ERR_CONFIG;
  }
  rlm R;
  memset(&R, 0, sizeof R);
  R.L = (lm){pb, h, ro, msg, cap, 0, NULL, NULL, NULL, NULL, 0};
  R.sc = sc;
  kelvin_status st = KELVIN_OK;
  R.view = malloc((size_t)S * sizeof *R.view);
  R.vbuf = malloc((size_t)S * 2 * ns * sizeof *R.vbuf);
  R.phis = malloc((size_t)KL_LM_NLAMBDA * S * sizeof *R.phis);
  R.S1 = malloc((size_t)ns * sizeof *R.S1);
  R.work = malloc(2 * (size_t)S * sizeof *R.work);
  R.L.tmp = malloc(KL_SO_N * (size_t)ns * sizeof *R.L.tmp);
  R.idx = malloc((size_t)S * sizeof *R.idx);
  R.gpc = malloc((size_t)KL_LM_CHUNK * KL_GP_N * sizeof *R.gpc);
  R.geoc = malloc((size_t)KL_LM_CHUNK * ns * KL_GG_N * sizeof *R.geoc);
  double *xs = malloc(PJ * nc * sizeof *xs), *step = malloc(nc * sizeof *step), *xt = malloc(KL_LM_NLAMBDA * nc * sizeof *xt);
  double *Sc = malloc(PJ * (size_t)ns * sizeof *Sc), *wgt = malloc((size_t)S * sizeof *wgt), *phis0 = malloc((size_t)S * sizeof *phis0);
  gn q = {n, p, gsl_matrix_alloc((size_t)n, (size_t)p + 1), calloc((size_t)n, sizeof(double)), 0.0};
  gsl_matrix *A = gsl_matrix_alloc((size_t)n, (size_t)p + 1);
  gsl_vector *rhs = gsl_vector_alloc((size_t)n), *sol = gsl_vector_alloc((size_t)n);
  if (!R.view || !R.vbuf || !R.phis || !R.S1 || !R.work || !R.L.tmp || !R.idx || !R.gpc || !R.geoc || !xs || !step || !xt || !Sc || !wgt || !phis0 ||
      !q.H || !q.g || !A || !rhs || !sol) {
    snprintf(msg, (size_t)cap, "out of memory");
    st = KELVIN_ERR_NOMEM;
    goto done;
  }
  for (int s = 0; s < S; ++s) view_of(pb, sc, s, &R.view[s], R.vbuf + (size_t)s * 2 * ns);
  kl_gsl_guard();
  double dO, dV;
  start(pb, x, &dO, &dV);
  double phi;
  if ((st = robust_values(&R, 1, x, &phi)) != KELVIN_OK) goto done;
  memcpy(phis0, R.phis, (size_t)S * sizeof *phis0);
  stats->phi0 = phi;
  if (!(phi < HUGE_VAL)) {
    stats->stop = "the start's rollout failed on a scenario";
    goto done;
  }
  double lambda = 1e-3;
  stats->stop = "most iterations";
  for (int it = 0; it < maxit; ++it) {
    if (maxtime > 0 && kl_progress_clock(kl_host_shard(h)) - t0 > maxtime) {
      stats->stop = "maxtime";
      break;
    }
    /* the Gauss-Newton system: each scenario's banded Jacobian (base + B offset colours + B speed colours, forward
     * differences) and residuals, weighted by the statistic's derivative there (kl_robust_stat); scenarios of
     * weight 0 (outside the CVaR's tail) are not rolled out */
    double t1 = kl_now();
    kl_robust_stat(&sc->spec, phis0, S, wgt, R.work);
    colours(pb, x, B, dO, dV, xs, step);
    gsl_matrix_set_zero(q.H);
    memset(q.g, 0, (size_t)n * sizeof *q.g);
    q.phi = 0;
    int nw = 0; /* the scenarios that weigh, in chunks gathered into one contiguous set each */
    for (int s = 0; s < S; ++s)
      if (wgt[s] > 0.0) R.idx[nw++] = s;
    for (int i0 = 0; i0 < nw; i0 += KL_LM_CHUNK) {
      const int C = nw - i0 < KL_LM_CHUNK ? nw - i0 : KL_LM_CHUNK;
      for (int c = 0; c < C; ++c) {
        const int s = R.idx[i0 + c];
        memcpy(R.gpc + (size_t)c * KL_GP_N, sc->gp + (size_t)s * KL_GP_N, KL_GP_N * sizeof *R.gpc);
        memcpy(R.geoc + (size_t)c * ns * KL_GG_N, sc->geo + (size_t)s * ns * KL_GG_N, (size_t)ns * KL_GG_N * sizeof *R.geoc);
      }
      if ((st = scen_batch(&R, PJ, xs, R.gpc, R.geoc, C)) != KELVIN_OK) goto done;
      const size_t Cn = (size_t)C, Q = PJ * Cn;
      for (int ci = 0; ci < C; ++ci) {
        const int s = R.idx[i0 + ci];
        int ok[2 * KL_LM_BMAX + 1];
        for (size_t c = 0; c < PJ; ++c) {
          const size_t qi = c * Cn + (size_t)ci;
          ok[c] = R.L.obj[KL_OBJ_STATUS * Q + qi] == 0.0;
          measure_of(&R.view[s], R.L.so, Q, qi, xs + c * nc, R.L.tmp, Sc + c * (size_t)ns);
        }
        force_rows(pb, &q, B, sqrt(wgt[s]), Sc, ok, step, NULL, NULL);
      }
    }
    regularisation(pb, x, &q);
    stats->t_jacobian += kl_now() - t1;
    /* the steps for KL_LM_NLAMBDA dampings, each on every scenario, kept by the robust value itself */
    t1 = kl_now();
    double lam[KL_LM_NLAMBDA], f[KL_LM_NLAMBDA];
    if (!damped_steps(pb, &q, A, rhs, sol, x, lambda, lam, xt)) {
      stats->stop = "the Gauss-Newton system is singular";
      break;
    }
    if ((st = robust_values(&R, KL_LM_NLAMBDA, xt, f)) != KELVIN_OK) goto done;
    int best = -1;
    double fbest = phi;
    for (int t = 0; t < KL_LM_NLAMBDA; ++t)
      if (isfinite(lam[t]) && f[t] < fbest) fbest = f[t], best = t;
    stats->t_steps += kl_now() - t1;
    if (best < 0) {
      lambda *= 1e3;
      if (lambda > 1e8) {
        stats->stop = "no step lowers the robust objective";
        break;
      }
      continue;
    }
    const double rel = (phi - fbest) / phi;
    memcpy(x, xt + (size_t)best * nc, nc * sizeof *x);
    memcpy(phis0, R.phis + (size_t)best * S, (size_t)S * sizeof *phis0);
    phi = fbest;
    lambda = fmax(1e-9, lam[best] / 3.0);
    stats->iterations++;
    if (kl_progress_say(progress, 1, maxit > 0 ? (double)(it + 1) / maxit : -1.0,
                        "robust lm %d: robust objective %.4g over %d scenarios, damping %.2g, %ld rollouts",
                        stats->iterations, phi, S, lam[best], R.L.rollouts)) {
      stats->stop = "stopped by the caller";
      snprintf(msg, (size_t)cap, "robust refinement: stopped by the caller");
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
  stats->rollouts = R.L.rollouts;
  rlm_free(&R);
  free(xs);
  free(step);
  free(xt);
  free(Sc);
  free(wgt);
  free(phis0);
  if (q.H) gsl_matrix_free(q.H);
  free(q.g);
  if (A) gsl_matrix_free(A);
  if (rhs) gsl_vector_free(rhs);
  if (sol) gsl_vector_free(sol);
  return st;
}
