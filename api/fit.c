/* api/fit.c: calibrating the generalised soft-contact law to a measured impact (include/kelvin/fit.h,
 * docs/design.md section 2.6): nonlinear least squares with GSL's trust region (gsl_multifit_nlinear,
 * Levenberg-Marquardt) on the forward model of one impact of the general law (kl_impact with KL_MODEL_GEN,
 * docs/design.md section 2.5), standard errors from the Jacobian at the solution, a refusal of
 * under-determined requests. The fit file (YAML, io/config.h) and its trace CSV (io/table.h) load here. */
#include "kelvin/fit.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

#include "api/api_impl.h"
#include "engine/gsl_guard.h"
#include "io/config.h"
#include "io/table.h"
#include "kernels/kl_impact.h"
#include "kernels/kl_impact_step.h"

#define NP KELVIN_FIT_NPARAM
#define FIT_SAMPLES 17 /* states along the model's impact, interpolated at the trace's times (forward) */
#define FIT_H                                                                                                          \
  1e-4 /* forward-difference step in the internal parameters (log k, logistic arguments): the standard
                      errors agree within 0.1 % for steps 1e-4 to 1e-6, 1e-3 is 9 % off (docs/design.md section 2.6) */
#define FIT_RANK_TOL                                                                                                   \
  1e-6                       /* smallest / largest singular value of the weighted Jacobian below this: the
                                measurements do not determine a combination of the parameters */
#define FIT_BAD_RESIDUAL 1e3 /* weighted residual of a trial law whose impact fails (the step is rejected) */
#define FIT_MAX_TRACE 1000000L

static const char *const pnames[NP + 1] = {"k", "c", "n1", "n2", "m", NULL};

struct kelvin_fit {
  char msg[KL_API_MSG];
  kelvin_progress_fn progress;
  void *ctx;
  /* the loaded problem */
  int loaded;
  kelvin_fit_problem prob;
  double *lt, *lf; /* its trace */
  /* the last run's trace */
  size_t nrun;
  double *rt, *rf, *rm;
};

const char *kelvin_fit_param_name(int p) { return p >= 0 && p < NP ? pnames[p] : NULL; }

void kelvin_fit_problem_init(kelvin_fit_problem *p)
{
  if (!p) return;
  memset(p, 0, sizeof *p);
  const double start[NP] = {1e6, 1e4, 1.5, 1.5, 1.0}, lo[NP] = {0, 0, 0.5, 0.0, 0.1},
               hi[NP] = {INFINITY, INFINITY, 4.0, 4.0, 4.0};
  for (int i = 0; i < NP; ++i) {
    p->start[i] = start[i];
    p->lo[i] = lo[i];
    p->hi[i] = hi[i];
  }
}

kelvin_status kelvin_fit_create(kelvin_fit **out)
{
  if (!out) return KELVIN_ERR_ARG;
  *out = calloc(1, sizeof **out);
  return *out ? KELVIN_OK : KELVIN_ERR_NOMEM;
}

static void free_run(kelvin_fit *f)
{
  free(f->rt), free(f->rf), free(f->rm);
  f->rt = f->rf = f->rm = NULL;
  f->nrun = 0;
}

void kelvin_fit_free(kelvin_fit *f)
{
  if (!f) return;
  free(f->lt), free(f->lf);
  free_run(f);
  free(f);
}

const char *kelvin_fit_errmsg(const kelvin_fit *f) { return f ? f->msg : ""; }

void kelvin_fit_set_progress(kelvin_fit *f, kelvin_progress_fn fn, void *ctx)
{
  if (!f) return;
  f->progress = fn;
  f->ctx = ctx;
}

/* ---------------------------------------------------------------------------------------------------
 * The forward model: one impact of the general law and its force at given times */

typedef struct fwd_out {
  double fpeak, tc, cr;
  int status; /* KL_OK or the impact's status bits */
} fwd_out;

/* The force of the impact of law L (mass, v0) at the n times t (0 outside the contact) into force (nullable
 * when n = 0), and its metrics: the impact by kl_impact (model KL_MODEL_GEN, force separation rule), then the
 * state (d, d') at FIT_SAMPLES equally spaced times over the contact by the same step (kl_impact_step_run up
 * to that time, as kl_impact_sample does), interpolated by cubic Hermite polynomials (d with its rate d', d'
 * with its acceleration -F/mass), and the force of the law at the interpolated state. The state is smooth
 * where the force is not (its kinks at d' = 0 for m < 1, at the contact's start and end): the law itself puts
 * them back. Measured against 401 samples: within 2e-4 of the peak force (docs/design.md section 2.6). */
static fwd_out forward(const double *law, double mass, double v0, size_t n, const double *t, double *force)
{
  fwd_out r = {0, 0, 0, KL_OK};
  kl_impact_in in;
  memset(&in, 0, sizeof in);
  in.m = mass;
  in.v0 = v0;
  in.cr = 1.0;
  in.model = KL_MODEL_GEN;
  in.law = KL_LAW_EXACT;
  in.rule = KL_SEP_FORCE; /* a measured contact time is the time the force is positive */
  in.K = law[KELVIN_FIT_K];
  in.n = law[KELVIN_FIT_N1];
  in.c = law[KELVIN_FIT_C];
  in.n2 = law[KELVIN_FIT_N2];
  in.rate_exp = law[KELVIN_FIT_M];
  const kl_impact_out o = kl_impact(in);
  r.status = o.status;
  if (o.status != KL_OK) return r;
  r.fpeak = o.fpeak;
  r.tc = o.tc;
  r.cr = o.cr_eff;
  if (n == 0) return r;
  kl_gen_law L;
  L.k = law[KELVIN_FIT_K];
  L.c = law[KELVIN_FIT_C];
  L.n1 = law[KELVIN_FIT_N1];
  L.n2 = law[KELVIN_FIT_N2];
  L.m = law[KELVIN_FIT_M];
  double xs[FIT_SAMPLES], vs[FIT_SAMPLES], as[FIT_SAMPLES];
  const double h = o.tc / (FIT_SAMPLES - 1);
  for (int j = 0; j < FIT_SAMPLES; ++j) {
    const kl_istep_out q = kl_impact_step_run(L, mass, v0, 0.0, 1, h * j);
    xs[j] = q.xq;
    vs[j] = q.vq;
    as[j] = -kl_istep_force(L, q.xq, q.vq) / mass;
  }
  for (size_t i = 0; i < n; ++i) {
    force[i] = 0.0;
    if (!(t[i] >= 0.0 && t[i] < o.tc)) continue;
    int j = (int)(t[i] / h);
    if (j > FIT_SAMPLES - 2) j = FIT_SAMPLES - 2;
    const double u = (t[i] - h * j) / h, u2 = u * u, u3 = u2 * u;
    const double h00 = 2 * u3 - 3 * u2 + 1, h10 = u3 - 2 * u2 + u, h01 = -2 * u3 + 3 * u2, h11 = u3 - u2;
    const double x = h00 * xs[j] + h10 * h * vs[j] + h01 * xs[j + 1] + h11 * h * vs[j + 1];
    const double v = h00 * vs[j] + h10 * h * as[j] + h01 * vs[j + 1] + h11 * h * as[j + 1];
    force[i] = kl_istep_force(L, x, v);
  }
  return r;
}

