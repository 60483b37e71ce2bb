/* optimiser/problem.c: the preparation of a grinding problem from settings and in-memory inputs (no file is
 * opened here: io/settings.c reads the config and the files it names; optimiser/schema.c holds the
 * settings' defaults). */
#include "optimiser/problem.h"

#include "engine/gsl_guard.h"
#include "engine/util3.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_bspline.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_rng.h>

#include "kernels/kl_contact_hc.h"
#include "kernels/kl_rollout.h"
#include "kernels/kl_material.h"
#include "engine/robot.h"

#define PI 3.14159265358979323846

static const char *const surface_names[] = {"plane", "cylinder", "sphere", "saddle", "mesh", NULL};

//------------------------------------------------------------------------------------------------------
// surfaces

typedef struct rough_mode {
  double kx, ky, phase;
} rough_mode;

#define NROUGH 6

/* nominal height z = f(x, y) of an analytic surface and its gradient */
static double nominal(const kl_settings *s, double x, double y, double *fx, double *fy)
{
  const double R = s->radius;
  switch (s->surface) {
  case KL_SURF_CYLINDER: { /* convex panel, axis along y */
    const double r = sqrt(R * R - x * x);
    *fx = -x / r;
    *fy = 0;
    return r - R;
  }
  case KL_SURF_SPHERE: {
    const double r = sqrt(R * R - x * x - y * y);
    *fx = -x / r;
    *fy = -y / r;
    return r - R;
  }
  case KL_SURF_SADDLE:
    *fx = x / R;
    *fy = -y / R;
    return (x * x - y * y) / (2.0 * R);
  default:
    *fx = *fy = 0;
    return 0.0;
  }
}

/* actual height in the part's own frame: nominal + weld bead + roughness */
static double actual_local(const kl_settings *s, const rough_mode *rm, double x, double y)
{
  double fx, fy;
  double z = nominal(s, x, y, &fx, &fy);
  if (s->bead_h != 0) {
    const double u = (x - s->bead_x) / s->bead_w;
    z += s->bead_h * exp(-0.5 * u * u);
  }
  if (s->step_h != 0) { /* a sheet step: C1 smoothstep 3u^2 - 2u^3 from x over the width */
    const double u = fmin(1.0, fmax(0.0, (x - s->step_x) / s->step_w));
    z += s->step_h * u * u * (3.0 - 2.0 * u);
  }
  if (s->rough_a > 0) {
    double r = 0;
    for (int i = 0; i < NROUGH; ++i) r += sin(rm[i].kx * x + rm[i].ky * y + rm[i].phase);
    z += s->rough_a * sqrt(2.0 / NROUGH) * r; /* RMS = amplitude */
  }
  return z;
}

/* the actual part: the analytic patch meshed, rotated by the tilt about y and shifted */
static kelvin_status mesh_actual(const kl_settings *s, double xc, double yc, kl_mesh **out, char *msg, int cap)
{
  rough_mode rm[NROUGH];
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  if (!rng) return KELVIN_ERR_NOMEM;
  gsl_rng_set(rng, s->rough_seed);
  for (int i = 0; i < NROUGH; ++i) {
    const double ang = 2 * PI * gsl_rng_uniform(rng), k = 2 * PI / s->rough_l * (0.7 + 0.6 * gsl_rng_uniform(rng));
    rm[i].kx = k * cos(ang);
    rm[i].ky = k * sin(ang);
    rm[i].phase = 2 * PI * gsl_rng_uniform(rng);
  }
  gsl_rng_free(rng);
  const double dx = s->resolution, dy = 4.0 * s->resolution;
  const int nx = (int)ceil(s->extent[0] / dx) + 1, ny = (int)ceil(s->extent[1] / dy) + 1;
  if ((double)nx * ny > 2e7) {
    snprintf(msg, (size_t)cap, "workpiece.resolution: %g m over %g x %g m makes %.3g vertices; use a coarser one",
             s->resolution, s->extent[0], s->extent[1], (double)nx * ny);
    return KELVIN_ERR_CONFIG;
  }
  double *v = malloc((size_t)nx * ny * 3 * sizeof *v);
  if (!v) return KELVIN_ERR_NOMEM;
  const double th = s->tilt_deg * PI / 180.0, c = cos(th), sn = sin(th);
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      const double x = xc - 0.5 * s->extent[0] + s->extent[0] * i / (nx - 1);
      const double y = yc - 0.5 * s->extent[1] + s->extent[1] * j / (ny - 1);
      const double z = actual_local(s, rm, x, y);
      double *p = &v[3 * ((size_t)j * nx + i)];
      p[0] = c * x + sn * z + s->shift[0];
      p[1] = y + s->shift[1];
      p[2] = -sn * x + c * z + s->shift[2];
    }
  const kelvin_status st = kl_mesh_from_grid(v, nx - 1, ny - 1, out, msg, cap);
  free(v);
  return st;
}

//------------------------------------------------------------------------------------------------------
// path

static void normalise(double *v)
{
  const double n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  if (n > 0) {
    v[0] /= n;
    v[1] /= n;
    v[2] /= n;
  }
}

/* a dense polyline (points and normals) to be resampled */
typedef struct poly {
  int n, cap;
  double *p, *nrm, *s;
} poly;

static int poly_push(poly *q, const double p[3], const double n[3])
{
  if (q->n == q->cap) {
    const int cap = q->cap ? 2 * q->cap : 1024;
    double *a = realloc(q->p, (size_t)cap * 3 * sizeof *a);
    if (!a) return -1;
    q->p = a;
    double *b = realloc(q->nrm, (size_t)cap * 3 * sizeof *b);
    if (!b) return -1;
    q->nrm = b;
    double *c = realloc(q->s, (size_t)cap * sizeof *c);
    if (!c) return -1;
    q->s = c;
    q->cap = cap;
  }
  memcpy(&q->p[3 * q->n], p, 3 * sizeof *p);
  memcpy(&q->nrm[3 * q->n], n, 3 * sizeof *n);
  q->s[q->n] = q->n ? q->s[q->n - 1] + sqrt(pow(p[0] - q->p[3 * (q->n - 1)], 2) + pow(p[1] - q->p[3 * (q->n - 1) + 1], 2) +
                                            pow(p[2] - q->p[3 * (q->n - 1) + 2], 2))
                    : 0.0;
  q->n++;
  return 0;
}

static void poly_free(poly *q)
{
  free(q->p);
  free(q->nrm);
  free(q->s);
}

/* the path from the caller's points and normals (repeated points dropped) */
static kelvin_status given_path(const kl_problem_inputs *in, poly *q, char *msg, int cap)
{
  for (int i = 0; i < in->npath; ++i) {
    const double *p = &in->path_p[3 * i];
    double n[3] = {in->path_n[3 * i], in->path_n[3 * i + 1], in->path_n[3 * i + 2]};
    const double nn = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    if (!(isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]) && fabs(nn - 1.0) <= 1e-3)) {
      snprintf(msg, (size_t)cap, "path point %d: needs a finite position and a unit normal, got normal length %.6g", i,
               nn);
      return KELVIN_ERR_ARG;
    }
    normalise(n);
    if (q->n && fabs(p[0] - q->p[3 * (q->n - 1)]) + fabs(p[1] - q->p[3 * (q->n - 1) + 1]) +
                        fabs(p[2] - q->p[3 * (q->n - 1) + 2]) ==
                    0)
      continue; /* repeated point */
    if (poly_push(q, p, n) != 0) return KELVIN_ERR_NOMEM;
  }
  if (q->n < 2) {
    snprintf(msg, (size_t)cap, "the path needs at least 2 distinct points, got %d", q->n);
    return KELVIN_ERR_ARG;
  }
  return KELVIN_OK;
}

/* the nominal path: intersection of the analytic surface with the plane y = path_y */
static kelvin_status analytic_path(const kl_settings *s, poly *q)
{
  const int n = 20 * s->ns;
  for (int i = 0; i <= n; ++i) {
    const double x = s->path_x0 + (s->path_x1 - s->path_x0) * i / n, y = s->path_y;
    double fx, fy;
    const double z = nominal(s, x, y, &fx, &fy);
    double p[3] = {x, y, z}, nv[3] = {-fx, -fy, 1.0};
    normalise(nv);
    if (poly_push(q, p, nv) != 0) return KELVIN_ERR_NOMEM;
  }
  return KELVIN_OK;
}

