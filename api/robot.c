/* api/robot.c: the arm holding the tool and its path (include/kelvin/robot.h) over engine/robot.h and
 * the robot and path readers of io/ (docs/design.md section 6). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_impl.h"
#include "engine/robot.h"
#include "io/robot_yaml.h"
#include "io/table.h"
#include "kelvin/robot.h"

struct kelvin_robot {
  kl_robot *rb;
  /* the path (NULL without one) */
  int ns;
  double *pos, *nrm, *tan, *s; /* (ns x 3), (ns x 3), (ns x 3), (ns) */
  /* the results of kelvin_robot_evaluate (NULL before one, and after a change) */
  double *meff, *vmax, *margin, *kn, *q, *reach;
  char msg[KL_API_MSG];
};

static void drop_results(kelvin_robot *r)
{
  free(r->meff), free(r->vmax), free(r->margin), free(r->kn), free(r->q), free(r->reach);
  r->meff = r->vmax = r->margin = r->kn = r->q = r->reach = NULL;
}

static void drop_path(kelvin_robot *r)
{
  drop_results(r);
  free(r->pos), free(r->nrm), free(r->tan), free(r->s);
  r->pos = r->nrm = r->tan = r->s = NULL;
  r->ns = 0;
}

kelvin_status kelvin_robot_create(kelvin_robot **out)
{
  if (!out) return KELVIN_ERR_ARG;
  *out = calloc(1, sizeof **out);
  return *out ? KELVIN_OK : KELVIN_ERR_NOMEM;
}

void kelvin_robot_free(kelvin_robot *r)
{
  if (!r) return;
  drop_path(r);
  kl_robot_free(r->rb);
  free(r);
}

const char *kelvin_robot_errmsg(const kelvin_robot *r) { return r ? r->msg : "no robot handle (NULL)"; }

/* the handle's arm becomes rb (owned); the path stays, its results go */
static kelvin_status take(kelvin_robot *r, kl_robot *rb)
{
  drop_results(r);
  kl_robot_free(r->rb);
  r->rb = rb;
  return KELVIN_OK;
}

kelvin_status kelvin_robot_load(kelvin_robot *r, const char *path)
{
  if (!r) return KELVIN_ERR_ARG;
  r->msg[0] = '\0';
  if (!path) return kl_api_fail(r->msg, KELVIN_ERR_ARG, "kelvin_robot_load: the path is NULL");
  kl_robot *rb = NULL;
  const kelvin_status st = kl_robot_load(path, &rb, r->msg, KL_API_MSG);
  return st == KELVIN_OK ? take(r, rb) : st;
}

kelvin_status kelvin_robot_builtin(kelvin_robot *r)
{
  if (!r) return KELVIN_ERR_ARG;
  r->msg[0] = '\0';
  kl_robot *rb = NULL;
  const kelvin_status st = kl_robot_builtin_er10(&rb);
  if (st != KELVIN_OK) return kl_api_fail(r->msg, st, "cannot create the built-in arm: %s", kelvin_status_str(st));
  return take(r, rb);
}

const char *kelvin_robot_name(const kelvin_robot *r) { return r && r->rb ? r->rb->name : ""; }
int kelvin_robot_joints(const kelvin_robot *r) { return r && r->rb ? r->rb->ndof : 0; }
int kelvin_robot_closed_ik(const kelvin_robot *r) { return r && r->rb ? r->rb->ik_closed : 0; }

double kelvin_robot_mass(const kelvin_robot *r)
{
  double m = 0;
  for (int i = 0; r && r->rb && i < r->rb->ndof; ++i) m += r->rb->body_mass[i];
  return m;
}

int kelvin_robot_compliant(const kelvin_robot *r)
{
  int c = 0;
  for (int i = 0; r && r->rb && i < r->rb->ndof; ++i) c |= r->rb->jnt_stiffness[i] > 0;
  return c;
}

kelvin_status kelvin_robot_base(const kelvin_robot *r, double pos[3], double rpy[3])
{
  for (int i = 0; i < 3; ++i) {
    if (pos) pos[i] = r && r->rb ? r->rb->base_pos[i] : NAN;
    if (rpy) rpy[i] = r && r->rb ? r->rb->base_rpy[i] : NAN;
  }
  return r && r->rb ? KELVIN_OK : KELVIN_ERR_ARG;
}

kelvin_status kelvin_robot_set_base(kelvin_robot *r, const double pos[3], const double rpy[3])
{
  if (!r) return KELVIN_ERR_ARG;
  r->msg[0] = '\0';
  if (!r->rb) return kl_api_fail(r->msg, KELVIN_ERR_ARG, "kelvin_robot_set_base: no arm loaded");
  if (!pos) return kl_api_fail(r->msg, KELVIN_ERR_ARG, "kelvin_robot_set_base: pos is NULL");
  double keep[3];
  memcpy(keep, r->rb->base_rpy, sizeof keep);
  if (kl_robot_set_base(r->rb, pos, rpy ? rpy : keep) != KELVIN_OK)
    return kl_api_fail(r->msg, KELVIN_ERR_ARG, "kelvin_robot_set_base: must be six finite numbers");
  drop_results(r);
  return KELVIN_OK;
}