/* ---------------------------------------------------------------------------------------------------
 * Checks */

/* 0 if v lies in parameter p's domain, the law's one (kernels/kl_contact_gen.h, kl_gen_law_check; docs/design.md
 * section 2.5), c > 0 besides (the fit takes log c); else 1 with why: "<name>: <why>, got <v>" */
static int law_bad(int p, double v, char *why, int cap)
{
  kl_gen_law L = {1.0, 1.0, 1.0, 1.0, 1.0};
  double *f[NP] = {&L.k, &L.c, &L.n1, &L.n2, &L.m};
  *f[p] = v;
  if (kl_gen_law_bad(L, why, cap)) return 1;
  if (p == KELVIN_FIT_C && !(v > 0.0)) return snprintf(why, (size_t)cap, "c: must be > 0 (the fit takes log c), got %g", v), 1;
  return 0;
}

/* 0, or KELVIN_ERR_ARG with a message naming the field */
static kelvin_status check_problem(kelvin_fit *f, const kelvin_fit_problem *p)
{
  char *m = f->msg;
  if (!(isfinite(p->mass) && p->mass > 0))
    return kl_api_fail(m, KELVIN_ERR_ARG, "mass: must be > 0 kg, got %g", p->mass);
  if (!(isfinite(p->v0) && p->v0 > 0)) return kl_api_fail(m, KELVIN_ERR_ARG, "v0: must be > 0 m/s, got %g", p->v0);
  for (int i = 0; i < NP; ++i) {
    const char *nm = pnames[i];
    char why[160];
    if (law_bad(i, p->start[i], why, sizeof why)) return kl_api_fail(m, KELVIN_ERR_ARG, "%s", why);
    if (p->fixed[i]) continue;
    const int kc = i == KELVIN_FIT_K || i == KELVIN_FIT_C;
    if (kc) {
      const int unb = p->lo[i] == 0 && p->hi[i] == INFINITY,
                bnd = p->lo[i] > 0 && isfinite(p->hi[i]) && p->hi[i] > p->lo[i];
      if (!unb && !bnd)
        return kl_api_fail(m, KELVIN_ERR_ARG,
                           "%s: bounds must be 0 < min < max < inf, or [0, inf] for none, got [%g, %g]", nm, p->lo[i],
                           p->hi[i]);
    } else if (!(isfinite(p->lo[i]) && isfinite(p->hi[i]) && p->hi[i] > p->lo[i])) {
      return kl_api_fail(m, KELVIN_ERR_ARG, "%s: bounds must be finite with min < max, got [%g, %g]", nm, p->lo[i],
                         p->hi[i]);
    } else if (law_bad(i, p->lo[i], why, sizeof why) || law_bad(i, p->hi[i], why, sizeof why)) {
      return kl_api_fail(m, KELVIN_ERR_ARG, "%s (a bound)", why);
    }
    if (!(p->start[i] > p->lo[i] && p->start[i] < p->hi[i]))
      return kl_api_fail(m, KELVIN_ERR_ARG, "%s: the start %g must lie strictly inside its bounds [%g, %g]", nm,
                         p->start[i], p->lo[i], p->hi[i]);
  }
  const struct {
    const char *name, *unit;
    double v, sd;
  } ms[3] = {{"fpeak", "N", p->fpeak, p->fpeak_sd}, {"tc", "s", p->tc, p->tc_sd}, {"cr", "", p->cr, p->cr_sd}};
  for (int k = 0; k < 3; ++k) {
    if (!(isfinite(ms[k].sd) && ms[k].sd >= 0))
      return kl_api_fail(m, KELVIN_ERR_ARG, "%s_sd: must be >= 0 (0: not measured), got %g", ms[k].name, ms[k].sd);
    if (ms[k].sd > 0 && !(isfinite(ms[k].v) && ms[k].v > 0 && (k < 2 || ms[k].v <= 1)))
      return kl_api_fail(m, KELVIN_ERR_ARG, "%s: must be %s, got %g", ms[k].name, k < 2 ? "> 0" : "in (0, 1]", ms[k].v);
  }
  if (p->ntrace > 0) {
    if (!p->trace_t || !p->trace_f)
      return kl_api_fail(m, KELVIN_ERR_ARG, "trace: %zu samples but NULL arrays", p->ntrace);
    if (!(isfinite(p->trace_sd) && p->trace_sd >= 0))
      return kl_api_fail(m, KELVIN_ERR_ARG, "trace_sd: must be >= 0 N (0: from the residuals), got %g", p->trace_sd);
    for (size_t i = 0; i < p->ntrace; ++i) {
      if (!isfinite(p->trace_t[i]) || !isfinite(p->trace_f[i]))
        return kl_api_fail(m, KELVIN_ERR_ARG, "trace sample %zu: time and force must be finite", i);
      if (i > 0 && !(p->trace_t[i] > p->trace_t[i - 1]))
        return kl_api_fail(m, KELVIN_ERR_ARG, "trace sample %zu: times must increase, got %g after %g", i,
                           p->trace_t[i], p->trace_t[i - 1]);
    }
  }
  if (p->max_iter < 0) return kl_api_fail(m, KELVIN_ERR_ARG, "max_iter: must be >= 0, got %d", p->max_iter);
  return KELVIN_OK;
}