/* the path on a mesh part: vertical rays at y = path_y (the plane intersection) */
static kelvin_status mesh_path(const kl_settings *s, const kl_mesh *m, poly *q, char *msg, int cap)
{
  double lo[3], hi[3];
  kl_mesh_bounds(m, lo, hi);
  const int n = 20 * s->ns;
  const double down[3] = {0, 0, -1};
  for (int i = 0; i <= n; ++i) {
    const double x = s->path_x0 + (s->path_x1 - s->path_x0) * i / n;
    const double o[3] = {x, s->path_y, hi[2] + 1.0};
    double t, nv[3];
    if (!kl_mesh_raycast(m, o, down, 0.0, hi[2] - lo[2] + 2.0, &t, nv)) {
      snprintf(msg, (size_t)cap,
               "path: the line y = %g at x = %g m misses the workpiece mesh (bounds x %g..%g, y %g..%g); "
               "set path.start/end/y inside it or give path.csv",
               s->path_y, x, lo[0], hi[0], lo[1], hi[1]);
      return KELVIN_ERR_CONFIG;
    }
    if (nv[2] < 0) {
      nv[0] = -nv[0];
      nv[1] = -nv[1];
      nv[2] = -nv[2];
    }
    const double p[3] = {x, s->path_y, o[2] - t};
    if (poly_push(q, p, nv) != 0) return KELVIN_ERR_NOMEM;
  }
  return KELVIN_OK;
}

/* resample the polyline at ns equal arc-length steps (linear in s; normals renormalised) */
static void resample(const poly *q, kl_problem *pb)
{
  const int ns = pb->ns;
  const double L = q->s[q->n - 1];
  int j = 0;
  for (int k = 0; k < ns; ++k) {
    const double sk = L * k / (ns - 1);
    while (j + 2 < q->n && q->s[j + 1] < sk) ++j;
    const double w = (q->s[j + 1] > q->s[j]) ? (sk - q->s[j]) / (q->s[j + 1] - q->s[j]) : 0.0;
    pb->s[k] = sk;
    for (int d = 0; d < 3; ++d) {
      pb->p[3 * k + d] = q->p[3 * j + d] + w * (q->p[3 * (j + 1) + d] - q->p[3 * j + d]);
      pb->nrm[3 * k + d] = q->nrm[3 * j + d] + w * (q->nrm[3 * (j + 1) + d] - q->nrm[3 * j + d]);
    }
    normalise(&pb->nrm[3 * k]);
  }
  pb->length = L;
  for (int k = 0; k < ns; ++k) {
    const int a = k > 0 ? k - 1 : 0, b = k + 1 < ns ? k + 1 : ns - 1;
    for (int d = 0; d < 3; ++d) pb->tan[3 * k + d] = pb->p[3 * b + d] - pb->p[3 * a + d];
    normalise(&pb->tan[3 * k]);
  }
}

/* the target profile (ntarget samples s, F), linear in s, held constant beyond its ends */
static kelvin_status given_target(const kl_problem_inputs *in, kl_problem *pb, char *msg, int cap)
{
  const int n = in->ntarget;
  const double *ss = in->target_s, *ff = in->target_F;
  for (int i = 0; i < n; ++i)
    if (!(isfinite(ss[i]) && isfinite(ff[i]) && ff[i] > 0 && (i == 0 || ss[i] > ss[i - 1]))) {
      snprintf(msg, (size_t)cap, "target sample %d: s must be finite and increasing, force finite and > 0 N", i);
      return KELVIN_ERR_ARG;
    }
  int j = 0;
  for (int k = 0; k < pb->ns; ++k) {
    const double s = pb->s[k];
    if (n == 1 || s <= ss[0]) {
      pb->ft[k] = ff[0];
      continue;
    }
    if (s >= ss[n - 1]) {
      pb->ft[k] = ff[n - 1];
      continue;
    }
    while (j + 2 < n && ss[j + 1] < s) ++j;
    pb->ft[k] = ff[j] + (ff[j + 1] - ff[j]) * (s - ss[j]) / (ss[j + 1] - ss[j]);
  }
  return KELVIN_OK;
}

//------------------------------------------------------------------------------------------------------
// the tool frame and the disc's protrusion


/* the tool frame at sample k (columns X, Y, Z of R, row-major): Z = -n into the part, X the tangent made
 * orthogonal to it, Y = Z x X, then turned about Y by the lead angle (Z towards +X for a positive lead) */
static void tool_frame(const kl_problem *pb, int k, double R[9])
{
  const double *n = &pb->nrm[3 * k], *t = &pb->tan[3 * k];
  double X[3] = {t[0], t[1], t[2]}, Z[3] = {-n[0], -n[1], -n[2]}, Y[3];
  const double d = v3_dot(X, Z);
  for (int i = 0; i < 3; ++i) X[i] -= d * Z[i];
  normalise(X);
  v3_cross(Y, Z, X);
  const double a = pb->set.lead_deg * PI / 180.0, ca = cos(a), sa = sin(a);
  for (int i = 0; i < 3; ++i) {
    const double x = ca * X[i] - sa * Z[i], z = sa * X[i] + ca * Z[i];
    R[3 * i] = x, R[3 * i + 1] = Y[i], R[3 * i + 2] = z;
  }
}

/* unit quaternion (w, x, y, z) of the rotation matrix R (row-major), Shepperd's method */
static void mat_quat(const double R[9], double q[4])
{
  const double tr = R[0] + R[4] + R[8];
  if (tr > 0) {
    const double S = sqrt(tr + 1.0) * 2;
    q[0] = 0.25 * S, q[1] = (R[7] - R[5]) / S, q[2] = (R[2] - R[6]) / S, q[3] = (R[3] - R[1]) / S;
  } else if (R[0] > R[4] && R[0] > R[8]) {
    const double S = sqrt(1.0 + R[0] - R[4] - R[8]) * 2;
    q[0] = (R[7] - R[5]) / S, q[1] = 0.25 * S, q[2] = (R[1] + R[3]) / S, q[3] = (R[2] + R[6]) / S;
  } else if (R[4] > R[8]) {
    const double S = sqrt(1.0 + R[4] - R[0] - R[8]) * 2;
    q[0] = (R[2] - R[6]) / S, q[1] = (R[1] + R[3]) / S, q[2] = 0.25 * S, q[3] = (R[5] + R[7]) / S;
  } else {
    const double S = sqrt(1.0 + R[8] - R[0] - R[4]) * 2;
    q[0] = (R[3] - R[1]) / S, q[1] = (R[2] + R[6]) / S, q[2] = (R[5] + R[7]) / S, q[3] = 0.25 * S;
  }
}

void kl_problem_tool_axis(const kl_problem *pb, int k, double a[3])
{
  double R[9];
  tool_frame(pb, k, R);
  const double *l = pb->set.tool_axis;
  for (int i = 0; i < 3; ++i) a[i] = R[3 * i] * l[0] + R[3 * i + 1] * l[1] + R[3 * i + 2] * l[2];
  normalise(a);
}

void kl_problem_waypoints(const kl_problem *pb, const double *o, const double *v, double *t, double *pos, double *quat)
{
  const int ns = pb->ns;
  const double R = pb->set.tool_R;
  double T = 0;
  for (int k = 0; k < ns; ++k) {
    if (k > 0) {
      kl_grind_iv iv;
      memset(&iv, 0, sizeof iv);
      iv.ds = pb->s[k] - pb->s[k - 1];
      iv.v0 = v[k - 1];
      iv.v1 = v[k];
      T += kl_grind_duration(iv); /* the device rollout's interval duration, the same formula */
    }
    if (t) t[k] = T;
    double Rm[9];
    tool_frame(pb, k, Rm);
    /* tool centre p + (R - o) n; the TCP is on the tool axis R beyond it, into the part */
    for (int i = 0; i < 3; ++i)
      if (pos) pos[3 * k + i] = pb->p[3 * k + i] + (R - o[k]) * pb->nrm[3 * k + i] + R * Rm[3 * i + 2];
    if (quat) mat_quat(Rm, quat + 4 * k);
  }
}

