/* io/sweep_config.c: the `kelvin sweep` config and scenario CSV (see sweep_config.h). */
#include "io/sweep_config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/table.h"
#include "kernels/kl_contact_gen.h"
#include "kernels/kl_names.h"





//------- the sweep specification -------


const kl_sweep_pdef kl_sweep_pdefs[NPAR] = {
  {"m", 0.0, INFINITY, 0, 0, 1.0, "1", "effective mass [kg], > 0"},
  {"K", 0.0, INFINITY, 0, 0, 1e9, "1e9", "stiffness [N/m for kv, N/m^n for hc/ef], > 0"},
  {"n", 0.0, 10.0, 0, 1, 1.5, "1.5", "force exponent of hc/ef in (0, 10), n1 of general in (0, 5] (kv is linear, n = 1)"},
  {"cr", 0.0, 1.0, 0, 0, 0.5, "{min: 0.05, max: 1, n: 39}", "coefficient of restitution, in (0, 1]"},
  {"v0", 0.0, INFINITY, 0, 0, 1.0, "{min: 0.01, max: 10, n: 16, scale: log}", "impact speed [m/s], > 0"},
  {"fe", -INFINITY, INFINITY, 0, 0, 0.0, "0", "constant force pushing into the contact [N], kv, hc and general"},
  {"c", 0.0, INFINITY, 1, 0, 0.0, "0", "damping coefficient of the general law [N (s/m)^rate_exp / m^n2], >= 0"},
  {"n2", 0.0, 5.0, 1, 0, 1.5, "1.5", "exponent of d in the general law's damping term, in [0, 5]"},
  {"rate_exp", 0.0, 5.0, 0, 0, 1.0, "1", "rate exponent of the general law (its m, not the mass), in (0, 5]"},
};



/* Free the value arrays of s. */
void kl_sweep_spec_free(kl_sweep_spec *s)
{
  for (int i = 0; i < NPAR; ++i) free(s->v[i]);
}

/* One value v for parameter i. */
static int spec_single(kl_sweep_spec *s, int i, double v)
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
int kl_sweep_spec_default(kl_sweep_spec *s)
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
    if (spec_single(s, i, kl_sweep_pdefs[i].def) != 0) return -1;
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

/* The general law's constant of parameter i (PC, PN2, PREXP) checked by the law's one domain check
 * (kernels/kl_contact_gen.h, kl_gen_law_bad): 0, or 1 with why, its "<name>: " dropped. */
static int gen_bad(int i, double v, char *why, int cap)
{
  kl_gen_law L = {1.0, 0.0, 1.0, 1.0, 1.0};
  if (i == PC) L.c = v;
  if (i == PN2) L.n2 = v;
  if (i == PREXP) L.m = v;
  char w[160];
  if (!kl_gen_law_bad(L, w, sizeof w)) return 0;
  const char *t = strstr(w, ": ");
  snprintf(why, (size_t)cap, "%s", t ? t + 2 : w);
  return 1;
}

/* Check v against parameter i's domain; field names it in the message. */
static kelvin_status domain(kl_cfg *c, const kl_cfg_node *node, const char *field, int i, double v)
{
  const kl_sweep_pdef *d = &kl_sweep_pdefs[i];
  char why[160];
  if ((i == PC || i == PN2 || i == PREXP) && gen_bad(i, v, why, sizeof why))
    return kl_cfg_fail(c, node, field, "%s", why);
  if (d->lo_closed ? !(v >= d->lo) : !(v > d->lo))
    return kl_cfg_fail(c, node, field, "must be %s %g, got %g", d->lo_closed ? ">=" : ">", d->lo, v);
  if (d->hi_open ? !(v < d->hi) : !(v <= d->hi))
    return kl_cfg_fail(c, node, field, "must be %s %g, got %g", d->hi_open ? "<" : "<=", d->hi, v);
  return KELVIN_OK;
}

