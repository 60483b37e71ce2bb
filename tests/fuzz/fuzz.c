/* tests/fuzz/fuzz.c: libFuzzer harnesses for every reader of kelvin's input files. One source, one
 * harness per reader, chosen at compile time by KL_FUZZ_<NAME> (tests/fuzz/CMakeLists.txt). Each input
 * is written to a file and read through the same entry point the program uses, so the file checks
 * (regular file, size limits) run too. A harness only asserts what must hold for any input: the reader
 * returns (bounded time: libFuzzer's -timeout), returns KELVIN_OK or an error with a one-line message
 * that is not empty, and frees what it allocated (LeakSanitizer). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(KL_FUZZ_URDF_DUP)
#include <libxml/parser.h>
#include <libxml/tree.h>
#endif

#include "io/config.h"
#include "io/mesh_import.h"
#include "io/robot_yaml.h"
#include "io/scene_yaml.h"
#include "io/settings.h"
#include "io/sweep_config.h"
#include "io/table.h"

/* the per-process input file, with a suffix the reader needs */
__attribute__((unused)) static const char *input_file(const char *suffix)
{
  static char path[256];
  /* /dev/shm when there is one: a file system in memory, many times faster than /tmp's disk */
  snprintf(path, sizeof path, "%s/kelvin-fuzz-%ld%s", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp",
           (long)getpid(), suffix);
  return path;
}

__attribute__((unused)) static void put(const char *path, const uint8_t *data, size_t size)
{
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  if (size && fwrite(data, 1, size, f) != size) abort();
  if (fclose(f) != 0) abort();
}

/* an error must leave exactly one non-empty line */
static void check_msg(kelvin_status st, const char *msg)
{
  if (st == KELVIN_OK) return;
  if (!msg[0] || strchr(msg, '\n')) {
    fprintf(stderr, "bad message for status %d: '%s'\n", (int)st, msg);
    abort();
  }
}

#if defined(KL_FUZZ_MESH) || defined(KL_FUZZ_PLY)
/* assimp allocates a few objects once per process and keeps them (its importer registry): load one small
 * mesh before fuzzing so that LeakSanitizer's per-input check sees only what an input leaks */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  (void)argv;
  static const char stl[] = "solid plane\n  facet normal 0 0 1\n    outer loop\n      vertex 0 0 0\n      vertex 1 0 0\n"
                            "      vertex 1 1 0\n    endloop\n  endfacet\n  facet normal 0 0 1\n    outer loop\n"
                            "      vertex 0 0 0\n      vertex 1 1 0\n      vertex 0 1 0\n    endloop\n  endfacet\n"
                            "endsolid plane\n";
  const char *p = input_file(".stl");
  put(p, (const uint8_t *)stl, sizeof stl - 1);
  kl_mesh *m = NULL;
  char msg[512];
  if (kl_mesh_load(p, 1.0, &m, msg, sizeof msg) != KELVIN_OK) abort();
  kl_mesh_free(m);
  return 0;
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char msg[8192] = "";
  kelvin_status st = KELVIN_OK;
#if defined(KL_FUZZ_SETTINGS)
  const char *p = input_file(".yaml");
  put(p, data, size);
  kl_settings s;
  kl_settings_default(&s);
  st = kl_settings_load(&s, p, msg, sizeof msg);
#elif defined(KL_FUZZ_SWEEP_CONFIG)
  kl_cfg *c = NULL;
  if (kl_cfg_create(&c) != KELVIN_OK) abort();
  kl_sweep_spec s;
  if (kl_sweep_spec_default(&s) != 0) abort();
  st = kl_sweep_load_spec_mem(c, "sweep.yaml", (const char *)data, size, &s);
  if (st != KELVIN_OK) snprintf(msg, sizeof msg, "%s", kl_cfg_errmsg(c));
  if (st == KELVIN_OK && !s.scenarios[0]) (void)kl_sweep_product_size(&s);
  kl_sweep_spec_free(&s);
  kl_cfg_destroy(c);
#elif defined(KL_FUZZ_SCENARIOS)
  const char *p = input_file(".csv");
  put(p, data, size);
  kl_impact_batch *b = NULL;
  st = kl_sweep_load_csv(p, 2, &b, msg, sizeof msg);
  kl_impact_batch_destroy(b);
#elif defined(KL_FUZZ_SCENE)
  const char *p = input_file(".yaml");
  put(p, data, size);
  kl_scene sc;
  st = kl_scene_load(p, &sc, msg, sizeof msg);
  kl_scene_free(&sc);
