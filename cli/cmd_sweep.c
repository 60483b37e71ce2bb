/* cli/cmd_sweep.c: `kelvin sweep [config.yaml]`: thousands of impact scenarios evaluated in one
 * batch (host/impact_batch.h) on the OpenCL device or the OpenMP twin; one CSV row per scenario, a
 * summary table and a figure of effective restitution and peak force against cr and impact speed for
 * each model and damping law (docs/design.md sections 2.3 and 4). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host/host.h"
#include "host/impact_batch.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "io/config.h"
#include "io/table.h"

#define MAXP 50000000L   /* scenarios per sweep: 50e6 rows are ~6 GB of inputs and outputs */
#define MAXN 1000000L    /* values per parameter */
#define MAXSAMPLES 10000 /* samples per scenario */

static const char *const model_names[] = {"kv", "hc", "ef", NULL};
static const char *const law_names[] = {"hunt-crossley", "lankarani-nikravesh", "flores", "gonthier", "exact", NULL};
static const char *const rule_names[] = {"penetration", "force", NULL};

//------- the sweep specification -------

/* The real parameters, their config keys and domains (kl_impact_check's, stated for people). */
enum { PM, PK, PN, PCR, PV0, PFE, NPAR };
typedef struct pdef {
  const char *key;
  double lo, hi;   /* domain: lo < v (or lo <= v if lo_closed), v <= hi (or v < hi if hi_open) */
  int lo_closed, hi_open;
  double def;      /* default (single value; cr and v0 default to the ranges of spec_default) */
  const char *defstr; /* the default as written in a config, for --help */
  const char *doc; /* what it is, for --help */
} pdef;
static const pdef pdefs[NPAR] = {
  {"m", 0.0, INFINITY, 0, 0, 1.0, "1", "effective mass [kg], > 0"},
  {"K", 0.0, INFINITY, 0, 0, 1e9, "1e9", "stiffness [N/m for kv, N/m^n for hc/ef], > 0"},
  {"n", 0.0, 10.0, 0, 1, 1.5, "1.5", "force exponent of hc/ef in (0, 10) (kv is linear, n = 1)"},
  {"cr", 0.0, 1.0, 0, 0, 0.5, "{min: 0.05, max: 1, n: 39}", "coefficient of restitution, in (0, 1]"},
  {"v0", 0.0, INFINITY, 0, 0, 1.0, "{min: 0.01, max: 10, n: 16, scale: log}", "impact speed [m/s], > 0"},
  {"fe", -INFINITY, INFINITY, 0, 0, 0.0, "0", "constant force pushing into the contact [N], kv only"},
};

typedef struct spec {
  int model[3], nmodel;
  int law[5], nlaw;
  int rule[2], nrule;
  double *v[NPAR]; /* values of each parameter (malloc'd) */
  int nv[NPAR];
  int given[NPAR + 4]; /* which keys the config gave: parameters, then model, law, rule, samples */
  int samples;         /* M */
  char scenarios[4096]; /* CSV of scenarios instead of the product ("" if none) */
} spec;

/* Free the value arrays of s. */
static void spec_free(spec *s)
{
  for (int i = 0; i < NPAR; ++i) free(s->v[i]);
}

/* One value v for parameter i. */
static int spec_single(spec *s, int i, double v)
{
  free(s->v[i]);
  s->v[i] = malloc(sizeof(double));
  if (!s->v[i]) return -1;
  s->v[i][0] = v;
  s->nv[i] = 1;
  return 0;
}

/* The built-in sweep (no config): every model, law and rule; m = 1 kg, K = 1e9, n = 3/2, cr over
 * 0.05 ... 1 (39 values), v0 over 0.01 ... 10 m/s (16, log-spaced): 8 variants x 624 = 4992 scenarios. */
static int spec_default(spec *s)
{
  memset(s, 0, sizeof *s);
  for (int i = 0; i < 3; ++i) s->model[i] = i;
  for (int i = 0; i < 5; ++i) s->law[i] = i;
  s->rule[0] = 0;
  s->rule[1] = 1;
  s->nmodel = 3;
  s->nlaw = 5;
  s->nrule = 2;
  for (int i = 0; i < NPAR; ++i)
    if (spec_single(s, i, pdefs[i].def) != 0) return -1;
  free(s->v[PCR]);
  free(s->v[PV0]);
  s->v[PCR] = malloc(39 * sizeof(double));
  s->v[PV0] = malloc(16 * sizeof(double));
  if (!s->v[PCR] || !s->v[PV0]) return -1;
  for (int i = 0; i < 39; ++i) s->v[PCR][i] = 0.05 + 0.025 * i;
  s->v[PCR][38] = 1.0;
  for (int i = 0; i < 16; ++i) s->v[PV0][i] = 0.01 * pow(1000.0, i / 15.0);
  s->v[PV0][15] = 10.0;
  s->nv[PCR] = 39;
  s->nv[PV0] = 16;
  return 0;
}

//------- config -------

/* Check v against parameter i's domain; field names it in the message. */
static kelvin_status domain(kl_cfg *c, const kl_cfg_node *node, const char *field, int i, double v)
{
  const pdef *d = &pdefs[i];
  if (d->lo_closed ? !(v >= d->lo) : !(v > d->lo))
    return kl_cfg_fail(c, node, field, "must be %s %g, got %g", d->lo_closed ? ">=" : ">", d->lo, v);
  if (d->hi_open ? !(v < d->hi) : !(v <= d->hi))
    return kl_cfg_fail(c, node, field, "must be %s %g, got %g", d->hi_open ? "<" : "<=", d->hi, v);
  return KELVIN_OK;
}

