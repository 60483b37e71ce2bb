/* api/check.c: validate any kelvin input file (include/kelvin/check.h): what `kelvin check` prints, as a
 * summary on the handle, and the one-line message of the run that would have failed. A grinding config
 * and a robot go through the public API (kelvin_grind_*, kelvin_robot_*), so the check prepares exactly
 * what `kelvin optimise` and `kelvin robot` would; the other kinds through their readers in io/. */
#include "kelvin/check.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_impl.h"
#include "io/config.h"
#include "io/mesh_import.h"
#include "kernels/kl_names.h"
#include "io/scene_yaml.h"
#include "io/sweep_config.h"
#include "io/table.h"
#include "kelvin/grind.h"
#include "kelvin/robot.h"

struct kelvin_check {
  kelvin_input_kind kind;
  char *sum; /* the summary, grown by add() */
  size_t len, cap;
  int nomem;
  char msg[KL_API_MSG];
};

kelvin_status kelvin_check_create(kelvin_check **out)
{
  if (!out) return KELVIN_ERR_ARG;
  *out = calloc(1, sizeof **out);
  return *out ? KELVIN_OK : KELVIN_ERR_NOMEM;
}

void kelvin_check_free(kelvin_check *c)
{
  if (!c) return;
  free(c->sum);
  free(c);
}

kelvin_input_kind kelvin_check_kind(const kelvin_check *c) { return c ? c->kind : KELVIN_INPUT_UNKNOWN; }
const char *kelvin_check_summary(const kelvin_check *c) { return c && c->sum ? c->sum : ""; }
const char *kelvin_check_errmsg(const kelvin_check *c) { return c ? c->msg : ""; }

/* append to the summary (an allocation failure is remembered and reported once, at the end) */
__attribute__((format(printf, 2, 3))) static void add(kelvin_check *c, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  const int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || c->nomem) return;
  if (c->len + (size_t)n + 1 > c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 1024;
    while (cap < c->len + (size_t)n + 1) cap *= 2;
    char *s = realloc(c->sum, cap);
    if (!s) {
      c->nomem = 1;
      return;
    }
    c->sum = s;
    c->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(c->sum + c->len, c->cap - c->len, fmt, ap);
  va_end(ap);
  c->len += (size_t)n;
}

static kelvin_status fail(kelvin_check *c, kelvin_status st, const char *text)
{
  return kl_api_fail(c->msg, st, "%s", text);
}

static int ends(const char *s, const char *suf)
{
  const size_t a = strlen(s), b = strlen(suf);
  if (a < b) return 0;
  for (size_t i = 0; i < b; ++i) {
    char ch = s[a - b + i];
    if (ch >= 'A' && ch <= 'Z') ch = (char)(ch + 32);
    if (ch != suf[i]) return 0;
  }
  return 1;
}