/* depth of the disc (centre c, unit axis a, radius r, half width hw) into the triangles idx[0..nt): how
 * far the part reaches into its rim, r - dist(axis, the part within |axial| <= hw), the largest over the
 * triangles, exactly: each triangle clipped to the slab across the axis, its distance to the axis taken
 * in the plane across it. (On a part sloping along the axis by psi this radial depth is the depth along
 * the part's normal over cos psi: 1.5e-4 more at psi = 1 degree.) The 3-D verification finds the
 * contact by libccd (engine/collision_ccd.c). */
static double disc_depth(const kl_mesh *mesh, const int *idx, int nt, const double c[3], const double a[3], double r,
                         double hw)
{
  double e1[3] = {0, 0, 0}, e2[3];
  const int j0 = fabs(a[0]) < fabs(a[1]) ? (fabs(a[0]) < fabs(a[2]) ? 0 : 2) : (fabs(a[1]) < fabs(a[2]) ? 1 : 2);
  e1[j0] = 1.0;
  const double aj = v3_dot(e1, a);
  for (int i = 0; i < 3; ++i) e1[i] -= aj * a[i];
  normalise(e1);
  v3_cross(e2, a, e1);
  double best = -INFINITY;
  for (int q = 0; q < nt; ++q) {
    double ta[3], tb[3], tc[3], tn[3];
    kl_mesh_triangle(mesh, idx[q], ta, tb, tc, tn);
    const double *V[3] = {ta, tb, tc};
    double P[8][3]; /* polygon in (u, w, axial) coordinates, clipped to -hw <= axial <= hw */
    int np = 3;
    for (int j = 0; j < 3; ++j) {
      double rel[3] = {V[j][0] - c[0], V[j][1] - c[1], V[j][2] - c[2]};
      P[j][0] = v3_dot(rel, e1), P[j][1] = v3_dot(rel, e2), P[j][2] = v3_dot(rel, a);
    }
    np = kl_poly_clip_slab(P, np, hw);
    if (np == 0) continue;
    /* distance of the axis (the origin of the (u, w) plane) to the projected polygon */
    double dmin = INFINITY;
    int pos = 0, neg = 0;
    for (int j = 0; j < np; ++j) {
      const double *A = P[j], *B = P[(j + 1) % np];
      const double cr = A[0] * B[1] - A[1] * B[0];
      pos += cr > 0;
      neg += cr < 0;
      const double ex = B[0] - A[0], ey = B[1] - A[1], l2 = ex * ex + ey * ey;
      double w = l2 > 0 ? -(A[0] * ex + A[1] * ey) / l2 : 0.0;
      w = fmin(1.0, fmax(0.0, w));
      const double x = A[0] + w * ex, y = A[1] + w * ey;
      dmin = fmin(dmin, sqrt(x * x + y * y));
    }
    if (np >= 3 && ((pos > 0 && neg == 0) || (neg > 0 && pos == 0))) dmin = 0.0; /* the axis passes through the polygon */
    best = fmax(best, r - dmin);
  }
  return best;
}

//------------------------------------------------------------------------------------------------------
// build

void kl_problem_free(kl_problem *pb)
{
  if (!pb) return;
  free(pb->s);
  free(pb->p);
  free(pb->nrm);
  free(pb->tan);
  free(pb->h);
  free(pb->dh);
  free(pb->meff);
  free(pb->fg);
  free(pb->ft);
  free(pb->kap);
  free(pb->geo);
  free(pb->basis);
  free(pb->lo);
  free(pb->hi);
  if (pb->own_actual) kl_mesh_free(pb->actual);
  free(pb);
}

/* static penetration of the contact carrying F */
static double static_pen(const kl_problem *pb, double F)
{
  return kl_contact_static_depth(kl_problem_contact(pb), F);
}

kl_contact_desc kl_problem_contact(const kl_problem *pb)
{
  kl_contact_desc c = {pb->set.model, pb->set.law, pb->Kc, pb->gp[KL_GP_NC], pb->Dc, pb->chi, {0, 0, 0, 0, 0}};
  if (pb->set.model == KL_MODEL_GEN) {
    c.gen.k = pb->Kc;
    c.gen.n1 = pb->gp[KL_GP_NC];
    c.gen.c = pb->gp[KL_GP_GC];
    c.gen.n2 = pb->gp[KL_GP_GN2];
    c.gen.m = pb->gp[KL_GP_GM];
  }
  return c;
}

/* the arm holding the tool: its effective mass along the normal at each sample and its speed bound
 * (kl_robot_path: IK per sample, m_eff = 1 / (n' J_v M^-1 J_v' n), docs/design.md section 6) */
static kelvin_status robot_mass(kl_problem *pb, kl_robot *r, char *msg, int cap)
{
  const kl_settings *s = &pb->set;
  const int ns = pb->ns;
  char m2[1024];
  kelvin_status st = KELVIN_OK;
  double *meff = malloc((size_t)ns * sizeof *meff), *vmax = malloc((size_t)ns * sizeof *vmax);
  double *margin = malloc((size_t)ns * sizeof *margin), *q = malloc((size_t)ns * 16 * sizeof *q);
  int *reach = malloc((size_t)ns * sizeof *reach);
  if (!meff || !vmax || !margin || !q || !reach) {
    st = KELVIN_ERR_NOMEM;
    snprintf(msg, (size_t)cap, "out of memory");
  } else if ((st = kl_robot_set_base(r, s->robot_base, s->robot_rpy)) != KELVIN_OK) {
    snprintf(msg, (size_t)cap, "robot.base/rpy: must be finite");
    st = KELVIN_ERR_CONFIG;
  } else if ((st = kl_robot_path(r, ns, pb->p, pb->nrm, pb->tan, meff, vmax, reach, margin, q, m2, sizeof m2)) !=
             KELVIN_OK) {
    snprintf(msg, (size_t)cap, "robot: the path is not reachable from base (%g, %g, %g): %s", s->robot_base[0],
             s->robot_base[1], s->robot_base[2], m2);
    st = KELVIN_ERR_CONFIG;
  } else {
    double vmin = INFINITY;
    for (int k = 0; k < ns; ++k) {
      pb->meff[k] = meff[k];
      vmin = fmin(vmin, vmax[k]);
    }
    pb->robot_vmax = vmin;
    if (pb->set.v_max > vmin) pb->set.v_max = vmin; /* the joint speed limits bound the feed */
    if (pb->set.v_init > pb->set.v_max) pb->set.v_init = pb->set.v_max;
    if (!(pb->set.v_min < pb->set.v_max)) {
      snprintf(msg, (size_t)cap, "robot: the joint speed limits allow at most %.4g m/s along the path, below speed.min (%g)",
               vmin, pb->set.v_min);
      st = KELVIN_ERR_CONFIG;
    }
  }
  free(meff);
  free(vmax);
  free(margin);
  free(q);
  free(reach);
  return st;
}

//------------------------------------------------------------------------------------------------------
// magnitude checks (docs/design.md section 8): values legal one by one, implausible together

double kl_unit_factor(double size, double lo, double hi)
{
  if (!(isfinite(size) && size > 0)) return 0;
  for (int k = 0; k <= 3; ++k)
    for (int sg = -1; sg <= 1; sg += 2) { /* 1, then 1e-3 and 1e3, then 1e-6 and 1e6, ... */
      const double f = pow(1e3, sg * k);
      if (size * f >= lo && size * f <= hi) return f;
      if (k == 0) break;
    }
  return 0;
}

const char *kl_length_unit(double f)
{
  static const struct {
    double f;
    const char *name;
  } u[] = {{1e-9, "nanometres"}, {1e-6, "micrometres"}, {1e-3, "millimetres"}, {1e-2, "centimetres"}, {1, "metres"},
           {1e3, "kilometres"}};
  for (size_t i = 0; i < sizeof u / sizeof u[0]; ++i)
    if (fabs(f / u[i].f - 1) < 1e-9) return u[i].name;
  return NULL;
}

/* a mesh and a path in metres: more than KL_PLAUSIBLE_LENGTH, or a mesh smaller than the tool, is a unit
 * mistake; the hint names the factor that makes it plausible */
