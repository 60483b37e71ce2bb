/* engine/mesh.c: static triangle meshes with an axis-aligned bounding-box tree (see mesh.h).
 * The tree is built once, top-down, splitting each node's triangles at the median centroid along the
 * longest axis of the centroid bounds (quickselect, so O(n log n)); leaves hold at most KL_BVH_LEAF
 * triangles. Queries walk it with a small fixed stack: nothing is allocated after the build.
 * Meshes are built from arrays; reading files (STL/OBJ/PLY) is io/mesh_import.c's job. */
#include "engine/mesh.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/util3.h"

#define KL_BVH_LEAF 4
#define KL_BVH_STACK 128 /* > 2 x depth; the median split keeps depth <= log2(n) + 2 */

typedef struct bvh_node {
  double lo[3], hi[3]; /* box of the node's triangles [m] */
  int first;           /* leaf: first index into order[]; inner: index of the left child */
  int count;           /* leaf: number of triangles (> 0); inner: 0 (right child = first + 1) */
} bvh_node;

struct kl_mesh {
  int nvert, ntri, nnode;
  double *vert;    /* (nvert x 3) [m] */
  int *tri;        /* (ntri x 3) vertex indices */
  double *tri_n;   /* (ntri x 3) unit normals by the right-hand rule on the winding */
  int *order;      /* (ntri) triangle indices in leaf order */
  bvh_node *node;  /* (nnode) node 0 is the root */
  double lo[3], hi[3];
};

//------------------------------------------------------------------------------------------------------
// construction and validation

void kl_mesh_free(kl_mesh *m)
{
  if (!m) return;
  free(m->vert);
  free(m->tri);
  free(m->tri_n);
  free(m->order);
  free(m->node);
  free(m);
}

typedef struct edge_key {
  int a, b; /* a < b */
} edge_key;

/* order edges by (a, b) */
static int edge_cmp(const void *x, const void *y)
{
  const edge_key *p = x, *q = y;
  if (p->a != q->a) return p->a < q->a ? -1 : 1;
  if (p->b != q->b) return p->b < q->b ? -1 : 1;
  return 0;
}

/* first edge used by more than two triangles (non-manifold); returns 1 and the edge, else 0.
 * -1 if out of memory. */
static int nonmanifold_edge(const int *tri, int ntri, int *ea, int *eb)
{
  const size_t ne = (size_t)ntri * 3;
  edge_key *e = malloc(ne * sizeof *e);
  if (!e) return -1;
  for (int t = 0; t < ntri; ++t)
    for (int k = 0; k < 3; ++k) {
      const int a = tri[3 * t + k], b = tri[3 * t + (k + 1) % 3];
      e[3 * (size_t)t + (size_t)k].a = a < b ? a : b;
      e[3 * (size_t)t + (size_t)k].b = a < b ? b : a;
    }
  qsort(e, ne, sizeof *e, edge_cmp);
  int found = 0;
  for (size_t i = 0; i + 2 < ne; ++i)
    if (e[i].a == e[i + 2].a && e[i].b == e[i + 2].b) {
      *ea = e[i].a;
      *eb = e[i].b;
      found = 1;
      break;
    }
  free(e);
  return found;
}

/* centroid of triangle t along axis ax (times 3) */
static double centroid3(const kl_mesh *m, int t, int ax)
{
  const int *v = m->tri + 3 * t;
  return m->vert[3 * v[0] + ax] + m->vert[3 * v[1] + ax] + m->vert[3 * v[2] + ax];
}

/* quickselect on order[lo..hi) so that order[k] has the k-th centroid along ax */
static void select_kth(kl_mesh *m, int lo, int hi, int k, int ax)
{
  int *o = m->order;
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    /* median of three as pivot */
    const double a = centroid3(m, o[lo], ax), b = centroid3(m, o[mid], ax), c = centroid3(m, o[hi - 1], ax);
    const double piv = (a < b) ? ((b < c) ? b : (a < c ? c : a)) : ((a < c) ? a : (b < c ? c : b));
    int i = lo, j = hi - 1;
    while (i <= j) {
      while (centroid3(m, o[i], ax) < piv) ++i;
      while (centroid3(m, o[j], ax) > piv) --j;
      if (i <= j) {
        const int t = o[i];
        o[i] = o[j];
        o[j] = t;
        ++i;
        --j;
      }
    }
    if (k <= j)
      hi = j + 1;
    else if (k >= i)
      lo = i;
    else
      return;
  }
}