/* a grinding config: the problem `kelvin optimise` would prepare */
static kelvin_status check_settings(kelvin_check *c, const char *file)
{
  c->kind = KELVIN_INPUT_GRIND;
  kelvin_grind *g = NULL;
  if (kelvin_grind_create(&g) != KELVIN_OK) return fail(c, KELVIN_ERR_NOMEM, "out of memory");
  kelvin_status st = kelvin_grind_load(g, file);
  if (st == KELVIN_OK) st = kelvin_grind_prepare(g);
  if (st != KELVIN_OK) {
    /* kelvin_grind_load and _prepare name the file (and the line of the setting) themselves */
    const char *m = kelvin_grind_errmsg(g);
    const size_t nf = strlen(file);
    if (strncmp(m, file, nf) == 0 && m[nf] == ':')
      kl_api_fail(c->msg, st, "%s", m);
    else
      kl_api_fail(c->msg, st, "%s: %s", file, m);
    kelvin_grind_free(g);
    return st;
  }
  const int nc = kelvin_grind_ncontrol(g), ns = kelvin_grind_nsamples(g);
  double *naive = malloc(sizeof(double) * (size_t)nc), *lo = malloc(sizeof(double) * (size_t)nc),
         *hi = malloc(sizeof(double) * (size_t)nc);
  kelvin_grind_contact_info ci;
  if (!naive || !lo || !hi || kelvin_grind_control(g, naive, NULL, lo, hi) != KELVIN_OK ||
      kelvin_grind_contact(g, &ci) != KELVIN_OK) {
    free(naive), free(lo), free(hi);
    kelvin_grind_free(g);
    return fail(c, KELVIN_ERR_NOMEM, "out of memory");
  }
  double v[9];
  static const char *const keys[] = {"offset.control_points", "speed.min", "speed.max", "speed.control_points",
                                     "tool.radius", "tool.mass", "holder.stiffness", "holder.damping", NULL};
  for (int i = 0; keys[i]; ++i) kelvin_grind_get(g, keys[i], &v[i]);
  const char *path = kelvin_grind_get_string(g, "path.csv"), *target = kelvin_grind_get_string(g, "target.csv"),
             *surface = kelvin_grind_get_string(g, "workpiece.surface");
  add(c, "%s: a grinding config (kelvin optimise / evaluate)\n", file);
  if (surface && strcmp(surface, "mesh") == 0) {
    double mlo[3], mhi[3];
    const int nt = kelvin_grind_mesh_bounds(g, mlo, mhi);
    add(c, "  mesh          %s: %d triangles, bounds [%.6g, %.6g] x [%.6g, %.6g] x [%.6g, %.6g] m\n",
        kelvin_grind_get_string(g, "workpiece.mesh"), nt, mlo[0], mhi[0], mlo[1], mhi[1], mlo[2], mhi[2]);
  }
  const double len = kelvin_grind_length(g);
  add(c, "  path          %s, %.6g m in %d samples (%.3g mm apart)\n", path && path[0] ? path : "plane cut", len, ns,
      1e3 * len / (ns - 1));
  add(c, "  target        %s, mean %.6g N\n", target && target[0] ? target : "constant", ci.force);
  add(c, "  offset bounds [%.6g, %.6g] m (naive offset %.6g m), %d control points\n", lo[0], hi[0], naive[0], (int)v[0]);
  add(c, "  speed bounds  [%.6g, %.6g] m/s, %d control points\n", v[1], v[2], (int)v[3]);
  add(c, "  tool          radius %.6g m, mass %.6g kg; holder %.6g N/m, %.6g N s/m\n", v[4], v[5], v[6], v[7]);
  /* the contact as the device model has it (kelvin_grind_contact): its compliance d(delta)/dF at the
   * mean target against the holder's 1/K */
  if (strcmp(ci.model, "kv") == 0) {
    add(c, "  contact       Kelvin-Voigt, K = %.6g N/m, cr %.3g, D %.6g N s/m\n", ci.K, ci.cr, ci.D);
  } else {
    char unit[32] = "N/m"; /* N/m^n, n = 1 for a disc's line contact */
    if (ci.n != 1.0) snprintf(unit, sizeof unit, "N/m^%g", ci.n);
    add(c, "  contact       Hunt-Crossley family, law %s, K = %.6g %s, cr %.3g, chi %.6g s/m\n", ci.law, ci.K, unit,
        ci.cr, ci.chi);
  }
  add(c, "  compliance    at %.6g N (static depth %.4g m): contact %.4g m/N, holder %.4g m/N: the contact's share is "
         "%.3g %%\n", ci.force, ci.depth, ci.compliance, ci.holder_compliance, 100.0 * ci.share);
  int nj = 0;
  const char *robot = kelvin_grind_robot(g, &nj);
  if (robot) add(c, "  robot         %s, %d joints\n", robot, nj);
  free(naive), free(lo), free(hi);
  kelvin_grind_free(g);
  return KELVIN_OK;
}

static kelvin_status check_sweep(kelvin_check *c, const char *file)
{
  c->kind = KELVIN_INPUT_SWEEP;
  kl_cfg *cfg = NULL;
  kl_sweep_spec s;
  if (kl_cfg_create(&cfg) != KELVIN_OK) return fail(c, KELVIN_ERR_NOMEM, "out of memory");
  if (kl_sweep_spec_default(&s) != 0) {
    kl_cfg_destroy(cfg);
    return fail(c, KELVIN_ERR_NOMEM, "out of memory");
  }
  kelvin_status st = kl_sweep_load_spec(cfg, file, &s);
  if (st != KELVIN_OK) {
    fail(c, st, kl_cfg_errmsg(cfg));
  } else if (s.scenarios[0]) {
    kl_impact_batch *b = NULL;
    if ((st = kl_sweep_load_csv(s.scenarios, s.samples, &b, c->msg, sizeof c->msg)) == KELVIN_OK)
      add(c, "%s: a sweep config: %zu scenarios from %s, %d samples each\n", file, b->P, s.scenarios, s.samples);
    kl_impact_batch_destroy(b);
  } else {
    const long P = kl_sweep_product_size(&s);
    if (P <= 0) {
      st = kl_api_fail(c->msg, KELVIN_ERR_CONFIG, "%s: the sweep is %s", file,
                       P < 0 ? "too large (more than 5e7 scenarios)" : "empty");
    } else {
      add(c, "%s: a sweep config: %ld scenarios (%d models, %d laws, %d rules; %d m, %d K, %d n, %d cr, %d v0, %d fe), "
             "%d samples each\n", file, P, s.nmodel, s.nlaw, s.nrule, s.nv[PM], s.nv[PK], s.nv[PN], s.nv[PCR], s.nv[PV0],
          s.nv[PFE], s.samples);
    }
  }
  kl_sweep_spec_free(&s);
  kl_cfg_destroy(cfg);
  return st;
}

