/* engine/collision_ccd.c: narrow phase of the 3-D engine (docs/design.md section 3). The only includer of
 * <ccd/ccd.h>. Exact formulas where trivial: sphere-plane, sphere-sphere, sphere-triangle, vertex-plane,
 * vertex-triangle; libccd's MPR (Minkowski portal refinement) for convex-convex and convex-triangle
 * pairs that the exact tests do not cover. Shapes with several support points (box, hull, cylinder,
 * capsule) give several contacts against planes and meshes (a box resting flat has four). A disc (a
 * wheel) gives one contact per distinct minimum of its distance to a plane or a mesh: against a plane
 * its exact support point; against a mesh the BVH finds the triangles that reach into its cylinder, the
 * exact distance of each triangle's part within the disc's width to its axis ranks them and groups them
 * by normal (within 10 degrees, as for spheres), and libccd's MPR of the disc against the best few of
 * each group gives the contact (depth, normal, point) of the deepest. */
#include <ccd/ccd.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "engine/util3.h"
#include "engine/world_impl.h"

_Static_assert(sizeof(ccd_real_t) == sizeof(double), "libccd must be built in double precision (CCD_DOUBLE)");

//------------------------------------------------------------------------------------------------------
// poses

void kl_collide_pose(const kl_world_model *m, const kl_world_data *d, kl_scratch *S)
{
  for (int s = 0; s < m->nshape; ++s) {
    const int b = m->shape_body[s];
    double q[4], Rb[9];
    q_mul(q, d->xquat + 4 * b, m->shape_quat + 4 * s);
    q_to_m3(S->sR + 9 * s, q);
    q_to_m3(Rb, d->xquat + 4 * b);
    double off[3];
    m3_mulv(off, Rb, m->shape_pos + 3 * s);
    v3_add(S->sx + 3 * s, d->xpos + 3 * b, off);
  }
}

//------------------------------------------------------------------------------------------------------
// support functions (libccd objects)

typedef struct ccd_obj {
  int type;         /* KL_SHAPE_* or -1 for a triangle */
  const double *x;  /* world centre */
  const double *R;  /* world rotation */
  const double *size;
  double pad;
  const double *hull; /* local vertices */
  int nhull;
  double tri[9];    /* triangle corners (world) */
  const double *ctr; /* the interior point MPR starts from, if not the default (origin, centroid) */
} ccd_obj;

/* support of the unpadded shape in world direction dir */
static void support_raw(const ccd_obj *o, const double dir[3], double out[3])
{
  if (o->type < 0) {
    int best = 0;
    double bd = -DBL_MAX;
    for (int k = 0; k < 3; ++k) {
      const double v = v3_dot(o->tri + 3 * k, dir);
      if (v > bd) {
        bd = v;
        best = k;
      }
    }
    v3_copy(out, o->tri + 3 * best);
    return;
  }
  double l[3], p[3] = {0, 0, 0};
  m3_mulvT(l, o->R, dir); /* local direction */
  switch (o->type) {
  case KL_SHAPE_SPHERE: {
    double u[3] = {l[0], l[1], l[2]};
    if (v3_normalize(u) > 0) v3_scl(p, u, o->size[0]);
    break;
  }
  case KL_SHAPE_BOX:
    for (int k = 0; k < 3; ++k) p[k] = l[k] >= 0 ? o->size[k] : -o->size[k];
    break;
  case KL_SHAPE_CAPSULE: {
    double u[3] = {l[0], l[1], l[2]};
    if (v3_normalize(u) > 0) v3_scl(p, u, o->size[0]);
    p[2] += l[2] >= 0 ? o->size[1] : -o->size[1];
    break;
  }
  case KL_SHAPE_CYLINDER:
  case KL_SHAPE_DISC: {
    const double rr = sqrt(l[0] * l[0] + l[1] * l[1]);
    if (rr > 0) {
      p[0] = o->size[0] * l[0] / rr;
      p[1] = o->size[0] * l[1] / rr;
    }
    p[2] = l[2] >= 0 ? o->size[1] : -o->size[1];
    break;
  }
  case KL_SHAPE_HULL: {
    int best = 0;
    double bd = -DBL_MAX;
    for (int k = 0; k < o->nhull; ++k) {
      const double v = v3_dot(o->hull + 3 * k, l);
      if (v > bd) {
        bd = v;
        best = k;
      }
    }
    v3_copy(p, o->hull + 3 * best);
    break;
  }
  default: break;
  }
  m3_mulv(out, o->R, p);
  v3_add(out, out, o->x);
}

/* libccd support callback: padded (Minkowski sum with a ball of radius pad) */
static void ccd_support(const void *obj, const ccd_vec3_t *dir, ccd_vec3_t *vec)
{
  const ccd_obj *o = obj;
  double dd[3] = {dir->v[0], dir->v[1], dir->v[2]}, p[3];
  support_raw(o, dd, p);
  if (o->pad > 0 && v3_normalize(dd) > 0) v3_addscl(p, dd, o->pad);
  vec->v[0] = p[0];
  vec->v[1] = p[1];
  vec->v[2] = p[2];
}

/* libccd centre callback: a point inside the shape (its origin, or the triangle's centroid) */
static void ccd_center(const void *obj, ccd_vec3_t *c)
{
  const ccd_obj *o = obj;
  if (o->ctr) {
    for (int k = 0; k < 3; ++k) c->v[k] = o->ctr[k];
    return;
  }
  if (o->type < 0) {
    for (int k = 0; k < 3; ++k) c->v[k] = (o->tri[k] + o->tri[3 + k] + o->tri[6 + k]) / 3.0;
    return;
  }
  for (int k = 0; k < 3; ++k) c->v[k] = o->x[k];
}

/* the libccd view of shape s at its current pose */
static ccd_obj make_obj(const kl_world_model *m, const kl_scratch *S, int s)
{
  ccd_obj o;
  memset(&o, 0, sizeof o);
  o.type = m->shape_type[s];
  o.x = S->sx + 3 * s;
  o.R = S->sR + 9 * s;
  o.size = m->shape_size + 3 * s;
  o.pad = m->shape_pad[s];
  if (o.type == KL_SHAPE_HULL) {
    o.hull = m->hull_vert + 3 * m->shape_hull_adr[s];
    o.nhull = m->shape_hull_num[s];
  }
  return o;
}