/* ---------------------------------------------------------------------------------------------------
 * Internal parameters (docs/design.md section 2.6): k and c as logarithms (logistic between log bounds when
 * both are given), exponents by a logistic onto [lo, hi]; x = T(p). */

typedef struct fit_ctx {
  const kelvin_fit_problem *p;
  int idx[NP]; /* the free parameters' indices */
  int nfree;
  size_t nres;
  double wt;  /* weight of the trace residuals: 1 / sd [1/N] */
  double *fm; /* model force at the trace times (ntrace) */
  int nfail;  /* forward evaluations that failed */
} fit_ctx;

static double sigm(double z) { return z >= 0 ? 1.0 / (1.0 + exp(-z)) : exp(z) / (1.0 + exp(z)); }

static int logistic(const kelvin_fit_problem *p, int i)
{
  return !(i == KELVIN_FIT_K || i == KELVIN_FIT_C) || (p->lo[i] > 0 && isfinite(p->hi[i]));
}

/* x and dx/dp of parameter i at internal value z */
static double to_x(const kelvin_fit_problem *p, int i, double z, double *dxdz)
{
  const int kc = i == KELVIN_FIT_K || i == KELVIN_FIT_C;
  if (kc && !logistic(p, i)) {
    const double x = exp(z);
    if (dxdz) *dxdz = x;
    return x;
  }
  const double s = sigm(z);
  if (kc) {
    const double L = log(p->lo[i]), H = log(p->hi[i]), x = exp(L + (H - L) * s);
    if (dxdz) *dxdz = x * (H - L) * s * (1.0 - s);
    return x;
  }
  if (dxdz) *dxdz = (p->hi[i] - p->lo[i]) * s * (1.0 - s);
  return p->lo[i] + (p->hi[i] - p->lo[i]) * s;
}

static double to_z(const kelvin_fit_problem *p, int i, double x)
{
  const int kc = i == KELVIN_FIT_K || i == KELVIN_FIT_C;
  if (kc && !logistic(p, i)) return log(x);
  double s = kc ? (log(x) - log(p->lo[i])) / (log(p->hi[i]) - log(p->lo[i])) : (x - p->lo[i]) / (p->hi[i] - p->lo[i]);
  return log(s / (1.0 - s));
}

/* the internal parameter's name in messages */
static const char *zname(const kelvin_fit_problem *p, int i, char *buf, size_t cap)
{
  const int kc = i == KELVIN_FIT_K || i == KELVIN_FIT_C;
  snprintf(buf, cap, kc ? "log %s" : "%s", pnames[i]);
  (void)p;
  return buf;
}

static void law_of(const fit_ctx *c, const gsl_vector *z, double *law)
{
  for (int i = 0; i < NP; ++i) law[i] = c->p->start[i];
  for (int j = 0; j < c->nfree; ++j) law[c->idx[j]] = to_x(c->p, c->idx[j], gsl_vector_get(z, (size_t)j), NULL);
}

/* the weighted residuals at z: trace samples, then the measured metrics */
static int resid(const gsl_vector *z, void *vc, gsl_vector *r)
{
  fit_ctx *c = vc;
  const kelvin_fit_problem *p = c->p;
  double law[NP];
  law_of(c, z, law);
  const fwd_out o = forward(law, p->mass, p->v0, p->ntrace, p->trace_t, c->fm);
  if (o.status != KL_OK) {
    ++c->nfail;
    gsl_vector_set_all(r, FIT_BAD_RESIDUAL);
    return GSL_SUCCESS;
  }
  size_t k = 0;
  for (size_t i = 0; i < p->ntrace; ++i) gsl_vector_set(r, k++, c->wt * (c->fm[i] - p->trace_f[i]));
  if (p->fpeak_sd > 0) gsl_vector_set(r, k++, (o.fpeak - p->fpeak) / p->fpeak_sd);
  if (p->tc_sd > 0) gsl_vector_set(r, k++, (o.tc - p->tc) / p->tc_sd);
  if (p->cr_sd > 0) gsl_vector_set(r, k++, (o.cr - p->cr) / p->cr_sd);
  return GSL_SUCCESS;
}

/* the Jacobian by forward differences (the forward model has no derivatives); r0 the residuals at z when known */
static int jac_from(const gsl_vector *z, fit_ctx *c, const gsl_vector *r0, gsl_matrix *J)
{
  gsl_vector *zz = gsl_vector_alloc(z->size), *rp = gsl_vector_alloc(c->nres),
             *rz = r0 ? NULL : gsl_vector_alloc(c->nres);
  if (!zz || !rp || (!r0 && !rz)) {
    gsl_vector_free(zz), gsl_vector_free(rp), gsl_vector_free(rz);
    return GSL_ENOMEM;
  }
  if (!r0) {
    resid(z, c, rz);
    r0 = rz;
  }
  for (size_t j = 0; j < z->size; ++j) {
    gsl_vector_memcpy(zz, z);
    gsl_vector_set(zz, j, gsl_vector_get(z, j) + FIT_H);
    resid(zz, c, rp);
    for (size_t i = 0; i < c->nres; ++i)
      gsl_matrix_set(J, i, j, (gsl_vector_get(rp, i) - gsl_vector_get(r0, i)) / FIT_H);
  }
  gsl_vector_free(zz), gsl_vector_free(rp), gsl_vector_free(rz);
  return GSL_SUCCESS;
}

static int jac(const gsl_vector *z, void *vc, gsl_matrix *J) { return jac_from(z, vc, NULL, J); }

/* Singular values of J (n x p, n >= p): *cond = largest / smallest (inf when 0); the right singular vector of
 * the smallest into v. 0, or -1 out of memory or when GSL fails. */
