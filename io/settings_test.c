/* io/settings_test.c: the grinding config loader (io/settings.h) driven by the table of settings
 * (optimiser/schema.h): examples/optimise.yaml documents every key with its default, values land in the
 * field their key names, bounds and unknown keys are refused with file, line and field. */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "io/settings.h"
#include "kernels/kl_impact.h"
#include "optimiser/schema.h"
#include "tests/cli_util.h"

#define POISON_REAL (-1.5e300) /* outside every key's bounds, so never loaded */

/* Every field set to a value no config can load, so a field that keeps it was not in the file. */
static void poison(kl_settings *s)
{
  int n;
  const kl_key *t = kl_settings_keys(&n);
  memset(s, 0, sizeof *s);
  for (int i = 0; i < n; ++i) {
    char *f = (char *)s + t[i].offset;
    switch (t[i].type) {
    case KL_KEY_REAL:
      for (int j = 0; j < t[i].n; ++j) ((double *)(void *)f)[j] = POISON_REAL;
      break;
    case KL_KEY_INT:
    case KL_KEY_CHOICE: *(int *)(void *)f = INT_MIN; break;
    case KL_KEY_SEED: *(unsigned long *)(void *)f = ULONG_MAX; break;
    default: snprintf(f, t[i].size, "\x01"); break;
    }
  }
}

static int loaded(const kl_key *k, const kl_settings *s)
{
  const char *f = (const char *)s + k->offset;
  switch (k->type) {
  case KL_KEY_REAL: return ((const double *)(const void *)f)[0] != POISON_REAL;
  case KL_KEY_INT:
  case KL_KEY_CHOICE: return *(const int *)(const void *)f != INT_MIN;
  case KL_KEY_SEED: return *(const unsigned long *)(const void *)f != ULONG_MAX;
  default: return f[0] != '\x01';
  }
}

/* 1 if the default can be written in a config (a legal value); else it is derived or "none" */
static int expressible(const kl_key *k)
{
  switch (k->type) {
  case KL_KEY_REAL:
  case KL_KEY_INT:
  case KL_KEY_SEED:
    for (int j = 0; j < k->n; ++j)
      if (!kl_key_number_ok(k, k->def[j])) return 0;
    return 1;
  case KL_KEY_CHOICE: return 1;
  default: return k->sdef[0] != '\0';
  }
}

/* The loaded value equals the key's default (numbers as strtod reads the file: the same double). */
static void assert_default(const kl_key *k, const kl_settings *s, const kl_settings *def)
{
  const char *f = (const char *)s + k->offset, *g = (const char *)def + k->offset;
  if (k->type == KL_KEY_TEXT || k->type == KL_KEY_FILE || k->type == KL_KEY_ROBOT) {
    if (strcmp(f, g) != 0) fail_msg("%s: the file says '%s', the default is '%s'", k->key, f, g);
  } else if (memcmp(f, g, k->size) != 0) {
    double a[3] = {0}, b[3] = {0};
    kl_settings_get_numbers(s, k->key, a, 3);
    kl_settings_get_numbers(def, k->key, b, 3);
    fail_msg("%s: the file says %.17g %.17g %.17g, the default is %.17g %.17g %.17g", k->key, a[0], a[1], a[2], b[0],
             b[1], b[2]);
  }
}

/* In text, the region of top-level section sec (its line, active "sec:" or commented "# sec:", up to the
 * next top-level line of either kind); the line of "# leaf:" in it (a commented key) or NULL. */
static const char *commented(const char *text, const char *sec, const char *leaf)
{
  const size_t ls = strlen(sec), ll = strlen(leaf);
  const char *p = text, *start = NULL;
  for (; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
    const char *q = p[0] == '#' && p[1] == ' ' ? p + 2 : p; /* a commented top-level line */
    const int top = (q[0] >= 'a' && q[0] <= 'z');
    if (start && top) break;
    if (!start && top && strncmp(q, sec, ls) == 0 && q[ls] == ':') {
      start = p;
      continue;
    }
    if (!start) continue;
    const char *h = p;
    while (*h == ' ') ++h;
    if (*h != '#') continue;
    ++h;
    while (*h == ' ') ++h;
    if (strncmp(h, leaf, ll) == 0 && h[ll] == ':') return h + ll + 1;
  }
  return NULL;
}