void kl_shape_support(const kl_world_model *m, const kl_scratch *S, int s, const double dir[3], double out[3])
{
  const ccd_obj o = make_obj(m, S, s);
  ccd_vec3_t dv = {{dir[0], dir[1], dir[2]}}, v;
  ccd_support(&o, &dv, &v);
  out[0] = v.v[0], out[1] = v.v[1], out[2] = v.v[2];
}

/* MPR penetration of a (obj1) and b (obj2): returns 1 with depth, normal from b to a and point */
static int mpr(const ccd_obj *a, const ccd_obj *b, double *depth, double n[3], double pos[3])
{
  ccd_t ccd;
  CCD_INIT(&ccd);
  ccd.support1 = ccd_support;
  ccd.support2 = ccd_support;
  ccd.center1 = ccd_center;
  ccd.center2 = ccd_center;
  ccd.max_iterations = 200;
  ccd.mpr_tolerance = 1e-12;
  ccd_real_t dep;
  ccd_vec3_t dir, p;
  if (ccdMPRPenetration(a, b, &ccd, &dep, &dir, &p) != 0) return 0;
  /* libccd: translating obj2 by dep along dir separates them, so the force on obj1 is along -dir */
  n[0] = -dir.v[0], n[1] = -dir.v[1], n[2] = -dir.v[2];
  if (!(v3_normalize(n) > 0)) return 0;
  *depth = dep;
  pos[0] = p.v[0], pos[1] = p.v[1], pos[2] = p.v[2];
  return 1;
}

//------------------------------------------------------------------------------------------------------
// feature points of a shape (vertex-based contacts against planes and triangles)

/* contact points of shape s in world coordinates, with the radius each stands for (spheres and
 * capsule ends) — returns the count (<= cap) */
static int feature_points(const kl_world_model *m, const kl_scratch *S, int s, double *pts, double *rad, int cap)
{
  const double *x = S->sx + 3 * s, *R = S->sR + 9 * s, *sz = m->shape_size + 3 * s;
  int n = 0;
  double l[3];
  switch (m->shape_type[s]) {
  case KL_SHAPE_SPHERE:
    v3_copy(pts, x);
    rad[0] = sz[0];
    return 1;
  case KL_SHAPE_CAPSULE:
    for (int e = 0; e < 2; ++e) {
      l[0] = l[1] = 0;
      l[2] = e ? -sz[1] : sz[1];
      m3_mulv(pts + 3 * e, R, l);
      v3_add(pts + 3 * e, pts + 3 * e, x);
      rad[e] = sz[0];
    }
    return 2;
  case KL_SHAPE_BOX:
    for (int v = 0; v < 8 && n < cap; ++v, ++n) {
      l[0] = (v & 1) ? sz[0] : -sz[0];
      l[1] = (v & 2) ? sz[1] : -sz[1];
      l[2] = (v & 4) ? sz[2] : -sz[2];
      m3_mulv(pts + 3 * n, R, l);
      v3_add(pts + 3 * n, pts + 3 * n, x);
      rad[n] = 0;
    }
    return n;
  case KL_SHAPE_CYLINDER:
    for (int e = 0; e < 2; ++e)
      for (int k = 0; k < KL_CYL_RIM && n < cap; ++k, ++n) {
        const double a = 2.0 * 3.14159265358979323846 * k / KL_CYL_RIM;
        l[0] = sz[0] * cos(a);
        l[1] = sz[0] * sin(a);
        l[2] = e ? -sz[1] : sz[1];
        m3_mulv(pts + 3 * n, R, l);
        v3_add(pts + 3 * n, pts + 3 * n, x);
        rad[n] = 0;
      }
    return n;
  case KL_SHAPE_HULL: {
    const double *hv = m->hull_vert + 3 * m->shape_hull_adr[s];
    for (int k = 0; k < m->shape_hull_num[s] && n < cap; ++k, ++n) {
      m3_mulv(pts + 3 * n, R, hv + 3 * k);
      v3_add(pts + 3 * n, pts + 3 * n, x);
      rad[n] = 0;
    }
    return n;
  }
  default: return 0;
  }
}

#define KL_MAXPTS (2 * KL_CYL_RIM + 64)

/* append a feature; counts overflow */
static void add_feature(kl_scratch *S, int sa, int sb, const kl_world_model *m, int key, const double pos[3],
                        const double n[3], double depth)
{
  if (S->nfeat >= S->nfeat_max) {
    S->feat_overflow++;
    return;
  }
  kl_feature *f = &S->feat[S->nfeat++];
  f->shape[0] = sa;
  f->shape[1] = sb;
  f->body[0] = m->shape_body[sa];
  f->body[1] = m->shape_body[sb];
  f->key = key;
  v3_copy(f->pos, pos);
  v3_copy(f->normal, n);
  f->depth = depth;
  f->fix = 0.0;
  v3_zero(f->fixg);
}

//------------------------------------------------------------------------------------------------------
// pairs

