/* engine/mesh_test.c: the BVH queries against brute force, validation messages (file import: io/mesh_import_test.c). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "engine/mesh.h"

/* deterministic uniform in [0, 1) (64-bit LCG, top 53 bits) */
static uint64_t rng = 88172645463325252ULL;
static double urand(void)
{
  rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(rng >> 11) * (1.0 / 9007199254740992.0);
}

/* an n x n bumpy height field over [0,1]^2: z = 0.05 sin(7x) cos(5y) */
static kl_mesh *bumpy(int n)
{
  const int nv = (n + 1) * (n + 1);
  double *v = malloc((size_t)nv * 3 * sizeof *v);
  for (int j = 0; j <= n; ++j)
    for (int i = 0; i <= n; ++i) {
      const double x = (double)i / n, y = (double)j / n;
      double *p = v + 3 * (j * (n + 1) + i);
      p[0] = x;
      p[1] = y;
      p[2] = 0.05 * sin(7 * x) * cos(5 * y);
    }
  kl_mesh *m = NULL;
  char msg[256];
  assert_int_equal(kl_mesh_from_grid(v, n, n, &m, msg, sizeof msg), KELVIN_OK);
  free(v);
  return m;
}

/* closest point: BVH result equals brute force over all triangles, distances to the last bit (the
 * same per-triangle routine runs on both sides), points within 1e-15 m */
static void test_closest_vs_brute(void **state)
{
  (void)state;
  kl_mesh *m = bumpy(40);
  const int nt = kl_mesh_ntri(m);
  for (int it = 0; it < 300; ++it) {
    const double p[3] = {1.4 * urand() - 0.2, 1.4 * urand() - 0.2, 0.6 * urand() - 0.3};
    double best = INFINITY, bq[3] = {0};
    for (int t = 0; t < nt; ++t) {
      double a[3], b[3], c[3], n[3], q[3];
      kl_mesh_triangle(m, t, a, b, c, n);
      kl_tri_closest(p, a, b, c, q);
      const double d = sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) + (p[2] - q[2]) * (p[2] - q[2]));
      if (d < best) {
        best = d;
        memcpy(bq, q, sizeof bq);
      }
    }
    double d, q[3], nrm[3];
    assert_int_equal(kl_mesh_closest(m, p, 10.0, &d, q, nrm), 1);
    assert_true(d == best);
    for (int k = 0; k < 3; ++k) assert_true(fabs(q[k] - bq[k]) < 1e-15);
    /* unit normal pointing from q towards p */
    const double nn = sqrt(nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]);
    assert_true(fabs(nn - 1) < 1e-14);
    assert_true(nrm[0] * (p[0] - q[0]) + nrm[1] * (p[1] - q[1]) + nrm[2] * (p[2] - q[2]) >= -1e-15);
    /* rmax prunes: nothing within a radius below the distance */
    if (best > 1e-3) assert_int_equal(kl_mesh_closest(m, p, 0.999 * best, &d, q, nrm), 0);
  }
  kl_mesh_free(m);
}

/* the sphere filter: from the answer for a ball (c0, R), the triangles within r of a point c with
 * |c - c0| + r <= R are exactly a fresh query_sphere's (same triangles, same order), and the smallest
 * distance over the candidates is the mesh's nearest (kl_mesh_closest, to the bit) when it lies inside
 * the ball; balls whose R does not cover the move are the counter-check that the test can see a miss */