/* box of the triangles order[first..first+count) */
static void node_bounds(const kl_mesh *m, bvh_node *n)
{
  for (int a = 0; a < 3; ++a) {
    n->lo[a] = DBL_MAX;
    n->hi[a] = -DBL_MAX;
  }
  for (int i = n->first; i < n->first + n->count; ++i) {
    const int *v = m->tri + 3 * m->order[i];
    for (int k = 0; k < 3; ++k)
      for (int a = 0; a < 3; ++a) {
        const double x = m->vert[3 * v[k] + a];
        if (x < n->lo[a]) n->lo[a] = x;
        if (x > n->hi[a]) n->hi[a] = x;
      }
  }
}

/* top-down build with an explicit stack of (node, first, count) */
static void build_bvh(kl_mesh *m)
{
  typedef struct {
    int node, first, count;
  } job;
  job stack[KL_BVH_STACK];
  int sp = 0;
  m->nnode = 1;
  stack[sp++] = (job){0, 0, m->ntri};
  while (sp > 0) {
    const job j = stack[--sp];
    bvh_node *n = &m->node[j.node];
    n->first = j.first;
    n->count = j.count;
    node_bounds(m, n);
    if (j.count <= KL_BVH_LEAF) continue;
    /* split axis: longest extent of the centroids */
    double clo[3] = {DBL_MAX, DBL_MAX, DBL_MAX}, chi[3] = {-DBL_MAX, -DBL_MAX, -DBL_MAX};
    for (int i = j.first; i < j.first + j.count; ++i)
      for (int a = 0; a < 3; ++a) {
        const double c = centroid3(m, m->order[i], a);
        if (c < clo[a]) clo[a] = c;
        if (c > chi[a]) chi[a] = c;
      }
    int ax = 0;
    for (int a = 1; a < 3; ++a)
      if (chi[a] - clo[a] > chi[ax] - clo[ax]) ax = a;
    const int half = j.count / 2;
    select_kth(m, j.first, j.first + j.count, j.first + half, ax);
    const int left = m->nnode;
    m->nnode += 2;
    n->first = left;
    n->count = 0;
    stack[sp++] = (job){left + 1, j.first + half, j.count - half};
    stack[sp++] = (job){left, j.first, half};
  }
}