/* shape a against the plane b: every feature point; returns the exact gap (min over support) */
static double pair_plane(const kl_world_model *m, kl_scratch *S, int a, int b, double margin)
{
  const double *np = S->sR + 9 * b; /* local z axis = column 2 */
  const double n[3] = {np[2], np[5], np[8]};
  const double *pb = S->sx + 3 * b;
  const double pads = m->shape_pad[a] + m->shape_pad[b];
  if (m->shape_type[a] == KL_SHAPE_DISC) {
    /* one contact, depth at the support point (padding included), at the pressure centre of the line
     * of rim points facing the plane: their depth D0 - k z is linear in the axial position z */
    double mn[3] = {-n[0], -n[1], -n[2]}, sp[3], rel[3], pos[3];
    kl_shape_support(m, S, a, mn, sp);
    v3_sub(rel, sp, pb);
    const double depth = m->shape_pad[b] - v3_dot(n, rel);
    if (depth >= -margin) {
      const double *Ra = S->sR + 9 * a, *c = S->sx + 3 * a;
      const double ax[3] = {Ra[2], Ra[5], Ra[8]}, hw = m->shape_size[3 * a + 1];
      const double k = v3_dot(n, ax), zs = v3_dot(sp, ax) - v3_dot(c, ax); /* the support's axial place */
      const double D0 = depth + k * zs;                                       /* depth at z = 0 */
      double lo = -hw, hi = hw;
      if (k > 0) hi = fmin(hi, D0 / k); /* the part of the width that penetrates */
      if (k < 0) lo = fmax(lo, D0 / k);
      double zc = zs;
      if (depth > 0 && hi > lo) { /* centroid of D0 - k z over [lo, hi] */
        const double w0 = D0 * (hi - lo) - 0.5 * k * (hi * hi - lo * lo);
        const double w1 = 0.5 * D0 * (hi * hi - lo * lo) - k * (hi * hi * hi - lo * lo * lo) / 3.0;
        if (w0 > 0) zc = w1 / w0;
      }
      v3_copy(pos, sp);
      v3_addscl(pos, ax, zc - zs);
      v3_addscl(pos, n, 0.5 * depth);
      add_feature(S, a, b, m, 0, pos, n, depth);
    }
    return -depth;
  }
  double pts[3 * KL_MAXPTS], rad[KL_MAXPTS];
  const int np_ = feature_points(m, S, a, pts, rad, KL_MAXPTS);
  double gap = DBL_MAX;
  for (int k = 0; k < np_; ++k) {
    double rel[3];
    v3_sub(rel, pts + 3 * k, pb);
    const double s = v3_dot(n, rel);         /* height of the feature point above the plane */
    const double depth = rad[k] + pads - s;  /* paper's penetration d along n */
    gap = fmin(gap, -depth);
    if (depth >= -margin) {
      double pos[3];
      v3_copy(pos, pts + 3 * k);
      v3_addscl(pos, n, -0.5 * (rad[k] + m->shape_pad[a] + s - m->shape_pad[b])); /* midway between surfaces */
      add_feature(S, a, b, m, k, pos, n, depth);
    }
  }
  if (m->shape_type[a] == KL_SHAPE_CYLINDER) { /* exact gap from the support, the rim samples miss it */
    double mn[3] = {-n[0], -n[1], -n[2]}, sp[3], rel[3];
    kl_shape_support(m, S, a, mn, sp);
    v3_sub(rel, sp, pb);
    gap = fmin(gap, v3_dot(n, rel) - m->shape_pad[b]);
  }
  return gap;
}

/* two spheres: exact */
static double pair_spheres(const kl_world_model *m, kl_scratch *S, int a, int b, double margin)
{
  double rel[3];
  v3_sub(rel, S->sx + 3 * a, S->sx + 3 * b);
  const double dist = v3_norm(rel);
  const double ra = m->shape_size[3 * a] + m->shape_pad[a], rb = m->shape_size[3 * b] + m->shape_pad[b];
  const double depth = ra + rb - dist;
  if (depth >= -margin && dist > 0) {
    double n[3], pos[3];
    v3_scl(n, rel, 1.0 / dist);
    v3_copy(pos, S->sx + 3 * b);
    v3_addscl(pos, n, rb - 0.5 * depth);
    add_feature(S, a, b, m, 0, pos, n, depth);
  }
  return -depth;
}

#define KL_SPHERE_CLUSTERS 16

/* sphere(s) of radius r at c against the triangles in S->tri[0..nt): one contact per distinct local
 * minimum of the distance. Candidates (each triangle's closest point) are clustered by normal: one
 * within 10 degrees of a cluster's normal joins it and the deepest stands for it, so a finely
 * tessellated smooth surface gives the one contact the smooth surface would (clustering as in Klamp't,
 * Hauser 2013), while a groove's two flanks stay two. A cluster whose representative lies on an edge
 * or a vertex and has a deeper representative within reach is not a minimum and is dropped. */
static void spheres_vs_tris(const kl_world_model *m, kl_scratch *S, int a, int b, const double *c, double r, int key,
                            int nt, double margin, const double *tq, const int *tf)
{
  const kl_mesh *mesh = m->shape_mesh[b];
  const double pads = m->shape_pad[a] + m->shape_pad[b];
  const double cos10 = 0.98480775301220806;
  double cq[KL_SPHERE_CLUSTERS][3], cn[KL_SPHERE_CLUSTERS][3], cd[KL_SPHERE_CLUSTERS];
  int cface[KL_SPHERE_CLUSTERS];
  int nc = 0;
  for (int i = 0; i < nt; ++i) {
    double ta[3], tb[3], tc[3], tn[3], qq[3], rel[3];
    const double *q = qq; /* the closest point: the filter's (tq), or computed here */
    int feat, have_tri = 0;
    if (tq) {
      q = tq + 3 * i;
      feat = tf[i];
    } else {
      kl_mesh_triangle(mesh, S->tri[i], ta, tb, tc, tn);
      have_tri = 1;
      feat = kl_tri_closest(c, ta, tb, tc, qq);
    }
    v3_sub(rel, c, q);
    const double dist = v3_norm(rel);
    const double depth = r + pads - dist;
    if (depth < -margin) continue;
    double n[3];
    if (feat == KL_TRI_FACE || !(dist > 0)) {
      if (!have_tri) kl_mesh_triangle(mesh, S->tri[i], ta, tb, tc, tn);
      v3_copy(n, tn);
      if (v3_dot(n, rel) < 0) v3_scl(n, n, -1.0);
    } else {
      v3_scl(n, rel, 1.0 / dist);
    }
    int k = 0;
    while (k < nc && !(v3_dot(cn[k], n) > cos10)) ++k;
    if (k == nc) {
      if (nc == KL_SPHERE_CLUSTERS) {
        S->feat_overflow++;
        continue;
      }
      ++nc;
    } else if (!(depth > cd[k] || (depth == cd[k] && feat == KL_TRI_FACE && !cface[k]))) {
      continue; /* ties at shared edges and vertices keep a face: its normal is exact */
    }
    v3_copy(cq[k], q);
    v3_copy(cn[k], n);
    cd[k] = depth;
    cface[k] = feat == KL_TRI_FACE;
  }
  for (int k = 0; k < nc; ++k) {
    int keep = 1;
    for (int j = 0; j < nc && keep && !cface[k]; ++j) {
      double dd[3];
      v3_sub(dd, cq[j], cq[k]);
      if (j != k && cd[j] > cd[k] * (1 + 1e-12) + 1e-15 && v3_norm(dd) < r + pads) keep = 0;
    }
    if (!keep) continue;
    double pos[3];
    v3_copy(pos, cq[k]);
    v3_addscl(pos, cn[k], m->shape_pad[b] - 0.5 * cd[k]);
    add_feature(S, a, b, m, key, pos, cn[k], cd[k]);
  }
}

