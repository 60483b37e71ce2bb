/* kernels/kl_names.h: the names of the contact models, damping laws and separation rules, the one table
 * of each (the codes are in kernels/kl_impact.h, kl_contact_hc.h and kl_contact_kv.h). Every reader,
 * writer and option parser takes its names from here (through kelvin/contact.h's kelvin_*_names in the
 * program). Host C only: the device has no use for strings. */
#ifndef KL_NAMES_H
#define KL_NAMES_H
#ifdef __OPENCL_VERSION__
#error "kernels/kl_names.h is host-only"
#endif
#include <string.h>

#include "kl_impact.h"

#define KL_NRULES 2
/* NULL-terminated, indexed by code (the lists option and YAML choice parsers take) */
static const char *const kl_model_names_[KL_NMODELS + 1] = {"kv", "hc", "ef", "general", NULL};
static const char *const kl_law_names_[KL_NLAWS + 1] = {"hunt-crossley", "lankarani-nikravesh", "flores", "gonthier",
                                                         "exact", NULL};
static const char *const kl_rule_names_[KL_NRULES + 1] = {"penetration", "force", NULL};
/* The models the 3-D engine and the grinding model take: Kelvin-Voigt, Hunt-Crossley and the general law
 * (Emden-Fowler, the paper's approximation of Hunt-Crossley, is an impact model only). The same strings as
 * kl_model_names_, as a list a choice parser can take; a choice's index i is the model code
 * kl_engine_model_codes_[i] (the list is not indexed by code: general is code 3). */
#define KL_NMODELS_ENGINE 3
static const char *const kl_engine_model_names_[KL_NMODELS_ENGINE + 1] = {"kv", "hc", "general", NULL};
static const int kl_engine_model_codes_[KL_NMODELS_ENGINE] = {KL_MODEL_KV, KL_MODEL_HC, KL_MODEL_GEN};
/* the model code of an engine choice index, -1 if out of range */
static inline int kl_engine_model_code(int i) { return (i >= 0 && i < KL_NMODELS_ENGINE) ? kl_engine_model_codes_[i] : -1; }
_Static_assert(KL_MODEL_KV == 0 && KL_MODEL_HC == 1 && KL_MODEL_EF == 2 && KL_MODEL_GEN == 3,
               "model names are indexed by KL_MODEL_*");

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