kelvin_status kl_mesh_from_arrays(const double *vert, int nvert, const int *tri, int ntri, kl_mesh **out, char *msg,
                                  int cap)
{
#define BAD(st, ...)                                                                                         \
  do {                                                                                                       \
    if (msg && cap > 0) snprintf(msg, (size_t)cap, __VA_ARGS__);                                             \
    kl_mesh_free(m);                                                                                         \
    return st;                                                                                               \
  } while (0)
  kl_mesh *m = NULL;
  *out = NULL;
  if (msg && cap > 0) msg[0] = '\0';
  if (nvert <= 0 || ntri <= 0 || !vert || !tri) BAD(KELVIN_ERR_ARG, "mesh is empty (%d vertices, %d triangles)", nvert > 0 ? nvert : 0, ntri > 0 ? ntri : 0);
  if (ntri > INT32_MAX / 3 || nvert > INT32_MAX / 3) BAD(KELVIN_ERR_ARG, "mesh too large (%d triangles)", ntri);
  for (int i = 0; i < nvert; ++i)
    for (int a = 0; a < 3; ++a)
      if (!isfinite(vert[3 * i + a]))
        BAD(KELVIN_ERR_ARG, "vertex %d has a non-finite coordinate (%g, %g, %g)", i, vert[3 * i], vert[3 * i + 1],
            vert[3 * i + 2]);
  for (int t = 0; t < ntri; ++t)
    for (int k = 0; k < 3; ++k)
      if (tri[3 * t + k] < 0 || tri[3 * t + k] >= nvert)
        BAD(KELVIN_ERR_ARG, "triangle %d: vertex index %d out of range [0, %d)", t, tri[3 * t + k], nvert);
  m = calloc(1, sizeof *m);
  if (!m) BAD(KELVIN_ERR_NOMEM, "out of memory for a mesh of %d triangles", ntri);
  m->nvert = nvert;
  m->ntri = ntri;
  m->vert = malloc((size_t)nvert * 3 * sizeof *m->vert);
  m->tri = malloc((size_t)ntri * 3 * sizeof *m->tri);
  m->tri_n = malloc((size_t)ntri * 3 * sizeof *m->tri_n);
  m->order = malloc((size_t)ntri * sizeof *m->order);
  m->node = malloc((size_t)(2 * ntri) * sizeof *m->node);
  if (!m->vert || !m->tri || !m->tri_n || !m->order || !m->node)
    BAD(KELVIN_ERR_NOMEM, "out of memory for a mesh of %d triangles", ntri);
  memcpy(m->vert, vert, (size_t)nvert * 3 * sizeof *vert);
  memcpy(m->tri, tri, (size_t)ntri * 3 * sizeof *tri);
  for (int a = 0; a < 3; ++a) {
    m->lo[a] = DBL_MAX;
    m->hi[a] = -DBL_MAX;
  }
  for (int i = 0; i < nvert; ++i)
    for (int a = 0; a < 3; ++a) {
      if (vert[3 * i + a] < m->lo[a]) m->lo[a] = vert[3 * i + a];
      if (vert[3 * i + a] > m->hi[a]) m->hi[a] = vert[3 * i + a];
    }
  /* degenerate: area below 1e-12 of the squared longest edge (zero area, collinear or repeated
   * vertices); such a triangle has no normal */
  for (int t = 0; t < ntri; ++t) {
    const double *a = vert + 3 * tri[3 * t], *b = vert + 3 * tri[3 * t + 1], *c = vert + 3 * tri[3 * t + 2];
    double e0[3], e1[3], e2[3], n[3];
    v3_sub(e0, b, a);
    v3_sub(e1, c, a);
    v3_sub(e2, c, b);
    v3_cross(n, e0, e1);
    const double area2 = sqrt(v3_dot(n, n));
    const double lmax = fmax(v3_dot(e0, e0), fmax(v3_dot(e1, e1), v3_dot(e2, e2)));
    if (!(area2 > 2e-12 * lmax) || !(lmax > 0))
      BAD(KELVIN_ERR_ARG, "triangle %d is degenerate (area %g)", t, 0.5 * area2);
    for (int k = 0; k < 3; ++k) m->tri_n[3 * t + k] = n[k] / area2;
  }
  int ea = 0, eb = 0;
  const int nm = nonmanifold_edge(tri, ntri, &ea, &eb);
  if (nm < 0) BAD(KELVIN_ERR_NOMEM, "out of memory checking the edges of a mesh of %d triangles", ntri);
  if (nm > 0) BAD(KELVIN_ERR_ARG, "mesh is non-manifold: edge between vertices %d and %d is shared by more than two triangles", ea, eb);
  for (int t = 0; t < ntri; ++t) m->order[t] = t;
  build_bvh(m);
  *out = m;
  return KELVIN_OK;
#undef BAD
}

kelvin_status kl_mesh_from_grid(const double *vert, int nx, int ny, kl_mesh **out, char *msg, int cap)
{
  *out = NULL;
  if (nx < 1 || ny < 1 || (double)nx * ny > 1e8) {
    snprintf(msg, (size_t)cap, "grid of %d x %d cells: need at least 1 x 1 and at most 1e8 cells", nx, ny);
    return KELVIN_ERR_ARG;
  }
  int *t = malloc((size_t)nx * ny * 6 * sizeof *t);
  if (!t) {
    snprintf(msg, (size_t)cap, "out of memory for a %d x %d grid", nx, ny);
    return KELVIN_ERR_NOMEM;
  }
  size_t k = 0;
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      const int a = j * (nx + 1) + i, b = a + 1, c = a + nx + 1, d = c + 1;
      t[k++] = a, t[k++] = b, t[k++] = d;
      t[k++] = a, t[k++] = d, t[k++] = c;
    }
  const kelvin_status st = kl_mesh_from_arrays(vert, (nx + 1) * (ny + 1), t, 2 * nx * ny, out, msg, cap);
  free(t);
  return st;
}