#define KL_DISC_CLUSTERS 8
#define KL_DISC_BEST 3 /* candidates of a cluster handed to MPR */

/* A triangle's reach into the disc: the part of the triangle within the disc's width (clipped to the
 * slab |axial| <= hw), its distance to the axis (exact, in the plane across the axis), the rim's depth
 * r + pads - dist, the normal from the triangle's closest point towards the axis, and MPR's interior
 * points (the axis point across from it, in the disc; the closest point, on the triangle) so its ray
 * runs along that normal. Returns 0 if the triangle misses the slab. */
typedef struct disc_cand {
  int tri;
  double depth, n[3], ca[3], cb[3];
  double zlo, zhi; /* the clipped part's extent along the axis */
} disc_cand;

/* distance of the origin of the plane to the segment (a, b) */
static double seg_origin2d(const double a[2], const double b[2])
{
  const double ex = b[0] - a[0], ey = b[1] - a[1], l2 = ex * ex + ey * ey;
  double t = l2 > 0 ? -(a[0] * ex + a[1] * ey) / l2 : 0.0;
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  const double x = a[0] + t * ex, y = a[1] + t * ey;
  return sqrt(x * x + y * y);
}

static int disc_cand_of(const double c[3], const double ax[3], const double e1[3], const double e2[3], double r,
                        double hw, double pads, double reach, const double ta[3], const double tb[3],
                        const double tc[3], const double tn[3], disc_cand *cd)
{
  const double *V[3] = {ta, tb, tc};
  double P[8][3]; /* (u, w, z): across the axis and along it */
  int np = 3;
  for (int j = 0; j < 3; ++j) {
    double rel[3];
    v3_sub(rel, V[j], c);
    P[j][0] = v3_dot(rel, e1), P[j][1] = v3_dot(rel, e2), P[j][2] = v3_dot(rel, ax);
  }
  /* quick rejections: the whole triangle beyond one face, or farther from the axis than the reach
   * (clipping only moves it away) */
  if ((P[0][2] > hw && P[1][2] > hw && P[2][2] > hw) || (P[0][2] < -hw && P[1][2] < -hw && P[2][2] < -hw)) return 0;
  {
    const double s0 = P[0][0] * P[1][1] - P[0][1] * P[1][0], s1 = P[1][0] * P[2][1] - P[1][1] * P[2][0],
                 s2 = P[2][0] * P[0][1] - P[2][1] * P[0][0];
    const int in = (s0 > 0 && s1 > 0 && s2 > 0) || (s0 < 0 && s1 < 0 && s2 < 0);
    if (!in) {
      double d = seg_origin2d(P[0], P[1]), d1 = seg_origin2d(P[1], P[2]), d2 = seg_origin2d(P[2], P[0]);
      d = d1 < d ? d1 : d;
      d = d2 < d ? d2 : d;
      if (d > reach) return 0;
    }
  }
  np = kl_poly_clip_slab(P, np, hw);
  if (np == 0) return 0;
  cd->zlo = INFINITY, cd->zhi = -INFINITY;
  for (int j = 0; j < np; ++j) {
    if (P[j][2] < cd->zlo) cd->zlo = P[j][2];
    if (P[j][2] > cd->zhi) cd->zhi = P[j][2];
  }
  double dmin = INFINITY, bu = 0, bw = 0, bz = 0;
  int pos = 0, neg = 0;
  for (int j = 0; j < np; ++j) {
    const double *A = P[j], *B = P[(j + 1) % np];
    const double cr = A[0] * B[1] - A[1] * B[0];
    pos += cr > 0;
    neg += cr < 0;
    const double ex = B[0] - A[0], ey = B[1] - A[1], l2 = ex * ex + ey * ey;
    double w = l2 > 0 ? -(A[0] * ex + A[1] * ey) / l2 : 0.0;
    w = w < 0 ? 0 : w > 1 ? 1 : w;
    const double x = A[0] + w * ex, y = A[1] + w * ey, dd = sqrt(x * x + y * y);
    if (dd < dmin) dmin = dd, bu = x, bw = y, bz = A[2] + w * (B[2] - A[2]);
  }
  cd->depth = r + pads - dmin;
  v3_copy(cd->ca, c);
  v3_addscl(cd->ca, ax, fmin(0.999 * hw, fmax(-0.999 * hw, bz)));
  v3_copy(cd->cb, cd->ca);
  v3_addscl(cd->cb, e1, bu);
  v3_addscl(cd->cb, e2, bw);
  if (np >= 3 && ((pos > 0 && neg == 0) || (neg > 0 && pos == 0))) { /* the axis passes through the triangle */
    cd->depth = r + pads;
    v3_copy(cd->n, tn);
    return 1;
  }
  cd->n[0] = -(bu * e1[0] + bw * e2[0]) / dmin;
  cd->n[1] = -(bu * e1[1] + bw * e2[1]) / dmin;
  cd->n[2] = -(bu * e1[2] + bw * e2[2]) / dmin;
  return 1;
}

