/* optimiser/robust.c: robust objectives and the out-of-sample statistics (robust.h). */
#include "optimiser/robust.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kl_rollout.h"

double kl_robust_mean(const double *v, int S)
{
  double m = 0.0;
  for (int s = 0; s < S; ++s) m += v[s];
  return S > 0 ? m / S : NAN;
}

double kl_robust_sd(const double *v, int S)
{
  const double m = kl_robust_mean(v, S);
  double q = 0.0;
  for (int s = 0; s < S; ++s) q += (v[s] - m) * (v[s] - m);
  return S > 0 ? sqrt(q / S) : NAN;
}

static int ascending(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void sorted(const double *v, int S, double *work)
{
  memcpy(work, v, (size_t)S * sizeof *work);
  qsort(work, (size_t)S, sizeof *work, ascending);
}

/* the rank (1-based) of the q-quantile among S sorted values */
static int quantile_rank(int S, double q)
{
  int r = (int)ceil(q * S - 1e-9); /* ceil(q S), safe against q S landing a rounding above a whole number */
  return r < 1 ? 1 : r > S ? S : r;
}

double kl_robust_quantile(const double *v, int S, double q, double *work)
{
  if (S < 1) return NAN;
  sorted(v, S, work);
  return work[quantile_rank(S, q) - 1];
}

double kl_robust_violation(const kl_robust_spec *sp, double fhi, double flo, double loss)
{
  double x = fmax(fhi - sp->fmax, sp->fmin - flo) / sp->fref;
  if (loss > 0.0) x = fmax(x, sp->fmin / sp->fref); /* out of contact somewhere: the force was 0 there */
  return x;
}

double kl_robust_objective(const kl_robust_spec *sp, const double *obj, long stride, int S, double *work)
{
  const double *J = obj + KL_OBJ_J * stride;
  for (int s = 0; s < S; ++s)
    if (!isfinite(J[s]) || J[s] >= KL_HUGE) return KL_HUGE; /* a failed rollout fails the candidate */
  switch (sp->kind) {
  case KL_ROBUST_MEAN:
  case KL_ROBUST_MEAN_STD:
  case KL_ROBUST_CVAR:
  case KL_ROBUST_WORST: return kl_robust_stat(sp, J, S, NULL, work);
  case KL_ROBUST_CHANCE: {
    double *v = work + S;
    for (int s = 0; s < S; ++s)
      v[s] = kl_robust_violation(sp, obj[KL_OBJ_FMAX * stride + s], obj[KL_OBJ_FMIN * stride + s],
                                 obj[KL_OBJ_LOSS * stride + s]);
    const double q = fmax(0.0, kl_robust_quantile(v, S, sp->prob, work));
    return kl_robust_mean(J, S) + KL_ROBUST_CHANCE_W * q * q;
  }
  default: return J[0];
  }
}

kl_robust_summary kl_robust_summarise(const double *v, int S, double *work)
{
  kl_robust_summary r = {NAN, NAN, NAN, NAN, NAN, NAN};
  if (S < 1) return r;
  r.mean = kl_robust_mean(v, S);
  sorted(v, S, work);
  r.p50 = work[quantile_rank(S, 0.5) - 1];
  r.p95 = work[quantile_rank(S, 0.95) - 1];
  r.worst = work[S - 1];
  /* ranks l < u with P(X_(l) <= P95 <= X_(u)) >= 0.95: B ~ binomial(S, 0.95), its normal approximation */
  const double c = 1.959963984540054 * sqrt(S * 0.95 * 0.05);
  int l = (int)floor(S * 0.95 - c), u = (int)ceil(S * 0.95 + c) + 1;
  l = l < 1 ? 1 : l > S ? S : l;
  u = u < 1 ? 1 : u > S ? S : u;
  r.p95_lo = work[l - 1];
  r.p95_hi = work[u - 1];
  return r;
}

void kl_robust_wilson(int n, int S, double *share, double *lo, double *hi)
{
  const double z = 1.959963984540054, p = S > 0 ? (double)n / S : NAN;
  const double d = 1.0 + z * z / S, c = (p + z * z / (2.0 * S)) / d;
  const double h = z / d * sqrt(p * (1.0 - p) / S + z * z / (4.0 * S * S));
  *share = p;
  *lo = fmax(0.0, c - h);
  *hi = fmin(1.0, c + h);
}

/* a value and its scenario, ordered by decreasing value, ties by index (deterministic) */
typedef struct kl_vi {
  double v;
  long i;
} kl_vi;

static int descending(const void *a, const void *b)
{
  const kl_vi *x = a, *y = b;
  if (x->v != y->v) return x->v < y->v ? 1 : -1;
  return (x->i > y->i) - (x->i < y->i);
}

double kl_robust_stat(const kl_robust_spec *sp, const double *v, int S, double *w, double *work)
{
  if (S < 1) return NAN;
  const double m = kl_robust_mean(v, S);
  switch (sp->kind) {
  case KL_ROBUST_MEAN:
    if (w)
      for (int s = 0; s < S; ++s) w[s] = 1.0 / S;
    return m;
  case KL_ROBUST_MEAN_STD: {
    const double sd = kl_robust_sd(v, S);
    if (w)
      for (int s = 0; s < S; ++s) w[s] = fmax(0.0, 1.0 / S + (sd > 0 ? sp->k * (v[s] - m) / (S * sd) : 0.0));
    return m + sp->k * sd;
  }
  case KL_ROBUST_CVAR:
  case KL_ROBUST_WORST: {
    _Static_assert(sizeof(kl_vi) <= 2 * sizeof(double), "a value and its index fit in two doubles of work");
    kl_vi *o = (kl_vi *)(void *)work;
    for (int s = 0; s < S; ++s) o[s] = (kl_vi){v[s], s};
    qsort(o, (size_t)S, sizeof *o, descending);
    double mm = sp->kind == KL_ROBUST_WORST ? 1.0 : (1.0 - sp->alpha) * S;
    if (mm < 1.0) mm = 1.0;
    if (w)
      for (int s = 0; s < S; ++s) w[s] = 0.0;
    double sum = 0.0, left = mm;
    for (int i = 0; i < S && left > 0.0; ++i) {
      const double f = left >= 1.0 ? 1.0 : left;
      sum += f * o[i].v;
      if (w) w[o[i].i] = f / mm;
      left -= f;
    }
    return sum / mm;
  }
  default: return NAN;
  }
}
