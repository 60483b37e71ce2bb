/* engine/collide_cache_test.c: the sphere-against-mesh query cache of the narrow phase (collision_ccd.c)
 * changes nothing the engine sees. A ball walks over three overlapping meshes in moves from a micron to
 * a few millimetres, in contact, skimming and clear of them; at every pose one data object that keeps
 * its cache from pose to pose and a fresh one with the cache switched off (query_cache 0: the tree asked
 * for the nearest triangle and for the triangles within reach, every closest point computed again)
 * must give the same features (count, keys, points, normals, depths) and the same
 * conservative-advancement time, to the bit: the cache is exact by construction (docs/design.md
 * section 3), so any difference is a bug. The walk is checked to have used the cache (most poses
 * answered from it), to have crossed its edge (refreshes), and to have met a third mesh that has no
 * slot; a ball pressed into a fine mesh overflows the cache and must fall back to fresh queries. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/mesh.h"
#include "engine/world_impl.h"

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static double urand(void)
{
  rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(rng >> 11) * (1.0 / 9007199254740992.0);
}

#define N 60 /* grid cells per side over [0, 0.3]^2: 5 mm spacing */

static double height(double x, double y) { return 0.004 * sin(40 * x) * cos(25 * y) + 0.01 * x; }

/* an n x n grid over [x0, x0 + len] x [y0, y0 + len] at height z(x, y) + dz */
static kl_mesh *grid(int n, double x0, double y0, double len, double dz, double (*z)(double, double))
{
  double *v = malloc((size_t)(n + 1) * (n + 1) * 3 * sizeof *v);
  for (int j = 0; j <= n; ++j)
    for (int i = 0; i <= n; ++i) {
      double *p = v + 3 * (j * (n + 1) + i);
      p[0] = x0 + len * i / n;
      p[1] = y0 + len * j / n;
      p[2] = z(p[0], p[1]) + dz;
    }
  kl_mesh *m = NULL;
  char msg[256];
  assert_int_equal(kl_mesh_from_grid(v, n, n, &m, msg, sizeof msg), KELVIN_OK);
  free(v);
  return m;
}

/* the height field over [x0, x0 + 0.3] x [0, 0.3], raised by dz */
static kl_mesh *bumpy(double x0, double dz) { return grid(N, x0, 0.0, 0.3, dz, height); }

static double flat(double x, double y)
{
  (void)x, (void)y;
  return 0.0;
}

/* features and conservative-advancement time of data d at ball centre c */
static int collide_at(const kl_world_model *m, kl_world_data *d, int ball, const double c[3], double *h_ca)
{
  memcpy(d->xpos + 3 * ball, c, 3 * sizeof(double));
  kl_scratch *S = d->scratch;
  const double abound[2] = {0, 9.81};
  kl_collide_pose(m, d, S);
  *h_ca = INFINITY;
  return kl_collide(m, d, S, 1e-7, 5e-13, abound, h_ca);
}

/* a new model with a static part made of the n meshes */
static kl_world_model *mesh_part(kl_mesh *const *mesh, int n)
{
  kl_world_model *m = kl_world_create();
  kl_body_def b;
  kl_shape_def s;
  kl_world_default_body(&b);
  b.type = KL_BODY_STATIC;
  const int part = kl_world_add_body(m, &b);
  for (int k = 0; k < n; ++k) {
    kl_world_default_shape(&s);
    s.type = KL_SHAPE_MESH;
    s.mesh = mesh[k];
    kl_world_add_shape(m, part, &s);
  }
  return m;
}

/* mesh_part and a free ball of radius R moving at vel (for conservative advancement), compiled; *ball
 * receives the ball's body */
static kl_world_model *scene(kl_mesh *const *mesh, int n, double R, double vx, double vz, int *ball)
{
  kl_world_model *m = mesh_part(mesh, n);
  kl_body_def b;
  kl_shape_def s;
  kl_world_default_body(&b);
  b.vel[0] = vx, b.vel[2] = vz;
  *ball = kl_world_add_body(m, &b);
  kl_world_default_shape(&s);
  s.size[0] = R;
  kl_world_add_shape(m, *ball, &s);
  char msg[256];
  assert_int_equal(kl_world_compile(m, msg, sizeof msg), KELVIN_OK);
  return m;
}