/* Parameter i from a number, a list of numbers or a range {min, max, n, scale: lin|log}. */
static kelvin_status parse_param(kl_cfg *c, const kl_cfg_node *node, int i, spec *s)
{
  static const char *const range_keys[] = {"min", "max", "n", "scale", NULL};
  static const char *const scales[] = {"lin", "log", NULL};
  char field[64], sub[96];
  snprintf(field, sizeof field, "sweep.%s", pdefs[i].key);
  kelvin_status st = KELVIN_OK;
  double *v = NULL;
  int n = 0;
  if (node->type == KL_CFG_SCALAR) {
    double x;
    if ((st = kl_cfg_number(c, node, field, &x)) != KELVIN_OK) return st;
    if ((st = domain(c, node, field, i, x)) != KELVIN_OK) return st;
    return spec_single(s, i, x) == 0 ? KELVIN_OK : KELVIN_ERR_NOMEM;
  }
  if (node->type == KL_CFG_SEQ) {
    if (node->n == 0) return kl_cfg_fail(c, node, field, "the list is empty");
    v = malloc(sizeof(double) * (size_t)node->n);
    if (!v) return KELVIN_ERR_NOMEM;
    for (int k = 0; k < node->n; ++k) {
      snprintf(sub, sizeof sub, "%s[%d]", field, k);
      if ((st = kl_cfg_number(c, node->items[k], sub, &v[k])) != KELVIN_OK) goto fail;
      if ((st = domain(c, node->items[k], sub, i, v[k])) != KELVIN_OK) goto fail;
    }
    n = node->n;
  } else {
    if ((st = kl_cfg_keys(c, node, field, range_keys)) != KELVIN_OK) return st;
    const kl_cfg_node *nmin = kl_cfg_get(node, "min"), *nmax = kl_cfg_get(node, "max"), *nn = kl_cfg_get(node, "n"),
                      *nsc = kl_cfg_get(node, "scale");
    if (!nmin || !nmax || !nn)
      return kl_cfg_fail(c, node, field, "a range needs min, max and n (and optionally scale: lin|log)");
    double lo, hi;
    long cnt;
    int scale = 0;
    snprintf(sub, sizeof sub, "%s.min", field);
    if ((st = kl_cfg_number(c, nmin, sub, &lo)) != KELVIN_OK || (st = domain(c, nmin, sub, i, lo)) != KELVIN_OK) return st;
    snprintf(sub, sizeof sub, "%s.max", field);
    if ((st = kl_cfg_number(c, nmax, sub, &hi)) != KELVIN_OK || (st = domain(c, nmax, sub, i, hi)) != KELVIN_OK) return st;
    snprintf(sub, sizeof sub, "%s.n", field);
    if ((st = kl_cfg_long(c, nn, sub, 1, MAXN, &cnt)) != KELVIN_OK) return st;
    snprintf(sub, sizeof sub, "%s.scale", field);
    if (nsc && (st = kl_cfg_choice(c, nsc, sub, scales, &scale)) != KELVIN_OK) return st;
    if (lo > hi) return kl_cfg_fail(c, nmin, field, "min (%g) must be <= max (%g)", lo, hi);
    if (cnt == 1 && lo != hi) return kl_cfg_fail(c, nn, sub, "must be >= 2 when min < max, got 1");
    if (scale == 1 && !(lo > 0.0)) {
      snprintf(sub, sizeof sub, "%s.min", field);
      return kl_cfg_fail(c, nmin, sub, "must be > 0 for scale: log, got %g", lo);
    }
    n = (int)cnt;
    v = malloc(sizeof(double) * (size_t)n);
    if (!v) return KELVIN_ERR_NOMEM;
    for (int k = 0; k < n; ++k) {
      const double f = n > 1 ? (double)k / (double)(n - 1) : 0.0;
      v[k] = scale ? lo * pow(hi / lo, f) : lo + (hi - lo) * f;
    }
    v[n - 1] = hi; /* the end points exactly as written */
    v[0] = lo;
  }
  free(s->v[i]);
  s->v[i] = v;
  s->nv[i] = n;
  return KELVIN_OK;
fail:
  free(v);
  return st;
}

/* A list (or one) of names into out[], at most cap distinct entries. */
static kelvin_status parse_names(kl_cfg *c, const kl_cfg_node *node, const char *field, const char *const *names,
                                 int *out, int cap, int *n)
{
  char sub[96];
  kelvin_status st;
  *n = 0;
  if (node->type == KL_CFG_SCALAR) {
    if ((st = kl_cfg_choice(c, node, field, names, &out[0])) != KELVIN_OK) return st;
    *n = 1;
    return KELVIN_OK;
  }
  if (node->type != KL_CFG_SEQ || node->n == 0)
    return kl_cfg_fail(c, node, field, "must be a name or a non-empty list of names");
  for (int k = 0; k < node->n; ++k) {
    int idx;
    snprintf(sub, sizeof sub, "%s[%d]", field, k);
    if ((st = kl_cfg_choice(c, node->items[k], sub, names, &idx)) != KELVIN_OK) return st;
    for (int j = 0; j < *n; ++j)
      if (out[j] == idx) return kl_cfg_fail(c, node->items[k], sub, "'%s' is listed twice", names[idx]);
    if (*n >= cap) return kl_cfg_fail(c, node, field, "too many entries");
    out[(*n)++] = idx;
  }
  return KELVIN_OK;
}

/* Directory part of path ("." if none, "/" for a file in the root) into buf. */
static void dirname_of(const char *path, char *buf, size_t cap)
{
  const char *slash = strrchr(path, '/');
  if (!slash)
    snprintf(buf, cap, ".");
  else
    snprintf(buf, cap, "%.*s", (int)(slash - path ? slash - path : 1), path);
}