/* disc a against the mesh triangles S->tri[0..nt): one feature per cluster of normals. The triangles'
 * reaches into the rim rank them and group them by normal (within 10 degrees, as for spheres); libccd's
 * MPR of the disc against the best few of a group, its ray along their normals, gives the contact
 * (depth, normal, point) of the deepest (an MPR answer deeper than the triangle's exact reach, or
 * against its normal, is not taken: then the reach stands). */
static void disc_vs_tris(const kl_world_model *m, kl_scratch *S, int a, int b, int nt, double margin)
{
  const kl_mesh *mesh = m->shape_mesh[b];
  const double *c = S->sx + 3 * a, *R = S->sR + 9 * a;
  const double ax[3] = {R[2], R[5], R[8]}, e1[3] = {R[0], R[3], R[6]}, e2[3] = {R[1], R[4], R[7]}; /* local z, x, y */
  const double r = m->shape_size[3 * a], hw = m->shape_size[3 * a + 1];
  const double pads = m->shape_pad[a] + m->shape_pad[b];
  const double cos10 = 0.98480775301220806, cz = v3_dot(c, ax);
  double cn[KL_DISC_CLUSTERS][3], sw[KL_DISC_CLUSTERS], swz[KL_DISC_CLUSTERS];
  disc_cand best[KL_DISC_CLUSTERS][KL_DISC_BEST];
  int nbest[KL_DISC_CLUSTERS];
  int nc = 0;
  for (int i = 0; i < nt; ++i) {
    disc_cand cd;
    double ta[3], tb[3], tc[3], tn[3];
    kl_mesh_triangle(mesh, S->tri[i], ta, tb, tc, tn);
    cd.tri = S->tri[i];
    if (!disc_cand_of(c, ax, e1, e2, r, hw, pads, r + pads + margin, ta, tb, tc, tn, &cd) || cd.depth < -margin) continue;
    int k = 0;
    while (k < nc && !(v3_dot(cn[k], cd.n) > cos10)) ++k;
    if (k == nc) {
      if (nc == KL_DISC_CLUSTERS) {
        S->feat_overflow++;
        continue;
      }
      ++nc;
      nbest[k] = 0;
      sw[k] = swz[k] = 0;
      v3_copy(cn[k], cd.n);
    }
    if (cd.depth > 0) { /* the pressure centre's sums: depth times the axial extent of the part within */
      const double w = cd.depth * (cd.zhi - cd.zlo);
      sw[k] += w;
      swz[k] += w * 0.5 * (cd.zlo + cd.zhi);
    }
    int j = nbest[k] < KL_DISC_BEST ? nbest[k]++ : KL_DISC_BEST; /* the deepest few, deepest first */
    while (j > 0 && best[k][j - 1].depth < cd.depth) {
      if (j < KL_DISC_BEST) best[k][j] = best[k][j - 1];
      --j;
    }
    if (j < KL_DISC_BEST) best[k][j] = cd;
  }
  ccd_obj oa = make_obj(m, S, a), ot;
  memset(&ot, 0, sizeof ot);
  ot.type = -1;
  ot.pad = m->shape_pad[b];
  double fd[KL_DISC_CLUSTERS], fn[KL_DISC_CLUSTERS][3], fp[KL_DISC_CLUSTERS][3];
  for (int k = 0; k < nc; ++k) {
    const disc_cand *top = &best[k][0];
    fd[k] = top->depth; /* the reach, unless MPR gives the contact */
    v3_copy(fn[k], top->n);
    v3_copy(fp[k], top->cb);
    v3_addscl(fp[k], top->n, m->shape_pad[b] - 0.5 * top->depth);
    if (top->depth <= 0) continue; /* not penetrating: the gap, exact across the axis */
    double bd = -INFINITY;
    for (int j = 0; j < nbest[k]; ++j) {
      const disc_cand *cd = &best[k][j];
      if (!(cd->depth > 0)) continue;
      double ta[3], tb[3], tc[3], tn[3], depth, n[3], pos[3];
      kl_mesh_triangle(mesh, cd->tri, ta, tb, tc, tn);
      memcpy(ot.tri, ta, sizeof ta);
      memcpy(ot.tri + 3, tb, sizeof tb);
      memcpy(ot.tri + 6, tc, sizeof tc);
      oa.ctr = cd->ca;
      ot.ctr = cd->cb;
      if (!mpr(&oa, &ot, &depth, n, pos)) continue;
      if (depth > cd->depth + 1e-9 || !(v3_dot(n, cd->n) > 0) || !(depth > bd)) continue;
      bd = depth;
      fd[k] = depth;
      v3_copy(fn[k], n);
      v3_copy(fp[k], pos);
    }
    oa.ctr = NULL;
  }
  /* clusters whose contacts came out alike (normals within 10 degrees) are one: the deepest stands */
  int owner[KL_DISC_CLUSTERS];
  for (int k = 0; k < nc; ++k) {
    owner[k] = k;
    for (int j = 0; j < k; ++j)
      if (owner[j] == j && v3_dot(fn[j], fn[k]) > cos10) {
        if (fd[k] > fd[j]) {
          fd[j] = fd[k];
          v3_copy(fn[j], fn[k]);
          v3_copy(fp[j], fp[k]);
        }
        sw[j] += sw[k];
        swz[j] += swz[k];
        owner[k] = j;
        break;
      }
  }
  for (int k = 0; k < nc; ++k) {
    if (owner[k] != k) continue;
    /* a line contact of the rim acts at its pressure centre (a single point at the deepest end would
     * rock the disc from end to end): the point moves along the axis to the mean axial place of the
     * penetrating triangles' parts within the width, weighted by their depth and axial extent */
    if (fd[k] > 0 && sw[k] > 0 && fabs(v3_dot(fn[k], ax)) < 0.5)
      v3_addscl(fp[k], ax, swz[k] / sw[k] - (v3_dot(fp[k], ax) - cz));
    add_feature(S, a, b, m, 0, fp[k], fn[k], fd[k]);
  }
}

/* a mesh query's answer count, clamped to the triangle scratch (the overflow is counted) */
static int tri_count(kl_scratch *S, int nt)
{
  if (nt <= KL_TRI_CAP) return nt;
  S->tri_overflow += nt - KL_TRI_CAP;
  return KL_TRI_CAP;
}