static kelvin_status check_sizes(const kl_settings *s, const kl_problem_inputs *in, char *msg, int cap)
{
  const double R = s->tool_R;
  char hint[256] = "";
  if (in->mesh) {
    double lo[3], hi[3];
    kl_mesh_bounds(in->mesh, lo, hi);
    const double D = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                          (hi[2] - lo[2]) * (hi[2] - lo[2]));
    if (!(D <= KL_PLAUSIBLE_LENGTH && D >= 2 * R)) {
      const double f = kl_unit_factor(D, 2 * R, KL_PLAUSIBLE_LENGTH);
      const char *unit = kl_length_unit(f);
      if (f > 0)
        snprintf(hint, sizeof hint, "; is it in %s? scaled by %g it is %.3g m across", unit ? unit : "another unit", f,
                 f * D);
      const int big = D > KL_PLAUSIBLE_LENGTH;
      snprintf(msg, (size_t)cap, "workpiece.mesh: the mesh is %.3g m across, %s%g m; the mesh is taken in metres "
               "(kelvin_grind_set_mesh; a file scaled by workpiece.mesh_scale)%s", D,
               big ? "more than " : "smaller than the tool, diameter ", big ? KL_PLAUSIBLE_LENGTH : 2 * R, hint);
      return KELVIN_ERR_CONFIG;
    }
  }
  double L = s->path_x1 - s->path_x0; /* the plane cut, or the given polyline */
  if (in->npath >= 2) {
    L = 0;
    for (int k = 1; k < in->npath; ++k) {
      const double *a = in->path_p + 3 * (k - 1), *b = in->path_p + 3 * k;
      L += sqrt((b[0] - a[0]) * (b[0] - a[0]) + (b[1] - a[1]) * (b[1] - a[1]) + (b[2] - a[2]) * (b[2] - a[2]));
    }
  }
  if (L > KL_PLAUSIBLE_LENGTH) {
    const double f = kl_unit_factor(L, 2 * R, KL_PLAUSIBLE_LENGTH);
    const char *unit = kl_length_unit(f);
    if (f > 0)
      snprintf(hint, sizeof hint, "; is it in %s? scaled by %g it is %.3g m long", unit ? unit : "another unit", f,
               f * L);
    snprintf(msg, (size_t)cap, "path: the path is %.3g m long (a %.0f s pass at speed.initial %g m/s), more than %g m; "
             "the path is taken in metres (kelvin_grind_set_path, path.csv, path.start and path.end)%s", L,
             L / s->v_init, s->v_init, KL_PLAUSIBLE_LENGTH, hint);
    return KELVIN_ERR_CONFIG;
  }
  return KELVIN_OK;
}

/* the target against the over-force threshold, and the feed speed bound (before anything is built) */
static kelvin_status check_target_speed(const kl_settings *s, const kl_problem_inputs *in, char *msg, int cap)
{
  if (in->ntarget > 0 && in->target_F) {
    int at = -1;
    for (int i = 0; i < in->ntarget; ++i)
      if (isfinite(in->target_F[i]) && (at < 0 || in->target_F[i] > in->target_F[at])) at = i;
    if (at >= 0 && in->target_F[at] > s->max_F) {
      const double F = in->target_F[at];
      snprintf(msg, (size_t)cap, "target.max_force: %g N is below the target profile's largest force, %g N (sample "
               "%d), where the over-force penalty would fight the target; %s", s->max_F, F, at,
               F >= 100 * s->max_F ? "is the profile in mN? forces are taken in N"
                                   : "raise target.max_force or lower the profile");
      return KELVIN_ERR_CONFIG;
    }
  } else if (s->target_F > s->max_F) {
    snprintf(msg, (size_t)cap, "target.force: %g N is above target.max_force (%g N), where the over-force penalty "
             "would fight the target; %s", s->target_F, s->max_F,
             s->target_F >= 100 * s->max_F ? "is target.force in mN? both keys take N"
                                           : "lower target.force or raise target.max_force");
    return KELVIN_ERR_CONFIG;
  }
  if (s->v_max > KL_PLAUSIBLE_SPEED) {
    snprintf(msg, (size_t)cap, "speed.max: %g m/s is above %g m/s, faster than a robot feeds a grinding tool; is it "
             "in mm/s? the key takes m/s (%g mm/s = %g m/s)", s->v_max, KL_PLAUSIBLE_SPEED, s->v_max, 1e-3 * s->v_max);
    return KELVIN_ERR_CONFIG;
  }
  return KELVIN_OK;
}

/* the static offset at the largest target: the holder's deflection |F*_k - F_g,k| / K_h plus the contact's
 * static depth. Above KL_PLAUSIBLE_OFFSET, or a contact depth beyond a quarter of the tool radius (where
 * Hertz's small-depth theory no longer holds), a stiffness or the target is in the wrong unit. */
static kelvin_status check_static(const kl_problem *pb, int profile, char *msg, int cap)
{
  const kl_settings *s = &pb->set;
  double F = 0, dh = 0;
  for (int k = 0; k < pb->ns; ++k) {
    F = fmax(F, pb->ft[k]);
    dh = fmax(dh, fabs(pb->ft[k] - pb->fg[k]) / s->holder_K);
  }
  const double dc = static_pen(pb, F), n = pb->gp[KL_GP_NC], dlim = 0.25 * s->tool_R;
  if (dc <= dlim && dh + dc <= KL_PLAUSIBLE_OFFSET) return KELVIN_OK;
  char what[256];
  if (dc > dlim && dc > dh)
    snprintf(what, sizeof what, "a static depth of %.3g m at the target's %g N, more than a quarter of tool.radius "
             "(%g m)", dc, F, dlim);
  else
    snprintf(what, sizeof what, "a static offset of %.3g m at the target's %g N (holder %.3g m, contact %.3g m), more "
             "than %g m", dh + dc, F, dh, dc, KL_PLAUSIBLE_OFFSET);
  if (dh >= dc && s->holder_K < 1e3) /* a holder softer than 1 N/mm: a stiffness in N/mm */
    snprintf(msg, (size_t)cap, "holder.stiffness: %g N/m gives %s; is it in N/mm? the key takes N/m (%g N/mm = %g N/m)",
             s->holder_K, what, s->holder_K, 1e3 * s->holder_K);
  else if (dh >= dc && profile)
    snprintf(msg, (size_t)cap, "target: the profile's largest force, %g N, on holder.stiffness %g N/m gives %s; is the "
             "profile in mN (forces are taken in N), or holder.stiffness in N/mm (it takes N/m)?", F, s->holder_K,
             what);
  else if (dh >= dc)
    snprintf(msg, (size_t)cap, "target.force: %g N on holder.stiffness %g N/m gives %s; is the force in mN (the key "
             "takes N), or holder.stiffness in N/mm (it takes N/m)?", F, s->holder_K, what);
  else if (s->contact_K > 0)
    snprintf(msg, (size_t)cap, "contact.stiffness: %g N/m^%g gives %s; is it in N/mm^%g? the key takes N/m^%g (%g "
             "N/mm^%g = %.3g N/m^%g)", s->contact_K, n, what, n, n, s->contact_K, n, s->contact_K * pow(1e3, n), n);
  else
    snprintf(msg, (size_t)cap, "contact: the contact law from tool.E %g Pa and workpiece.E %g Pa gives %s; are the "
             "moduli in Pa, and the target in N?", s->tool_E, s->work_E, what);
  return KELVIN_ERR_CONFIG;
}