static int svd_of(const gsl_matrix *J, double *cond, double *v)
{
  const size_t n = J->size1, q = J->size2;
  gsl_matrix *A = gsl_matrix_alloc(n, q), *V = gsl_matrix_alloc(q, q);
  gsl_vector *S = gsl_vector_alloc(q), *w = gsl_vector_alloc(q);
  if (!A || !V || !S || !w) {
    gsl_matrix_free(A), gsl_matrix_free(V), gsl_vector_free(S), gsl_vector_free(w);
    return -1;
  }
  gsl_matrix_memcpy(A, J);
  if (gsl_linalg_SV_decomp(A, V, S, w) != GSL_SUCCESS) { /* not for n >= p and finite J (the count check) */
    gsl_matrix_free(A), gsl_matrix_free(V), gsl_vector_free(S), gsl_vector_free(w);
    return -1;
  }
  const double smax = gsl_vector_get(S, 0), smin = gsl_vector_get(S, q - 1);
  *cond = smin > 0 ? smax / smin : INFINITY;
  for (size_t j = 0; j < q; ++j) v[j] = gsl_matrix_get(V, j, q - 1);
  gsl_matrix_free(A), gsl_matrix_free(V), gsl_vector_free(S), gsl_vector_free(w);
  return 0;
}

/* Refuse a rank-deficient J, naming the combination (the singular vector) it does not determine. */
static kelvin_status rank_check(kelvin_fit *f, const fit_ctx *c, const gsl_matrix *J, const char *where, double *cond)
{
  double v[NP];
  if (svd_of(J, cond, v) != 0)
    return kl_api_fail(f->msg, KELVIN_ERR_NUMERIC, "fit: the singular values of the Jacobian failed: %s",
                       kl_gsl_error() ? kl_gsl_error() : "out of memory");
  if (*cond * FIT_RANK_TOL < 1.0 && isfinite(*cond)) return KELVIN_OK;
  char comb[512] = "", nm[16];
  size_t len = 0;
  int jm = 0; /* scaled so that the largest component is +1 */
  for (int j = 1; j < c->nfree; ++j)
    if (fabs(v[j]) > fabs(v[jm])) jm = j;
  const double sg = v[jm] != 0 ? 1.0 / v[jm] : 1.0;
  for (int j = 0; j < c->nfree && len + 40 < sizeof comb; ++j) {
    const double a = v[j] * sg;
    if (fabs(a) < 0.05) continue;
    len += (size_t)snprintf(comb + len, sizeof comb - len, "%s%s%.2g %s",
                            len ? (a < 0 ? " - " : " + ") : (a < 0 ? "-" : ""), "", fabs(a),
                            zname(c->p, c->idx[j], nm, sizeof nm));
  }
  return kl_api_fail(f->msg, KELVIN_ERR_ARG,
                     "under-determined: %s the measurements do not determine the combination %s of the free parameters "
                     "(condition number of the weighted Jacobian %.3g, above %.0g): give a force trace, more measured "
                     "quantities, or fix one of these parameters",
                     where, comb, *cond, 1.0 / FIT_RANK_TOL);
}

/* One trust-region solve from z (updated). KELVIN_OK, KELVIN_ERR_STOPPED, KELVIN_ERR_NUMERIC, NOMEM. */
static kelvin_status solve(kelvin_fit *f, fit_ctx *c, gsl_vector *z, const char *stage, int *iters, int *converged)
{
  const kelvin_fit_problem *p = c->p;
  gsl_multifit_nlinear_fdf fdf;
  memset(&fdf, 0, sizeof fdf);
  fdf.f = resid;
  fdf.df = jac;
  fdf.n = c->nres;
  fdf.p = (size_t)c->nfree;
  fdf.params = c;
  gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
  fp.trs = gsl_multifit_nlinear_trs_lm;
  fp.scale = gsl_multifit_nlinear_scale_more;
  gsl_multifit_nlinear_workspace *w =
      gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, c->nres, (size_t)c->nfree);
  if (!w) return kl_api_fail(f->msg, KELVIN_ERR_NOMEM, "fit: out of memory");
  const int maxit = p->max_iter > 0 ? p->max_iter : 200;
  kelvin_status st = KELVIN_OK;
  int gs = gsl_multifit_nlinear_init(z, &fdf, w);
  *converged = 0;
  int it = 0;
  for (; gs == GSL_SUCCESS && it < maxit; ++it) {
    gs = gsl_multifit_nlinear_iterate(w);
    if (gs == GSL_ENOPROG) { /* no step lowers chi^2 further: a minimum to the forward model's resolution */
      gs = GSL_SUCCESS;
      *converged = 1;
      ++it;
      break;
    }
    if (gs != GSL_SUCCESS) break;
    int info = 0;
    const int ts = gsl_multifit_nlinear_test(0.0, 1e-10, 0.0, &info, w);
    if (f->progress) {
      const gsl_vector *r = gsl_multifit_nlinear_residual(w);
      double chi2;
      gsl_blas_ddot(r, r, &chi2);
      char line[160];
      snprintf(line, sizeof line, "fit: %siteration %d, chi^2 %.6g", stage, *iters + it + 1, chi2);
      if (f->progress(f->ctx, fmin(1.0, (double)(*iters + it + 1) / maxit), line) != 0) {
        st = kl_api_fail(f->msg, KELVIN_ERR_STOPPED, "fit: stopped at iteration %d", *iters + it + 1);
        break;
      }
    }
    if (ts == GSL_SUCCESS) {
      *converged = 1;
      ++it;
      break;
    }
  }
  if (st == KELVIN_OK && gs != GSL_SUCCESS)
    st = kl_api_fail(f->msg, KELVIN_ERR_NUMERIC, "fit: the trust-region iteration failed at iteration %d: %s", it,
                     gsl_strerror(gs));
  if (st == KELVIN_OK) gsl_vector_memcpy(z, gsl_multifit_nlinear_position(w));
  *iters += it;
  gsl_multifit_nlinear_free(w);
  return st;
}