/* at ball centre c: data `kept` (cache on) against a fresh data object with the cache off, to the bit;
 * returns the number of features */
static int same_as_fresh(kl_world_model *m, kl_world_data *kept, int ball, const double c[3])
{
  double h1, h2;
  const int n1 = collide_at(m, kept, ball, c, &h1);
  m->query_cache = 0;
  kl_world_data *fresh = kl_world_data_create(m);
  const int n2 = collide_at(m, fresh, ball, c, &h2);
  m->query_cache = 1;
  assert_int_equal(n1, n2);
  assert_true(h1 == h2 || (isinf(h1) && isinf(h2)));
  const kl_scratch *S1 = kept->scratch, *S2 = fresh->scratch;
  for (int f = 0; f < n1; ++f) {
    const kl_feature *f1 = &S1->feat[f], *f2 = &S2->feat[f];
    assert_int_equal(f1->key, f2->key);
    assert_int_equal(f1->shape[0], f2->shape[0]);
    assert_int_equal(f1->shape[1], f2->shape[1]);
    assert_true(f1->depth == f2->depth);
    for (int k = 0; k < 3; ++k) assert_true(f1->pos[k] == f2->pos[k] && f1->normal[k] == f2->normal[k]);
  }
  kl_world_data_free(fresh);
  return n1;
}

static void test_cache_is_exact(void **state)
{
  (void)state;
  /* three parts: the second, 15 um higher, overlaps the first over x in [0.2, 0.3]; the third, 30 um
   * higher, over x in [0.1, 0.3]; the ball meets them together there (two slots per sphere: the third
   * mesh takes fresh queries) */
  kl_mesh *mesh[3] = {bumpy(0.0, 0.0), bumpy(0.2, 1.5e-5), bumpy(0.1, 3e-5)};
  const double R = 0.006;
  int ball;
  kl_world_model *m = scene(mesh, 3, R, 0.02, -0.01, &ball);
  kl_world_data *kept = kl_world_data_create(m);
  double x = 0.05, y = 0.1;
  int spell = 0;
  int poses = 0, touching = 0, clear = 0, fresh_queries = 0;
  double last_c[3] = {NAN, NAN, NAN};
  for (int it = 0; it < 3000; ++it) {
    /* moves: mostly sub-step sized (1-10 um), sometimes past the cache's edge (0.1-3 mm) */
    const double len = urand() < 0.9 ? 1e-6 * (1 + 9 * urand()) : 1e-4 * (1 + 29 * urand());
    x += len * (0.8 + 0.4 * urand());
    y += len * (urand() - 0.5);
    if (x > 0.28) x = 0.05;
    /* the ball's gap to the first part, in spells of about 50 poses: pressing in up to 20 um,
     * skimming within 2 um, clear by 5-40 um (beyond the query, inside the cached ball), or by about 1 mm */
    if (urand() < 0.02) spell = (spell + 1) % 4;
    const double gap = spell == 0   ? -2e-5 * urand()
                       : spell == 1 ? 2e-6 * urand()
                       : spell == 2 ? 5e-6 + 3.5e-5 * urand()
                                    : 1e-3 + 1e-5 * urand();
    const double c[3] = {x, y, height(x, y) + R + gap};
    const int n1 = same_as_fresh(m, kept, ball, c);
    const kl_scratch *S1 = kept->scratch;
    /* the cache's centre moves only when it was refreshed */
    const double *c0 = S1->qc_c; /* the ball, the only sphere: its first slot */
    fresh_queries += c0[0] != last_c[0] || c0[1] != last_c[1] || c0[2] != last_c[2];
    memcpy(last_c, c0, sizeof last_c);
    poses++;
    touching += n1 > 0 && S1->feat[0].depth > 0;
    clear += n1 == 0;
  }
  /* measured: 2178 touching, 817 clear of the margin, 696 refreshes of the first slot in 3000 poses */
  assert_true(touching > 500 && clear > 300);
  assert_true(fresh_queries > 100 && fresh_queries < poses / 2);
  /* the ball's two slots went to the first two meshes (shapes 0 and 1); the third never had one */
  const kl_scratch *SK = kept->scratch;
  assert_int_equal(SK->qc_mesh[0], 0);
  assert_int_equal(SK->qc_mesh[1], 1);
  kl_world_data_free(kept);
  kl_world_free(m);
  for (int k = 0; k < 3; ++k) kl_mesh_free(mesh[k]);
}