int kl_mesh_ntri(const kl_mesh *m) { return m ? m->ntri : 0; }
int kl_mesh_nvert(const kl_mesh *m) { return m ? m->nvert : 0; }

void kl_mesh_bounds(const kl_mesh *m, double lo[3], double hi[3])
{
  for (int a = 0; a < 3; ++a) {
    lo[a] = m->lo[a];
    hi[a] = m->hi[a];
  }
}

void kl_mesh_triangle(const kl_mesh *m, int t, double a[3], double b[3], double c[3], double nrm[3])
{
  const int *v = m->tri + 3 * t;
  for (int k = 0; k < 3; ++k) {
    a[k] = m->vert[3 * v[0] + k];
    b[k] = m->vert[3 * v[1] + k];
    c[k] = m->vert[3 * v[2] + k];
    nrm[k] = m->tri_n[3 * t + k];
  }
}

const double *kl_mesh_vertices(const kl_mesh *m) { return m->vert; }
const int *kl_mesh_indices(const kl_mesh *m) { return m->tri; }

//------------------------------------------------------------------------------------------------------
// queries

/* squared distance from p to the box [lo, hi] */
static double box_dist2(const double p[3], const double lo[3], const double hi[3])
{
  double d2 = 0;
  for (int a = 0; a < 3; ++a) {
    const double e = p[a] < lo[a] ? lo[a] - p[a] : (p[a] > hi[a] ? p[a] - hi[a] : 0.0);
    d2 += e * e;
  }
  return d2;
}

int kl_tri_closest(const double p[3], const double a[3], const double b[3], const double c[3], double q[3])
{
  /* Ericson, Real-Time Collision Detection, 5.1.5: Voronoi regions of vertices, edges, face */
  double ab[3], ac[3], ap[3], bp[3], cp[3];
  v3_sub(ab, b, a);
  v3_sub(ac, c, a);
  v3_sub(ap, p, a);
  const double d1 = v3_dot(ab, ap), d2 = v3_dot(ac, ap);
  if (d1 <= 0 && d2 <= 0) {
    memcpy(q, a, 3 * sizeof *q);
    return KL_TRI_VERTEX;
  }
  v3_sub(bp, p, b);
  const double d3 = v3_dot(ab, bp), d4 = v3_dot(ac, bp);
  if (d3 >= 0 && d4 <= d3) {
    memcpy(q, b, 3 * sizeof *q);
    return KL_TRI_VERTEX;
  }
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) {
    const double v = d1 / (d1 - d3);
    for (int k = 0; k < 3; ++k) q[k] = a[k] + v * ab[k];
    return KL_TRI_EDGE;
  }
  v3_sub(cp, p, c);
  const double d5 = v3_dot(ab, cp), d6 = v3_dot(ac, cp);
  if (d6 >= 0 && d5 <= d6) {
    memcpy(q, c, 3 * sizeof *q);
    return KL_TRI_VERTEX;
  }
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) {
    const double w = d2 / (d2 - d6);
    for (int k = 0; k < 3; ++k) q[k] = a[k] + w * ac[k];
    return KL_TRI_EDGE;
  }
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
    const double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    for (int k = 0; k < 3; ++k) q[k] = b[k] + w * (c[k] - b[k]);
    return KL_TRI_EDGE;
  }
  /* inside the face: project onto the plane (more accurate than barycentric recombination) */
  double n[3];
  v3_cross(n, ab, ac);
  const double s = v3_dot(ap, n) / v3_dot(n, n);
  for (int k = 0; k < 3; ++k) q[k] = p[k] - s * n[k];
  return KL_TRI_FACE;
}

