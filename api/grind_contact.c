/* api/grind_contact.c: the prepared grinding problem in brief (include/kelvin/grind.h): its contact with
 * the static relations of kernels/kl_contact_static.h (the device model's own), its mesh and its arm;
 * and those relations for any contact (kelvin_static_depth, kelvin_static_compliance: kelvin/contact.h). */
#include <math.h>
#include <string.h>

#include "api/grind_impl.h"
#include "kelvin/contact.h"
#include "kernels/kl_contact_static.h"

kelvin_status kelvin_grind_contact(const kelvin_grind *g, kelvin_grind_contact_info *out)
{
  if (out) memset(out, 0, sizeof *out);
  if (!g || !g->pb || !out) return KELVIN_ERR_ARG;
  const kl_problem *pb = g->pb;
  const kl_contact_desc c = kl_problem_contact(pb);
  const double F = pb->gp[KL_GP_FREF];
  out->model = kelvin_model_name(c.model);
  out->law = c.model == KL_MODEL_KV ? "" : kelvin_law_name(c.law);
  out->K = c.K;
  out->n = c.n;
  out->D = c.model == KL_MODEL_KV ? c.D : 0.0;
  out->chi = c.model == KL_MODEL_KV ? 0.0 : c.chi;
  out->cr = pb->set.cr;
  out->force = F;
  out->depth = kl_contact_static_depth(c, F);
  out->compliance = kl_contact_compliance(c, F);
  out->holder_compliance = 1.0 / pb->set.holder_K;
  out->share = kl_contact_share(c, F, pb->set.holder_K);
  return KELVIN_OK;
}

int kelvin_grind_mesh_bounds(const kelvin_grind *g, double lo[3], double hi[3])
{
  for (int i = 0; i < 3; ++i) {
    if (lo) lo[i] = NAN;
    if (hi) hi[i] = NAN;
  }
  if (!g || !g->pb || !g->pb->actual) return 0;
  double a[3], b[3];
  kl_mesh_bounds(g->pb->actual, a, b);
  for (int i = 0; i < 3; ++i) {
    if (lo) lo[i] = a[i];
    if (hi) hi[i] = b[i];
  }
  return kl_mesh_ntri(g->pb->actual);
}

const char *kelvin_grind_robot(const kelvin_grind *g, int *joints)
{
  if (joints) *joints = 0;
  if (!g || !g->pb || !g->files.robot) return NULL;
  if (joints) *joints = g->files.robot->ndof;
  return g->files.robot->name;
}

/* a contact F = K d^n at rest: Kelvin-Voigt for n = 1 (the same relations), the Hunt-Crossley family else */
static int static_desc(double K, double n, kl_contact_desc *c)
{
  if (!(K > 0 && isfinite(K) && n > 0 && isfinite(n))) return 0;
  const kl_contact_desc d = {n == 1.0 ? KL_MODEL_KV : KL_MODEL_HC, 0, K, n, 0.0, 0.0, {0, 0, 0, 0, 0}};
  *c = d;
  return 1;
}

double kelvin_static_depth(double K, double n, double F)
{
  kl_contact_desc c;
  return static_desc(K, n, &c) && !isnan(F) ? kl_contact_static_depth(c, F) : NAN;
}

double kelvin_static_compliance(double K, double n, double F)
{
  kl_contact_desc c;
  return static_desc(K, n, &c) && !isnan(F) ? kl_contact_compliance(c, F) : NAN;
}