/* the cached ball's edge: a floor 28 um below the ball (inside the cached ball, 30 um wider than the
 * query) and a wall 35 um beside it (outside). After a move of 10 um towards the wall, the wall is the
 * nearest (25 um against 28 um) but not among the cached triangles: the conservative-advancement gap
 * must come from the wall, as a fresh query finds it, not from the cached floor. */
static void test_cache_edge(void **state)
{
  (void)state;
  const double R = 0.006, L = 0.05;
  const double xw = R + 3.5e-5;
  const double v[] = {-L, -L, 0, L, -L, 0, L, L, 0, -L, L, 0,                  /* floor z = 0 */
                      xw, -L, -L, xw, L, -L, xw, L, L, xw, -L, L};             /* wall x = xw, facing -x */
  const int t[] = {0, 1, 2, 0, 2, 3, 4, 5, 6, 4, 6, 7};
  kl_mesh *mesh = NULL;
  char msg[256];
  assert_int_equal(kl_mesh_from_arrays(v, 8, t, 4, &mesh, msg, sizeof msg), KELVIN_OK);
  int ball;
  kl_world_model *m = scene(&mesh, 1, R, 0.01, 0.0, &ball);
  kl_world_data *kept = kl_world_data_create(m), *fresh = kl_world_data_create(m);
  double h1, h2;
  const double c0[3] = {0, 0, R + 2.8e-5}, c1[3] = {1e-5, 0, R + 2.8e-5};
  assert_int_equal(collide_at(m, kept, ball, c0, &h1), 0);
  assert_int_equal(collide_at(m, kept, ball, c1, &h1), 0);
  m->query_cache = 0;
  assert_int_equal(collide_at(m, fresh, ball, c1, &h2), 0);
  /* the wall's gap 25 um at 0.01 m/s: 2.5 ms (the floor's 28 um would give 2.8 ms at the speed bound) */
  assert_true(h1 == h2);
  assert_true(h2 < 2.6e-3);
  kl_world_data_free(kept);
  kl_world_data_free(fresh);
  kl_world_free(m);
  kl_mesh_free(mesh);
}

/* a ball pressed 0.25 mm into a fine flat mesh (0.05 mm cells): about 7 500 triangles within reach, more
 * than KL_QC_CAP within the cached ball, so the slot records the overflow and the queries are fresh
 * while the ball stays inside that ball, and asked again once it leaves; the features stay those of
 * the cache switched off */
static void test_cache_overflow(void **state)
{
  (void)state;
  kl_mesh *mesh = grid(240, 0.0, 0.0, 0.012, 0.0, flat); /* 0.05 mm cells */
  const double R = 0.006;
  int ball;
  kl_world_model *m = scene(&mesh, 1, R, 0.01, 0.0, &ball);
  kl_world_data *kept = kl_world_data_create(m);
  int overflowed = 0, cached = 0;
  for (int it = 0; it < 60; ++it) {
    /* 2 um moves, and a jump of 0.1 mm every 20 poses; a few poses lifted to 1 mm to use the cache */
    const double x = 0.006 + 2e-6 * it + 1e-4 * (it / 20);
    const double z = it % 20 >= 17 ? R + 1e-3 : R - 2.5e-4;
    const double c[3] = {x, 0.006, z};
    same_as_fresh(m, kept, ball, c);
    const kl_scratch *SK = kept->scratch;
    overflowed += SK->qc_n[0] < 0;
    cached += SK->qc_n[0] >= 0;
  }
  /* measured: 49 poses overflowed, 11 from the cache */
  assert_true(overflowed > 30 && cached > 3);
  kl_world_data_free(kept);
  kl_world_free(m);
  kl_mesh_free(mesh);
}

/* body b of data `kept` at position x, orientation q: its narrow phase at margin against a fresh data
 * object's, to the bit (features, count and conservative-advancement time); returns the count */