/* sphere a (centre c) against mesh b: the triangles within reach of the centre into S->tri, their
 * features, and the exact gap to the mesh (for conservative advancement). The triangles come from the
 * sphere's cached answer for a ball a little wider than the query's while the query's ball stays
 * inside it: by the triangle inequality the same triangles in the same order as a fresh query, and the
 * cached ones' nearest is the mesh's nearest when it is nearer than the cached ball's edge (a
 * sub-step moves the tool microns; a fresh tree query costs a descent per sub-step, deeper for
 * longer parts). A sphere has KL_QC_WAYS slots, taken by the first meshes it is tested against and
 * never given up (the narrow phase tests every sphere-mesh pair at every call: evicting would thrash);
 * a further mesh, a ball wider than the cache holds (remembered until the sphere leaves it) and a model
 * with query_cache 0 take the fresh query. */
static double sphere_mesh(const kl_world_model *m, kl_scratch *S, int a, int b, const double c[3], double reach,
                          double margin)
{
  const kl_mesh *mesh = m->shape_mesh[b];
  const double safe = 1.0 - 1e-9; /* against rounding in the distances compared */
  const double r = m->shape_size[3 * a];
  int slot = -1;
  if (m->query_cache && S->qc_of[a] >= 0) {
    const int k = S->qc_of[a];
    for (int w = 0; w < KL_QC_WAYS && slot < 0; ++w)
      if (S->qc_mesh[k * KL_QC_WAYS + w] == b) slot = k * KL_QC_WAYS + w;
    for (int w = 0; w < KL_QC_WAYS && slot < 0; ++w)
      if (S->qc_mesh[k * KL_QC_WAYS + w] < 0) slot = k * KL_QC_WAYS + w;
  }
  int cached = 0; /* 1: the triangles come from the slot's list */
  double moved = 0;
  if (slot >= 0) {
    double *c0 = S->qc_c + 3 * slot, *p = S->qc_p + 3 * slot, dc[3];
    int inside = S->qc_mesh[slot] == b;
    if (inside) {
      /* the typical move between queries (a running mean), which sets the next cached ball's slack */
      v3_sub(dc, c, p);
      S->qc_u[slot] = 0.9 * S->qc_u[slot] + 0.1 * v3_norm(dc);
      v3_sub(dc, c, c0);
      moved = v3_norm(dc);
      inside = moved + reach <= safe * S->qc_r[slot];
    } else {
      S->qc_u[slot] = KL_QC_SLACK * r / 4;
    }
    v3_copy(p, c);
    if (!inside) {
      /* slack: four typical moves, within [1e-4, 5e-3] of the radius (a wider ball holds more triangles
       * to filter at every query, a narrower one is asked for again sooner) */
      const double R = reach + fmin(fmax(4 * S->qc_u[slot], 1e-4 * r), KL_QC_SLACK * r);
      const int n = kl_mesh_query_sphere(mesh, c, R, S->qc_tri + (size_t)slot * KL_QC_CAP, KL_QC_CAP);
      S->qc_mesh[slot] = b;
      S->qc_n[slot] = n <= KL_QC_CAP ? n : -1; /* -1: too many, fresh queries while inside this ball */
      S->qc_r[slot] = R;
      v3_copy(c0, c);
      moved = 0;
    }
    cached = S->qc_n[slot] >= 0;
  }
  double dist = -1, q[3], nq[3]; /* the mesh's nearest distance to the centre (-1: not known yet) */
  const double *tq = NULL; /* the kept triangles' closest points and features, when the filter gave them */
  const int *tf = NULL;
  int nt;
  if (cached) {
    double dmin2;
    nt = kl_mesh_filter_sphere(mesh, S->qc_tri + (size_t)slot * KL_QC_CAP, S->qc_n[slot], c, reach, S->tri, &dmin2,
                               S->tri_q, S->tri_f);
    tq = S->tri_q;
    tf = S->tri_f;
    const double edge = safe * S->qc_r[slot] - moved;
    if (edge > 0 && dmin2 <= edge * edge) dist = sqrt(dmin2);
  } else { /* a fresh query */
    nt = tri_count(S, kl_mesh_query_sphere(mesh, c, reach, S->tri, KL_TRI_CAP));
  }
  if (dist < 0 && !kl_mesh_closest(mesh, c, INFINITY, &dist, q, nq)) dist = -1;
  spheres_vs_tris(m, S, a, b, c, m->shape_size[3 * a], 0, nt, margin, tq, tf);
  return dist >= 0 ? dist - m->shape_rbound[a] - m->shape_pad[b] : DBL_MAX;
}