/* Parameter i from a number, a list of numbers or a range {min, max, n, scale: lin|log}. */
static kelvin_status parse_param(kl_cfg *c, const kl_cfg_node *node, int i, kl_sweep_spec *s)
{
  static const char *const range_keys[] = {"min", "max", "n", "scale", NULL};
  static const char *const scales[] = {"lin", "log", NULL};
  char field[64], sub[96];
  snprintf(field, sizeof field, "sweep.%s", kl_sweep_pdefs[i].key);
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
    snprintf(buf, cap, "%.*s", (int)((slash - path) ? (slash - path) : 1), path);
}

/* Fill s from the config file: the defaults of kl_sweep_spec_default, overridden by the keys under `sweep:`. */
static kelvin_status spec_from(kl_cfg *c, const char *path, kl_sweep_spec *s)
{
  static const char *const top_keys[] = {"sweep", NULL};
  static const char *const keys[] = {"model", "law", "rule", "m",  "K",        "n",       "cr",       "v0",
                                     "fe",    "c",   "n2",   "rate_exp", "samples", "scenarios", NULL};
  kelvin_status st;
  const kl_cfg_node *root = kl_cfg_root(c);
  if ((st = kl_cfg_keys(c, root, "(top level)", top_keys)) != KELVIN_OK) return st;
  const kl_cfg_node *sw = kl_cfg_get(root, "sweep");
  if (!sw) return kl_cfg_fail(c, root, "sweep", "missing (the file must have a 'sweep:' mapping)");
  if ((st = kl_cfg_keys(c, sw, "sweep", keys)) != KELVIN_OK) return st;
  const kl_cfg_node *nd;
  if ((nd = kl_cfg_get(sw, "model")) && (st = parse_names(c, nd, "sweep.model", kl_model_names_, s->model, KL_NMODELS, &s->nmodel)))
    return st;
  s->given[NPAR + 0] = nd != NULL;
  if ((nd = kl_cfg_get(sw, "law")) && (st = parse_names(c, nd, "sweep.law", kl_law_names_, s->law, 5, &s->nlaw))) return st;
  s->given[NPAR + 1] = nd != NULL;
  if ((nd = kl_cfg_get(sw, "rule")) && (st = parse_names(c, nd, "sweep.rule", kl_rule_names_, s->rule, 2, &s->nrule)))
    return st;
  s->given[NPAR + 2] = nd != NULL;
  for (int i = 0; i < NPAR; ++i) {
    if (!(nd = kl_cfg_get(sw, kl_sweep_pdefs[i].key))) continue;
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
        const char *k = i < NPAR ? kl_sweep_pdefs[i].key : (i == NPAR ? "model" : i == NPAR + 1 ? "law" : "rule");
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
  int has[KL_NMODELS] = {0};
  for (int k = 0; k < s->nmodel; ++k) has[s->model[k]] = 1;
  if (s->given[NPAR + 1] && !has[1])
    return kl_cfg_fail(c, kl_cfg_get(sw, "law"), "sweep.law", "applies to model hc only, and sweep.model has no hc");
  if (s->given[NPAR + 2] && !has[0] && !has[KL_MODEL_GEN])
    return kl_cfg_fail(c, kl_cfg_get(sw, "rule"), "sweep.rule",
                       "applies to models kv and general only, and sweep.model has neither");
  if (s->given[PN] && !has[1] && !has[2] && !has[KL_MODEL_GEN])
    return kl_cfg_fail(c, kl_cfg_get(sw, "n"), "sweep.n", "applies to models hc, ef and general only (kv is linear)");
  if (s->given[PFE] && !has[0] && !has[1] && !has[KL_MODEL_GEN])
    return kl_cfg_fail(c, kl_cfg_get(sw, "fe"), "sweep.fe",
                       "applies to models kv, hc and general only (ef has no model under a force)");
  for (int i = PC; i <= PREXP; ++i)
    if (s->given[i] && !has[KL_MODEL_GEN]) {
      char f[64];
      snprintf(f, sizeof f, "sweep.%s", kl_sweep_pdefs[i].key);
      return kl_cfg_fail(c, kl_cfg_get(sw, kl_sweep_pdefs[i].key), f,
                         "applies to model general only, and sweep.model has no general");
    }
  return KELVIN_OK;
}

//------- scenarios -------

/* The values of parameter i a model's rows run over (1 where the model does not use it, with the value the
 * row then takes: n = 1 for kv, fe = 0 for ef, c = n2 = rate_exp = 0 but for general). */
static int model_nv(const kl_sweep_spec *s, int model, int i)
{
  if (i == PN && model == KL_MODEL_KV) return 1;
  if (i == PFE && model == KL_MODEL_EF) return 1;
  if (i >= PC && i <= PREXP && model != KL_MODEL_GEN) return 1;
  return s->nv[i];
}
static double model_value(const kl_sweep_spec *s, int model, int i, int k)
{
  if (i == PN && model == KL_MODEL_KV) return 1.0;
  if (i == PFE && model == KL_MODEL_EF) return 0.0;
  if (i >= PC && i <= PREXP && model != KL_MODEL_GEN) return 0.0;
  return s->v[i][k];
}
/* Variants of a model: kv and general by rule, hc by law. */
static int model_nvar(const kl_sweep_spec *s, int model)
{
  return (model == KL_MODEL_KV || model == KL_MODEL_GEN) ? s->nrule : model == KL_MODEL_HC ? s->nlaw : 1;
}

/* Rows of the cartesian product; -1 if above MAXP. Kelvin-Voigt rows run over rules and fe with n = 1;
 * Hunt-Crossley rows over laws, n and fe; Emden-Fowler rows over n with fe = 0; general rows over rules, n, fe,
 * c, n2 and rate_exp. */
long kl_sweep_product_size(const kl_sweep_spec *s)
{
  double tot = 0.0;
  const double base = (double)s->nv[PM] * s->nv[PK] * s->nv[PCR] * s->nv[PV0];
  for (int k = 0; k < s->nmodel; ++k) {
    double r = base * model_nvar(s, s->model[k]);
    for (int i = PN; i <= PREXP; ++i)
      if (i != PCR && i != PV0) r *= model_nv(s, s->model[k], i);
    tot += r;
  }
  return tot > (double)MAXP ? -1 : (long)tot;
}

/* Fill b with the product, in the order model, law/rule, m, K, n, fe, c, n2, rate_exp, v0, cr (cr fastest). */
void kl_sweep_fill_product(const kl_sweep_spec *s, kl_impact_batch *b)
{
  size_t p = 0;
  for (int k = 0; k < s->nmodel; ++k) {
    const int model = s->model[k];
    const int nvar = model_nvar(s, model);
    const int nn = model_nv(s, model, PN), nf = model_nv(s, model, PFE), nc = model_nv(s, model, PC),
              nn2 = model_nv(s, model, PN2), nr = model_nv(s, model, PREXP);
    for (int var = 0; var < nvar; ++var)
      for (int im = 0; im < s->nv[PM]; ++im)
        for (int iK = 0; iK < s->nv[PK]; ++iK)
          for (int in_ = 0; in_ < nn; ++in_)
            for (int ifo = 0; ifo < nf; ++ifo)
              for (int ic_ = 0; ic_ < nc; ++ic_)
                for (int i2 = 0; i2 < nn2; ++i2)
                  for (int ir = 0; ir < nr; ++ir)
                    for (int iv = 0; iv < s->nv[PV0]; ++iv)
                      for (int ic = 0; ic < s->nv[PCR]; ++ic) {
                        kl_impact_in in;
                        in.model = model;
                        in.law = model == KL_MODEL_HC ? s->law[var] : KL_LAW_EXACT;
                        in.rule = (model == KL_MODEL_KV || model == KL_MODEL_GEN) ? s->rule[var] : KL_SEP_PENETRATION;
                        in.m = s->v[PM][im];
                        in.K = s->v[PK][iK];
                        in.n = model_value(s, model, PN, in_);
                        in.fe = model_value(s, model, PFE, ifo);
                        in.c = model_value(s, model, PC, ic_);
                        in.n2 = model_value(s, model, PN2, i2);
                        in.rate_exp = model_value(s, model, PREXP, ir);
                        in.v0 = s->v[PV0][iv];
                        in.cr = s->v[PCR][ic];
                        kl_impact_batch_set(b, p++, in);
                      }
  }
}

/* Scenario columns: the names of sweep.csv (with units) and the short ones. */
enum { CM, CK, CN, CCR, CV0, CFE, CC, CN2, CREXP, CMODEL, CLAW, CRULE, NCOL };
static const char *const CN_M[] = {"m_kg", "m", NULL}, *const CN_K[] = {"K", NULL}, *const CN_N[] = {"n", NULL},
                         *const CN_CR[] = {"cr", NULL}, *const CN_V0[] = {"v0_m_s", "v0", NULL},
                         *const CN_FE[] = {"fe_N", "fe", NULL}, *const CN_C[] = {"c", NULL},
                         *const CN_N2[] = {"n2", NULL}, *const CN_REXP[] = {"rate_exp", NULL},
                         *const CN_MODEL[] = {"model", NULL},
                         *const CN_LAW[] = {"law", NULL}, *const CN_RULE[] = {"rule", NULL};

typedef struct scen_ctx {
  const char *file;
  kl_csv_col col[NCOL];
  kl_impact_in *rows;
  size_t n, cap;
  kelvin_progress_fn progress; /* nullable */
  void *pctx;
} scen_ctx;

/* One scenario row (io/table.h does the CSV); '-' in an optional column means "not given". */
static kelvin_status scen_row(void *vp, const kl_csv_row *r, char *msg, int cap)
{
  scen_ctx *c = vp;
  static const int pidx[9] = {PM, PK, PN, PCR, PV0, PFE, PC, PN2, PREXP};
  if (r->index == 0) return kl_csv_columns(c->file, r, c->col, NCOL, msg, cap);
  double vals[9] = {0};
  int ints[3] = {0, KL_LAW_EXACT, KL_SEP_PENETRATION};
  for (int k = CMODEL; k <= CRULE; ++k) {
    const char *const *names = k == CMODEL ? kl_model_names_ : k == CLAW ? kl_law_names_ : kl_rule_names_;
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
  vals[CREXP] = 1.0;
  int n2_given = 0;
  for (int k = CM; k <= CREXP; ++k) {
    if (c->col[k].idx < 0) continue;
    if (!c->col[k].required && strcmp(r->f[c->col[k].idx], "-") == 0) continue;
    double x;
    const kelvin_status st = kl_csv_number(c->file, r, &c->col[k], &x, msg, cap);
    if (st != KELVIN_OK) return st;
    const kl_sweep_pdef *d = &kl_sweep_pdefs[pidx[k]];
    char why[160];
    if ((pidx[k] == PC || pidx[k] == PN2 || pidx[k] == PREXP) && gen_bad(pidx[k], x, why, sizeof why)) {
      snprintf(msg, (size_t)cap, "%s:%ld: column '%s': %s", c->file, r->line, c->col[k].names[c->col[k].which], why);
      return KELVIN_ERR_CONFIG;
    }
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
    if (k == CN2) n2_given = 1;
  }
  kl_impact_in in = {0};
  if (ints[0] == KL_MODEL_GEN) { /* the general law: n2 defaults to n (Hunt-Crossley's), rate_exp to 1 */
    in.c = vals[CC];
    in.n2 = n2_given ? vals[CN2] : vals[CN];
    in.rate_exp = vals[CREXP];
  }
  in.m = vals[CM];
  in.K = vals[CK];
  in.n = vals[CN];
  in.cr = vals[CCR];
  in.v0 = vals[CV0];
  in.fe = vals[CFE];
  in.model = ints[0];
  in.law = ints[1];
  in.rule = ints[2];
  if (in.model == KL_MODEL_GEN) { /* the law's one domain check: n (its n1), and n2 where it defaults to n */
    const kl_gen_law L = {in.K, in.c, in.n, in.n2, in.rate_exp};
    char why[160];
    const int bad = kl_gen_law_bad(L, why, sizeof why);
    if (bad) {
      const int col = bad == KL_GEN_BAD_K ? CK : bad == KL_GEN_BAD_C ? CC : bad == KL_GEN_BAD_N2 && n2_given ? CN2
                    : bad == KL_GEN_BAD_M ? CREXP : CN;
      const char *t = strstr(why, ": ");
      snprintf(msg, (size_t)cap, "%s:%ld: column '%s': %s", c->file, r->line,
               c->col[col].idx >= 0 ? c->col[col].names[c->col[col].which] : kl_sweep_pdefs[pidx[col]].key, t ? t + 2 : why);
      return KELVIN_ERR_CONFIG;
    }
  }
  if (in.model == KL_MODEL_KV && in.n != 1.0) {
    snprintf(msg, (size_t)cap, "%s:%ld: column 'n': model kv is linear: n must be 1 (or -), got %g", c->file, r->line, in.n);
    return KELVIN_ERR_CONFIG;
  }
  if (in.model == KL_MODEL_EF && in.fe != 0.0) {
    snprintf(msg, (size_t)cap, "%s:%ld: column 'fe_N': model %s has no model under an external force: fe must be 0",
             c->file, r->line, kl_model_names_[in.model]);
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
  if (c->progress && c->n % KL_SWEEP_READ_TICK == 0) {
    char text[512];
    snprintf(text, sizeof text, "reading %.400s: %zu scenarios", c->file, c->n);
    if (c->progress(c->pctx, -1.0, text)) {
      snprintf(msg, (size_t)cap, "%s: reading stopped by the progress callback after %zu scenarios", c->file, c->n);
      return KELVIN_ERR_STOPPED;
    }
  }
  return KELVIN_OK;
}

/* Scenarios from a CSV file with a header row. Required columns m_kg (or m), K, cr, v0_m_s (or v0),
 * model; optional n (default 1 for kv, 1.5 otherwise), fe_N (0), law (exact), rule (penetration), and for
 * model general c (0), n2 (n) and rate_exp (1), '-' for "not given"; other columns are ignored, so a sweep.csv can be fed back. Returns KELVIN_OK,
 * KELVIN_ERR_IO or KELVIN_ERR_CONFIG with a message naming file, line and column. */
kelvin_status kl_sweep_load_csv(const char *path, int M, kl_impact_batch **out, char *msg, size_t cap)
{
  return kl_sweep_load_csv_progress(path, M, out, msg, cap, NULL, NULL);
}

kelvin_status kl_sweep_load_csv_progress(const char *path, int M, kl_impact_batch **out, char *msg, size_t cap,
                                         kelvin_progress_fn fn, void *ctx)
{
  *out = NULL;
  scen_ctx c = {path,
                {{CN_M, 1, -1, 0}, {CN_K, 1, -1, 0}, {CN_N, 0, -1, 0}, {CN_CR, 1, -1, 0}, {CN_V0, 1, -1, 0}, {CN_FE, 0, -1, 0},
                 {CN_C, 0, -1, 0}, {CN_N2, 0, -1, 0}, {CN_REXP, 0, -1, 0}, {CN_MODEL, 1, -1, 0}, {CN_LAW, 0, -1, 0},
                 {CN_RULE, 0, -1, 0}},
                NULL, 0, 0, fn, ctx};
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

kelvin_status kl_sweep_load_spec(kl_cfg *c, const char *path, kl_sweep_spec *s)
{
  const kelvin_status st = kl_cfg_load(c, path);
  return st != KELVIN_OK ? st : spec_from(c, path, s);
}

kelvin_status kl_sweep_load_spec_mem(kl_cfg *c, const char *name, const char *text, size_t len, kl_sweep_spec *s)
{
  const kelvin_status st = kl_cfg_load_mem(c, name, text, len);
  return st != KELVIN_OK ? st : spec_from(c, name, s);
}