static int pose_as_fresh(kl_world_model *m, kl_world_data *kept, int b, const double x[3], const double q[4],
                         double margin)
{
  kl_world_data *fresh = kl_world_data_create(m);
  kl_world_data *dd[2] = {kept, fresh};
  int n[2];
  double h[2];
  const double abound[2] = {0, 9.81};
  for (int k = 0; k < 2; ++k) {
    memcpy(dd[k]->xpos + 3 * b, x, 3 * sizeof(double));
    memcpy(dd[k]->xquat + 4 * b, q, 4 * sizeof(double));
    kl_collide_pose(m, dd[k], dd[k]->scratch);
    h[k] = INFINITY;
    n[k] = kl_collide(m, dd[k], dd[k]->scratch, margin, 5e-13, abound, &h[k]);
  }
  assert_int_equal(n[0], n[1]);
  assert_true(h[0] == h[1]);
  const kl_scratch *S1 = kept->scratch, *S2 = fresh->scratch;
  for (int f = 0; f < n[0]; ++f) {
    assert_int_equal(S1->feat[f].key, S2->feat[f].key);
    assert_true(S1->feat[f].depth == S2->feat[f].depth);
    for (int k = 0; k < 3; ++k) assert_true(S1->feat[f].pos[k] == S2->feat[f].pos[k]);
  }
  kl_world_data_free(fresh);
  return n[0];
}

/* the narrow phase is taken again as it was only at the very same poses and margin (kl_collide keeps
 * the last one's features for the next sub-step's start): a box on a flat mesh, tilted so that its
 * corners on one side press 2 um in and those on the other stand 0.5 um clear (counted at a margin of
 * 1e-6, not at 1e-7); the same pose twice, a turn that moves no centre, a move, a new margin: each
 * call must give what a fresh data object gives */
static void test_same_pose_again(void **state)
{
  (void)state;
  kl_mesh *mesh = grid(20, -0.05, -0.05, 0.1, 0.0, flat);
  kl_world_model *m = mesh_part(&mesh, 1);
  kl_body_def bd;
  kl_shape_def sd;
  kl_world_default_body(&bd);
  bd.vel[2] = -0.01;
  const int box = kl_world_add_body(m, &bd);
  kl_world_default_shape(&sd);
  sd.type = KL_SHAPE_BOX;
  sd.size[0] = 0.01, sd.size[1] = 0.01, sd.size[2] = 0.005;
  kl_world_add_shape(m, box, &sd);
  char msg[256];
  assert_int_equal(kl_world_compile(m, msg, sizeof msg), KELVIN_OK);
  kl_world_data *kept = kl_world_data_create(m);
  const double hx = 0.01, hz = 0.005, sa = 1.25e-4, ca = sqrt(1 - sa * sa); /* 2 hx sin(a) = 2.5 um */
  const double ha = 0.5 * asin(sa);
  const double q0[4] = {cos(ha), 0, sin(ha), 0};
  const double x0[3] = {0.001, 0.002, hx * sa + hz * ca - 2e-6};
  const int n1 = pose_as_fresh(m, kept, box, x0, q0, 1e-6);
  assert_true(n1 >= 4); /* the four corners: two pressing, two within the margin */
  assert_int_equal(pose_as_fresh(m, kept, box, x0, q0, 1e-6), n1); /* again */
  const int n2 = pose_as_fresh(m, kept, box, x0, q0, 1e-7);         /* a narrower margin */
  assert_true(n2 < n1);
  const double q1[4] = {cos(1.5 * ha), 0, sin(1.5 * ha), 0};          /* turned, no centre moved */
  pose_as_fresh(m, kept, box, x0, q1, 1e-7);
  pose_as_fresh(m, kept, box, x0, q1, 1e-7);
  const double x1[3] = {x0[0], x0[1], x0[2] - 1e-6};                  /* moved down a micron */
  pose_as_fresh(m, kept, box, x1, q1, 1e-7);
  kl_world_data_free(kept);
  kl_world_free(m);
  kl_mesh_free(mesh);
}

int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_cache_is_exact), cmocka_unit_test(test_cache_edge),
                                     cmocka_unit_test(test_cache_overflow), cmocka_unit_test(test_same_pose_again)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