/* The value written after a commented key ("  [-0.55, 0, -0.25]   # why") equals the default. */
static void assert_commented_default(const kl_key *k, const char *val, const kl_settings *def)
{
  char buf[256];
  snprintf(buf, sizeof buf, "%s", val);
  buf[strcspn(buf, "\n")] = '\0';
  char *hash = strstr(buf, " #");
  if (hash) *hash = '\0';
  char *v = buf;
  while (*v == ' ') ++v;
  for (size_t n = strlen(v); n && v[n - 1] == ' '; --n) v[n - 1] = '\0';
  if (k->type == KL_KEY_CHOICE || k->type == KL_KEY_TEXT) {
    const char *d = kl_settings_get_text(def, k->key);
    if (strcmp(v, d) != 0) fail_msg("%s: commented as '%s', the default is '%s'", k->key, v, d);
    return;
  }
  double b[3];
  const int n = kl_settings_get_numbers(def, k->key, b, 3);
  char *p = v + (n > 1 && v[0] == '[');
  for (int j = 0; j < n; ++j) {
    char *end;
    const double a = strtod(p, &end);
    if (end == p || a != b[j]) fail_msg("%s: commented as '%s', the default is %.17g (item %d)", k->key, v, b[j], j);
    p = end;
    while (*p == ',' || *p == ' ') ++p;
  }
}

/* examples/optimise.yaml documents every setting with its default: a key the file gives must have its
 * default value; a key it does not give must be there as a commented "# key: value" line in its section,
 * the value being the default when the default can be written. */
static void test_example_documents_every_key(void **state)
{
  (void)state;
  const char *path = KELVIN_SOURCE_DIR "/examples/optimise.yaml";
  kl_settings s, def;
  poison(&s);
  kl_settings_default(&def);
  char msg[1024];
  if (kl_settings_load(&s, path, msg, sizeof msg) != KELVIN_OK) fail_msg("%s", msg);
  char *text = kl_test_read(NULL, path);
  assert_non_null(text);
  int n, nactive = 0, ncomment = 0;
  const kl_key *t = kl_settings_keys(&n);
  for (int i = 0; i < n; ++i) {
    const kl_key *k = &t[i];
    if (loaded(k, &s)) {
      assert_default(k, &s, &def);
      ++nactive;
      continue;
    }
    char sec[64];
    snprintf(sec, sizeof sec, "%.*s", (int)strcspn(k->key, "."), k->key);
    const char *leaf = strrchr(k->key, '.') + 1;
    const char *val = commented(text, sec, leaf);
    if (!val) fail_msg("examples/optimise.yaml: %s is neither given nor commented ('# %s: ...' in %s)", k->key, leaf, sec);
    if (expressible(k)) assert_commented_default(k, val, &def);
    ++ncomment;
  }
  /* most keys are given, the few without a writable default (files, derived bounds, removal's derived grid) and the
   * general law's three (contact.c, n2, m: they apply to model general only) commented, and uncertainty's derived
   * force band (force_min, force_max) */
  assert_true(nactive > 50 && ncomment >= 5 && ncomment < 19);
  free(text);
}

static kelvin_status load_text(const char *name, const char *yaml, kl_settings *s, char *msg, int cap)
{
  kl_test_write(NULL, name, yaml);
  kl_settings_default(s);
  return kl_settings_load(s, name, msg, cap);
}

/* Values land in the fields their keys name (checked through the struct's own names), files relative
 * to the config's folder. */
static void test_values_land_in_their_fields(void **state)
{
  (void)state;
  kl_settings s;
  char msg[1024];
  if (load_text("ok.yaml",
                "holder: {stiffness: 1.25e5, damping: 7}\n"
                "workpiece: {bead: {height: -1e-4}, roughness: {seed: 99}, extent: [0.2, 0.05], mesh: m.stl}\n"
                "contact: {law: gonthier, model: kv}\n"
                "path: {samples: 99, csv: /abs/p.csv}\n"
                "robot: {model: builtin, base: [1, 2, 3]}\n",
                &s, msg, sizeof msg) != KELVIN_OK)
    fail_msg("%s", msg);
  assert_true(s.holder_K == 1.25e5 && s.holder_D == 7);
  assert_true(s.bead_h == -1e-4 && s.rough_seed == 99UL && s.extent[0] == 0.2 && s.extent[1] == 0.05);
  assert_int_equal(s.law, KL_LAW_GONTHIER);
  assert_int_equal(s.model, KL_MODEL_KV);
  assert_int_equal(s.ns, 99);
  assert_string_equal(s.mesh, "m.stl"); /* no folder in "ok.yaml" */
  assert_string_equal(s.path_csv, "/abs/p.csv");
  assert_string_equal(s.robot, "builtin");
  assert_true(s.robot_base[0] == 1 && s.robot_base[1] == 2 && s.robot_base[2] == 3);
  assert_true(s.tool_R == 6e-3); /* untouched keys keep their defaults */
  mkdir("cfgdir", 0755); /* may exist from an earlier run */
  if (load_text("cfgdir/in.yaml", "target: {csv: t.csv}\n", &s, msg, sizeof msg) != KELVIN_OK) fail_msg("%s", msg);
  assert_string_equal(s.target_csv, "cfgdir/t.csv");
}