/* convex shape a against mesh b */
static double pair_mesh(const kl_world_model *m, kl_scratch *S, int a, int b, double margin)
{
  const kl_mesh *mesh = m->shape_mesh[b];
  const double *c = S->sx + 3 * a;
  const double reach = m->shape_rbound[a] + m->shape_pad[b] + margin;
  if (m->shape_type[a] == KL_SHAPE_SPHERE) return sphere_mesh(m, S, a, b, c, reach, margin);
  const double lo[3] = {c[0] - reach, c[1] - reach, c[2] - reach}, hi[3] = {c[0] + reach, c[1] + reach, c[2] + reach};
  int nt = m->shape_type[a] == KL_SHAPE_DISC ? 1 : tri_count(S, kl_mesh_query_box(mesh, lo, hi, S->tri, KL_TRI_CAP));
  /* conservative gap: bounding sphere against the mesh (exact for a sphere) */
  double gap = DBL_MAX, dist, q[3], nq[3];
  if (kl_mesh_closest(mesh, c, INFINITY, &dist, q, nq)) gap = dist - m->shape_rbound[a] - m->shape_pad[b];
  const int type = m->shape_type[a];
  if (type == KL_SHAPE_DISC) {
    const double *R = S->sR + 9 * a;
    const double ax[3] = {R[2], R[5], R[8]};
    const double ex = m->shape_pad[a] + m->shape_pad[b] + margin;
    nt = tri_count(S, kl_mesh_query_cylinder(mesh, c, ax, m->shape_size[3 * a] + ex, m->shape_size[3 * a + 1] + ex,
                                             S->tri, KL_TRI_CAP));
    disc_vs_tris(m, S, a, b, nt, margin);
    return gap;
  }
  if (nt == 0) return gap;
  double pts[3 * KL_MAXPTS], rad[KL_MAXPTS];
  const int npts = feature_points(m, S, a, pts, rad, KL_MAXPTS);
  if (type == KL_SHAPE_CAPSULE) {
    for (int e = 0; e < 2; ++e) spheres_vs_tris(m, S, a, b, pts + 3 * e, rad[e], e, nt, margin, NULL, NULL);
  } else {
    /* vertex-face: a point whose projection falls in a triangle, below it by less than the shape's
     * thickness; per point the triangle nearest in |height| (a flat mesh gives the plane's answer) */
    const double pads = m->shape_pad[a] + m->shape_pad[b];
    const double thick = m->shape_thick[a];
    for (int k = 0; k < npts; ++k) {
      double best = DBL_MAX, bn[3] = {0, 0, 0}, bp[3] = {0, 0, 0};
      for (int i = 0; i < nt; ++i) {
        double ta[3], tb[3], tc[3], tn[3], rel[3];
        kl_mesh_triangle(mesh, S->tri[i], ta, tb, tc, tn);
        v3_sub(rel, pts + 3 * k, ta);
        const double s = v3_dot(tn, rel);
        if (s > pads + margin || s < -thick) continue;
        /* inside test by edge functions */
        double e[3], w[3], cr[3];
        int in = 1;
        const double *V[3] = {ta, tb, tc};
        for (int j = 0; j < 3 && in; ++j) {
          v3_sub(e, V[(j + 1) % 3], V[j]);
          v3_sub(w, pts + 3 * k, V[j]);
          v3_cross(cr, e, w);
          if (v3_dot(cr, tn) < 0) in = 0;
        }
        if (!in || fabs(s) >= fabs(best)) continue;
        best = s;
        v3_copy(bn, tn);
        v3_copy(bp, pts + 3 * k);
      }
      if (best == DBL_MAX) continue;
      const double depth = pads - best;
      double pos[3];
      v3_copy(pos, bp);
      v3_addscl(pos, bn, -0.5 * (m->shape_pad[a] + best - m->shape_pad[b]));
      add_feature(S, a, b, m, k, pos, bn, depth);
    }
  }
  /* MPR for triangles that touch the shape elsewhere (an edge or a mesh vertex against a face),
   * unless a vertex contact already covers a triangle of the same plane */
  const int nvf = S->nfeat;
  ccd_obj oa = make_obj(m, S, a), ot;
  memset(&ot, 0, sizeof ot);
  ot.type = -1;
  ot.pad = m->shape_pad[b];
  for (int i = 0; i < nt; ++i) {
    double ta[3], tb[3], tc[3], tn[3];
    kl_mesh_triangle(mesh, S->tri[i], ta, tb, tc, tn);
    int covered = 0;
    for (int j = 0; j < nvf && !covered; ++j)
      if (S->feat[j].shape[0] == a && S->feat[j].shape[1] == b && fabs(v3_dot(S->feat[j].normal, tn)) > 0.999)
        covered = 1;
    if (covered) continue;
    memcpy(ot.tri, ta, sizeof ta);
    memcpy(ot.tri + 3, tb, sizeof tb);
    memcpy(ot.tri + 6, tc, sizeof tc);
    double depth, n[3], pos[3];
    if (mpr(&oa, &ot, &depth, n, pos)) add_feature(S, a, b, m, 100000 + S->tri[i], pos, n, depth);
  }
  return gap;
}

/* two convex shapes: libccd MPR; conservative gap from the bounding spheres */
static double pair_convex(const kl_world_model *m, kl_scratch *S, int a, int b)
{
  double rel[3];
  v3_sub(rel, S->sx + 3 * a, S->sx + 3 * b);
  const double gap = v3_norm(rel) - m->shape_rbound[a] - m->shape_rbound[b];
  if (gap > 0) return gap;
  const ccd_obj oa = make_obj(m, S, a), ob = make_obj(m, S, b);
  double depth, n[3], pos[3];
  if (mpr(&oa, &ob, &depth, n, pos)) add_feature(S, a, b, m, 0, pos, n, depth);
  return 0.0; /* unknown: close */
}

/* linear speed bound of shape s's bounding-sphere centre, plus the rotation term when the gap is
 * measured on the shape itself (plane support gaps) */
static void shape_motion(const kl_world_model *m, const kl_world_data *d, const kl_scratch *S, int s, int with_rot,
                         double v[3], double *vrot, double *arot)
{
  const int b = m->shape_body[s];
  double r[3];
  v3_sub(r, S->sx + 3 * s, d->xpos + 3 * b);
  v3_cross(v, d->angvel + 3 * b, r);
  v3_add(v, v, d->vel + 3 * b);
  const double w = v3_norm(d->angvel + 3 * b);
  const double rb = isfinite(m->shape_rbound[s]) ? m->shape_rbound[s] : 0.0;
  *vrot = with_rot ? w * rb : 0.0;
  *arot = w * w * (v3_norm(r) + (with_rot ? rb : 0.0)); /* centripetal */
}

/* time before a gap of g (minus eps/2) can close at speed vb and acceleration ab */
static double ca_time(double g, double vb, double ab)
{
  if (!(vb > 0) && !(ab > 0)) return INFINITY;
  if (!(ab > 0)) return g / vb;
  /* root of ab t^2/2 + vb t = g, without cancellation */
  return 2.0 * g / (vb + sqrt(vb * vb + 2.0 * ab * g));
}

/* 1 if the bodies a, b are the data's corrected pair (world.h, fix), in either order */
static int fix_pair(const kl_world_data *d, int a, int b)
{
  const int p = d->fix_body[0], q = d->fix_body[1];
  return (a == p && (q < 0 || b == q)) || (b == p && (q < 0 || a == q));
}