kelvin_status kl_problem_check_pass(const kl_problem *pb, const double *o, const double *v, char *msg, size_t cap)
{
  const kl_settings *s = &pb->set;
  const double olo = s->o_min, ohi = s->o_max, vlo = s->v_min, vhi = s->v_max;
  for (int k = 0; k < pb->ns; ++k) {
    if (!(isfinite(o[k]) && isfinite(v[k]) && v[k] > 0)) {
      snprintf(msg, cap, "pass sample %d: the offset must be finite and the speed > 0 m/s, got %g and %g", k, o[k],
               v[k]);
      return KELVIN_ERR_ARG;
    }
    if (!(o[k] >= olo - 1e-12 && o[k] <= ohi + 1e-12)) {
      snprintf(msg, cap, "pass sample %d (s = %.4g m): offset %.6g m is outside [offset.min, offset.max] = [%.6g, "
               "%.6g] m%s", k, pb->s[k], o[k], olo, ohi,
               fabs(o[k]) > 100 * fmax(fabs(olo), fabs(ohi)) ? "; is it in millimetres? offsets are taken in metres"
                                                               : "");
      return KELVIN_ERR_ARG;
    }
    if (!(v[k] >= vlo * (1 - 1e-9) && v[k] <= vhi * (1 + 1e-9))) {
      snprintf(msg, cap, "pass sample %d (s = %.4g m): speed %.6g m/s is outside [speed.min, speed.max] = [%.6g, "
               "%.6g] m/s%s", k, pb->s[k], v[k], vlo, vhi,
               v[k] > KL_PLAUSIBLE_SPEED || v[k] > 100 * vhi ? "; is it in mm/s? speeds are taken in m/s" : "");
      return KELVIN_ERR_ARG;
    }
  }
  return KELVIN_OK;
}

/* x turned about y by the angle of cosine c and sine sn (as workpiece.tilt_deg turns a part) */
static void turn_y(double c, double sn, const double x[3], double y[3])
{
  const double x0 = x[0], x2 = x[2];
  y[0] = c * x0 + sn * x2;
  y[1] = x[1];
  y[2] = -sn * x0 + c * x2;
}

/* optimiser/problem.h: the protrusion h, dh/ds and kappa of pb's actual part (moved) along pb's path. A rigid
 * motion of the part is the inverse motion of the tool: the centre c and the directions (axis, tangent) are taken
 * into the unmoved part's frame, where distances and dot products are the same. */
kelvin_status kl_problem_protrusion(kl_problem *pb, const double *motion, char *msg, int cap)
{
  const kl_settings *s = &pb->set;
  const int ns = pb->ns;
  kelvin_status st = KELVIN_OK;
  const double R = s->tool_R, reach = R + 0.5 * R;
  const double mc = motion ? cos(motion[0]) : 1.0, ms = motion ? -sin(motion[0]) : 0.0; /* the inverse turn */
  int *tri = NULL, tcap = 0;
  for (int k = 0; k < ns; ++k) {
    double c[3], d, qq[3], nn[3];
    for (int i = 0; i < 3; ++i) c[i] = pb->p[3 * k + i] + R * pb->nrm[3 * k + i];
    if (motion) { /* c' = Ry(-theta) (c - o - t) + o */
      const double u[3] = {c[0] - motion[1] - motion[4], c[1] - motion[2] - motion[5], c[2] - motion[3] - motion[6]};
      turn_y(mc, ms, u, c);
      for (int i = 0; i < 3; ++i) c[i] += motion[1 + i];
    }
    if (s->tool_shape == KL_TOOL_DISC) {
      /* the triangles within 1.1 R of the axis: h >= -0.1 R is found, below that the part is off */
      double a[3];
      kl_problem_tool_axis(pb, k, a);
      if (motion) {
        const double a0[3] = {a[0], a[1], a[2]};
        turn_y(mc, ms, a0, a);
      }
      int nt = kl_mesh_query_cylinder(pb->actual, c, a, 1.1 * R, 0.5 * s->tool_width, tri, tcap);
      if (nt > tcap) {
        free(tri);
        tcap = 2 * nt;
        tri = malloc((size_t)tcap * sizeof *tri);
        if (!tri) {
          snprintf(msg, (size_t)cap, "out of memory");
          return KELVIN_ERR_NOMEM;
        }
        nt = kl_mesh_query_cylinder(pb->actual, c, a, 1.1 * R, 0.5 * s->tool_width, tri, tcap);
      }
      const double h = disc_depth(pb->actual, tri, nt, c, a, R, 0.5 * s->tool_width);
      if (!(h >= -0.1 * R)) {
        free(tri);
        snprintf(msg, (size_t)cap,
                 "path: sample %d (s = %.4g m, at %.4g, %.4g, %.4g) is off the workpiece: no surface within %.3g m of "
                 "the disc's rim",
                 k, pb->s[k], pb->p[3 * k], pb->p[3 * k + 1], pb->p[3 * k + 2], 0.1 * R);
        return KELVIN_ERR_CONFIG;
      }
      pb->h[k] = h;
      pb->kap[k] = 1.0; /* the disc's contact direction is not sampled: taken along the axis */
      continue;
    }
    if (!kl_mesh_closest(pb->actual, c, reach, &d, qq, nn)) {
      free(tri);
      snprintf(msg, (size_t)cap,
               "path: sample %d (s = %.4g m, at %.4g, %.4g, %.4g) is off the workpiece: no surface within %.3g m of the "
               "tool centre",
               k, pb->s[k], pb->p[3 * k], pb->p[3 * k + 1], pb->p[3 * k + 2], reach);
      return KELVIN_ERR_CONFIG;
    }
    pb->h[k] = R - d;
    /* the share of the contact force along the tool axis a (out of the part): the contact normal n_c
     * from the closest point to the centre, friction mu against the motion T along the contact's
     * tangent, kappa = (n_c - mu t) . a */
    {
      double Rm[9], nc[3] = {c[0] - qq[0], c[1] - qq[1], c[2] - qq[2]}, t[3];
      tool_frame(pb, k, Rm);
      double a[3] = {-Rm[2], -Rm[5], -Rm[8]}, T[3] = {pb->tan[3 * k], pb->tan[3 * k + 1], pb->tan[3 * k + 2]};
      if (motion) {
        const double a0[3] = {a[0], a[1], a[2]}, T0[3] = {T[0], T[1], T[2]};
        turn_y(mc, ms, a0, a);
        turn_y(mc, ms, T0, T);
      }
      normalise(nc);
      const double tn = v3_dot(T, nc);
      for (int i = 0; i < 3; ++i) t[i] = T[i] - tn * nc[i];
      normalise(t);
      pb->kap[k] = v3_dot(nc, a) - s->friction * v3_dot(t, a);
    }
  }
  free(tri);
  for (int k = 0; k < ns; ++k) {
    const int a = k > 0 ? k - 1 : 0, b = k + 1 < ns ? k + 1 : ns - 1;
    pb->dh[k] = (pb->h[b] - pb->h[a]) / (pb->s[b] - pb->s[a]);
  }
  return st;
}

#define FAIL(code, ...)                                                                                      \
  do {                                                                                                       \
    snprintf(msg, (size_t)cap, __VA_ARGS__);                                                                 \
    st = (code);                                                                                             \
    goto fail;                                                                                               \
  } while (0)

/* The contact's stiffness *Kc and Kelvin-Voigt damping *Dc (left alone for the other models) of the settings s at
 * the mean target force fmean; returns the force exponent in use (the contact constants of kl_problem_build). */
static double contact_stiffness(const kl_settings *s, double fmean, double *Kc, double *Dc)
{
  const double Es = kl_estar(s->tool_E, s->tool_nu, s->work_E, s->work_nu);
  const int disc = s->tool_shape == KL_TOOL_DISC;
  const double Kbase = disc ? 0.25 * PI * Es * s->tool_width : kl_hertz_K(Es, s->tool_R), nbase = disc ? 1.0 : 1.5;
  const double dmean = pow(fmean / Kbase, 1.0 / nbase); /* static penetration of the base law at the mean target */
  const double nexp = s->model == KL_MODEL_KV ? 1.0 : isfinite(s->exponent) ? s->exponent : nbase;
  if (s->model == KL_MODEL_KV) {
    /* linear stiffness: the base law's tangent at the mean target force, unless given */
    *Kc = s->contact_K > 0 ? s->contact_K : nbase * fmean / dmean;
    *Dc = kl_kv_damping(s->cr, *Kc, s->tool_mass);
  } else {
    *Kc = s->contact_K > 0 ? s->contact_K : nexp == nbase ? Kbase : fmean / pow(dmean, nexp);
  }
  return nexp;
}

kelvin_status kl_problem_build(const kl_settings *set, const kl_problem_inputs *inputs, kl_problem **out, char *msg,
                                int cap)
{
  return kl_problem_build_on(set, inputs, NULL, out, msg, cap);
}