static void test_filter_sphere(void **state)
{
  (void)state;
  kl_mesh *m = bumpy(40);
  const int cap = 4096;
  int *big = malloc((size_t)cap * sizeof *big), *fresh = malloc((size_t)cap * sizeof *fresh);
  int *got = malloc((size_t)cap * sizeof *got);
  int misses = 0;
  for (int it = 0; it < 400; ++it) {
    const double c0[3] = {urand(), urand(), 0.2 * urand() - 0.1};
    const double r = 0.02 + 0.1 * urand(), slack = 0.05 * urand();
    const int covered = it % 4 != 3; /* one ball in four is too small for the move */
    const double R = covered ? r + slack : r + 0.5 * slack;
    const int nb = kl_mesh_query_sphere(m, c0, R, big, cap);
    assert_true(nb <= cap);
    /* a move of length slack in a random direction */
    double u[3] = {urand() - 0.5, urand() - 0.5, urand() - 0.5};
    const double un = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    double c[3];
    for (int k = 0; k < 3; ++k) c[k] = c0[k] + slack * u[k] / un * (1 - 1e-9);
    double dmin2;
    const int ng = kl_mesh_filter_sphere(m, big, nb, c, r, got, &dmin2, NULL, NULL);
    const int nf = kl_mesh_query_sphere(m, c, r, fresh, cap);
    int same = ng == nf;
    for (int i = 0; same && i < ng; ++i) same = got[i] == fresh[i];
    if (!covered) {
      misses += !same;
      continue;
    }
    assert_int_equal(ng, nf);
    for (int i = 0; i < ng; ++i) assert_int_equal(got[i], fresh[i]);
    /* at the boundary: a radius just short of the farthest kept triangle must drop exactly it */
    if (ng > 1) {
      double far = 0;
      for (int i = 0; i < ng; ++i) {
        double a[3], bb[3], cc[3], n[3], q[3];
        kl_mesh_triangle(m, got[i], a, bb, cc, n);
        kl_tri_closest(c, a, bb, cc, q);
        far = fmax(far, sqrt((c[0] - q[0]) * (c[0] - q[0]) + (c[1] - q[1]) * (c[1] - q[1]) + (c[2] - q[2]) * (c[2] - q[2])));
      }
      const double r2 = far * (1 - 1e-7);
      const int ng2 = kl_mesh_filter_sphere(m, big, nb, c, r2, got, &dmin2, NULL, NULL);
      const int nf2 = kl_mesh_query_sphere(m, c, r2, fresh, cap);
      assert_int_equal(ng2, nf2);
      assert_true(ng2 < ng);
      for (int i = 0; i < ng2; ++i) assert_int_equal(got[i], fresh[i]);
    }
    double d, q[3], nrm[3];
    assert_int_equal(kl_mesh_closest(m, c, INFINITY, &d, q, nrm), 1);
    if (nb > 0 && sqrt(dmin2) <= R - slack) assert_true(sqrt(dmin2) == d);
    if (ng > 0) assert_true(sqrt(dmin2) == d);
  }
  /* the uncovered moves do lose triangles (measured: 31 of 100) */
  assert_true(misses > 10);
  free(big);
  free(fresh);
  free(got);
  kl_mesh_free(m);
}

/* a flat unit square: distance above the face is the height, the normal is +z exactly */
static void test_closest_flat(void **state)
{
  (void)state;
  const double v[] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
  const int t[] = {0, 1, 2, 0, 2, 3};
  kl_mesh *m = NULL;
  char msg[128];
  assert_int_equal(kl_mesh_from_arrays(v, 4, t, 2, &m, msg, sizeof msg), KELVIN_OK);
  const double p[3] = {0.5, 0.5, 0.25}; /* on the shared diagonal: a face wins over the edge */
  double d, q[3], n[3];
  assert_int_equal(kl_mesh_closest(m, p, 1.0, &d, q, n), 1);
  assert_true(d == 0.25);
  assert_true(n[0] == 0 && n[1] == 0 && n[2] == 1);
  const double p2[3] = {0.3, 0.6, -0.5}; /* below: normal turned towards p */
  assert_int_equal(kl_mesh_closest(m, p2, 1.0, &d, q, n), 1);
  assert_true(d == 0.5 && n[2] == -1);
  const double p3[3] = {2.0, 0.5, 1.0}; /* beyond the edge x = 1: direction from the edge point */
  assert_int_equal(kl_mesh_closest(m, p3, 5.0, &d, q, n), 1);
  assert_true(fabs(d - sqrt(2.0)) < 1e-15 && fabs(n[0] - sqrt(0.5)) < 1e-15 && fabs(n[2] - sqrt(0.5)) < 1e-15);
  double lo[3], hi[3];
  kl_mesh_bounds(m, lo, hi);
  assert_true(lo[0] == 0 && hi[1] == 1 && lo[2] == 0 && hi[2] == 0);
  kl_mesh_free(m);
}