kelvin_status kelvin_robot_fk(const kelvin_robot *r, const double *q, double R[9], double p[3])
{
  if (!r || !r->rb || !q || !R || !p) return KELVIN_ERR_ARG;
  kl_robot_fk(r->rb, q, R, p);
  return KELVIN_OK;
}

int kelvin_robot_ik(const kelvin_robot *r, const double R[9], const double p[3], const double *qref, double *q)
{
  if (!r || !r->rb || !R || !p || !q) return -1;
  return kl_robot_ik(r->rb, R, p, qref, KL_IK_AUTO, q, NULL);
}

kelvin_status kelvin_robot_effective_mass(const kelvin_robot *r, const double *q, const double n[3], double *meff,
                                          double *kn)
{
  if (meff) *meff = NAN;
  if (kn) *kn = NAN;
  if (!r || !r->rb || !q || !n || !meff) return KELVIN_ERR_ARG;
  return kl_robot_effective_mass(r->rb, q, n, meff, kn);
}

/* ---- the path ------------------------------------------------------------------------------------ */

/* own pos and nrm (ns x 3, malloc'd) as the path: tangents and arc length; on a repeated point -1 - k */
static int adopt(kelvin_robot *r, int ns, double *pos, double *nrm, kelvin_status *st)
{
  drop_path(r);
  double *tan = malloc(sizeof(double) * 3 * (size_t)ns), *s = malloc(sizeof(double) * (size_t)ns);
  if (!tan || !s) {
    free(pos), free(nrm), free(tan), free(s);
    *st = kl_api_fail(r->msg, KELVIN_ERR_NOMEM, "out of memory for %d path samples", ns);
    return 0;
  }
  const int tr = kl_robot_path_tangents(ns, pos, tan);
  if (tr < 0) {
    free(pos), free(nrm), free(tan), free(s);
    *st = KELVIN_ERR_CONFIG;
    return tr;
  }
  s[0] = 0;
  for (int k = 1; k < ns; ++k) {
    const double *a = pos + 3 * (k - 1), *b = pos + 3 * k;
    const double dx = b[0] - a[0], dy = b[1] - a[1], dz = b[2] - a[2];
    s[k] = s[k - 1] + sqrt(dx * dx + dy * dy + dz * dz);
  }
  r->ns = ns, r->pos = pos, r->nrm = nrm, r->tan = tan, r->s = s;
  *st = KELVIN_OK;
  return 0;
}

kelvin_status kelvin_robot_set_path(kelvin_robot *r, const double *points, const double *normals, int n)
{
  if (!r) return KELVIN_ERR_ARG;
  r->msg[0] = '\0';
  if (!points || !normals || n < 2 || n > KELVIN_ROBOT_MAXSAMPLES)
    return kl_api_fail(r->msg, KELVIN_ERR_ARG, "kelvin_robot_set_path: needs 2 to %d points with normals, got %d",
                       KELVIN_ROBOT_MAXSAMPLES, points && normals ? n : 0);
  for (int i = 0; i < 3 * n; ++i)
    if (!isfinite(points[i]) || !isfinite(normals[i]))
      return kl_api_fail(r->msg, KELVIN_ERR_ARG, "kelvin_robot_set_path: sample %d: not a finite number", i / 3);
  for (int k = 0; k < n; ++k) {
    const double *v = normals + 3 * k, l = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (!(fabs(l - 1.0) <= 1e-6))
      return kl_api_fail(r->msg, KELVIN_ERR_ARG,
                         "kelvin_robot_set_path: sample %d: the normal must be unit length, got %.9g", k, l);
  }
  double *pos = malloc(sizeof(double) * 3 * (size_t)n), *nrm = malloc(sizeof(double) * 3 * (size_t)n);
  if (!pos || !nrm) {
    free(pos), free(nrm);
    return kl_api_fail(r->msg, KELVIN_ERR_NOMEM, "out of memory for %d path samples", n);
  }
  memcpy(pos, points, sizeof(double) * 3 * (size_t)n);
  memcpy(nrm, normals, sizeof(double) * 3 * (size_t)n);
  kelvin_status st;
  const int tr = adopt(r, n, pos, nrm, &st);
  if (tr < 0) return kl_api_fail(r->msg, KELVIN_ERR_ARG, "sample %d repeats the previous one", -1 - tr);
  return st;
}