/* Fill s from the config file: the defaults of spec_default, overridden by the keys under `sweep:`. */
static kelvin_status load_spec(kl_cfg *c, const char *path, spec *s)
{
  static const char *const top_keys[] = {"sweep", NULL};
  static const char *const keys[] = {"model", "law", "rule", "m", "K", "n", "cr", "v0", "fe", "samples", "scenarios", NULL};
  kelvin_status st = kl_cfg_load(c, path);
  if (st != KELVIN_OK) return st;
  const kl_cfg_node *root = kl_cfg_root(c);
  if ((st = kl_cfg_keys(c, root, "(top level)", top_keys)) != KELVIN_OK) return st;
  const kl_cfg_node *sw = kl_cfg_get(root, "sweep");
  if (!sw) return kl_cfg_fail(c, root, "sweep", "missing (the file must have a 'sweep:' mapping)");
  if ((st = kl_cfg_keys(c, sw, "sweep", keys)) != KELVIN_OK) return st;
  const kl_cfg_node *nd;
  if ((nd = kl_cfg_get(sw, "model")) && (st = parse_names(c, nd, "sweep.model", model_names, s->model, 3, &s->nmodel)))
    return st;
  s->given[NPAR + 0] = nd != NULL;
  if ((nd = kl_cfg_get(sw, "law")) && (st = parse_names(c, nd, "sweep.law", law_names, s->law, 5, &s->nlaw))) return st;
  s->given[NPAR + 1] = nd != NULL;
  if ((nd = kl_cfg_get(sw, "rule")) && (st = parse_names(c, nd, "sweep.rule", rule_names, s->rule, 2, &s->nrule)))
    return st;
  s->given[NPAR + 2] = nd != NULL;
  for (int i = 0; i < NPAR; ++i) {
    if (!(nd = kl_cfg_get(sw, pdefs[i].key))) continue;
    s->given[i] = 1;
    if ((st = parse_param(c, nd, i, s)) != KELVIN_OK) return st;
  }
  long M = 0;
  if ((nd = kl_cfg_get(sw, "samples"))) {
    if ((st = kl_cfg_long(c, nd, "sweep.samples", 0, MAXSAMPLES, &M)) != KELVIN_OK) return st;
    s->given[NPAR + 3] = 1;
  }
  s->samples = (int)M;
  if ((nd = kl_cfg_get(sw, "scenarios"))) {
    if (nd->type != KL_CFG_SCALAR || !nd->value[0])
      return kl_cfg_fail(c, nd, "sweep.scenarios", "must be the path of a CSV file");
    for (int i = 0; i < NPAR + 3; ++i)
      if (s->given[i]) {
        const char *k = i < NPAR ? pdefs[i].key : (i == NPAR ? "model" : i == NPAR + 1 ? "law" : "rule");
        char f[64];
        snprintf(f, sizeof f, "sweep.%s", k);
        return kl_cfg_fail(c, kl_cfg_get(sw, k), f,
                           "cannot be combined with sweep.scenarios (the CSV file gives every parameter)");
      }
    char dir[4096];
    dirname_of(path, dir, sizeof dir);
    const int len = (nd->value[0] == '/' || !strchr(path, '/'))
                      ? snprintf(s->scenarios, sizeof s->scenarios, "%s", nd->value)
                      : snprintf(s->scenarios, sizeof s->scenarios, "%s/%s", dir, nd->value);
    if (len < 0 || (size_t)len >= sizeof s->scenarios)
      return kl_cfg_fail(c, nd, "sweep.scenarios", "path too long");
    return KELVIN_OK;
  }
  /* keys that only some models use must meet one of them */
  int has[3] = {0, 0, 0};
  for (int k = 0; k < s->nmodel; ++k) has[s->model[k]] = 1;
  if (s->given[NPAR + 1] && !has[1])
    return kl_cfg_fail(c, kl_cfg_get(sw, "law"), "sweep.law", "applies to model hc only, and sweep.model has no hc");
  if (s->given[NPAR + 2] && !has[0])
    return kl_cfg_fail(c, kl_cfg_get(sw, "rule"), "sweep.rule", "applies to model kv only, and sweep.model has no kv");
  if (s->given[PN] && !has[1] && !has[2])
    return kl_cfg_fail(c, kl_cfg_get(sw, "n"), "sweep.n", "applies to models hc and ef only (kv is linear)");
  if (s->given[PFE] && !has[0])
    return kl_cfg_fail(c, kl_cfg_get(sw, "fe"), "sweep.fe",
                       "applies to model kv only (the nonlinear models have no closed form under a force)");
  return KELVIN_OK;
}

//------- scenarios -------

/* Rows of the cartesian product; -1 if above MAXP. Kelvin-Voigt rows run over rules and fe with
 * n = 1; Hunt-Crossley rows over laws and n with fe = 0; Emden-Fowler rows over n. */
static long product_size(const spec *s)
{
  double tot = 0.0;
  const double base = (double)s->nv[PM] * s->nv[PK] * s->nv[PCR] * s->nv[PV0];
  for (int k = 0; k < s->nmodel; ++k) {
    if (s->model[k] == KL_MODEL_KV) tot += base * s->nrule * s->nv[PFE];
    if (s->model[k] == KL_MODEL_HC) tot += base * s->nlaw * s->nv[PN];
    if (s->model[k] == KL_MODEL_EF) tot += base * s->nv[PN];
  }
  return tot > (double)MAXP ? -1 : (long)tot;
}

/* Fill b with the product, in the order model, law/rule, m, K, n/fe, v0, cr (cr fastest). */
static void fill_product(const spec *s, kl_impact_batch *b)
{
  size_t p = 0;
  for (int k = 0; k < s->nmodel; ++k) {
    const int model = s->model[k];
    const int nvar = model == KL_MODEL_KV ? s->nrule : model == KL_MODEL_HC ? s->nlaw : 1;
    const int nextra = model == KL_MODEL_KV ? s->nv[PFE] : s->nv[PN];
    for (int var = 0; var < nvar; ++var)
      for (int im = 0; im < s->nv[PM]; ++im)
        for (int iK = 0; iK < s->nv[PK]; ++iK)
          for (int ix = 0; ix < nextra; ++ix)
            for (int iv = 0; iv < s->nv[PV0]; ++iv)
              for (int ic = 0; ic < s->nv[PCR]; ++ic) {
                kl_impact_in in;
                in.model = model;
                in.law = model == KL_MODEL_HC ? s->law[var] : KL_LAW_EXACT;
                in.rule = model == KL_MODEL_KV ? s->rule[var] : KL_SEP_PENETRATION;
                in.m = s->v[PM][im];
                in.K = s->v[PK][iK];
                in.n = model == KL_MODEL_KV ? 1.0 : s->v[PN][ix];
                in.fe = model == KL_MODEL_KV ? s->v[PFE][ix] : 0.0;
                in.v0 = s->v[PV0][iv];
                in.cr = s->v[PCR][ic];
                kl_impact_batch_set(b, p++, in);
              }
  }
}

