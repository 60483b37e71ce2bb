/* engine/collision_ccd.c: narrow phase of the 3-D engine (docs/design.md section 3). The only includer of
 * <ccd/ccd.h>. Exact formulas where trivial: sphere-plane, sphere-sphere, sphere-triangle, vertex-plane,
 * vertex-triangle; libccd's MPR (Minkowski portal refinement) for convex-convex and convex-triangle
 * pairs that the exact tests do not cover. Shapes with several support points (box, hull, cylinder,
 * capsule) give several contacts against planes and meshes (a box resting flat has four). */
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
  case KL_SHAPE_CYLINDER: {
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
                            int nt, double margin)
{
  const kl_mesh *mesh = m->shape_mesh[b];
  const double pads = m->shape_pad[a] + m->shape_pad[b];
  const double cos10 = 0.98480775301220806;
  double cq[KL_SPHERE_CLUSTERS][3], cn[KL_SPHERE_CLUSTERS][3], cd[KL_SPHERE_CLUSTERS];
  int cface[KL_SPHERE_CLUSTERS];
  int nc = 0;
  for (int i = 0; i < nt; ++i) {
    double ta[3], tb[3], tc[3], tn[3], q[3], rel[3];
    kl_mesh_triangle(mesh, S->tri[i], ta, tb, tc, tn);
    const int feat = kl_tri_closest(c, ta, tb, tc, q);
    v3_sub(rel, c, q);
    const double dist = v3_norm(rel);
    const double depth = r + pads - dist;
    if (depth < -margin) continue;
    double n[3];
    if (feat == KL_TRI_FACE || !(dist > 0)) {
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

/* convex shape a against mesh b */
static double pair_mesh(const kl_world_model *m, kl_scratch *S, int a, int b, double margin)
{
  const kl_mesh *mesh = m->shape_mesh[b];
  const double *c = S->sx + 3 * a;
  const double reach = m->shape_rbound[a] + m->shape_pad[b] + margin;
  const double lo[3] = {c[0] - reach, c[1] - reach, c[2] - reach}, hi[3] = {c[0] + reach, c[1] + reach, c[2] + reach};
  int nt = m->shape_type[a] == KL_SHAPE_SPHERE ? 1 : kl_mesh_query_box(mesh, lo, hi, S->tri, KL_TRI_CAP);
  if (nt > KL_TRI_CAP) {
    S->tri_overflow += nt - KL_TRI_CAP;
    nt = KL_TRI_CAP;
  }
  /* conservative gap: bounding sphere against the mesh (exact for a sphere) */
  double gap = DBL_MAX, dist, q[3], nq[3];
  if (kl_mesh_closest(mesh, c, INFINITY, &dist, q, nq)) gap = dist - m->shape_rbound[a] - m->shape_pad[b];
  if (nt == 0) return gap;
  const int type = m->shape_type[a];
  if (type == KL_SHAPE_SPHERE) {
    /* only the triangles within reach of the centre (a small disc under a resting sphere, however
     * fine the mesh), not every triangle of the bounding box */
    nt = kl_mesh_query_sphere(mesh, c, reach, S->tri, KL_TRI_CAP);
    if (nt > KL_TRI_CAP) {
      S->tri_overflow += nt - KL_TRI_CAP;
      nt = KL_TRI_CAP;
    }
    spheres_vs_tris(m, S, a, b, c, m->shape_size[3 * a], 0, nt, margin);
    return gap;
  }
  double pts[3 * KL_MAXPTS], rad[KL_MAXPTS];
  const int npts = feature_points(m, S, a, pts, rad, KL_MAXPTS);
  if (type == KL_SHAPE_CAPSULE) {
    for (int e = 0; e < 2; ++e) spheres_vs_tris(m, S, a, b, pts + 3 * e, rad[e], e, nt, margin);
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

int kl_collide(const kl_world_model *m, const kl_world_data *d, kl_scratch *S, double margin, double eps,
               const double *abound, double *h_ca)
{
  S->nfeat = 0;
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
      int exact_rot = 0;
      if (stb == KL_SHAPE_PLANE) {
        gap = pair_plane(m, S, a, b, margin);
        exact_rot = sta != KL_SHAPE_SPHERE;
      } else if (stb == KL_SHAPE_MESH) {
        gap = pair_mesh(m, S, a, b, margin);
      } else if (sta == KL_SHAPE_SPHERE && stb == KL_SHAPE_SPHERE) {
        gap = pair_spheres(m, S, a, b, margin);
      } else {
        gap = pair_convex(m, S, a, b);
      }
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
  return S->nfeat;
}