#elif defined(KL_FUZZ_ROBOT_YAML)
  kl_robot *r = NULL;
  st = kl_robot_load_yaml_mem("robot.yaml", (const char *)data, size, &r, msg, sizeof msg);
  kl_robot_free(r);
#elif defined(KL_FUZZ_URDF)
  const char *p = input_file(".urdf");
  put(p, data, size);
  kl_robot *r = NULL;
  st = kl_robot_load_urdf(p, &r, msg, sizeof msg);
  kl_robot_free(r);
#elif defined(KL_FUZZ_MESH)
  /* the first byte picks the format the file name claims: assimp looks at both */
  static const char *const ext[] = {".stl", ".obj", ".ply"};
  const char *p = input_file(ext[size ? data[0] % 3 : 0]);
  put(p, size ? data + 1 : data, size ? size - 1 : 0);
  kl_mesh *m = NULL;
  st = kl_mesh_load(p, 1.0, &m, msg, sizeof msg);
  kl_mesh_free(m);
#elif defined(KL_FUZZ_PLY)
  /* PLY headers and data: the declared counts against the limits and the data against the declarations
   * (io/mesh_check.c) before assimp, then assimp on what passed */
  const char *p = input_file(".ply");
  put(p, data, size);
  kl_mesh *m = NULL;
  st = kl_mesh_load(p, 1.0, &m, msg, sizeof msg);
  kl_mesh_free(m);
#elif defined(KL_FUZZ_URDF_DUP)
  /* a URDF that loads must be refused once one of its links or joints is given a second time (the name
   * repeated on a new element at the end): checked by editing the document with libxml2 */
  const char *p = input_file(".urdf");
  put(p, data, size);
  kl_robot *r = NULL;
  st = kl_robot_load_urdf(p, &r, msg, sizeof msg);
  kl_robot_free(r);
  if (st == KELVIN_OK) {
    for (int which = 0; which < 2; ++which) {
      xmlDocPtr doc = xmlReadMemory((const char *)data, (int)size, "x.urdf", NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
      if (!doc) abort(); /* it loaded above */
      xmlNodePtr root = xmlDocGetRootElement(doc), c = root ? root->children : NULL;
      const char *el = which ? "joint" : "link";
      for (; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && strcmp((const char *)c->name, el) == 0) break;
      if (!c) { /* a robot with one link has no joint */
        xmlFreeDoc(doc);
        continue;
      }
      xmlChar *name = xmlGetProp(c, (const xmlChar *)"name");
      xmlNodePtr d = xmlNewChild(root, NULL, (const xmlChar *)el, NULL);
      xmlNewProp(d, (const xmlChar *)"name", name);
      xmlFree(name);
      xmlChar *text = NULL;
      int len = 0;
      xmlDocDumpMemory(doc, &text, &len);
      xmlFreeDoc(doc);
      put(p, text, (size_t)len);
      xmlFree(text);
      kl_robot *r2 = NULL;
      char m2[8192] = "";
      const kelvin_status s2 = kl_robot_load_urdf(p, &r2, m2, sizeof m2);
      kl_robot_free(r2);
      if (s2 == KELVIN_OK || (!strstr(m2, "duplicate") && !strstr(m2, "more than"))) {
        fprintf(stderr, "a second <%s> of the same name: status %d, '%s'\n", el, (int)s2, m2);
        abort();
      }
      check_msg(s2, m2);
    }
  }
#elif defined(KL_FUZZ_PATH_CSV)
  const char *p = input_file(".csv");
  put(p, data, size);
  int n = 0;
  double *x = NULL, *nv = NULL;
  long *l = NULL;
  st = kl_read_path_csv(p, 1e-3, &n, &x, &nv, &l, msg, sizeof msg);
  free(x);
  free(nv);
  free(l);
#elif defined(KL_FUZZ_TARGET_CSV)
  const char *p = input_file(".csv");
  put(p, data, size);
  int n = 0;
  double *s = NULL, *F = NULL;
  st = kl_read_target_csv(p, &n, &s, &F, msg, sizeof msg);
  free(s);
  free(F);
#elif defined(KL_FUZZ_PASS_CSV)
  const char *p = input_file(".csv");
  put(p, data, size);
  int n = 0;
  double *s = NULL, *o = NULL, *v = NULL;
  long *l = NULL;
  st = kl_read_pass_csv(p, &n, &s, &o, &v, &l, msg, sizeof msg);
  free(s);
  free(o);
  free(v);
  free(l);
#else
#error "define one KL_FUZZ_<NAME>"
#endif
  check_msg(st, msg);
  return 0;
}
