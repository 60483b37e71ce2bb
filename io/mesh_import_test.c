/* io/mesh_import_test.c: meshes from files through assimp: OBJ and ASCII STL give the same welded
 * square, scaled; empty, non-finite, unreadable and missing files give one message naming the file. */
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

#include "io/mesh_import.h"

/* write a file into dir */
static void put(const char *dir, const char *name, const char *text)
{
  char p[512];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* import through assimp: OBJ and ASCII STL give the same welded square; bad files name the file */
static void test_load(void **state)
{
  (void)state;
  char dir[] = "/tmp/kl_mesh_test_XXXXXX";
  assert_non_null(mkdtemp(dir));
  put(dir, "sq.obj", "v 0 0 0\nv 1000 0 0\nv 1000 1000 0\nv 0 1000 0\nf 1 2 3\nf 1 3 4\n");
  put(dir, "sq.stl", "solid s\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1000 0 0\nvertex 1000 1000 0\n"
                     "endloop\nendfacet\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1000 1000 0\n"
                     "vertex 0 1000 0\nendloop\nendfacet\nendsolid s\n");
  put(dir, "empty.stl", "");
  put(dir, "nan.obj", "v 0 0 0\nv nan 0 0\nv 0 1 0\nf 1 2 3\n");
  put(dir, "junk.stl", "this is not a mesh\n");
  const char *good[] = {"sq.obj", "sq.stl"};
  char p[512], msg[512];
  for (int i = 0; i < 2; ++i) {
    snprintf(p, sizeof p, "%s/%s", dir, good[i]);
    kl_mesh *m = NULL;
    assert_int_equal(kl_mesh_load(p, 1e-3, &m, msg, sizeof msg), KELVIN_OK); /* mm -> m */
    assert_int_equal(kl_mesh_ntri(m), 2);
    assert_int_equal(kl_mesh_nvert(m), 4); /* the STL corners are welded */
    double lo[3], hi[3];
    kl_mesh_bounds(m, lo, hi);
    assert_true(fabs(hi[0] - 1.0) < 1e-12 && fabs(hi[1] - 1.0) < 1e-12);
    kl_mesh_free(m);
  }
  struct {
    const char *file, *must;
    kelvin_status st;
  } bad[] = {{"empty.stl", "empty", KELVIN_ERR_ARG},
             {"nan.obj", "non-finite", KELVIN_ERR_ARG},
             {"junk.stl", "cannot read mesh", KELVIN_ERR_ARG},
             {"missing.obj", "No such file", KELVIN_ERR_IO}};
  for (int i = 0; i < 4; ++i) {
    snprintf(p, sizeof p, "%s/%s", dir, bad[i].file);
    kl_mesh *m = (kl_mesh *)1;
    assert_int_equal(kl_mesh_load(p, 1.0, &m, msg, sizeof msg), bad[i].st);
    assert_null(m);
    printf("# %s\n", msg);
    assert_non_null(strstr(msg, bad[i].file));
    assert_non_null(strstr(msg, bad[i].must));
    unlink(p);
  }
  const char *rest[] = {"sq.obj", "sq.stl"};
  for (int i = 0; i < 2; ++i) {
    snprintf(p, sizeof p, "%s/%s", dir, rest[i]);
    unlink(p);
  }
  rmdir(dir);
}

/* PLY headers: the square as an ASCII PLY loads (two triangles over four corners); a file whose header
 * has a line that is no header keyword, and a file cut inside its header (no end_header, every line a
 * good one), are both refused with the documented message. Loaded one after the other, three rounds:
 * each check must read its own file's bytes only, whatever an earlier file left behind (bad.ply's
 * lines after its bad one, "property float x" and "end_header", are as long as the cut file is past
 * the same point). */
static void test_ply_header(void **state)
{
  (void)state;
  char dir[] = "/tmp/kl_mesh_ply_XXXXXX";
  assert_non_null(mkdtemp(dir));
  put(dir, "sq.ply", "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\n"
                     "element face 2\nproperty list uchar int vertex_indices\nend_header\n"
                     "0 0 0\n1 0 0\n1 1 0\n0 1 0\n3 0 1 2\n3 0 2 3\n");
  put(dir, "bad.ply", "ply\nformat ascii 1.0\nbogus line here\nproperty float x\nend_header\n");
  put(dir, "cut.ply", "ply\nformat ascii 1.0\ncomment the cut\n");
  const char *names[] = {"sq.ply", "bad.ply", "cut.ply"};
  char p[3][512], msg[3][512];
  for (int i = 0; i < 3; ++i) snprintf(p[i], sizeof p[i], "%s/%s", dir, names[i]);
  for (int k = 0; k < 3; ++k) {
    kl_mesh *m[3] = {NULL, (kl_mesh *)1, (kl_mesh *)1};
    kelvin_status st[3];
    for (int i = 0; i < 3; ++i) st[i] = kl_mesh_load(p[i], 1.0, &m[i], msg[i], sizeof msg[i]);
    assert_int_equal(st[0], KELVIN_OK);
    assert_int_equal(kl_mesh_ntri(m[0]), 2);
    assert_int_equal(kl_mesh_nvert(m[0]), 4);
    kl_mesh_free(m[0]);
    for (int i = 1; i < 3; ++i) {
      printf("# %s\n", msg[i]);
      assert_int_equal(st[i], KELVIN_ERR_ARG);
      assert_null(m[i]);
      assert_non_null(strstr(msg[i], names[i]));
      assert_non_null(strstr(msg[i], "malformed PLY header"));
    }
  }
  for (int i = 0; i < 3; ++i) unlink(p[i]);
  rmdir(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_load), cmocka_unit_test(test_ply_header)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
