/* kernels/kl_names.h: the names of the contact models, damping laws and separation rules, the one table
 * of each (the codes are in kernels/kl_impact.h, kl_contact_hc.h and kl_contact_kv.h). Host C only:
 * the device has no use for strings. */
#ifndef KL_NAMES_H
#define KL_NAMES_H
#ifdef __OPENCL_VERSION__
#error "kernels/kl_names.h is host-only"
#endif
#include <string.h>

#include "kl_impact.h"

static const char *const kl_model_names_[KL_NMODELS] = {"kv", "hc", "ef"};
static const char *const kl_law_names_[KL_NLAWS] = {"hunt-crossley", "lankarani-nikravesh", "flores", "gonthier",
                                                     "exact"};
#define KL_NRULES 2
static const char *const kl_rule_names_[KL_NRULES] = {"penetration", "force"};

/* name of a code, NULL if the code is unknown */
static inline const char *kl_model_name(int model) { return (model >= 0 && model < KL_NMODELS) ? kl_model_names_[model] : NULL; }
static inline const char *kl_law_name(int law) { return (law >= 0 && law < KL_NLAWS) ? kl_law_names_[law] : NULL; }
static inline const char *kl_rule_name(int rule) { return (rule >= 0 && rule < KL_NRULES) ? kl_rule_names_[rule] : NULL; }

/* code of a name (exact, case-sensitive), -1 if none */
static inline int kl_names_find_(const char *const *names, int n, const char *s)
{
  if (!s) return -1;
  for (int i = 0; i < n; ++i)
    if (strcmp(names[i], s) == 0) return i;
  return -1;
}
static inline int kl_model_from_name(const char *s) { return kl_names_find_(kl_model_names_, KL_NMODELS, s); }
static inline int kl_law_from_name(const char *s) { return kl_names_find_(kl_law_names_, KL_NLAWS, s); }
static inline int kl_rule_from_name(const char *s) { return kl_names_find_(kl_rule_names_, KL_NRULES, s); }

#endif