kelvin_status kl_problem_build_on(const kl_settings *set, const kl_problem_inputs *inputs, const kl_mesh *given,
                                  kl_problem **out, char *msg, int cap)
{
  *out = NULL;
  const kl_problem_inputs none = {0};
  const kl_problem_inputs *in = inputs ? inputs : &none;
  kelvin_status st = KELVIN_OK;
  poly q = {0, 0, NULL, NULL, NULL};
  gsl_bspline_workspace *bw = NULL;
  gsl_vector *bv = NULL;
  kl_problem *pb = calloc(1, sizeof *pb);
  if (!pb) return KELVIN_ERR_NOMEM;
  pb->set = *set;
  const kl_settings *s = &pb->set;
  kl_gsl_guard(); /* a GSL error returns here as a status, never abort() */
  /* cross-field checks */
  if (s->method == KL_METHOD_NLOPT && (s->n_o > s->ns || s->n_v > s->ns))
    FAIL(KELVIN_ERR_CONFIG, "path.samples (%d) must be at least offset.control_points (%d) and speed.control_points (%d)",
         s->ns, s->n_o, s->n_v);
  if (!(s->v_min < s->v_max)) FAIL(KELVIN_ERR_CONFIG, "speed.min (%g) must be < speed.max (%g)", s->v_min, s->v_max);
  if (!(s->v_init >= s->v_min && s->v_init <= s->v_max))
    FAIL(KELVIN_ERR_CONFIG, "speed.initial: must be within [speed.min, speed.max] = [%g, %g], got %g", s->v_min,
         s->v_max, s->v_init);
  if (isfinite(s->o_min) && isfinite(s->o_max) && !(s->o_min < s->o_max))
    FAIL(KELVIN_ERR_CONFIG, "offset.min (%g) must be < offset.max (%g)", s->o_min, s->o_max);
  if (s->surface != KL_SURF_MESH && !in->npath && !(s->path_x0 < s->path_x1))
    FAIL(KELVIN_ERR_CONFIG, "path.start (%g) must be < path.end (%g)", s->path_x0, s->path_x1);
  if (s->surface == KL_SURF_MESH && !in->mesh) FAIL(KELVIN_ERR_CONFIG, "workpiece.mesh: needed with surface: mesh");
  if ((s->surface == KL_SURF_CYLINDER || s->surface == KL_SURF_SPHERE) &&
      !(fabs(s->path_x0) < s->radius && fabs(s->path_x1) < s->radius && fabs(s->path_y) < s->radius))
    FAIL(KELVIN_ERR_CONFIG, "path: the path leaves the %s of radius %g m (path.start/end/y)",
         surface_names[s->surface], s->radius);
  if (s->surface != KL_SURF_MESH && !in->npath &&
      (s->path_x1 - s->path_x0 > s->extent[0] - 2 * s->tool_R))
    FAIL(KELVIN_ERR_CONFIG, "path: path.end - path.start (%g m) must fit in workpiece.extent[0] (%g m) less two tool radii",
         s->path_x1 - s->path_x0, s->extent[0]);
  if (s->tool_shape != KL_TOOL_BALL && s->tool_shape != KL_TOOL_DISC)
    FAIL(KELVIN_ERR_CONFIG, "tool.shape: must be ball or disc (code %d)", s->tool_shape);
  if (!(sqrt(s->tool_axis[0] * s->tool_axis[0] + s->tool_axis[1] * s->tool_axis[1] + s->tool_axis[2] * s->tool_axis[2]) > 1e-9))
    FAIL(KELVIN_ERR_CONFIG, "tool.axis: must be a non-zero vector");
  if (!(s->tool_inertia[0] > 0 && s->tool_inertia[1] > 0 && s->tool_inertia[2] > 0 && isfinite(s->tool_inertia[0] + s->tool_inertia[1] + s->tool_inertia[2])))
    FAIL(KELVIN_ERR_CONFIG, "tool.inertia: the three moments must be > 0 kg m^2, got %g %g %g", s->tool_inertia[0],
         s->tool_inertia[1], s->tool_inertia[2]);
  if (s->model == KL_MODEL_KV && isfinite(s->exponent) && s->exponent != 1.0)
    FAIL(KELVIN_ERR_CONFIG, "contact.exponent: Kelvin-Voigt is linear (1), got %g", s->exponent);
  if (s->model != KL_MODEL_GEN && (s->gen_c != 0.0 || isfinite(s->gen_n2) || s->gen_m != 1.0))
    FAIL(KELVIN_ERR_CONFIG, "contact.%s: only the general law takes it (contact.model: general)",
         s->gen_c != 0.0 ? "c" : isfinite(s->gen_n2) ? "n2" : "m");
  /* magnitudes, before anything is built (docs/design.md section 8) */
  if ((st = check_target_speed(s, in, msg, cap)) != KELVIN_OK || (st = check_sizes(s, in, msg, cap)) != KELVIN_OK)
    goto fail;
  pb->ns = s->ns;
  if (s->method == KL_METHOD_LM) pb->set.n_o = pb->set.n_v = s->ns; /* the samples are the control points */
  pb->nc = s->n_o + s->n_v;
  const int ns = s->ns;
  pb->s = calloc((size_t)ns, sizeof(double));
  pb->p = calloc((size_t)ns * 3, sizeof(double));
  pb->nrm = calloc((size_t)ns * 3, sizeof(double));
  pb->tan = calloc((size_t)ns * 3, sizeof(double));
  pb->h = calloc((size_t)ns, sizeof(double));
  pb->dh = calloc((size_t)ns, sizeof(double));
  pb->meff = calloc((size_t)ns, sizeof(double));
  pb->fg = calloc((size_t)ns, sizeof(double));
  pb->ft = calloc((size_t)ns, sizeof(double));
  pb->kap = calloc((size_t)ns, sizeof(double));
  pb->geo = calloc((size_t)ns * KL_GG_N, sizeof(double));
  if (s->method == KL_METHOD_NLOPT) pb->basis = calloc((size_t)2 * ns * pb->nc, sizeof(double));
  pb->lo = calloc((size_t)pb->nc, sizeof(double));
  pb->hi = calloc((size_t)pb->nc, sizeof(double));
  if (!pb->s || !pb->p || !pb->nrm || !pb->tan || !pb->h || !pb->dh || !pb->meff || !pb->fg || !pb->ft || !pb->kap || !pb->geo ||
      (s->method == KL_METHOD_NLOPT && !pb->basis) || !pb->lo || !pb->hi)
    FAIL(KELVIN_ERR_NOMEM, "out of memory");
  /* workpiece: the part as it is */
  if (given) {
    pb->actual = (kl_mesh *)given; /* borrowed: the caller keeps it alive */
    pb->own_actual = 0;
  } else if (s->surface == KL_SURF_MESH) {
    pb->actual = (kl_mesh *)in->mesh; /* borrowed: the caller keeps it alive */
    pb->own_actual = 0;
  } else {
    const double xc = 0.5 * (s->path_x0 + s->path_x1);
    st = mesh_actual(s, in->npath ? 0.0 : xc, in->npath ? 0.0 : s->path_y, &pb->actual, msg, cap);
    if (st != KELVIN_OK) goto fail;
    pb->own_actual = 1;
  }
  /* path on the nominal surface */
  if (in->npath)
    st = given_path(in, &q, msg, cap);
  else if (s->surface == KL_SURF_MESH)
    st = mesh_path(s, pb->actual, &q, msg, cap);
  else
    st = analytic_path(s, &q);
  if (st != KELVIN_OK) goto fail;
  resample(&q, pb);
  /* protrusion of the actual part into the tool at the tool centre on the nominal contact (o = 0) */
  if ((st = kl_problem_protrusion(pb, NULL, msg, cap)) != KELVIN_OK) goto fail;
  /* mass, weight (a downward weight pushes along -n by w n_z), target */
  for (int k = 0; k < ns; ++k) {
    pb->meff[k] = s->tool_mass;
    pb->fg[k] = s->tool_weight * pb->nrm[3 * k + 2];
    pb->ft[k] = s->target_F;
  }
  if (in->ntarget && (st = given_target(in, pb, msg, cap)) != KELVIN_OK) goto fail;
  if (in->robot && (st = robot_mass(pb, in->robot, msg, cap)) != KELVIN_OK) goto fail;
  /* contact constants (docs/design.md section 2.1): a ball-end on a locally flat part is a Hertz point
   * contact, F = (4/3) E* sqrt(R) d^1.5; a disc (a wheel across the path) is a line contact of length
   * b = tool.width, taken linear, F = (pi/4) E* b d: the leading term of the line-contact relations
   * (Johnson 1985, 5.8; Pereira, Ramalho and Ambrosio 2011), whose logarithmic correction is left out.
   * A law of another exponent n (contact.exponent) is calibrated to pass through that law's force at the
   * mean target, K = F / d(F)^n, unless contact.stiffness gives K. */
  double fmean = 0, fgmean = 0;
  for (int k = 0; k < ns; ++k) {
    fmean += pb->ft[k] / ns;
    fgmean += pb->fg[k] / ns;
  }
  const double nexp = contact_stiffness(s, fmean, &pb->Kc, &pb->Dc);
  if (s->model != KL_MODEL_KV) pb->chi = s->model == KL_MODEL_GEN ? 0.0 : kl_hc_chi(s->law, s->cr, s->approach_speed);
  pb->gp[KL_GP_NC] = nexp; /* static_pen needs it before the rest of gp is packed */
  if (s->model == KL_MODEL_GEN) { /* the general law: k is Kc, n1 the exponent; its constants checked by the library */
    const kl_gen_law L = {pb->Kc, s->gen_c, nexp, isfinite(s->gen_n2) ? s->gen_n2 : nexp, s->gen_m};
    char why[160];
    if (kl_gen_law_bad(L, why, sizeof why)) {
      st = KELVIN_ERR_CONFIG;
      snprintf(msg, (size_t)cap, "contact.%s", why);
      goto fail;
    }
    pb->gp[KL_GP_GC] = L.c;
    pb->gp[KL_GP_GN2] = L.n2;
    pb->gp[KL_GP_GM] = L.m;
  }
  pb->contact_share = kl_contact_share(kl_problem_contact(pb), fmean, s->holder_K);
  if ((st = check_static(pb, in->ntarget > 0, msg, cap)) != KELVIN_OK) goto fail;
  /* the planner's naive offset: static equilibrium on the CAD at the mean target */
  pb->naive_o = static_pen(pb, fmean) + (fmean - fgmean) / s->holder_K;
  /* offset bounds from the part's measured deviation from its CAD: the per-sample static offsets
   * o_k = d*(F*_k / kappa_k) + (F*_k - F_g,k)/K_h - h_k (kl_problem_guess) span the range the part asks for; the
   * naive offset and offset.margin either side */
  {
    double glo = pb->naive_o, ghi = pb->naive_o;
    for (int k = 0; k < ns; ++k) {
      const double g = static_pen(pb, pb->ft[k] / pb->kap[k]) + (pb->ft[k] - pb->fg[k]) / s->holder_K - pb->h[k];
      glo = fmin(glo, g);
      ghi = fmax(ghi, g);
    }
    if (!isfinite(s->o_min)) pb->set.o_min = glo - s->o_margin;
    if (!isfinite(s->o_max)) pb->set.o_max = ghi + s->o_margin;
  }
  if (!(pb->set.o_min < pb->naive_o && pb->naive_o < pb->set.o_max))
    FAIL(KELVIN_ERR_CONFIG, "offset: the naive offset %.4g m (static equilibrium at the target) is outside [offset.min, "
                            "offset.max] = [%g, %g]",
         pb->naive_o, pb->set.o_min, pb->set.o_max);
  /* packed constants */
  double *gp = pb->gp;
  gp[KL_GP_KH] = s->holder_K;
  gp[KL_GP_DH] = s->holder_D;
  gp[KL_GP_KC] = pb->Kc;
  gp[KL_GP_NC] = nexp;
  gp[KL_GP_DC] = pb->Dc;
  gp[KL_GP_CHI] = pb->chi;
  gp[KL_GP_MODEL] = s->model;
  gp[KL_GP_FTOL] = s->ftol;
  gp[KL_GP_FREF] = fmean;
  gp[KL_GP_FMAX] = s->max_F;
  gp[KL_GP_AMAX] = s->a_max;
  gp[KL_GP_OSCALE] = 1e-3;
  gp[KL_GP_VSCALE] = s->v_max;
  gp[KL_GP_TREF] = pb->length / s->v_init;
  gp[KL_GP_AVG] = s->measure;
  gp[KL_GP_MAXSUB] = 20000;
  gp[KL_GP_W_RMS] = s->w_rms;
  gp[KL_GP_W_LOSS] = s->w_loss;
  gp[KL_GP_W_OVER] = s->w_over;
  gp[KL_GP_W_TIME] = s->w_time;
  gp[KL_GP_W_ROUGH] = s->w_rough;
  gp[KL_GP_W_ACC] = s->w_acc;
  /* the general law's tangent floors (kl_gen_lin_tangent): 1e-6 of the static depth at the mean target, and 1e-6 of
   * 1e-3 of that depth per holder period 2 pi sqrt(m/K_h), the rate scale of the tool's motion (docs/design.md section 5) */
  if (s->model == KL_MODEL_GEN) {
    const double dm = kl_contact_static_depth(kl_problem_contact(pb), fmean);
    gp[KL_GP_GDF] = 1e-6 * dm;
    gp[KL_GP_GVF] = 1e-3 * dm / (2.0 * KL_PI * sqrt(s->tool_mass / s->holder_K));
  }
  kl_problem_pack_geo(pb);
  /* clamped cubic B-splines on the normalised arc length (GSL), method nlopt */
  for (int part = 0; part < 2 && pb->basis; ++part) {
    const int nco = part ? s->n_v : s->n_o, col0 = part ? s->n_o : 0;
    bw = gsl_bspline_alloc(4, (size_t)(nco - 2));
    bv = gsl_vector_alloc((size_t)nco);
    if (!bw || !bv) FAIL(KELVIN_ERR_NOMEM, "out of memory");
    gsl_bspline_knots_uniform(0.0, 1.0, bw);
    for (int k = 0; k < ns; ++k) {
      gsl_bspline_eval((double)k / (ns - 1), bv, bw);
      for (int j = 0; j < nco; ++j)
        pb->basis[((size_t)(part * ns + k)) * pb->nc + col0 + j] = gsl_vector_get(bv, (size_t)j);
    }
    gsl_bspline_free(bw);
    gsl_vector_free(bv);
    bw = NULL;
    bv = NULL;
  }
  for (int j = 0; j < pb->nc; ++j) {
    pb->lo[j] = j < s->n_o ? pb->set.o_min : s->v_min;
    pb->hi[j] = j < s->n_o ? pb->set.o_max : s->v_max;
  }
  poly_free(&q);
  if (kl_gsl_error()) FAIL(KELVIN_ERR_NUMERIC, "problem preparation failed: %s", kl_gsl_error());
  *out = pb;
  return KELVIN_OK;
fail:
  poly_free(&q);
  if (bw) gsl_bspline_free(bw);
  if (bv) gsl_vector_free(bv);
  kl_problem_free(pb);
  return st;
}