/* Scenario columns: the names of sweep.csv (with units) and the short ones. */
enum { CM, CK, CN, CCR, CV0, CFE, CMODEL, CLAW, CRULE, NCOL };
static const char *const CN_M[] = {"m_kg", "m", NULL}, *const CN_K[] = {"K", NULL}, *const CN_N[] = {"n", NULL},
                         *const CN_CR[] = {"cr", NULL}, *const CN_V0[] = {"v0_m_s", "v0", NULL},
                         *const CN_FE[] = {"fe_N", "fe", NULL}, *const CN_MODEL[] = {"model", NULL},
                         *const CN_LAW[] = {"law", NULL}, *const CN_RULE[] = {"rule", NULL};

typedef struct scen_ctx {
  const char *file;
  kl_csv_col col[NCOL];
  kl_impact_in *rows;
  size_t n, cap;
} scen_ctx;

/* One scenario row (io/table.h does the CSV); '-' in an optional column means "not given". */
static kelvin_status scen_row(void *vp, const kl_csv_row *r, char *msg, int cap)
{
  scen_ctx *c = vp;
  static const int pidx[6] = {PM, PK, PN, PCR, PV0, PFE};
  if (r->index == 0) return kl_csv_columns(c->file, r, c->col, NCOL, msg, cap);
  double vals[6] = {0};
  int ints[3] = {0, KL_LAW_EXACT, KL_SEP_PENETRATION};
  for (int k = CMODEL; k <= CRULE; ++k) {
    const char *const *names = k == CMODEL ? model_names : k == CLAW ? law_names : rule_names;
    if (c->col[k].idx < 0) continue;
    const char *v = r->f[c->col[k].idx];
    if (k != CMODEL && strcmp(v, "-") == 0) continue;
    int idx = -1;
    for (int j = 0; names[j] && idx < 0; ++j)
      if (strcmp(v, names[j]) == 0) idx = j;
    if (idx < 0) {
      char list[256] = "";
      for (int j = 0; names[j]; ++j) {
        if (j) strncat(list, ", ", sizeof list - strlen(list) - 1);
        strncat(list, names[j], sizeof list - strlen(list) - 1);
      }
      snprintf(msg, (size_t)cap, "%s:%ld: column '%s': must be one of %s%s, got '%.60s'", c->file, r->line,
               c->col[k].names[c->col[k].which], list, k == CMODEL ? "" : " or -", v);
      return KELVIN_ERR_CONFIG;
    }
    ints[k - CMODEL] = idx;
  }
  vals[CN] = ints[0] == KL_MODEL_KV ? 1.0 : 1.5;
  for (int k = CM; k <= CFE; ++k) {
    if (c->col[k].idx < 0) continue;
    if (!c->col[k].required && strcmp(r->f[c->col[k].idx], "-") == 0) continue;
    double x;
    const kelvin_status st = kl_csv_number(c->file, r, &c->col[k], &x, msg, cap);
    if (st != KELVIN_OK) return st;
    const pdef *d = &pdefs[pidx[k]];
    if (d->lo_closed ? !(x >= d->lo) : !(x > d->lo)) {
      snprintf(msg, (size_t)cap, "%s:%ld: column '%s': must be %s %g, got %g", c->file, r->line, c->col[k].names[c->col[k].which],
               d->lo_closed ? ">=" : ">", d->lo, x);
      return KELVIN_ERR_CONFIG;
    }
    if (d->hi_open ? !(x < d->hi) : !(x <= d->hi)) {
      snprintf(msg, (size_t)cap, "%s:%ld: column '%s': must be %s %g, got %g", c->file, r->line, c->col[k].names[c->col[k].which],
               d->hi_open ? "<" : "<=", d->hi, x);
      return KELVIN_ERR_CONFIG;
    }
    vals[k] = x;
  }
  kl_impact_in in = {0};
  in.m = vals[CM];
  in.K = vals[CK];
  in.n = vals[CN];
  in.cr = vals[CCR];
  in.v0 = vals[CV0];
  in.fe = vals[CFE];
  in.model = ints[0];
  in.law = ints[1];
  in.rule = ints[2];
  if (in.model == KL_MODEL_KV && in.n != 1.0) {
    snprintf(msg, (size_t)cap, "%s:%ld: column 'n': model kv is linear: n must be 1 (or -), got %g", c->file, r->line, in.n);
    return KELVIN_ERR_CONFIG;
  }
  if (in.model != KL_MODEL_KV && in.fe != 0.0) {
    snprintf(msg, (size_t)cap, "%s:%ld: column 'fe_N': model %s has no closed form under an external force: fe must be 0",
             c->file, r->line, model_names[in.model]);
    return KELVIN_ERR_CONFIG;
  }
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 1024;
    kl_impact_in *nr = realloc(c->rows, c->cap * sizeof *nr);
    if (!nr) {
      snprintf(msg, (size_t)cap, "out of memory reading '%s'", c->file);
      return KELVIN_ERR_NOMEM;
    }
    c->rows = nr;
  }
  c->rows[c->n++] = in;
  return KELVIN_OK;
}

/* Scenarios from a CSV file with a header row. Required columns m_kg (or m), K, cr, v0_m_s (or v0),
 * model; optional n (default 1 for kv, 1.5 otherwise), fe_N (0), law (exact), rule (penetration), '-'
 * for "not given"; other columns are ignored, so a sweep.csv can be fed back. Returns KELVIN_OK,
 * KELVIN_ERR_IO or KELVIN_ERR_CONFIG with a message naming file, line and column. */