kelvin_status kelvin_fit_run(kelvin_fit *f, const kelvin_fit_problem *p, kelvin_fit_result *r)
{
  if (r) memset(r, 0, sizeof *r);
  if (!f) return KELVIN_ERR_ARG;
  f->msg[0] = '\0';
  free_run(f);
  if (!p || !r) return kl_api_fail(f->msg, KELVIN_ERR_ARG, "kelvin_fit_run: NULL %s", p ? "result" : "problem");
  kelvin_status st = check_problem(f, p);
  if (st != KELVIN_OK) return st;
  kl_gsl_guard();
  fit_ctx c;
  memset(&c, 0, sizeof c);
  c.p = p;
  for (int i = 0; i < NP; ++i)
    if (!p->fixed[i]) c.idx[c.nfree++] = i;
  const int nmet = (p->fpeak_sd > 0) + (p->tc_sd > 0) + (p->cr_sd > 0);
  c.nres = p->ntrace + (size_t)nmet;
  if (c.nfree == 0) return kl_api_fail(f->msg, KELVIN_ERR_ARG, "fit: every parameter is fixed: nothing to fit");
  const int sd_est = p->ntrace > 0 && !(p->trace_sd > 0);
  if (c.nres < (size_t)c.nfree || (sd_est && c.nres == (size_t)c.nfree)) {
    char fr[64] = "";
    for (int j = 0; j < c.nfree; ++j)
      snprintf(fr + strlen(fr), sizeof fr - strlen(fr), "%s%s", j ? ", " : "", pnames[c.idx[j]]);
    const size_t need = (size_t)c.nfree - c.nres + (size_t)sd_est;
    return kl_api_fail(f->msg, KELVIN_ERR_ARG,
                       "under-determined: %zu measured number%s (%s) for %d free parameters (%s)%s; peak force, "
                       "contact time and restitution are 3 numbers for the law's 5 unknowns: give a force trace, or "
                       "fix at least %zu parameter%s (e.g. m: {fixed: 1})",
                       c.nres, c.nres == 1 ? "" : "s", p->ntrace ? "trace samples and metrics" : "metrics", c.nfree, fr,
                       sd_est ? " leave no degree of freedom to estimate the trace's noise from" : "", need,
                       need == 1 ? "" : "s");
  }
  /* the trace's weight: 1 / sd, or first a provisional sd (1 % of the largest measured force), estimated
   * from the residuals after a first pass */
  double fmax_meas = 0;
  for (size_t i = 0; i < p->ntrace; ++i) fmax_meas = fmax(fmax_meas, fabs(p->trace_f[i]));
  if (p->ntrace > 0 && sd_est && !(fmax_meas > 0))
    return kl_api_fail(f->msg, KELVIN_ERR_ARG, "trace: every force is 0: nothing to fit");
  double sd = p->ntrace ? (sd_est ? 0.01 * fmax_meas : p->trace_sd) : 1.0;
  c.wt = 1.0 / sd;
  c.fm = calloc(p->ntrace ? p->ntrace : 1, sizeof(double));
  gsl_vector *z = gsl_vector_alloc((size_t)c.nfree), *res = gsl_vector_alloc(c.nres);
  gsl_matrix *J = gsl_matrix_alloc(c.nres, (size_t)c.nfree), *cov = gsl_matrix_alloc((size_t)c.nfree, (size_t)c.nfree);
  f->rt = malloc(sizeof(double) * (p->ntrace ? p->ntrace : 1));
  f->rf = malloc(sizeof(double) * (p->ntrace ? p->ntrace : 1));
  f->rm = malloc(sizeof(double) * (p->ntrace ? p->ntrace : 1));
  if (!c.fm || !z || !res || !J || !cov || !f->rt || !f->rf || !f->rm) {
    st = kl_api_fail(f->msg, KELVIN_ERR_NOMEM, "fit: out of memory for %zu residuals", c.nres);
    goto done;
  }
  for (int j = 0; j < c.nfree; ++j) gsl_vector_set(z, (size_t)j, to_z(p, c.idx[j], p->start[c.idx[j]]));
  /* the start must have an impact, and the problem must be determined there */
  double law[NP];
  law_of(&c, z, law);
  const fwd_out o0 = forward(law, p->mass, p->v0, 0, NULL, NULL);
  if (o0.status != KL_OK) {
    st = kl_api_fail(f->msg, KELVIN_ERR_NUMERIC,
                     "fit: the impact at the start (k %g, c %g, n1 %g, n2 %g, m %g; mass %g kg, v0 %g m/s) fails "
                     "(status bits %d): choose other starting values",
                     law[0], law[1], law[2], law[3], law[4], p->mass, p->v0, o0.status);
    goto done;
  }
  double cond = 0;
  jac(z, &c, J);
  if ((st = rank_check(f, &c, J, "at the start,", &cond)) != KELVIN_OK) goto done;
  int iters = 0, conv = 0;
  /* with a trace, first k and c alone, the exponents held at their starts, so that the scales settle before the
   * shapes move: from a start far off (twice the stiffness, half the damping) the joint fit can otherwise run
   * into a degenerate minimum (c -> 0, n1 -> its bound; docs/design.md section 2.6). Not for metrics alone:
   * there the scales' optimum is a point where the gradient along the exponents nearly vanishes (k and n1 move
   * the three metrics almost alike) and the trust region stalls. */
  const int nkc = !p->fixed[KELVIN_FIT_K] + !p->fixed[KELVIN_FIT_C];
  if (p->ntrace > 0 && nkc > 0 && nkc < c.nfree) {
    kelvin_fit_problem q = *p;
    q.fixed[KELVIN_FIT_N1] = q.fixed[KELVIN_FIT_N2] = q.fixed[KELVIN_FIT_M] = 1;
    fit_ctx c1 = c;
    c1.p = &q;
    c1.nfree = nkc;
    gsl_vector_view z1 = gsl_vector_subvector(z, 0, (size_t)nkc); /* k and c come first in z */
    if ((st = solve(f, &c1, &z1.vector, "scales k, c: ", &iters, &conv)) != KELVIN_OK) goto done;
  }
  if ((st = solve(f, &c, z, "", &iters, &conv)) != KELVIN_OK) goto done;
  resid(z, &c, res);
  const size_t dof = c.nres - (size_t)c.nfree;
  if (sd_est) {
    double s2 = 0;
    for (size_t i = 0; i < p->ntrace; ++i) s2 += gsl_vector_get(res, i) * gsl_vector_get(res, i);
    /* the trace's own share of the degrees of freedom when metrics are weighed in too */
    const double tdof = p->ntrace > (size_t)c.nfree ? (double)(p->ntrace - (size_t)c.nfree) : (double)dof;
    sd = sd * sqrt(s2 / tdof);
    if (!(sd > 0)) sd = DBL_MIN;
    c.wt = 1.0 / sd;
    if (nmet > 0 && (st = solve(f, &c, z, "reweighed: ", &iters, &conv)) != KELVIN_OK) goto done; /* reweighed */
    resid(z, &c, res);
  }
  jac(z, &c, J);
  law_of(&c, z, law);
  if ((st = rank_check(f, &c, J, "at the solution,", &cond)) != KELVIN_OK) goto done;
  if (gsl_multifit_nlinear_covar(J, 0.0, cov) != GSL_SUCCESS) {
    st = kl_api_fail(f->msg, KELVIN_ERR_NUMERIC, "fit: the covariance (J^T J)^-1 failed: %s",
                     kl_gsl_error() ? kl_gsl_error() : "singular");
    goto done;
  }
  double chi2 = 0;
  gsl_blas_ddot(res, res, &chi2);
  law_of(&c, z, law);
  const fwd_out o = forward(law, p->mass, p->v0, p->ntrace, p->trace_t, c.fm);
  double ss = 0;
  for (size_t i = 0; i < p->ntrace; ++i) {
    f->rt[i] = p->trace_t[i];
    f->rf[i] = p->trace_f[i];
    f->rm[i] = c.fm[i];
    ss += (c.fm[i] - p->trace_f[i]) * (c.fm[i] - p->trace_f[i]);
  }
  f->nrun = p->ntrace;
  for (int i = 0; i < NP; ++i) {
    r->value[i] = law[i];
    r->fixed[i] = p->fixed[i];
  }
  for (int a = 0; a < c.nfree; ++a) {
    double dx;
    to_x(p, c.idx[a], gsl_vector_get(z, (size_t)a), &dx);
    r->se[c.idx[a]] = fabs(dx) * sqrt(gsl_matrix_get(cov, (size_t)a, (size_t)a));
    for (int b = 0; b < c.nfree; ++b)
      r->corr[c.idx[a]][c.idx[b]] =
          gsl_matrix_get(cov, (size_t)a, (size_t)b) /
          sqrt(gsl_matrix_get(cov, (size_t)a, (size_t)a) * gsl_matrix_get(cov, (size_t)b, (size_t)b));
  }
  r->nfree = c.nfree;
  r->nres = (int)c.nres;
  r->chi2 = chi2;
  r->dof = (int)dof;
  r->sd_from_residuals = sd_est;
  r->trace_sd = p->ntrace ? sd : 0.0;
  r->rms_trace = p->ntrace ? sqrt(ss / (double)p->ntrace) : 0.0;
  r->fpeak = o.fpeak;
  r->tc = o.tc;
  r->cr = o.cr;
  r->cond = cond;
  r->iterations = iters;
  r->converged = conv;
done:
  if (st != KELVIN_OK) free_run(f);
  free(c.fm);
  gsl_vector_free(z), gsl_vector_free(res);
  gsl_matrix_free(J), gsl_matrix_free(cov);
  return st;
}