void kl_basis_expand(const double *basis, int ns, int nc, const double *x, double *o, double *v)
{
  if (!basis) {
    memcpy(o, x, (size_t)ns * sizeof *o);
    memcpy(v, x + ns, (size_t)ns * sizeof *v);
    return;
  }
  for (int k = 0; k < ns; ++k) {
    double a = 0, b = 0;
    for (int j = 0; j < nc; ++j) {
      a += basis[(size_t)k * nc + j] * x[j];
      b += basis[(size_t)(ns + k) * nc + j] * x[j];
    }
    o[k] = a;
    v[k] = b;
  }
}

void kl_problem_expand(const kl_problem *pb, const double *x, double *o, double *v)
{
  kl_basis_expand(pb->basis, pb->ns, pb->nc, x, o, v);
}

void kl_problem_naive(const kl_problem *pb, double *x)
{
  for (int j = 0; j < pb->nc; ++j) x[j] = j < pb->set.n_o ? pb->naive_o : pb->set.v_init;
}

void kl_problem_guess(const kl_problem *pb, double *x)
{
  /* per-sample static equilibrium on the actual part, o_k = d*(F*_k / kappa_k) + (F*_k - F_g,k)/K_h - h_k,
   * fitted by least squares onto the offset spline (the speed stays at its initial value) */
  const int ns = pb->ns, no = pb->set.n_o;
  if (!pb->basis) { /* per sample: the static offsets themselves */
    kl_problem_naive(pb, x);
    for (int k = 0; k < ns; ++k)
      x[k] = fmin(pb->hi[k], fmax(pb->lo[k], static_pen(pb, pb->ft[k] / pb->kap[k]) + (pb->ft[k] - pb->fg[k]) / pb->set.holder_K - pb->h[k]));
    return;
  }
  gsl_matrix *X = gsl_matrix_alloc((size_t)ns, (size_t)no);
  gsl_vector *y = gsl_vector_alloc((size_t)ns), *c = gsl_vector_alloc((size_t)no);
  gsl_matrix *cov = gsl_matrix_alloc((size_t)no, (size_t)no);
  gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc((size_t)ns, (size_t)no);
  kl_problem_naive(pb, x);
  if (X && y && c && cov && w) {
    for (int k = 0; k < ns; ++k) {
      for (int j = 0; j < no; ++j) gsl_matrix_set(X, (size_t)k, (size_t)j, pb->basis[(size_t)k * pb->nc + j]);
      gsl_vector_set(y, (size_t)k, static_pen(pb, pb->ft[k] / pb->kap[k]) + (pb->ft[k] - pb->fg[k]) / pb->set.holder_K - pb->h[k]);
    }
    double chisq;
    if (gsl_multifit_linear(X, y, c, cov, &chisq, w) == 0)
      for (int j = 0; j < no; ++j) x[j] = fmin(pb->hi[j], fmax(pb->lo[j], gsl_vector_get(c, (size_t)j)));
  }
  gsl_matrix_free(X);
  gsl_vector_free(y);
  gsl_vector_free(c);
  gsl_matrix_free(cov);
  gsl_multifit_linear_free(w);
}