static kelvin_status load_csv(const char *path, int M, kl_impact_batch **out, char *msg, size_t cap)
{
  *out = NULL;
  scen_ctx c = {path,
                {{CN_M, 1, -1, 0}, {CN_K, 1, -1, 0}, {CN_N, 0, -1, 0}, {CN_CR, 1, -1, 0}, {CN_V0, 1, -1, 0}, {CN_FE, 0, -1, 0},
                 {CN_MODEL, 1, -1, 0}, {CN_LAW, 0, -1, 0}, {CN_RULE, 0, -1, 0}},
                NULL, 0, 0};
  kelvin_status st = kl_csv_parse_file(path, MAXP, scen_row, &c, msg, (int)cap);
  if (st == KELVIN_OK && c.n == 0) {
    snprintf(msg, cap, "%s: no scenarios (expected a header row and at least one data row)", path);
    st = KELVIN_ERR_CONFIG;
  }
  if (st == KELVIN_OK) {
    st = kl_impact_batch_create(c.n, M, out);
    if (st != KELVIN_OK)
      snprintf(msg, cap, "out of memory for %zu scenarios", c.n);
    else
      for (size_t p = 0; p < c.n; ++p) kl_impact_batch_set(*out, p, c.rows[p]);
  }
  free(c.rows);
  return st;
}

//------- output -------

/* "ok" or the names of the status bits joined by '|' into buf. */
static const char *status_text(int st, char *buf, size_t cap)
{
  static const char *const bits[] = {"bad_mass", "bad_stiffness", "bad_cr",   "bad_speed",     "bad_exponent",
                                     "bad_law",  "no_converge",   "bad_input", "no_separation", "unsupported"};
  if (st == KL_OK) return "ok";
  buf[0] = '\0';
  for (int i = 0; i < 10; ++i)
    if (st & (1 << i)) {
      if (buf[0]) strncat(buf, "|", cap - strlen(buf) - 1);
      strncat(buf, bits[i], cap - strlen(buf) - 1);
    }
  return buf;
}

#define NVARIANT 8
/* Variant of a row: 0-1 kv rules, 2-6 hc laws, 7 ef. */
static int variant(kl_impact_in in)
{
  if (in.model == KL_MODEL_KV) return in.rule;
  if (in.model == KL_MODEL_HC) return 2 + in.law;
  return 7;
}
static const char *const variant_names[NVARIANT] = {"kv/penetration", "kv/force",          "hc/hunt-crossley",
                                                     "hc/lankarani-nikravesh", "hc/flores", "hc/gonthier",
                                                     "hc/exact",       "ef"};

/* Peak force of the undamped impact with the same m, K, n, v0: K d0^n with d0^{n+1} = (n+1) m v0^2/(2K)
 * (v0 sqrt(K m) for n = 1): the scale that makes peak forces of different speeds comparable. */
static double undamped_peak(kl_impact_in in)
{
  return in.K * pow((in.n + 1.0) * in.m * in.v0 * in.v0 / (2.0 * in.K), in.n / (in.n + 1.0));
}

/* sweep.csv: one row per scenario, inputs, metrics and status, full precision. */
static int write_csv(const kl_cli_common *c, const kl_impact_batch *b)
{
  kl_out o;
  if (kl_out_open(&o, c->out, "sweep.csv") != 0) return -1;
  fprintf(o.f, "id,model,law,rule,m_kg,K,n,cr,v0_m_s,fe_N,dmax_m,tmax_s,fpeak_N,tc_s,cr_eff,ediss,damp,status,status_text\n");
  const size_t P = b->P;
  char sbuf[256];
  for (size_t p = 0; p < P; ++p) {
    const kl_impact_in in = kl_impact_batch_get(b, p);
    const int okm = in.model >= 0 && in.model < 3;
    fprintf(o.f, "%zu,%s,%s,%s,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g", p, okm ? model_names[in.model] : "?",
            in.model == KL_MODEL_HC ? law_names[in.law] : "-", in.model == KL_MODEL_KV ? rule_names[in.rule] : "-",
            in.m, in.K, in.n, in.cr, in.v0, in.fe);
    for (int k = 0; k < KL_NOUT; ++k) fprintf(o.f, ",%.17g", b->y[(size_t)k * P + p]);
    fprintf(o.f, ",%d,%s\n", b->status[p], status_text(b->status[p], sbuf, sizeof sbuf));
  }
  return kl_out_commit(&o);
}

/* samples.csv: id, j, abscissa (time [s] for kv, phase in [0, 2] otherwise), penetration, force. */
static int write_samples(const kl_cli_common *c, const kl_impact_batch *b)
{
  kl_out o;
  if (kl_out_open(&o, c->out, "samples.csv") != 0) return -1;
  fprintf(o.f, "id,j,s,delta,F\n");
  const size_t P = b->P, M = (size_t)b->M;
  for (size_t p = 0; p < P; ++p)
    for (size_t j = 0; j < M; ++j)
      fprintf(o.f, "%zu,%zu,%.17g,%.17g,%.17g\n", p, j, b->smp[(KL_SMP_S * M + j) * P + p],
              b->smp[(KL_SMP_D * M + j) * P + p], b->smp[(KL_SMP_F * M + j) * P + p]);
  return kl_out_commit(&o);
}

static const kl_impact_batch *sort_b; /* the batch by_variant sorts rows of */
/* Row order for the figure: by variant, then v0, then cr. */
static int by_variant(const void *a, const void *b)
{
  const kl_impact_in x = kl_impact_batch_get(sort_b, *(const size_t *)a), y = kl_impact_batch_get(sort_b, *(const size_t *)b);
  const int vx = variant(x), vy = variant(y);
  if (vx != vy) return vx < vy ? -1 : 1;
  if (x.v0 != y.v0) return x.v0 < y.v0 ? -1 : 1;
  if (x.cr != y.cr) return x.cr < y.cr ? -1 : 1;
  return 0;
}

/* figure.dat (one gnuplot block per variant: cr, cr_eff, fpeak/F0, v0, fpeak) and sweep.png:
 * (a) effective vs nominal restitution, (b) peak force over the undamped one against cr, (c) peak force
 * against impact speed at the cr nearest 0.5. Returns kl_cli_gnuplot's code, -1 on write errors. */