kelvin_status kelvin_fit_trace(const kelvin_fit *f, size_t i, double *t, double *meas, double *model)
{
  if (t) *t = 0;
  if (meas) *meas = 0;
  if (model) *model = 0;
  if (!f || i >= f->nrun) return KELVIN_ERR_ARG;
  if (t) *t = f->rt[i];
  if (meas) *meas = f->rf[i];
  if (model) *model = f->rm[i];
  return KELVIN_OK;
}

kelvin_status kelvin_fit_model(kelvin_fit *f, const double *law, double mass, double v0, size_t n, const double *t,
                               double *force, double *fpeak, double *tc, double *cr)
{
  if (fpeak) *fpeak = 0;
  if (tc) *tc = 0;
  if (cr) *cr = 0;
  if (!f) return KELVIN_ERR_ARG;
  f->msg[0] = '\0';
  if (!law || (n > 0 && (!t || !force))) return kl_api_fail(f->msg, KELVIN_ERR_ARG, "kelvin_fit_model: NULL argument");
  for (size_t i = 0; i < n; ++i) force[i] = 0;
  char why[160];
  for (int i = 0; i < NP; ++i)
    if (law_bad(i, law[i], why, sizeof why)) return kl_api_fail(f->msg, KELVIN_ERR_ARG, "%s", why);
  if (!(isfinite(mass) && mass > 0)) return kl_api_fail(f->msg, KELVIN_ERR_ARG, "mass: must be > 0 kg, got %g", mass);
  if (!(isfinite(v0) && v0 > 0)) return kl_api_fail(f->msg, KELVIN_ERR_ARG, "v0: must be > 0 m/s, got %g", v0);
  const fwd_out o = forward(law, mass, v0, n, t, force);
  if (o.status != KL_OK) return kl_api_fail(f->msg, KELVIN_ERR_NUMERIC, "the impact fails (status bits %d)", o.status);
  if (fpeak) *fpeak = o.fpeak;
  if (tc) *tc = o.tc;
  if (cr) *cr = o.cr;
  return KELVIN_OK;
}

/* ---------------------------------------------------------------------------------------------------
 * The fit file */

kelvin_status kelvin_fit_problem_get(const kelvin_fit *f, kelvin_fit_problem *p)
{
  if (p) kelvin_fit_problem_init(p);
  if (!f || !p || !f->loaded) return KELVIN_ERR_ARG;
  *p = f->prob;
  return KELVIN_OK;
}

typedef struct trace_ctx {
  const char *file;
  kl_csv_col col[2];
  size_t n, cap;
  double *t, *f;
} trace_ctx;

static const char *const tnames[] = {"t_s", "t", NULL}, *const fnames[] = {"force_N", "force", "F_N", NULL};

static kelvin_status trace_row(void *vp, const kl_csv_row *r, char *msg, int cap)
{
  trace_ctx *c = vp;
  if (r->index == 0) return kl_csv_columns(c->file, r, c->col, 2, msg, cap);
  double v[2];
  for (int k = 0; k < 2; ++k) {
    const kelvin_status st = kl_csv_number(c->file, r, &c->col[k], &v[k], msg, cap);
    if (st != KELVIN_OK) return st;
  }
  if (c->n && !(v[0] > c->t[c->n - 1])) {
    snprintf(msg, (size_t)cap, "%s:%ld: column '%s': must increase, got %.9g after %.9g", c->file, r->line,
             c->col[0].names[c->col[0].which], v[0], c->t[c->n - 1]);
    return KELVIN_ERR_CONFIG;
  }
  if (c->n == c->cap) {
    const size_t nc = c->cap ? 2 * c->cap : 256;
    double *t = realloc(c->t, nc * sizeof *t);
    if (t) c->t = t;
    double *f = realloc(c->f, nc * sizeof *f);
    if (f) c->f = f;
    if (!t || !f) {
      snprintf(msg, (size_t)cap, "%s: out of memory", c->file);
      return KELVIN_ERR_NOMEM;
    }
    c->cap = nc;
  }
  c->t[c->n] = v[0];
  c->f[c->n] = v[1];
  ++c->n;
  return KELVIN_OK;
}