int kl_mesh_closest(const kl_mesh *m, const double p[3], double rmax, double *dist, double q[3], double nrm[3])
{
  if (!m || !(rmax >= 0)) return 0;
  double best2 = rmax * rmax;
  int best = -1, bfeat = 0;
  double bq[3] = {0, 0, 0};
  int stack[KL_BVH_STACK];
  int sp = 0;
  if (box_dist2(p, m->node[0].lo, m->node[0].hi) > best2) return 0;
  stack[sp++] = 0;
  while (sp > 0) {
    const bvh_node *n = &m->node[stack[--sp]];
    if (box_dist2(p, n->lo, n->hi) > best2) continue;
    if (n->count > 0) {
      for (int i = n->first; i < n->first + n->count; ++i) {
        const int t = m->order[i];
        const int *v = m->tri + 3 * t;
        double qq[3], d[3];
        const int feat = kl_tri_closest(p, m->vert + 3 * v[0], m->vert + 3 * v[1], m->vert + 3 * v[2], qq);
        v3_sub(d, p, qq);
        const double d2 = v3_dot(d, d);
        /* ties (shared edges and vertices) keep a face over an edge or vertex: its normal is exact */
        if (d2 < best2 || (d2 == best2 && best >= 0 && feat == KL_TRI_FACE && bfeat != KL_TRI_FACE) ||
            (best < 0 && d2 <= best2)) {
          best2 = d2;
          best = t;
          bfeat = feat;
          memcpy(bq, qq, sizeof bq);
        }
      }
      continue;
    }
    /* visit the nearer child first: push it last */
    const int l = n->first, r = n->first + 1;
    const double dl = box_dist2(p, m->node[l].lo, m->node[l].hi), dr = box_dist2(p, m->node[r].lo, m->node[r].hi);
    if (sp + 2 > KL_BVH_STACK) return 0; /* cannot happen for a median-split tree */
    if (dl <= dr) {
      if (dr <= best2) stack[sp++] = r;
      if (dl <= best2) stack[sp++] = l;
    } else {
      if (dl <= best2) stack[sp++] = l;
      if (dr <= best2) stack[sp++] = r;
    }
  }
  if (best < 0) return 0;
  const double d = sqrt(best2);
  *dist = d;
  memcpy(q, bq, sizeof bq);
  const double *fn = m->tri_n + 3 * best;
  double pq[3];
  v3_sub(pq, p, bq);
  if (bfeat == KL_TRI_FACE || !(d > 0)) {
    /* the face normal, turned towards p */
    const double s = v3_dot(fn, pq) < 0 ? -1.0 : 1.0;
    for (int k = 0; k < 3; ++k) nrm[k] = s * fn[k];
  } else {
    for (int k = 0; k < 3; ++k) nrm[k] = pq[k] / d;
  }
  return 1;
}

/* ray-box slab test: entry and exit parameters clipped to [t0, t1]; 1 if they overlap */
static int ray_box(const double p[3], const double inv[3], const double lo[3], const double hi[3], double t0,
                   double t1)
{
  for (int a = 0; a < 3; ++a) {
    double ta = (lo[a] - p[a]) * inv[a], tb = (hi[a] - p[a]) * inv[a];
    if (ta > tb) {
      const double x = ta;
      ta = tb;
      tb = x;
    }
    if (ta > t0) t0 = ta;
    if (tb < t1) t1 = tb;
    if (t0 > t1) return 0;
  }
  return 1;
}