static int write_figure(const kl_cli_common *c, const kl_impact_batch *b)
{
  const size_t P = b->P;
  size_t *idx = malloc(P * sizeof *idx);
  if (!idx) {
    kl_cli_error("out of memory drawing the figure");
    return -1;
  }
  size_t n = 0;
  double crsel = -1.0;
  for (size_t p = 0; p < P; ++p)
    if (b->status[p] == KL_OK) {
      idx[n++] = p;
      const double cr = b->x[KL_IN_CR * P + p];
      if (crsel < 0 || fabs(cr - 0.5) < fabs(crsel - 0.5)) crsel = cr;
    }
  sort_b = b;
  qsort(idx, n, sizeof *idx, by_variant);
  kl_out o;
  if (kl_out_open(&o, c->out, "figure.dat") != 0) {
    free(idx);
    return -1;
  }
  fprintf(o.f, "# kelvin sweep: blocks by variant; columns cr cr_eff fpeak/F0 v0 fpeak on_cr_slice\n");
  char titles[512] = "";
  int nblk = 0;
  for (int v = 0; v < NVARIANT; ++v) {
    int any = 0;
    for (size_t i = 0; i < n; ++i) {
      const kl_impact_in in = kl_impact_batch_get(b, idx[i]);
      if (variant(in) != v) continue;
      if (!any) fprintf(o.f, "%s# %s\n", nblk ? "\n\n" : "", variant_names[v]);
      any = 1;
      const double fp = b->y[KL_OUT_FPEAK * P + idx[i]];
      fprintf(o.f, "%.10g %.10g %.10g %.10g %.10g %d\n", in.cr, b->y[KL_OUT_CREFF * P + idx[i]], fp / undamped_peak(in),
              in.v0, fp, in.cr == crsel);
    }
    if (any) {
      strncat(titles, variant_names[v], sizeof titles - strlen(titles) - 2);
      strncat(titles, " ", sizeof titles - strlen(titles) - 1);
      ++nblk;
    }
  }
  free(idx);
  if (kl_out_commit(&o) != 0) return -1;
  if (nblk == 0) {
    kl_cli_note(c, "no scenario without a status: no figure");
    return 1;
  }
  char script[4096];
  snprintf(script, sizeof script,
           "# kelvin sweep figure; data in figure.dat (one block per model/law)\n"
           "if (!exists('OUTPUT')) OUTPUT = 'sweep.png'\n"
           "set terminal pngcairo size 1800,560 font ',11'\nset output OUTPUT\n"
           "titles = '%s'\nN = %d\n"
           "set multiplot layout 1,3 title 'kelvin sweep: impact metrics by contact model and damping law'\n"
           "set key left top font ',9'\nset grid\n"
           "set xlabel 'nominal coefficient of restitution c_r'\nset ylabel 'effective restitution v_{out}/v_0'\n"
           "set title '(a) restitution actually reached (all speeds)'\n"
           "plot for [i=0:N-1] 'figure.dat' index i using 1:2 with points pt 7 ps 0.5 title word(titles, i+1), "
           "x with lines dt 2 lc 'black' title 'c_{r,eff} = c_r'\n"
           "set ylabel 'peak force / undamped peak force'\n"
           "set title '(b) peak force over the undamped impact (all speeds)'\n"
           "plot for [i=0:N-1] 'figure.dat' index i using 1:3 with points pt 7 ps 0.5 title word(titles, i+1)\n"
           "set logscale xy\nset key left top\n"
           "set xlabel 'impact speed v_0 [m/s]'\nset ylabel 'peak force [N]'\n"
           "set title sprintf('(c) peak force against impact speed, c_r = %%.3g', %.17g)\n"
           "plot for [i=0:N-1] 'figure.dat' index i using ($6 == 1 ? $4 : 1/0):5 with linespoints pt 7 ps 0.5 "
           "title word(titles, i+1)\n"
           "unset multiplot\n",
           titles, nblk, crsel);
  return kl_cli_gnuplot(c, c->out, "sweep.png", script);
}

/* Summary table on stdout: per variant, rows, flagged rows, and ranges of cr_eff and fpeak/F0. */
static void summary(const kl_impact_batch *b)
{
  size_t rows[NVARIANT] = {0}, flagged[NVARIANT] = {0}, other = 0;
  double lo[NVARIANT][2], hi[NVARIANT][2];
  for (int v = 0; v < NVARIANT; ++v) lo[v][0] = lo[v][1] = INFINITY, hi[v][0] = hi[v][1] = -INFINITY;
  const size_t P = b->P;
  for (size_t p = 0; p < P; ++p) {
    const kl_impact_in in = kl_impact_batch_get(b, p);
    if (in.model < 0 || in.model > 2 || in.law < 0 || in.law >= KL_NLAWS || in.rule < 0 || in.rule > 1) {
      ++other;
      continue;
    }
    const int v = variant(in);
    ++rows[v];
    if (b->status[p] != KL_OK) {
      ++flagged[v];
      continue;
    }
    const double q[2] = {b->y[KL_OUT_CREFF * P + p], b->y[KL_OUT_FPEAK * P + p] / undamped_peak(in)};
    for (int k = 0; k < 2; ++k) {
      if (q[k] < lo[v][k]) lo[v][k] = q[k];
      if (q[k] > hi[v][k]) hi[v][k] = q[k];
    }
  }
  printf("%-24s %10s %8s %21s %21s\n", "model/law", "scenarios", "flagged", "cr_eff range", "fpeak/F0 range");
  for (int v = 0; v < NVARIANT; ++v) {
    if (!rows[v]) continue;
    if (flagged[v] == rows[v])
      printf("%-24s %10zu %8zu %21s %21s\n", variant_names[v], rows[v], flagged[v], "-", "-");
    else
      printf("%-24s %10zu %8zu %10.4g .. %-8.4g %10.4g .. %-8.4g\n", variant_names[v], rows[v], flagged[v], lo[v][0],
             hi[v][0], lo[v][1], hi[v][1]);
  }
  if (other) printf("%-24s %10zu\n", "(invalid codes)", other);
  printf("F0: peak force of the undamped impact at the same m, K, n, v0.\n");
}