/* raycast and box queries against brute force */
static void test_raycast_and_box(void **state)
{
  (void)state;
  kl_mesh *m = bumpy(30);
  const int nt = kl_mesh_ntri(m);
  int *idx = malloc((size_t)nt * sizeof *idx);
  for (int it = 0; it < 200; ++it) {
    const double p[3] = {urand(), urand(), 1.0};
    double d[3] = {0.2 * (urand() - 0.5), 0.2 * (urand() - 0.5), -1.0};
    const double l = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    for (int k = 0; k < 3; ++k) d[k] /= l;
    /* brute force with the same Moller-Trumbore arithmetic is not available: compare against the
     * vertical-distance definition instead: the hit point must lie on the mesh (closest distance 0) */
    double th, n[3];
    if (kl_mesh_raycast(m, p, d, 0.0, 10.0, &th, n)) {
      const double x[3] = {p[0] + th * d[0], p[1] + th * d[1], p[2] + th * d[2]};
      double dist, q[3], nn[3];
      assert_int_equal(kl_mesh_closest(m, x, 1.0, &dist, q, nn), 1);
      assert_true(dist < 1e-12);
      /* and nothing is hit before it: the segment up to 0.999 th stays above the surface */
      double th2, n2[3];
      assert_int_equal(kl_mesh_raycast(m, p, d, 0.0, 0.999 * th, &th2, n2), 0);
    } else {
      /* missing is only allowed when the ray leaves the square before reaching z = -0.05 */
      const double tz = (1.0 + 0.05) / -d[2];
      const double xe = p[0] + tz * d[0], ye = p[1] + tz * d[1];
      assert_true(xe < 0 || xe > 1 || ye < 0 || ye > 1);
    }
    /* box query: every triangle whose box overlaps is reported, and only those */
    const double c[3] = {urand(), urand(), 0.0}, h = 0.1 * urand();
    const double lo[3] = {c[0] - h, c[1] - h, -1}, hi[3] = {c[0] + h, c[1] + h, 1};
    const int nq = kl_mesh_query_box(m, lo, hi, idx, nt);
    int nb = 0;
    for (int t = 0; t < nt; ++t) {
      double a[3], b[3], cc[3], nn[3];
      kl_mesh_triangle(m, t, a, b, cc, nn);
      int in = 1;
      for (int k = 0; k < 2; ++k)
        if (fmin(a[k], fmin(b[k], cc[k])) > hi[k] || fmax(a[k], fmax(b[k], cc[k])) < lo[k]) in = 0;
      if (!in) continue;
      ++nb;
      int found = 0;
      for (int i = 0; i < nq; ++i) found |= idx[i] == t;
      assert_true(found);
    }
    assert_int_equal(nq, nb);
  }
  /* overflow: a query that would return more than cap says how many there are */
  const double lo[3] = {-1, -1, -1}, hi[3] = {2, 2, 2};
  assert_int_equal(kl_mesh_query_box(m, lo, hi, idx, 10), nt);
  free(idx);
  kl_mesh_free(m);
}

/* validation names the problem */
static void test_validation(void **state)
{
  (void)state;
  char msg[256];
  kl_mesh *m = (kl_mesh *)1;
  const double v[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 2, 0, 0};
  const int ok[] = {0, 1, 2};
  assert_int_equal(kl_mesh_from_arrays(v, 0, ok, 0, &m, msg, sizeof msg), KELVIN_ERR_ARG);
  assert_null(m);
  assert_non_null(strstr(msg, "empty"));
  const double vn[] = {0, 0, 0, NAN, 0, 0, 0, 1, 0};
  assert_int_equal(kl_mesh_from_arrays(vn, 3, ok, 1, &m, msg, sizeof msg), KELVIN_ERR_ARG);
  assert_non_null(strstr(msg, "vertex 1 has a non-finite"));
  const int bad[] = {0, 1, 7};
  assert_int_equal(kl_mesh_from_arrays(v, 4, bad, 1, &m, msg, sizeof msg), KELVIN_ERR_ARG);
  assert_non_null(strstr(msg, "index 7 out of range"));
  const int deg[] = {0, 1, 2, 0, 1, 3}; /* 0, 1, 3 are collinear */
  assert_int_equal(kl_mesh_from_arrays(v, 4, deg, 2, &m, msg, sizeof msg), KELVIN_ERR_ARG);
  assert_non_null(strstr(msg, "triangle 1 is degenerate"));
  const double v5[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, -1, 0, 0, 0, 1};
  const int fan[] = {0, 1, 2, 1, 0, 3, 0, 1, 4}; /* edge 0-1 in three triangles */
  assert_int_equal(kl_mesh_from_arrays(v5, 5, fan, 3, &m, msg, sizeof msg), KELVIN_ERR_ARG);
  assert_non_null(strstr(msg, "non-manifold"));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_closest_vs_brute), cmocka_unit_test(test_filter_sphere), cmocka_unit_test(test_closest_flat),
    cmocka_unit_test(test_raycast_and_box),  cmocka_unit_test(test_validation),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