int kl_mesh_raycast(const kl_mesh *m, const double p[3], const double d[3], double tmin, double tmax, double *t,
                    double nrm[3])
{
  if (!m || !(tmax >= tmin)) return 0;
  double inv[3];
  for (int a = 0; a < 3; ++a) inv[a] = d[a] != 0 ? 1.0 / d[a] : (d[a] >= 0 ? INFINITY : -INFINITY);
  /* a zero direction component times an infinite inverse is NaN in the slab test: nudge to a huge
   * finite value so the comparison still excludes boxes off the ray's line */
  for (int a = 0; a < 3; ++a)
    if (isinf(inv[a])) inv[a] = copysign(1e300, inv[a]);
  double best = tmax;
  int hit = -1;
  int stack[KL_BVH_STACK];
  int sp = 0;
  stack[sp++] = 0;
  while (sp > 0) {
    const bvh_node *n = &m->node[stack[--sp]];
    if (!ray_box(p, inv, n->lo, n->hi, tmin, best)) continue;
    if (n->count == 0) {
      if (sp + 2 > KL_BVH_STACK) return 0;
      stack[sp++] = n->first + 1;
      stack[sp++] = n->first;
      continue;
    }
    for (int i = n->first; i < n->first + n->count; ++i) {
      /* Moller-Trumbore */
      const int tt = m->order[i];
      const int *v = m->tri + 3 * tt;
      const double *a = m->vert + 3 * v[0], *b = m->vert + 3 * v[1], *c = m->vert + 3 * v[2];
      double e1[3], e2[3], pv[3], tv[3], qv[3];
      v3_sub(e1, b, a);
      v3_sub(e2, c, a);
      v3_cross(pv, d, e2);
      const double det = v3_dot(e1, pv);
      if (fabs(det) < 1e-300) continue;
      const double id = 1.0 / det;
      v3_sub(tv, p, a);
      const double u = v3_dot(tv, pv) * id;
      if (u < 0 || u > 1) continue;
      v3_cross(qv, tv, e1);
      const double w = v3_dot(d, qv) * id;
      if (w < 0 || u + w > 1) continue;
      const double th = v3_dot(e2, qv) * id;
      if (th >= tmin && th <= best) {
        best = th;
        hit = tt;
      }
    }
  }
  if (hit < 0) return 0;
  *t = best;
  memcpy(nrm, m->tri_n + 3 * hit, 3 * sizeof *nrm);
  return 1;
}

int kl_mesh_query_box(const kl_mesh *m, const double lo[3], const double hi[3], int *idx, int cap)
{
  if (!m) return 0;
  int n = 0;
  int stack[KL_BVH_STACK];
  int sp = 0;
  stack[sp++] = 0;
  while (sp > 0) {
    const bvh_node *nd = &m->node[stack[--sp]];
    int overlap = 1;
    for (int a = 0; a < 3; ++a)
      if (nd->lo[a] > hi[a] || nd->hi[a] < lo[a]) overlap = 0;
    if (!overlap) continue;
    if (nd->count == 0) {
      if (sp + 2 > KL_BVH_STACK) return n;
      stack[sp++] = nd->first + 1;
      stack[sp++] = nd->first;
      continue;
    }
    for (int i = nd->first; i < nd->first + nd->count; ++i) {
      const int t = m->order[i];
      const int *v = m->tri + 3 * t;
      int in = 1;
      for (int a = 0; a < 3 && in; ++a) {
        const double x0 = m->vert[3 * v[0] + a], x1 = m->vert[3 * v[1] + a], x2 = m->vert[3 * v[2] + a];
        if (fmin(x0, fmin(x1, x2)) > hi[a] || fmax(x0, fmax(x1, x2)) < lo[a]) in = 0;
      }
      if (!in) continue;
      if (n < cap) idx[n] = t;
      ++n;
    }
  }
  return n;
}