//------- command -------

typedef struct progress_ctx {
  const kl_cli_common *c;
  double t0, last;
  int printed;
} progress_ctx;

/* Seconds on a monotonic clock. */
static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Progress on stderr, at most once a second, for runs that last longer than that. */
static void progress(void *ctx, size_t done, size_t total)
{
  progress_ctx *pc = ctx;
  const double t = now();
  if (done < total && t - pc->last < 1.0) return;
  if (done == total && !pc->printed) return;
  pc->last = t;
  pc->printed = 1;
  const double el = t - pc->t0;
  const double eta = done ? el * (double)(total - done) / (double)done : 0.0;
  kl_cli_note(pc->c, "sweep: %5.1f%% (%zu of %zu scenarios), %.0f s elapsed, ~%.0f s left", 100.0 * (double)done / (double)total,
              done, total, el, eta);
}

/* --help text on stdout. */
static void help(void)
{
  printf("usage: kelvin sweep [options] [config.yaml]\n\n"
         "Evaluate many impact scenarios at once: maximum penetration, time to it, peak force, contact time,\n"
         "effective restitution, dissipated energy fraction and damping, for the Kelvin-Voigt model (paper\n"
         "eq. 1-10), the Hunt-Crossley family with five damping laws (Hunt-Crossley 1975, Lankarani-Nikravesh\n"
         "1990, Flores et al. 2011, Gonthier et al. 2004, exact) and the paper's Emden-Fowler form (eq. 11-13).\n"
         "Runs on an OpenCL device (kernels/impact.cl) or, with --cpu or when none exists, on the host with\n"
         "OpenMP; both evaluate the same closed forms. Without a config, a built-in sweep of 4992 scenarios.\n\n"
         "options:\n"
         "  --out DIR       output folder [kelvin-out/sweep]\n"
         "  --cpu           run the OpenMP twin on the host, not OpenCL\n"
         "  --device SPEC   OpenCL device: PLATFORM:DEVICE (e.g. 0:1), gpu, cpu, or part of its name\n"
         "                  [env var KELVIN_DEVICE; default: the first GPU with double precision, else the\n"
         "                  first device with it; see 'kelvin devices']\n"
         "  --quiet         no progress, notices or summary table\n"
         "  --help          this text\n\n"
         "config (YAML; every key optional, unknown keys are errors):\n"
         "  sweep:\n"
         "    model: [kv, hc, ef]        models (kv Kelvin-Voigt, hc Hunt-Crossley, ef Emden-Fowler)\n"
         "    law: [hunt-crossley, lankarani-nikravesh, flores, gonthier, exact]   hc damping laws\n"
         "    rule: [penetration, force] kv separation rules (contact ends at d = 0 / at zero force)\n");
  for (int i = 0; i < NPAR; ++i) {
    char kv[80];
    snprintf(kv, sizeof kv, "%s: %s", pdefs[i].key, pdefs[i].defstr);
    if (strlen(kv) <= 26)
      printf("    %-26s %s\n", kv, pdefs[i].doc);
    else
      printf("    %s\n    %-26s %s\n", kv, "", pdefs[i].doc);
  }
  printf("    samples: 0                 force and penetration samples per scenario (samples.csv): kv at\n"
         "                               equal times over the contact, hc/ef at equal phase steps\n"
         "                               (d = s d_max compressing, (2 - s) d_max restoring, s in [0, 2])\n"
         "    scenarios: file.csv        scenarios from a CSV file instead of the product (relative to the\n"
         "                               config): columns m_kg, K, cr, v0_m_s, model required (m, v0\n"
         "                               too); n, fe_N, law, rule optional ('-': not given); other columns\n"
         "                               ignored, so a sweep.csv reads back\n"
         "  A parameter is a number, a list [a, b, c] or a range {min: A, max: B, n: N, scale: lin|log};\n"
         "  the sweep is the cartesian product. n and law apply to hc (n to ef too); fe and rule to kv.\n"
         "  The defaults above are the built-in sweep. See examples/sweep.yaml.\n\n"
         "writes, in DIR: sweep.csv (one row per scenario: inputs, metrics, status), samples.csv (with\n"
         "samples > 0), figure.dat and sweep.png (+ sweep.png.gp). A scenario the closed forms cannot\n"
         "evaluate gets zeros and a status (e.g. no_separation), never NaN.\n"
         "Exit status 0 ok, 1 runtime failure (OpenCL, build, I/O), 2 bad option, config or device.\n");
}

typedef struct opts {
  kl_cli_common c;
  const char *config;
} opts;

