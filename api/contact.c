/* api/contact.c: the public closed forms (include/kelvin/contact.h) over kernels/kl_*.h. */
#include "kelvin/contact.h"

#include <math.h>
#include <string.h>

#include "kernels/kl_impact.h"
#include "kernels/kl_material.h"
#include "kernels/kl_names.h"

/* The public codes are the kernels' numbers, so values pass through unchanged. */
_Static_assert(KELVIN_MODEL_KV == KL_MODEL_KV && KELVIN_MODEL_HC == KL_MODEL_HC && KELVIN_MODEL_EF == KL_MODEL_EF &&
                 KELVIN_MODEL_GEN == KL_MODEL_GEN,
               "kelvin_model mirrors KL_MODEL_*");
_Static_assert(KELVIN_LAW_HUNT_CROSSLEY == KL_LAW_HUNT_CROSSLEY && KELVIN_LAW_LANKARANI_NIKRAVESH == KL_LAW_LANKARANI_NIKRAVESH &&
                 KELVIN_LAW_FLORES == KL_LAW_FLORES && KELVIN_LAW_GONTHIER == KL_LAW_GONTHIER &&
                 KELVIN_LAW_EXACT == KL_LAW_EXACT,
               "kelvin_law mirrors KL_LAW_*");
_Static_assert(KELVIN_SEP_PENETRATION == KL_SEP_PENETRATION && KELVIN_SEP_FORCE == KL_SEP_FORCE,
               "kelvin_rule mirrors KL_SEP_*");
_Static_assert(KELVIN_IMPACT_BAD_MASS == KL_BAD_MASS && KELVIN_IMPACT_BAD_STIFFNESS == KL_BAD_STIFFNESS &&
                 KELVIN_IMPACT_BAD_CR == KL_BAD_CR && KELVIN_IMPACT_BAD_SPEED == KL_BAD_SPEED &&
                 KELVIN_IMPACT_BAD_EXPONENT == KL_BAD_EXPONENT && KELVIN_IMPACT_BAD_LAW == KL_BAD_LAW &&
                 KELVIN_IMPACT_NO_CONVERGE == KL_NO_CONVERGE && KELVIN_IMPACT_BAD_INPUT == KL_BAD_INPUT &&
                 KELVIN_IMPACT_NO_SEPARATION == KL_NO_SEPARATION && KELVIN_IMPACT_UNSUPPORTED == KL_UNSUPPORTED,
               "KELVIN_IMPACT_* mirror the kernels' status bits");

void kelvin_impact_in_init(kelvin_impact_in *in)
{
  if (!in) return;
  memset(in, 0, sizeof *in);
  in->m = 1.0;
  in->K = 1e6;
  in->n = 1.0;
  in->cr = 1.0;
  in->v0 = 1.0;
  in->model = KELVIN_MODEL_KV;
  in->law = KELVIN_LAW_EXACT;
  in->rule = KELVIN_SEP_PENETRATION;
}

kelvin_status kelvin_impact(const kelvin_impact_in *in, kelvin_impact_out *out)
{
  if (out) memset(out, 0, sizeof *out);
  if (!in || !out) return KELVIN_ERR_ARG;
  kl_impact_in k = {in->m, in->K, in->n, in->cr, in->v0, in->fe, (int)in->model, (int)in->law, (int)in->rule,
                    in->c, in->n2, in->rate_exp};
  const kl_impact_out o = kl_impact(k);
  out->dmax = o.dmax;
  out->tmax = o.tmax;
  out->fpeak = o.fpeak;
  out->tc = o.tc;
  out->cr_eff = o.cr_eff;
  out->ediss = o.ediss;
  out->damp = o.damp;
  out->flags = o.status;
  if (o.status == KL_OK) return KELVIN_OK;
  return (o.status & (KL_NO_CONVERGE | KL_NO_SEPARATION)) ? KELVIN_ERR_NUMERIC : KELVIN_ERR_ARG;
}

double kelvin_kv_damping(double cr, double K, double m)
{
  if (!(cr > 0 && cr <= 1 && K > 0 && m > 0 && isfinite(K) && isfinite(m))) return NAN;
  return kl_kv_damping(cr, K, m);
}

double kelvin_hc_chi(kelvin_law law, double cr, double v0)
{
  if (!(cr > 0 && cr <= 1 && v0 > 0 && isfinite(v0)) || (int)law < 0 || (int)law >= KL_NLAWS) return NAN;
  return kl_hc_chi((int)law, cr, v0);
}

double kelvin_hc_cr_eff(double chi, double v0)
{
  if (!(chi >= 0 && v0 > 0 && isfinite(chi * v0))) return NAN;
  return kl_hc_cr_eff(chi * v0);
}

double kelvin_hc_delta_max(double m, double K, double n, double chi, double v0)
{
  if (!(m > 0 && K > 0 && n > 0 && chi >= 0 && v0 > 0 && isfinite(m) && isfinite(K) && isfinite(n) &&
        isfinite(chi * v0)))
    return NAN;
  return kl_hc_delta_max(m, K, n, chi, v0);
}

double kelvin_estar(double E1, double nu1, double E2, double nu2)
{
  if (!(E1 > 0 && E2 > 0 && nu1 > -1 && nu1 <= 0.5 && nu2 > -1 && nu2 <= 0.5)) return NAN;
  return kl_estar(E1, nu1, E2, nu2);
}

double kelvin_hertz_K(double estar, double R)
{
  if (!(estar > 0 && R > 0)) return NAN;
  return kl_hertz_K(estar, R);
}

double kelvin_radius_eff(double R1, double R2) { return kl_radius_eff(R1, R2); }

kelvin_status kelvin_kv_step(double m, double K, double D, double f0, double f1, double x0, double v0, double t,
                             double *x, double *v, double *J)
{
  if (x) *x = NAN;
  if (v) *v = NAN;
  if (J) *J = NAN;
  if (!(m > 0 && K >= 0 && D >= 0 && t >= 0 && isfinite(m) && isfinite(K) && isfinite(D) && isfinite(f0) &&
        isfinite(f1) && isfinite(x0) && isfinite(v0) && isfinite(t)))
    return KELVIN_ERR_ARG;
  const kl_kv_sys s = {m, K, D, f0, f1};
  const kl_kv_out o = kl_kv_step(s, x0, v0, t);
  if (x) *x = o.x;
  if (v) *v = o.v;
  if (J) *J = o.J;
  return isfinite(o.x) && isfinite(o.v) ? KELVIN_OK : KELVIN_ERR_NUMERIC;
}

const char *kelvin_model_name(int model) { return kl_model_name(model); }
const char *kelvin_law_name(int law) { return kl_law_name(law); }
const char *kelvin_rule_name(int rule) { return kl_rule_name(rule); }
int kelvin_model_from_name(const char *name) { return kl_model_from_name(name); }
int kelvin_law_from_name(const char *name) { return kl_law_from_name(name); }
int kelvin_rule_from_name(const char *name) { return kl_rule_from_name(name); }
const char *const *kelvin_model_names(void) { return kl_model_names_; }
const char *const *kelvin_law_names(void) { return kl_law_names_; }
const char *const *kelvin_rule_names(void) { return kl_rule_names_; }
const char *const *kelvin_engine_model_names(void) { return kl_engine_model_names_; }