static kelvin_status check_scene(kelvin_check *c, const char *file)
{
  c->kind = KELVIN_INPUT_SCENE;
  kl_scene sc;
  const kelvin_status st = kl_scene_load(file, &sc, c->msg, sizeof c->msg);
  if (st != KELVIN_OK) return st;
  add(c, "%s: a scene (kelvin simulate): %g s, output every %g s, %d bodies, %d shapes, %d meshes, contact %s\n", file,
      sc.duration, sc.output_step, sc.nbody, sc.model->nshape, sc.nmesh, sc.model->model == KL_MODEL_KV ? "kv" : sc.model->model == KL_MODEL_GEN ? "general" : "hc");
  for (int b = 0; b < sc.nbody; ++b)
    add(c, "  %-16s %s\n", sc.body_name[b],
        sc.model->body_type[b] == KL_BODY_STATIC    ? "static"
        : sc.model->body_type[b] == KL_BODY_DYNAMIC ? "dynamic"
                                                    : "kinematic");
  kl_scene_free(&sc);
  return KELVIN_OK;
}

/* a robot (YAML or URDF), as `kelvin robot` loads it */
static kelvin_status check_robot(kelvin_check *c, const char *file)
{
  c->kind = KELVIN_INPUT_ROBOT;
  kelvin_robot *r = NULL;
  if (kelvin_robot_create(&r) != KELVIN_OK) return fail(c, KELVIN_ERR_NOMEM, "out of memory");
  const kelvin_status st = kelvin_robot_load(r, file);
  if (st != KELVIN_OK) {
    fail(c, st, kelvin_robot_errmsg(r));
    kelvin_robot_free(r);
    return st;
  }
  double base[3];
  kelvin_robot_base(r, base, NULL);
  add(c, "%s: a robot: %s, %d revolute joints, moving mass %.6g kg, base (%g, %g, %g) m\n", file, kelvin_robot_name(r),
      kelvin_robot_joints(r), kelvin_robot_mass(r), base[0], base[1], base[2]);
  kelvin_robot_free(r);
  return KELVIN_OK;
}

static kelvin_status check_mesh(kelvin_check *c, const char *file)
{
  c->kind = KELVIN_INPUT_MESH;
  kl_mesh *m = NULL;
  const kelvin_status st = kl_mesh_load(file, 1.0, &m, c->msg, sizeof c->msg);
  if (st != KELVIN_OK) return st;
  double lo[3], hi[3];
  kl_mesh_bounds(m, lo, hi);
  add(c, "%s: a mesh: %d triangles, %d vertices, bounds [%.6g, %.6g] x [%.6g, %.6g] x [%.6g, %.6g] (file units)\n", file,
      kl_mesh_ntri(m), kl_mesh_nvert(m), lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]);
  kl_mesh_free(m);
  return KELVIN_OK;
}

/* the header names of a CSV, to tell which input it is */
typedef struct hdr {
  int path, target, pass, scen;
} hdr;
static kelvin_status sniff(void *ctx, const kl_csv_row *r, char *msg, int cap)
{
  (void)msg;
  (void)cap;
  hdr *h = ctx;
  int has[16] = {0};
  static const char *const nm[] = {"x", "x_m", "nx", "s", "s_m", "force", "force_N", "target_N", "offset", "offset_m",
                                   "speed", "speed_m_s", "model", "cr", NULL};
  for (int i = 0; i < r->n; ++i)
    for (int k = 0; nm[k]; ++k) has[k] |= strcmp(r->f[i], nm[k]) == 0;
  h->path = (has[0] || has[1]) && has[2];
  h->pass = (has[3] || has[4]) && (has[8] || has[9]) && (has[10] || has[11]);
  h->target = (has[3] || has[4]) && (has[5] || has[6] || has[7]) && !h->pass;
  h->scen = has[12] && has[13];
  return KELVIN_ERR_ARG; /* the header is all we need */
}