/* Parse options; 0 ok, 1 --help shown, -1 usage error (message printed). */
static int parse(int argc, char **argv, opts *o)
{
  static const struct option lo[] = {{"out", required_argument, 0, 'o'},    {"cpu", no_argument, 0, 'c'},
                                     {"device", required_argument, 0, 'd'}, {"quiet", no_argument, 0, 'q'},
                                     {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
  memset(o, 0, sizeof *o);
  o->c.out = "kelvin-out/sweep";
  opterr = 0;
  optind = 1;
  int ch;
  while ((ch = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
    switch (ch) {
    case 'o': o->c.out = optarg; break;
    case 'c': o->c.cpu = 1; break;
    case 'd': o->c.device = optarg; break;
    case 'q': o->c.quiet = 1; break;
    case 'h': help(); return 1;
    case ':': kl_cli_error("sweep: option '%s' needs a value (try 'kelvin sweep --help')", argv[optind - 1]); return -1;
    default: kl_cli_error("sweep: unknown option '%s' (try 'kelvin sweep --help')", argv[optind - 1]); return -1;
    }
  }
  if (optind < argc) o->config = argv[optind++];
  if (optind < argc) {
    kl_cli_error("sweep: unexpected argument '%s' (one config file at most; try 'kelvin sweep --help')", argv[optind]);
    return -1;
  }
  if (o->c.cpu && o->c.device) {
    kl_cli_error("sweep: --cpu and --device exclude each other");
    return -1;
  }
  if (!o->c.out[0]) {
    kl_cli_error("--out: must not be empty");
    return -1;
  }
  return 0;
}

/* Exit status for a library status: bad input is 2, everything else 1. */
static int exit_for(kelvin_status st)
{
  return (st == KELVIN_ERR_CONFIG || st == KELVIN_ERR_ARG || st == KELVIN_ERR_NODEVICE) ? KL_EXIT_USAGE
                                                                                          : KL_EXIT_RUNTIME;
}

/* `kelvin sweep`: scenarios -> batch on the chosen path -> sweep.csv, samples.csv, figure, summary. */
int kl_cmd_sweep(int argc, char **argv)
{
  opts o;
  const int pr = parse(argc, argv, &o);
  if (pr != 0) return pr > 0 ? KL_EXIT_OK : KL_EXIT_USAGE;
  int rc = KL_EXIT_OK;
  spec s;
  kl_cfg *cfg = NULL;
  kl_host *h = NULL;
  kl_impact_batch *b = NULL;
  char msg[8192];
  kelvin_status st;
  if (spec_default(&s) != 0) {
    kl_cli_error("out of memory");
    rc = KL_EXIT_RUNTIME;
    goto done;
  }
  /* 1. the scenarios */
  if (o.config) {
    if (kl_cfg_create(&cfg) != KELVIN_OK) {
      kl_cli_error("out of memory");
      rc = KL_EXIT_RUNTIME;
      goto done;
    }
    st = load_spec(cfg, o.config, &s);
    if (st != KELVIN_OK) {
      kl_cli_error("%s", kl_cfg_errmsg(cfg));
      rc = st == KELVIN_ERR_NOMEM ? KL_EXIT_RUNTIME : KL_EXIT_USAGE;
      goto done;
    }
  }
  if (s.scenarios[0]) {
    st = load_csv(s.scenarios, s.samples, &b, msg, sizeof msg);
    if (st != KELVIN_OK) {
      kl_cli_error("%s", msg);
      rc = st == KELVIN_ERR_NOMEM ? KL_EXIT_RUNTIME : KL_EXIT_USAGE;
      goto done;
    }
  } else {
    const long P = product_size(&s);
    if (P < 0) {
      kl_cli_error("%s: the sweep has more than %ld scenarios; use fewer values", o.config ? o.config : "sweep", MAXP);
      rc = KL_EXIT_USAGE;
      goto done;
    }
    if (P == 0) {
      kl_cli_error("%s: the sweep is empty", o.config ? o.config : "sweep");
      rc = KL_EXIT_USAGE;
      goto done;
    }
    st = kl_impact_batch_create((size_t)P, s.samples, &b);
    if (st != KELVIN_OK) {
      kl_cli_error("cannot allocate %ld scenarios with %d samples each: out of memory", P, s.samples);
      rc = KL_EXIT_RUNTIME;
      goto done;
    }
    fill_product(&s, b);
  }
  /* 2. the path */
  if (kl_host_create(&h) != KELVIN_OK) {
    kl_cli_error("out of memory");
    rc = KL_EXIT_RUNTIME;
    goto done;
  }
  kl_host_opts ho;
  kl_host_opts_default(&ho);
  ho.cpu = o.c.cpu;
  ho.device = o.c.device;
  ho.device_origin = "--device";
  /* chunks of ~1/20 of the batch (2^16 ... 2^20 rows) so long runs report progress */
  size_t chunk = b->P / 20;
  if (chunk < ((size_t)1 << 16)) chunk = (size_t)1 << 16;
  if (chunk > ((size_t)1 << 20)) chunk = (size_t)1 << 20;
  ho.chunk = chunk;
  const double t0 = now();
  st = kl_host_open(h, &ho);
  if (st != KELVIN_OK) {
    kl_cli_error("%s", kl_host_errmsg(h));
    rc = exit_for(st);
    goto done;
  }
  kl_cli_note(&o.c, "sweep runs on the %s", kl_host_notice(h));
  if (kl_cli_mkdir(o.c.out) != 0) {
    rc = KL_EXIT_RUNTIME;
    goto done;
  }
  /* 3. the batch */
  progress_ctx pc = {&o.c, now(), now(), 0};
  const double t1 = now();
  st = kl_impact_run(h, b, o.c.quiet ? NULL : progress, &pc);
  const double t2 = now();
  if (st != KELVIN_OK) {
    kl_cli_error("%s", kl_host_errmsg(h));
    rc = exit_for(st);
    goto done;
  }
  /* 4. outputs */
  if (write_csv(&o.c, b) != 0 || (b->M && write_samples(&o.c, b) != 0)) {
    rc = KL_EXIT_RUNTIME;
    goto done;
  }
  if (write_figure(&o.c, b) < 0) {
    rc = KL_EXIT_RUNTIME;
    goto done;
  }
  if (!o.c.quiet) {
    size_t flagged = 0;
    for (size_t p = 0; p < b->P; ++p) flagged += b->status[p] != KL_OK;
    printf("kelvin sweep: %zu scenarios (%zu with a status) in %.3f s (%.3g scenarios/s; setup and kernel build "
           "%.2f s)\non %s\n\n",
           b->P, flagged, t2 - t1, (double)b->P / (t2 - t1 > 0 ? t2 - t1 : 1e-9), t1 - t0, kl_host_notice(h));
    summary(b);
    printf("\nwrote %s/sweep.csv%s, %s/figure.dat, %s/sweep.png\n", o.c.out, b->M ? ", samples.csv" : "", o.c.out,
           o.c.out);
  }
done:
  kl_impact_batch_destroy(b);
  kl_host_destroy(h);
  kl_cfg_destroy(cfg);
  spec_free(&s);
  return rc;
}