int kl_mesh_query_cylinder(const kl_mesh *m, const double c[3], const double axis[3], double r, double hw, int *idx,
                           int cap)
{
  if (!m || !(r >= 0) || !(hw >= 0)) return 0;
  int n = 0;
  int stack[KL_BVH_STACK];
  int sp = 0;
  stack[sp++] = 0;
  while (sp > 0) {
    const bvh_node *nd = &m->node[stack[--sp]];
    /* box: centre, its reach along the axis, and across it: a corner v (from the centre) reaches
     * sqrt(|v|^2 - (v.a)^2) across the axis, and |v.a| >= 2 max|h_i a_i| - sum|h_i a_i| */
    double bc[3], rel[3], ext_ax = 0, hd2 = 0, hmax = 0;
    for (int a = 0; a < 3; ++a) {
      const double h = 0.5 * (nd->hi[a] - nd->lo[a]), ha = h * fabs(axis[a]);
      bc[a] = 0.5 * (nd->hi[a] + nd->lo[a]);
      ext_ax += ha;
      hmax = ha > hmax ? ha : hmax;
      hd2 += h * h;
    }
    const double vmin = 2.0 * hmax - ext_ax > 0 ? 2.0 * hmax - ext_ax : 0.0;
    v3_sub(rel, bc, c);
    const double z = v3_dot(rel, axis), rho2 = v3_dot(rel, rel) - z * z, across = sqrt(hd2 - vmin * vmin > 0 ? hd2 - vmin * vmin : 0.0);
    if (fabs(z) - ext_ax > hw || sqrt(rho2 > 0 ? rho2 : 0.0) - across > r) continue;
    if (nd->count == 0) {
      if (sp + 2 > KL_BVH_STACK) return n;
      stack[sp++] = nd->first + 1;
      stack[sp++] = nd->first;
      continue;
    }
    for (int i = nd->first; i < nd->first + nd->count; ++i) {
      if (n < cap) idx[n] = m->order[i];
      ++n;
    }
  }
  return n;
}

int kl_mesh_query_sphere(const kl_mesh *m, const double c[3], double r, int *idx, int cap)
{
  if (!m || !(r >= 0)) return 0;
  const double r2 = r * r;
  int n = 0;
  int stack[KL_BVH_STACK];
  int sp = 0;
  stack[sp++] = 0;
  while (sp > 0) {
    const bvh_node *nd = &m->node[stack[--sp]];
    if (box_dist2(c, nd->lo, nd->hi) > r2) continue;
    if (nd->count == 0) {
      if (sp + 2 > KL_BVH_STACK) return n;
      stack[sp++] = nd->first + 1;
      stack[sp++] = nd->first;
      continue;
    }
    for (int i = nd->first; i < nd->first + nd->count; ++i) {
      const int t = m->order[i];
      const int *v = m->tri + 3 * t;
      double q[3], d[3];
      kl_tri_closest(c, m->vert + 3 * v[0], m->vert + 3 * v[1], m->vert + 3 * v[2], q);
      v3_sub(d, c, q);
      if (v3_dot(d, d) > r2) continue;
      if (n < cap) idx[n] = t;
      ++n;
    }
  }
  return n;
}

int kl_mesh_filter_sphere(const kl_mesh *m, const int *cand, int n, const double c[3], double r, int *idx,
                          double *dmin2, double *q_out, int *feat)
{
  const double r2 = r * r;
  double best = INFINITY;
  int k = 0;
  for (int i = 0; i < n; ++i) {
    const int t = cand[i];
    const int *v = m->tri + 3 * t;
    double q[3], d[3];
    const int f = kl_tri_closest(c, m->vert + 3 * v[0], m->vert + 3 * v[1], m->vert + 3 * v[2], q);
    v3_sub(d, c, q);
    const double d2 = v3_dot(d, d);
    if (d2 < best) best = d2;
    if (d2 > r2) continue;
    if (q_out) memcpy(q_out + 3 * k, q, sizeof q);
    if (feat) feat[k] = f;
    idx[k++] = t;
  }
  *dmin2 = best;
  return k;
}

int kl_poly_clip_slab(double P[8][3], int np, double hw)
{
  for (int side = 0; side < 2 && np > 0; ++side) { /* keep sg z <= hw */
    const double sg = side ? -1.0 : 1.0;
    double Q[8][3];
    int nq = 0;
    for (int j = 0; j < np; ++j) {
      const double *A = P[j], *B = P[(j + 1) % np];
      const double fa = sg * A[2] - hw, fb = sg * B[2] - hw;
      if (fa <= 0) memcpy(Q[nq++], A, sizeof Q[0]);
      if ((fa < 0 && fb > 0) || (fa > 0 && fb < 0)) {
        const double w = fa / (fa - fb);
        for (int i = 0; i < 3; ++i) Q[nq][i] = A[i] + w * (B[i] - A[i]);
        ++nq;
      }
    }
    np = nq;
    memcpy(P, Q, (size_t)nq * sizeof P[0]);
  }
  return np;
}
