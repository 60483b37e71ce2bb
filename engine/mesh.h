/* engine/mesh.h: static triangle meshes (workpieces, meshed planes) with a bounding-volume hierarchy,
 * built from arrays (io/mesh_import.h reads STL/OBJ/PLY files), and the proximity queries the engine and the
 * optimiser need. Arrays follow the model convention: sizes n<thing>, arrays <thing>_<field>. */
#ifndef KL_ENGINE_MESH_H
#define KL_ENGINE_MESH_H

#include "kelvin/kelvin.h"

typedef struct kl_mesh kl_mesh; /* opaque; engine/mesh.c */

/* Build a mesh from arrays (copied): vert (nvert x 3) [m], tri (ntri x 3) vertex indices. Validates:
 * non-empty, finite coordinates, indices in range, no degenerate (zero-area) triangles. On failure
 * *out = NULL and msg names the problem (e.g. "triangle 17 is degenerate (area 0)"). */
kelvin_status kl_mesh_from_arrays(const double *vert, int nvert, const int *tri, int ntri, kl_mesh **out, char *msg,
                                  int cap);

/* A height-field patch: the (nx + 1) x (ny + 1) vertex grid vert (row-major, a row per y step, 3
 * coordinates each), two triangles a cell (counter-clockwise seen from +z for x and y increasing along
 * the grid). Same checks and failures as kl_mesh_from_arrays. */
kelvin_status kl_mesh_from_grid(const double *vert, int nx, int ny, kl_mesh **out, char *msg, int cap);

void kl_mesh_free(kl_mesh *m); /* NULL is a no-op */

int kl_mesh_ntri(const kl_mesh *m);
int kl_mesh_nvert(const kl_mesh *m);
/* axis-aligned bounds: lo[3], hi[3] */
void kl_mesh_bounds(const kl_mesh *m, double lo[3], double hi[3]);

/* Closest point of the mesh to p among triangles within distance rmax (BVH-pruned). Returns 1 and
 * sets *dist, q[3] (closest point) and nrm[3] (unit normal of the surface at q, oriented towards p;
 * at edges/vertices the direction from q to p), or 0 if nothing is within rmax. */
int kl_mesh_closest(const kl_mesh *m, const double p[3], double rmax, double *dist, double q[3], double nrm[3]);

/* Ray p + t d (d unit), t in [tmin, tmax]: first hit. Returns 1 and *t, nrm[3] (triangle normal) or 0. */
int kl_mesh_raycast(const kl_mesh *m, const double p[3], const double d[3], double tmin, double tmax, double *t,
                    double nrm[3]);

/* --- additions for the engine's narrow phase (engine/collision_ccd.c) --- */

/* Triangle t: corners a, b, c [m] and its unit normal by the right-hand rule on the winding. */
void kl_mesh_triangle(const kl_mesh *m, int t, double a[3], double b[3], double c[3], double nrm[3]);

/* Indices of the triangles whose bounding boxes overlap the box [lo, hi] (BVH-pruned). Writes at most
 * cap of them into idx and returns how many there are (a return > cap means idx overflowed). */
int kl_mesh_query_box(const kl_mesh *m, const double lo[3], const double hi[3], int *idx, int cap);

/* Indices of the triangles within distance r of the point c (exact triangle distance, BVH-pruned); same
 * overflow convention as kl_mesh_query_box. */
int kl_mesh_query_sphere(const kl_mesh *m, const double c[3], double r, int *idx, int cap);

/* Of the n candidate triangles cand (in their order), those within distance r of c into idx (which
 * may be cand itself), by the test of kl_mesh_query_sphere; returns how many. *dmin2 receives the
 * smallest squared distance from c over all the candidates (INFINITY if n is 0), as kl_mesh_closest
 * computes it. With q and feat (else NULL), each kept triangle's closest point (3 per triangle) and
 * feature, as kl_tri_closest gives them. Given a query_sphere answer for a radius R about c0 with |c - c0| + r <= R, the result
 * is exactly query_sphere's answer for r about c, in the same order. */
int kl_mesh_filter_sphere(const kl_mesh *m, const int *cand, int n, const double c[3], double r, int *idx,
                          double *dmin2, double *q, int *feat);

/* Indices of the triangles that may reach into the cylinder of radius r and half length hw about the
 * axis through c along the unit vector axis: those of the tree's leaves whose boxes pass a
 * conservative test (their extent along the axis overlaps [-hw, hw], their distance across it, from the
 * box centre less the box's reach across the axis, is at most r), a superset the caller sorts out.
 * Same overflow convention as kl_mesh_query_box. */
int kl_mesh_query_cylinder(const kl_mesh *m, const double c[3], const double axis[3], double r, double hw, int *idx,
                           int cap);

/* Vertex coordinates (nvert x 3) and triangle indices (ntri x 3), read-only views. */
const double *kl_mesh_vertices(const kl_mesh *m);
const int *kl_mesh_indices(const kl_mesh *m);

/* Clip the polygon P (np <= 5 vertices in order, room for 8) to the slab -hw <= P[.][2] <= hw, one face
 * after the other (Sutherland-Hodgman), in place; returns how many vertices are left (0: none). A
 * triangle keeps at most 5. The disc tool's contact (engine/collision_ccd.c) and its protrusion in the
 * device model (optimiser/problem.c) clip each triangle, in the disc's (across, across, along the axis)
 * coordinates, to the disc's width with it. */
int kl_poly_clip_slab(double P[8][3], int np, double hw);

/* Closest point q of triangle (a, b, c) to p; returns the feature it lies on. */
#define KL_TRI_FACE 0
#define KL_TRI_EDGE 1
#define KL_TRI_VERTEX 2
int kl_tri_closest(const double p[3], const double a[3], const double b[3], const double c[3], double q[3]);

#endif