/* a positive finite number (or >= 0 when zero_ok) */
static kelvin_status num_pos(kl_cfg *c, const kl_cfg_node *n, const char *field, int zero_ok, const char *unit,
                             double *out)
{
  kelvin_status st = kl_cfg_number(c, n, field, out);
  if (st != KELVIN_OK) return st;
  if (zero_ok ? !(*out >= 0) : !(*out > 0))
    return kl_cfg_fail(c, n, field, "must be %s 0%s%s, got %g", zero_ok ? ">=" : ">", *unit ? " " : "", unit, *out);
  return KELVIN_OK;
}

/* law_bad's why without its "<name>: " (the reader names the field) */
static const char *why_tail(const char *why)
{
  const char *w = strstr(why, ": ");
  return w ? w + 2 : why;
}

static kelvin_status load_param(kl_cfg *c, const kl_cfg_node *n, int i, kelvin_fit_problem *p)
{
  char field[64], sub[80], why[160];
  snprintf(field, sizeof field, "parameters.%s", pnames[i]);
  if (n->type == KL_CFG_SCALAR) {
    kelvin_status st = kl_cfg_number(c, n, field, &p->start[i]);
    if (st != KELVIN_OK) return st;
    if (law_bad(i, p->start[i], why, sizeof why)) return kl_cfg_fail(c, n, field, "%s", why_tail(why));
    if (!(p->start[i] > p->lo[i] && p->start[i] < p->hi[i]))
      return kl_cfg_fail(c, n, field,
                         "the start %g must lie strictly inside the default bounds [%g, %g] (give min and max)",
                         p->start[i], p->lo[i], p->hi[i]);
    return KELVIN_OK;
  }
  static const char *const keys[] = {"start", "min", "max", "fixed", NULL};
  kelvin_status st = kl_cfg_keys(c, n, field, keys);
  if (st != KELVIN_OK) return st;
  const kl_cfg_node *fx = kl_cfg_get(n, "fixed"), *s0 = kl_cfg_get(n, "start"), *lo = kl_cfg_get(n, "min"),
                    *hi = kl_cfg_get(n, "max");
  if (fx) {
    if (s0 || lo || hi)
      return kl_cfg_fail(c, s0 ? s0 : lo ? lo : hi, field, "a fixed parameter takes no start, min or max");
    if ((st = kl_cfg_number(c, fx, kl_cfg_field(sub, sizeof sub, field, "fixed"), &p->start[i])) != KELVIN_OK)
      return st;
    if (law_bad(i, p->start[i], why, sizeof why)) return kl_cfg_fail(c, fx, sub, "%s", why_tail(why));
    p->fixed[i] = 1;
    return KELVIN_OK;
  }
  if (!s0) return kl_cfg_fail(c, n, field, "needs start (a free parameter) or fixed (a held one)");
  if ((st = kl_cfg_number(c, s0, kl_cfg_field(sub, sizeof sub, field, "start"), &p->start[i])) != KELVIN_OK) return st;
  if (law_bad(i, p->start[i], why, sizeof why)) return kl_cfg_fail(c, s0, sub, "%s", why_tail(why));
  const int kc = i == KELVIN_FIT_K || i == KELVIN_FIT_C;
  if (lo && (st = kl_cfg_number(c, lo, kl_cfg_field(sub, sizeof sub, field, "min"), &p->lo[i])) != KELVIN_OK) return st;
  if (lo && kc && !(p->lo[i] > 0)) return kl_cfg_fail(c, lo, sub, "must be > 0, got %g", p->lo[i]);
  if (lo && !kc && law_bad(i, p->lo[i], why, sizeof why)) return kl_cfg_fail(c, lo, sub, "%s", why_tail(why));
  if (hi && (st = kl_cfg_number(c, hi, kl_cfg_field(sub, sizeof sub, field, "max"), &p->hi[i])) != KELVIN_OK) return st;
  if (hi && !kc && law_bad(i, p->hi[i], why, sizeof why)) return kl_cfg_fail(c, hi, sub, "%s", why_tail(why));
  if (kc && (!lo) != (!hi))
    return kl_cfg_fail(c, lo ? lo : hi, field, "give both min and max, or neither (then %s is free in (0, inf))",
                       pnames[i]);
  if (!(p->hi[i] > p->lo[i]))
    return kl_cfg_fail(c, hi ? hi : lo, field, "min %g must be below max %g", p->lo[i], p->hi[i]);
  if (!(p->start[i] > p->lo[i] && p->start[i] < p->hi[i]))
    return kl_cfg_fail(c, s0, kl_cfg_field(sub, sizeof sub, field, "start"),
                       "must lie strictly inside [%g, %g], got %g", p->lo[i], p->hi[i], p->start[i]);
  return KELVIN_OK;
}

/* measured.NAME: {value: V, sd: S} */
static kelvin_status load_metric(kl_cfg *c, const kl_cfg_node *n, const char *name, const char *unit, double *v,
                                 double *sd)
{
  char field[64], sub[80];
  snprintf(field, sizeof field, "measured.%s", name);
  static const char *const keys[] = {"value", "sd", NULL};
  kelvin_status st = kl_cfg_keys(c, n, field, keys);
  if (st != KELVIN_OK) return st;
  const kl_cfg_node *vn = kl_cfg_get(n, "value"), *sn = kl_cfg_get(n, "sd");
  if (!vn || !sn)
    return kl_cfg_fail(c, n, field, "needs value and sd (its standard uncertainty%s%s)", *unit ? ", " : "", unit);
  if ((st = num_pos(c, vn, kl_cfg_field(sub, sizeof sub, field, "value"), 0, unit, v)) != KELVIN_OK) return st;
  if (!strcmp(name, "restitution") && *v > 1) return kl_cfg_fail(c, vn, sub, "must be in (0, 1], got %g", *v);
  return num_pos(c, sn, kl_cfg_field(sub, sizeof sub, field, "sd"), 0, unit, sd);
}