void kl_problem_measure(const kl_problem *pb, int m, const double *so, const double *o, const double *v, double *out)
{
  const int ns = pb->ns, avg = m & KL_MEASURE_AVG_BIT;
  out[0] = so[(avg ? KL_SO_FAVG : KL_SO_F) * ns];
  if (m & KL_MEASURE_SENSOR_BIT) out[0] = so[KL_SO_FAVG * ns]; /* the start is at rest: sensor = contact force */
  for (int k = 1; k < ns; ++k) {
    if (!(m & KL_MEASURE_SENSOR_BIT)) {
      out[k] = so[(avg ? KL_SO_FAVG : KL_SO_F) * ns + k];
    } else if (avg) { /* F_N averaged + m (z'_k - z'_{k-1}) / T, the interval's mean mass */
      const double T = so[KL_SO_T * ns + k] - so[KL_SO_T * ns + k - 1], mk = 0.5 * (pb->meff[k - 1] + pb->meff[k]);
      out[k] = so[KL_SO_FAVG * ns + k] + mk * (so[KL_SO_ZD * ns + k] - so[KL_SO_ZD * ns + k - 1]) / T;
    } else { /* K_h (u - z) + D_h (u' - z') + F_g, u' the rate on the interval ending at the sample */
      const double ud = v[k] * (o[k] - o[k - 1]) / (pb->s[k] - pb->s[k - 1]);
      out[k] = pb->set.holder_K * (o[k] - so[KL_SO_Z * ns + k]) + pb->set.holder_D * (ud - so[KL_SO_ZD * ns + k]) +
               pb->fg[k];
    }
  }
}

void kl_problem_pack_geo(kl_problem *pb)
{
  for (int k = 0; k < pb->ns; ++k) {
    double *g = &pb->geo[k * KL_GG_N];
    g[KL_GG_S] = pb->s[k];
    g[KL_GG_H] = pb->h[k];
    g[KL_GG_DH] = pb->dh[k];
    g[KL_GG_M] = pb->meff[k];
    g[KL_GG_FG] = pb->fg[k];
    g[KL_GG_FT] = pb->ft[k];
    g[KL_GG_KAP] = pb->kap[k] - 1.0;
  }
}

void kl_problem_at_bounds(const kl_problem *pb, const double *x, int j0, int j1, int *at_lo, int *at_hi)
{
  *at_lo = *at_hi = 0;
  for (int j = j0; j < j1; ++j) {
    const double tol = 1e-6 * (pb->hi[j] - pb->lo[j]);
    *at_lo += x[j] <= pb->lo[j] + tol;
    *at_hi += x[j] >= pb->hi[j] - tol;
  }
}

/* optimiser/removal.h: the device model on the part as material removal left it (docs/design.md section 9) */
kelvin_status kl_problem_with_protrusion(const kl_problem *pb, const double *h, const double *dh, double tool_R,
                                         kl_problem **out, char *msg, int cap)
{
  *out = NULL;
  const int ns = pb->ns, nc = pb->nc;
  for (int k = 0; k < ns; ++k)
    if (!isfinite(h[k]) || !isfinite(dh[k])) {
      snprintf(msg, (size_t)cap, "the protrusion at sample %d (s = %.4g m) is not finite", k, pb->s[k]);
      return KELVIN_ERR_ARG;
    }
  if (!(tool_R > 0) || !isfinite(tool_R)) {
    snprintf(msg, (size_t)cap, "tool radius %g m: must be > 0 (worn away?)", tool_R);
    return KELVIN_ERR_ARG;
  }
  kl_problem *c = calloc(1, sizeof *c);
  if (!c) return KELVIN_ERR_NOMEM;
  *c = *pb;
  c->s = c->p = c->nrm = c->tan = c->h = c->dh = c->meff = c->fg = c->ft = c->kap = c->geo = c->basis = NULL;
  c->lo = c->hi = NULL;
  c->own_actual = 0; /* borrowed */
#define DUP(f, n)                                                                                            \
  do {                                                                                                       \
    if (pb->f) {                                                                                             \
      c->f = malloc((size_t)(n) * sizeof(double));                                                           \
      if (!c->f) goto nomem;                                                                                 \
      memcpy(c->f, pb->f, (size_t)(n) * sizeof(double));                                                     \
    }                                                                                                        \
  } while (0)
  DUP(s, ns);
  DUP(p, 3 * ns);
  DUP(nrm, 3 * ns);
  DUP(tan, 3 * ns);
  DUP(h, ns);
  DUP(dh, ns);
  DUP(meff, ns);
  DUP(fg, ns);
  DUP(ft, ns);
  DUP(kap, ns);
  DUP(geo, (size_t)ns * KL_GG_N);
  DUP(basis, (size_t)2 * ns * nc);
  DUP(lo, nc);
  DUP(hi, nc);
#undef DUP
  memcpy(c->h, h, (size_t)ns * sizeof(double));
  memcpy(c->dh, dh, (size_t)ns * sizeof(double));
  for (int k = 0; k < ns; ++k) {
    c->geo[k * KL_GG_N + KL_GG_H] = h[k];
    c->geo[k * KL_GG_N + KL_GG_DH] = dh[k];
  }
  if (tool_R != pb->set.tool_R) { /* worn: the contact constants that came from the radius follow it */
    c->set.tool_R = tool_R;
    const double fmean = pb->gp[KL_GP_FREF];
    contact_stiffness(&c->set, fmean, &c->Kc, &c->Dc);
    c->gp[KL_GP_KC] = c->Kc;
    c->gp[KL_GP_DC] = c->Dc;
    if (c->set.model == KL_MODEL_GEN) {
      const double dm = kl_contact_static_depth(kl_problem_contact(c), fmean);
      c->gp[KL_GP_GDF] = 1e-6 * dm;
      c->gp[KL_GP_GVF] = 1e-3 * dm / (2.0 * KL_PI * sqrt(c->set.tool_mass / c->set.holder_K));
    }
    c->contact_share = kl_contact_share(kl_problem_contact(c), fmean, c->set.holder_K);
    double fgmean = 0;
    for (int k = 0; k < ns; ++k) fgmean += c->fg[k] / ns;
    c->naive_o = static_pen(c, fmean) + (fmean - fgmean) / c->set.holder_K;
  }
  *out = c;
  return KELVIN_OK;
nomem:
  kl_problem_free(c);
  snprintf(msg, (size_t)cap, "out of memory");
  return KELVIN_ERR_NOMEM;
}