static kelvin_status check_csv(kelvin_check *c, const char *file)
{
  hdr h = {0, 0, 0, 0};
  kelvin_status st = kl_csv_parse_file(file, 0, sniff, &h, c->msg, sizeof c->msg);
  if (st != KELVIN_ERR_ARG) return st == KELVIN_OK ? KELVIN_ERR_CONFIG : st;
  c->msg[0] = '\0';
  int n = 0;
  st = KELVIN_OK;
  if (h.pass) {
    c->kind = KELVIN_INPUT_PASS;
    double *S = NULL, *O = NULL, *V = NULL;
    long *L = NULL;
    if ((st = kl_read_pass_csv(file, &n, &S, &O, &V, &L, c->msg, sizeof c->msg)) == KELVIN_OK)
      add(c, "%s: a pass (kelvin evaluate --pass): %d rows, s over [%.6g, %.6g] m\n", file, n, S[0], S[n - 1]);
    free(S), free(O), free(V), free(L);
  } else if (h.path) {
    c->kind = KELVIN_INPUT_PATH;
    double *P = NULL, *N = NULL;
    long *L = NULL;
    if ((st = kl_read_path_csv(file, 1e-3, &n, &P, &N, &L, c->msg, sizeof c->msg)) == KELVIN_OK)
      add(c, "%s: a path: %d points\n", file, n);
    free(P), free(N), free(L);
  } else if (h.target) {
    c->kind = KELVIN_INPUT_TARGET;
    double *S = NULL, *F = NULL;
    if ((st = kl_read_target_csv(file, &n, &S, &F, c->msg, sizeof c->msg)) == KELVIN_OK)
      add(c, "%s: a target force profile: %d rows, s over [%.6g, %.6g] m\n", file, n, S[0], S[n - 1]);
    free(S), free(F);
  } else if (h.scen) {
    c->kind = KELVIN_INPUT_SCENARIOS;
    kl_impact_batch *b = NULL;
    if ((st = kl_sweep_load_csv(file, 0, &b, c->msg, sizeof c->msg)) == KELVIN_OK)
      add(c, "%s: sweep scenarios: %zu rows\n", file, b->P);
    kl_impact_batch_destroy(b);
  } else {
    return kl_api_fail(c->msg, KELVIN_ERR_CONFIG,
                       "%s: the header names no kelvin input (path: x_m,y_m,z_m,nx,ny,nz; target: s_m,target_N; pass: "
                       "s_m,offset_m,speed_m_s; scenarios: m_kg,K,cr,v0_m_s,model)", file);
  }
  return st;
}

/* which YAML input: by the top-level keys */
static kelvin_status check_yaml(kelvin_check *c, const char *file)
{
  kl_cfg *cfg = NULL;
  if (kl_cfg_create(&cfg) != KELVIN_OK) return fail(c, KELVIN_ERR_NOMEM, "out of memory");
  const kelvin_status st = kl_cfg_load(cfg, file);
  if (st != KELVIN_OK) {
    fail(c, st, kl_cfg_errmsg(cfg));
    kl_cfg_destroy(cfg);
    return st;
  }
  const kl_cfg_node *r = kl_cfg_root(cfg);
  const int sweep = kl_cfg_get(r, "sweep") != NULL, scene = kl_cfg_get(r, "bodies") != NULL,
            robot = kl_cfg_get(r, "robot") != NULL && r->n == 1 && kl_cfg_get(kl_cfg_get(r, "robot"), "joints") != NULL;
  kl_cfg_destroy(cfg);
  if (sweep) return check_sweep(c, file);
  if (scene) return check_scene(c, file);
  if (robot) return check_robot(c, file);
  return check_settings(c, file);
}

kelvin_status kelvin_check_file(kelvin_check *c, const char *path)
{
  if (!c) return KELVIN_ERR_ARG;
  c->kind = KELVIN_INPUT_UNKNOWN;
  c->len = 0;
  c->nomem = 0;
  if (c->sum) c->sum[0] = '\0';
  c->msg[0] = '\0';
  if (!path) return kl_api_fail(c->msg, KELVIN_ERR_ARG, "kelvin_check_file: path is NULL");
  kelvin_status st;
  if (ends(path, ".urdf"))
    st = check_robot(c, path);
  else if (ends(path, ".stl") || ends(path, ".obj") || ends(path, ".ply"))
    st = check_mesh(c, path);
  else if (ends(path, ".csv"))
    st = check_csv(c, path);
  else
    st = check_yaml(c, path);
  if (st == KELVIN_OK && c->nomem) st = fail(c, KELVIN_ERR_NOMEM, "out of memory");
  if (st != KELVIN_OK) {
    c->len = 0;
    if (c->sum) c->sum[0] = '\0';
  }
  return st;
}