kelvin_status kelvin_robot_load_path(kelvin_robot *r, const char *path)
{
  if (!r) return KELVIN_ERR_ARG;
  r->msg[0] = '\0';
  if (!path) return kl_api_fail(r->msg, KELVIN_ERR_ARG, "kelvin_robot_load_path: the path is NULL");
  int ns = 0;
  double *pos = NULL, *nrm = NULL;
  long *lines = NULL;
  kelvin_status st = kl_read_path_csv(path, 1e-6, &ns, &pos, &nrm, &lines, r->msg, KL_API_MSG);
  if (st != KELVIN_OK) return st;
  if (ns > KELVIN_ROBOT_MAXSAMPLES) {
    free(pos), free(nrm), free(lines);
    return kl_api_fail(r->msg, KELVIN_ERR_LIMIT, "%s: more than %d samples (the limit)", path, KELVIN_ROBOT_MAXSAMPLES);
  }
  const int tr = adopt(r, ns, pos, nrm, &st);
  if (tr < 0)
    kl_api_fail(r->msg, st, "%s:%ld: columns x,y,z: the point repeats the previous sample (no path direction)", path,
                lines[-1 - tr]);
  free(lines);
  return st;
}

kelvin_status kelvin_robot_demo_path(kelvin_robot *r, int n)
{
  if (!r) return KELVIN_ERR_ARG;
  r->msg[0] = '\0';
  if (n < 2 || n > KELVIN_ROBOT_MAXSAMPLES)
    return kl_api_fail(r->msg, KELVIN_ERR_ARG, "kelvin_robot_demo_path: needs 2 to %d samples, got %d",
                       KELVIN_ROBOT_MAXSAMPLES, n);
  double *pos = malloc(sizeof(double) * 3 * (size_t)n), *nrm = malloc(sizeof(double) * 3 * (size_t)n);
  if (!pos || !nrm) {
    free(pos), free(nrm);
    return kl_api_fail(r->msg, KELVIN_ERR_NOMEM, "out of memory for %d path samples", n);
  }
  kl_robot_demo_path(n, pos, nrm);
  kelvin_status st;
  const int tr = adopt(r, n, pos, nrm, &st);
  if (tr < 0) return kl_api_fail(r->msg, KELVIN_ERR_ARG, "sample %d repeats the previous one", -1 - tr);
  return st;
}

int kelvin_robot_samples(const kelvin_robot *r) { return r ? r->ns : 0; }

kelvin_status kelvin_robot_evaluate(kelvin_robot *r)
{
  if (!r) return KELVIN_ERR_ARG;
  r->msg[0] = '\0';
  if (!r->rb || !r->ns)
    return kl_api_fail(r->msg, KELVIN_ERR_ARG, "kelvin_robot_evaluate: %s", r->rb ? "no path given" : "no arm loaded");
  drop_results(r);
  const size_t n = (size_t)r->ns, nd = (size_t)r->rb->ndof;
  r->meff = malloc(sizeof(double) * n), r->vmax = malloc(sizeof(double) * n), r->margin = malloc(sizeof(double) * n);
  r->kn = malloc(sizeof(double) * n), r->q = malloc(sizeof(double) * n * nd), r->reach = malloc(sizeof(double) * n);
  int *reach = malloc(sizeof(int) * n);
  if (!r->meff || !r->vmax || !r->margin || !r->kn || !r->q || !r->reach || !reach) {
    free(reach);
    drop_results(r);
    return kl_api_fail(r->msg, KELVIN_ERR_NOMEM, "out of memory for %d path samples", r->ns);
  }
  const kelvin_status st =
    kl_robot_path(r->rb, r->ns, r->pos, r->nrm, r->tan, r->meff, r->vmax, reach, r->margin, r->q, r->msg, KL_API_MSG);
  kl_robot_path_stiffness(r->rb, r->ns, r->q, r->nrm, r->kn);
  for (size_t k = 0; k < n; ++k) {
    r->reach[k] = reach[k] != 0;
    if (!reach[k] && isnan(r->meff[k])) r->kn[k] = NAN;
  }
  free(reach);
  return st;
}

kelvin_status kelvin_robot_series(const kelvin_robot *r, kelvin_robot_series_id what, double *out)
{
  if (!r || !out || !r->ns || (int)what < 0 || what >= KELVIN_ROBOT_NSERIES) return KELVIN_ERR_ARG;
  const size_t n = (size_t)r->ns;
  const double *src = NULL;
  size_t m = n;
  switch (what) {
  case KELVIN_ROBOT_S: src = r->s; break;
  case KELVIN_ROBOT_POINTS: src = r->pos, m = 3 * n; break;
  case KELVIN_ROBOT_NORMALS: src = r->nrm, m = 3 * n; break;
  case KELVIN_ROBOT_MEFF: src = r->meff; break;
  case KELVIN_ROBOT_VMAX: src = r->vmax; break;
  case KELVIN_ROBOT_REACH: src = r->reach; break;
  case KELVIN_ROBOT_MARGIN: src = r->margin; break;
  case KELVIN_ROBOT_KN: src = r->kn; break;
  case KELVIN_ROBOT_Q: src = r->q, m = n * (size_t)r->rb->ndof; break;
  default: return KELVIN_ERR_ARG;
  }
  if (!src) return KELVIN_ERR_ARG;
  memcpy(out, src, sizeof(double) * m);
  return KELVIN_OK;
}