/* Refusals name file, line and field, with the bounds of the table. */
static void test_refusals(void **state)
{
  (void)state;
  kl_settings s;
  char msg[1024];
  const struct {
    const char *yaml, *says;
  } bad[] = {
    {"holder:\n  stiffness: 0.5\n", "bad.yaml:2: holder.stiffness: must be in [1, 1e9] N/m, got 0.5"},
    {"tool:\n  nu: 0.5\n", "bad.yaml:2: tool.nu: must be in [-0.99, 0.4999], got 0.5"},
    {"holder:\n  stiffnes: 1e5\n", "bad.yaml:2: holder.stiffnes: unknown key (allowed: stiffness, damping, lateral_stiffness, lateral_damping, rotational_stiffness, rotational_damping)"},
    {"holdr: {stiffness: 1}\n", "bad.yaml:1: holdr: unknown key"},
    {"workpiece:\n  bead: {height: 1, colour: red}\n", "workpiece.bead.colour: unknown key (allowed: height, width, x)"},
    {"workpiece:\n  bead: {height: 1}\n", "bad.yaml:2: workpiece.bead.height: must be in [-0.01, 0.01] m, got 1"},
    {"workpiece: {shift: [0, 0]}\n", "workpiece.shift: must be a list of 3 numbers"},
    {"path: {samples: 2.5}\n", "path.samples: must be a whole number in [8, 4096], got '2.5'"},
    {"contact: {law: exactly}\n", "contact.law: must be one of hunt-crossley, lankarani-nikravesh, flores, gonthier, exact"},
    {"robot: {base: [0, 0, 0]}\n", "robot.model: must be given with its section"},
    {"optimiser: {algorithm: [a]}\n", "optimiser.algorithm: must be one word"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    assert_int_equal(load_text("bad.yaml", bad[i].yaml, &s, msg, sizeof msg), KELVIN_ERR_CONFIG);
    if (!strstr(msg, bad[i].says)) fail_msg("case %zu: message '%s' lacks '%s'", i, msg, bad[i].says);
  }
}

/* Path normals against the mesh: a box 0.1 x 0.04 x 0.02 m (OBJ, faces wound outwards) and a path along
 * its +y side wall (y = 0.02): normals +y (out of the part, as documented) load; normals -y (into the
 * part) are refused with the hint, naming the path file and its first row. The wall's normal lies along
 * y only, so the check must use the y components (a path on the top face, along z, would not tell). */
static void test_path_normals_side_wall(void **state)
{
  (void)state;
  kl_test_write(NULL, "box.obj",
                "v -0.05 -0.02 -0.02\nv 0.05 -0.02 -0.02\nv 0.05 0.02 -0.02\nv -0.05 0.02 -0.02\n"
                "v -0.05 -0.02 0\nv 0.05 -0.02 0\nv 0.05 0.02 0\nv -0.05 0.02 0\n"
                "f 1 4 3\nf 1 3 2\nf 5 6 7\nf 5 7 8\nf 1 2 6\nf 1 6 5\n"
                "f 3 4 8\nf 3 8 7\nf 4 1 5\nf 4 5 8\nf 2 3 7\nf 2 7 6\n");
  char out_rows[1024] = "x_m,y_m,z_m,nx,ny,nz\n", in_rows[1024] = "x_m,y_m,z_m,nx,ny,nz\n";
  for (int k = 0; k < 7; ++k) {
    const double x = -0.03 + 0.01 * k;
    snprintf(out_rows + strlen(out_rows), sizeof out_rows - strlen(out_rows), "%g,0.02,-0.006,0,1,0\n", x);
    snprintf(in_rows + strlen(in_rows), sizeof in_rows - strlen(in_rows), "%g,0.02,-0.006,0,-1,0\n", x);
  }
  kl_test_write(NULL, "wall_out.csv", out_rows);
  kl_test_write(NULL, "wall_in.csv", in_rows);
  kl_settings s;
  kl_inputs in;
  char msg[1024];
  if (load_text("wall_out.yaml", "workpiece: {surface: mesh, mesh: box.obj}\npath: {csv: wall_out.csv}\n", &s, msg,
                sizeof msg) != KELVIN_OK)
    fail_msg("%s", msg);
  memset(&in, 0, sizeof in);
  if (kl_inputs_load(&s, &in, msg, sizeof msg) != KELVIN_OK) fail_msg("outward normals refused: %s", msg);
  assert_int_equal(in.in.npath, 7);
  kl_inputs_free(&in);
  if (load_text("wall_in.yaml", "workpiece: {surface: mesh, mesh: box.obj}\npath: {csv: wall_in.csv}\n", &s, msg,
                sizeof msg) != KELVIN_OK)
    fail_msg("%s", msg);
  memset(&in, 0, sizeof in);
  assert_int_equal(kl_inputs_load(&s, &in, msg, sizeof msg), KELVIN_ERR_CONFIG);
  printf("# %s\n", msg);
  assert_non_null(strstr(msg, "wall_in.csv:2: the path normals point into the part (at 7 of 7 points checked"));
  kl_inputs_free(&in);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_example_documents_every_key),
    cmocka_unit_test(test_values_land_in_their_fields),
    cmocka_unit_test(test_refusals),
    cmocka_unit_test(test_path_normals_side_wall),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