/* the depth correction (world.h, fix; docs/design.md section 9.3) of the features of the corrected pair,
 * computed afresh at every narrow phase (the surface may have changed since the features were found: a
 * reused answer's correction is taken out first) */
static void apply_fix(const kl_world_model *m, const kl_world_data *d, kl_scratch *S)
{
  (void)m;
  for (int i = 0; i < S->nfeat; ++i) {
    kl_feature *f = &S->feat[i];
    if (!fix_pair(d, f->body[0], f->body[1])) continue;
    /* the part's outward normal: the feature's normal points from body[1] to body[0] */
    const double sg = f->body[1] == d->fix_body[0] ? 1.0 : -1.0;
    double nout[3];
    v3_scl(nout, f->normal, sg);
    v3_addscl(f->pos, nout, -0.5 * f->fix); /* back to the uncorrected feature */
    f->depth -= f->fix;
    f->fix = 0.0;
    v3_zero(f->fixg);
    double g[3] = {0, 0, 0};
    const int other = f->body[0] == d->fix_body[0] ? f->body[1] : f->body[0];
    const double c = d->fix(d->fix_ctx, f->pos, nout, d->xpos + 3 * other, g);
    if (!isfinite(c)) continue;
    f->depth += c;
    v3_addscl(f->pos, nout, 0.5 * c);
    f->fix = c;
    if (isfinite(g[0]) && isfinite(g[1]) && isfinite(g[2])) v3_copy(f->fixg, g);
  }
}

int kl_collide(const kl_world_model *m, const kl_world_data *d, kl_scratch *S, double margin, double eps,
               const double *abound, double *h_ca)
{
  const size_t ns = (size_t)m->nshape;
  /* the same poses and margin as the last narrow phase: its features and gaps stand (bit for bit what
   * a new one would find); its overflow is counted again, as a new one would */
  const int again = S->lc_valid && margin == S->lc_margin && memcmp(S->sx, S->lc_sx, ns * 3 * sizeof(double)) == 0 &&
                    memcmp(S->sR, S->lc_sR, ns * 9 * sizeof(double)) == 0;
  if (again) {
    S->nfeat = S->lc_nfeat;
    S->tri_overflow += S->lc_tri_over;
    S->feat_overflow += S->lc_feat_over;
  } else {
    S->nfeat = 0;
    S->lc_tri_over = S->tri_overflow;
    S->lc_feat_over = S->feat_overflow;
  }
  for (int i = 0; i < m->nshape; ++i)
    for (int j = i + 1; j < m->nshape; ++j) {
      const int bi = m->shape_body[i], bj = m->shape_body[j];
      if (bi == bj) continue;
      const int ti = m->body_type[bi], tj = m->body_type[bj];
      if (ti != KL_BODY_DYNAMIC && tj != KL_BODY_DYNAMIC) continue;
      int a = i, b = j;
      const int sti = m->shape_type[i];
      /* order: the plane or mesh is b */
      if (sti == KL_SHAPE_PLANE || sti == KL_SHAPE_MESH) a = j, b = i;
      const int sta = m->shape_type[a], stb = m->shape_type[b];
      if (sta == KL_SHAPE_PLANE || sta == KL_SHAPE_MESH) continue; /* plane-plane, mesh-mesh, plane-mesh */
      double gap;
      const int exact_rot = stb == KL_SHAPE_PLANE && sta != KL_SHAPE_SPHERE;
      double *gs = S->lc_gap + (size_t)a * ns + (size_t)b;
      if (again)
        gap = *gs;
      else if (stb == KL_SHAPE_PLANE)
        gap = pair_plane(m, S, a, b, margin);
      else if (stb == KL_SHAPE_MESH)
        gap = pair_mesh(m, S, a, b, margin);
      else if (sta == KL_SHAPE_SPHERE && stb == KL_SHAPE_SPHERE)
        gap = pair_spheres(m, S, a, b, margin);
      else
        gap = pair_convex(m, S, a, b);
      *gs = gap;
      if (d->fix && fix_pair(d, m->shape_body[a], m->shape_body[b])) gap -= d->fix_max; /* (world.h, fix) */
      if (!h_ca) continue;
      /* conservative advancement for pairs without an active contact */
      int active = 0;
      for (int c = 0; c < d->ncon && !active; ++c)
        if ((d->con[c].shape[0] == a && d->con[c].shape[1] == b) || (d->con[c].shape[0] == b && d->con[c].shape[1] == a))
          active = 1;
      if (active) continue;
      double va[3], vb[3], vra, vrb, ara, arb;
      shape_motion(m, d, S, a, exact_rot || !(gap > eps), va, &vra, &ara);
      shape_motion(m, d, S, b, exact_rot || !(gap > eps), vb, &vrb, &arb);
      double dv[3];
      v3_sub(dv, va, vb);
      const double vbound = v3_norm(dv) + vra + vrb;
      const double abnd = abound[m->shape_body[a]] + abound[m->shape_body[b]] + ara + arb;
      double t;
      if (gap > eps) {
        t = ca_time(gap - 0.0625 * eps, vbound, abnd); /* an exact bound lands at a gap of eps/16 */
      } else {
        /* touching or overlapping bounds without a contact yet: no step may carry one shape through
         * half the other's thickness (no tunnelling); a penetration is then located after the step */
        const double th = 0.5 * fmin(m->shape_thick[a], m->shape_thick[b]);
        t = ca_time(th, vbound, abnd);
      }
      if (t < *h_ca) *h_ca = t;
    }
  if (d->fix) apply_fix(m, d, S);
  if (!again) {
    memcpy(S->lc_sx, S->sx, ns * 3 * sizeof(double));
    memcpy(S->lc_sR, S->sR, ns * 9 * sizeof(double));
    S->lc_margin = margin;
    S->lc_nfeat = S->nfeat;
    S->lc_tri_over = S->tri_overflow - S->lc_tri_over;
    S->lc_feat_over = S->feat_overflow - S->lc_feat_over;
    S->lc_valid = 1;
  }
  return S->nfeat;
}