static kelvin_status load(kelvin_fit *f, kl_cfg *c, kelvin_fit_problem *p, double **tt, double **tf)
{
  const kl_cfg_node *root = kl_cfg_root(c);
  static const char *const top[] = {"mass", "v0", "parameters", "measured", "max_iterations", NULL};
  kelvin_status st = kl_cfg_keys(c, root, "", top);
  if (st != KELVIN_OK) return st;
  const kl_cfg_node *n;
  if (!(n = kl_cfg_get(root, "mass"))) return kl_cfg_fail(c, NULL, "mass", "missing: the impacting mass [kg]");
  if ((st = num_pos(c, n, "mass", 0, "kg", &p->mass)) != KELVIN_OK) return st;
  if (!(n = kl_cfg_get(root, "v0"))) return kl_cfg_fail(c, NULL, "v0", "missing: the impact speed [m/s]");
  if ((st = num_pos(c, n, "v0", 0, "m/s", &p->v0)) != KELVIN_OK) return st;
  if ((n = kl_cfg_get(root, "max_iterations"))) {
    long v;
    if ((st = kl_cfg_long(c, n, "max_iterations", 1, 100000, &v)) != KELVIN_OK) return st;
    p->max_iter = (int)v;
  }
  if ((n = kl_cfg_get(root, "parameters"))) {
    if ((st = kl_cfg_keys(c, n, "parameters", pnames)) != KELVIN_OK) return st;
    for (int i = 0; i < NP; ++i) {
      const kl_cfg_node *pn = kl_cfg_get(n, pnames[i]);
      if (pn && (st = load_param(c, pn, i, p)) != KELVIN_OK) return st;
    }
  }
  const kl_cfg_node *ms = kl_cfg_get(root, "measured");
  if (!ms) return kl_cfg_fail(c, NULL, "measured", "missing: peak_force, contact_time, restitution and/or trace");
  static const char *const mkeys[] = {"peak_force", "contact_time", "restitution", "trace", NULL};
  if ((st = kl_cfg_keys(c, ms, "measured", mkeys)) != KELVIN_OK) return st;
  if (ms->n == 0)
    return kl_cfg_fail(c, ms, "measured", "empty: give peak_force, contact_time, restitution and/or trace");
  if ((n = kl_cfg_get(ms, "peak_force")) && (st = load_metric(c, n, "peak_force", "N", &p->fpeak, &p->fpeak_sd)))
    return st;
  if ((n = kl_cfg_get(ms, "contact_time")) && (st = load_metric(c, n, "contact_time", "s", &p->tc, &p->tc_sd)))
    return st;
  if ((n = kl_cfg_get(ms, "restitution")) && (st = load_metric(c, n, "restitution", "", &p->cr, &p->cr_sd))) return st;
  if ((n = kl_cfg_get(ms, "trace"))) {
    static const char *const tkeys[] = {"file", "sd", "time_offset", NULL};
    if ((st = kl_cfg_keys(c, n, "measured.trace", tkeys)) != KELVIN_OK) return st;
    const kl_cfg_node *fn = kl_cfg_get(n, "file"), *sn = kl_cfg_get(n, "sd"), *on = kl_cfg_get(n, "time_offset");
    if (!fn) return kl_cfg_fail(c, n, "measured.trace", "needs file (a CSV with columns t_s,force_N)");
    const char *name;
    if ((st = kl_cfg_text(c, fn, "measured.trace.file", "a CSV file name", &name)) != KELVIN_OK) return st;
    if (sn && (st = num_pos(c, sn, "measured.trace.sd", 0, "N", &p->trace_sd)) != KELVIN_OK) return st;
    double off = 0;
    if (on && (st = kl_cfg_number(c, on, "measured.trace.time_offset", &off)) != KELVIN_OK) return st;
    char path[4096];
    if (kl_cfg_relpath(c, name, path, sizeof path) != 0)
      return kl_cfg_fail(c, fn, "measured.trace.file", "path too long");
    trace_ctx tc = {path, {{tnames, 1, -1, 0}, {fnames, 1, -1, 0}}, 0, 0, NULL, NULL};
    st = kl_csv_parse_file(path, FIT_MAX_TRACE, trace_row, &tc, f->msg, KL_API_MSG);
    if (st == KELVIN_OK && tc.n < 2) {
      snprintf(f->msg, KL_API_MSG, "%.3000s: %zu data rows: a trace needs at least 2 (columns t_s,force_N)", path,
               tc.n);
      st = KELVIN_ERR_CONFIG;
    }
    if (st != KELVIN_OK) {
      free(tc.t), free(tc.f);
      return st;
    }
    for (size_t i = 0; i < tc.n; ++i) tc.t[i] -= off;
    *tt = tc.t;
    *tf = tc.f;
    p->ntrace = tc.n;
  }
  return KELVIN_OK;
}

kelvin_status kelvin_fit_load(kelvin_fit *f, const char *path)
{
  if (!f) return KELVIN_ERR_ARG;
  f->msg[0] = '\0';
  if (!path) return kl_api_fail(f->msg, KELVIN_ERR_ARG, "kelvin_fit_load: NULL path");
  free(f->lt), free(f->lf);
  f->lt = f->lf = NULL;
  f->loaded = 0;
  kl_cfg *c = NULL;
  if (kl_cfg_create(&c) != KELVIN_OK) return kl_api_fail(f->msg, KELVIN_ERR_NOMEM, "out of memory");
  kelvin_status st = kl_cfg_load(c, path);
  kelvin_fit_problem p;
  kelvin_fit_problem_init(&p);
  double *tt = NULL, *tf = NULL;
  if (st == KELVIN_OK) st = load(f, c, &p, &tt, &tf);
  if (st != KELVIN_OK && !f->msg[0]) snprintf(f->msg, KL_API_MSG, "%s", kl_cfg_errmsg(c));
  kl_cfg_destroy(c);
  if (st != KELVIN_OK) {
    free(tt), free(tf);
    return st;
  }
  f->lt = tt;
  f->lf = tf;
  p.trace_t = tt;
  p.trace_f = tf;
  f->prob = p;
  f->loaded = 1;
  return KELVIN_OK;
}
