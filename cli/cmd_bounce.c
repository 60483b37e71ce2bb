/* cli/cmd_bounce.c: `kelvin bounce`, the paper's bouncing-ball study (section 4.1, Fig. 3):
 * a sphere dropped on a plane for several coefficients of restitution, run in the variable-step
 * engine (kelvin/ball.h). Writes a time series per case, the first contact densely sampled, a summary
 * (stdout, CSV, JSON) and a figure with the panels of the paper's Fig. 3. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "commands.h"
#include <kelvin/ball.h>
#include <kelvin/contact.h>

#define MAXCASES 16
#define NFIRST 600 /* samples of the first contact */
#define NAPEX 3    /* apex heights in the summary table */

/* seconds on the monotonic clock (only differences mean anything) */
static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}


static void help(void)
{
  printf(
    "usage: kelvin bounce [options]\n\n"
    "The paper's bouncing-ball study (Zhou et al. 2024, section 4.1): a sphere dropped on a rigid plane,\n"
    "one run per coefficient of restitution, in the variable-time-step engine. The output period only\n"
    "sets where states are written; impacts and separations are located exactly inside it.\n\n"
    "options (SI units; defaults in brackets):\n"
    "  --cr LIST           coefficients of restitution in (0, 1], comma-separated [0.2,0.4,0.6,0.8,1.0]\n"
    "  --model NAME        kv (Kelvin-Voigt, paper eq. 1-10), hc (Hunt-Crossley K d^n (1 + chi d')),\n"
    "                      ef (the paper's approximate Emden-Fowler form, eq. 11-13),\n"
    "                      general (F = k d^n1 + c sgn(d')|d'|^m d^n2, clamped at 0: --stiffness k,\n"
    "                      --exponent n1, --damping c, --n2, --rate-exponent m; one case, no --cr) [kv]\n"
    "  --law NAME          damping law for hc: hunt-crossley, lankarani-nikravesh, flores, gonthier,\n"
    "                      exact (chi chosen so the restitution is exactly cr) [exact]\n"
    "  --stiffness K       contact stiffness, N/m (kv) or N/m^n (hc, ef) [140e6 for kv; Hertz for hc/ef]\n"
    "  --material E,NU     Young's modulus [Pa] and Poisson ratio of the ball  [steel: 210e9,0.3]\n"
    "  --plane-material E,NU  the same for the plane [steel: 210e9,0.3]\n"
    "                      (hc/ef without --stiffness: Hertz K = 4/3 E* sqrt(R), paper eq. 2)\n"
    "  --exponent N        force exponent n for hc/ef, n1 for general [1.5]\n"
    "  --damping C         general: c, N (s/m)^m / m^n2, >= 0 (required)\n"
    "  --n2 N2             general: exponent of d in the damping term, >= 0 (0: force jumps at contact) [n1]\n"
    "  --rate-exponent M   general: exponent m of the rate, > 0 [1]\n"
    "  --mass M            ball mass, kg [1]\n"
    "  --radius R          ball radius, m [0.1]\n"
    "  --height H          drop height of the ball's lowest point, m [1]\n"
    "  --gravity G         m/s^2 [9.81]\n"
    "  --duration T        simulated time per case, s [10]\n"
    "  --dt DT             output period, s (any size: 1e-4 ... 1 all give the same physics) [1e-3]\n"
    "  --separation RULE   penetration (contact ends at d = 0, the paper) or force (no tension) [penetration]\n"
    "  --tol TOL           relative tolerance of the nonlinear sub-step control [1e-9]\n"
    "  --out DIR           output folder [kelvin-out/bounce]\n"
    "  --quiet             no progress and no table\n"
    "  --help              this text\n\n"
    "writes, in DIR: bounce_cr<CR>.csv (t, penetration, penetration rate, force, height, velocity,\n"
    "energy), first_contact_cr<CR>.csv (the first contact densely sampled), summary.csv, summary.json,\n"
    "bounce.png (force-time, force-penetration, velocity-time, energy dissipated; paper Fig. 3) and\n"
    "bounce_height.png. Exit status 0 ok, 1 runtime failure, 2 bad option.\n");
}

typedef struct opts {
  double cr[MAXCASES];
  int ncr;
  kelvin_ball_model m; /* cr set per case */
  int have_K, have_n, have_cr, have_c, have_n2;
  double E1, nu1, E2, nu2;
  int have_mat;
  double height, duration, dt;
  kl_cli_common c;
} opts;

typedef struct summary {
  double cr, v_in, dmax, fpeak, tc, cr_eff, ediss, apex[NAPEX];
  int napex, ncontact;
  long nsub;
  double wall;
} summary;

static int parse_pair(const char *opt, const char *s, double *a, double *b)
{
  double v[2];
  int n = 0;
  if (kl_cli_double_list(opt, s, v, 2, &n) != 0) return -1;
  if (n != 2) {
    kl_cli_error("%s: expected E,NU (two numbers), got '%s'", opt, s);
    return -1;
  }
  *a = v[0];
  *b = v[1];
  return 0;
}

/* parse and validate every option; 0 ok, 1 --help shown, -1 usage error (message printed) */
static int parse(int argc, char **argv, opts *o)
{
  static const struct option lo[] = {
    {"cr", required_argument, 0, 'c'},        {"model", required_argument, 0, 'M'},
    {"law", required_argument, 0, 'l'},       {"stiffness", required_argument, 0, 'K'},
    {"material", required_argument, 0, 'e'},  {"plane-material", required_argument, 0, 'p'},
    {"exponent", required_argument, 0, 'n'},  {"mass", required_argument, 0, 'm'},
    {"radius", required_argument, 0, 'R'},    {"height", required_argument, 0, 'H'},
    {"gravity", required_argument, 0, 'g'},   {"duration", required_argument, 0, 'T'},
    {"dt", required_argument, 0, 'd'},        {"separation", required_argument, 0, 's'},
    {"tol", required_argument, 0, 't'},       {"out", required_argument, 0, 'o'},
    {"quiet", no_argument, 0, 'q'},           {"help", no_argument, 0, 'h'},
    {"damping", required_argument, 0, 'C'},   {"n2", required_argument, 0, 'N'},
    {"rate-exponent", required_argument, 0, 'X'},
    {0, 0, 0, 0}};
  memset(o, 0, sizeof *o);
  kelvin_ball_model_init(&o->m);
  o->m.law = KELVIN_LAW_EXACT;
  const double crs[] = {0.2, 0.4, 0.6, 0.8, 1.0};
  for (int i = 0; i < 5; ++i) o->cr[i] = crs[i];
  o->ncr = 5;
  o->E1 = o->E2 = 210e9;
  o->nu1 = o->nu2 = 0.3;
  o->height = 1.0;
  o->duration = 10.0;
  o->dt = 1e-3;
  o->c.out = "kelvin-out/bounce";
  opterr = 0;
  optind = 1;
  int ch, idx;
  while ((ch = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
    int rc = 0;
    switch (ch) {
    case 'c':
      rc = kl_cli_double_list("--cr", optarg, o->cr, MAXCASES, &o->ncr);
      o->have_cr = 1;
      break;
    case 'C':
      rc = kl_cli_double("--damping", optarg, &o->m.gen_c);
      o->have_c = 1;
      break;
    case 'N':
      rc = kl_cli_double("--n2", optarg, &o->m.gen_n2);
      o->have_n2 = 1;
      break;
    case 'X': rc = kl_cli_double("--rate-exponent", optarg, &o->m.gen_m); break;
    case 'M':
      rc = (idx = kl_cli_choice("--model", optarg, kelvin_model_names())) < 0 ? -1 : 0;
      if (!rc) o->m.model = (kelvin_model)idx;
      break;
    case 'l':
      rc = (idx = kl_cli_choice("--law", optarg, kelvin_law_names())) < 0 ? -1 : 0;
      if (!rc) o->m.law = (kelvin_law)idx;
      break;
    case 's':
      rc = (idx = kl_cli_choice("--separation", optarg, kelvin_rule_names())) < 0 ? -1 : 0;
      if (!rc) o->m.rule = (kelvin_rule)idx;
      break;
    case 'K':
      rc = kl_cli_double("--stiffness", optarg, &o->m.K);
      o->have_K = 1;
      break;
    case 'e':
      rc = parse_pair("--material", optarg, &o->E1, &o->nu1);
      o->have_mat = 1;
      break;
    case 'p':
      rc = parse_pair("--plane-material", optarg, &o->E2, &o->nu2);
      o->have_mat = 1;
      break;
    case 'n':
      rc = kl_cli_double("--exponent", optarg, &o->m.n);
      o->have_n = 1;
      break;
    case 'm': rc = kl_cli_double("--mass", optarg, &o->m.m); break;
    case 'R': rc = kl_cli_double("--radius", optarg, &o->m.R); break;
    case 'H': rc = kl_cli_double("--height", optarg, &o->height); break;
    case 'g': rc = kl_cli_double("--gravity", optarg, &o->m.g); break;
    case 'T': rc = kl_cli_double("--duration", optarg, &o->duration); break;
    case 'd': rc = kl_cli_double("--dt", optarg, &o->dt); break;
    case 't': rc = kl_cli_double("--tol", optarg, &o->m.tol); break;
    case 'o': o->c.out = optarg; break;
    case 'q': o->c.quiet = 1; break;
    case 'h': help(); return 1;
    case ':': kl_cli_error("bounce: option '%s' needs a value (try 'kelvin bounce --help')", argv[optind - 1]); return -1;
    default: kl_cli_error("bounce: unknown option '%s' (try 'kelvin bounce --help')", argv[optind - 1]); return -1;
    }
    if (rc != 0) return -1;
  }
  if (optind < argc) {
    kl_cli_error("bounce: unexpected argument '%s' (try 'kelvin bounce --help')", argv[optind]);
    return -1;
  }
  /* semantic checks: every message names the option and the value */
  for (int i = 0; i < o->ncr; ++i)
    if (!(o->cr[i] > 0 && o->cr[i] <= 1)) {
      kl_cli_error("--cr: each value must be in (0, 1], got %g", o->cr[i]);
      return -1;
    }
  if (o->m.model == KELVIN_MODEL_KV) {
    if (o->have_n && o->m.n != 1.0) {
      kl_cli_error("--exponent: Kelvin-Voigt is linear (n = 1); use --model hc for n = %g", o->m.n);
      return -1;
    }
    if (o->have_mat && !o->have_K) {
      kl_cli_error("--material: the Hertz stiffness 4/3 E* sqrt(R) has units N/m^1.5; use --model hc or ef, "
                   "or give --stiffness in N/m for kv");
      return -1;
    }
  } else if (!o->have_n) {
    o->m.n = 1.5;
  }
  if (o->m.model == KELVIN_MODEL_GEN) {
    /* the general law: one case (its damping is c, not a restitution); the library checks the values */
    if (o->have_cr) {
      kl_cli_error("--cr: the general law takes no coefficient of restitution (its damping is --damping c); drop --cr");
      return -1;
    }
    if (!o->have_c) {
      kl_cli_error("--damping: the general law needs its damping c (N (s/m)^m / m^n2, >= 0)");
      return -1;
    }
    o->ncr = 1;
    o->cr[0] = 1.0;
    if (!o->have_n2) o->m.gen_n2 = o->m.n;
  } else if (o->have_c || o->have_n2) {
    kl_cli_error("%s: only the general law (--model general) takes it", o->have_c ? "--damping" : "--n2");
    return -1;
  }
  if (!(o->m.m > 0)) {
    kl_cli_error("--mass: must be > 0 kg, got %g", o->m.m);
    return -1;
  }
  if (!(o->m.R > 0)) {
    kl_cli_error("--radius: must be > 0 m, got %g", o->m.R);
    return -1;
  }
  if (!(o->E1 > 0) || !(o->E2 > 0) || !(o->nu1 > -1 && o->nu1 < 0.5) || !(o->nu2 > -1 && o->nu2 < 0.5)) {
    kl_cli_error("--material/--plane-material: need E > 0 and -1 < nu < 0.5, got %g,%g and %g,%g", o->E1, o->nu1,
                 o->E2, o->nu2);
    return -1;
  }
  if (o->m.model != KELVIN_MODEL_KV && !o->have_K)
    o->m.K = kelvin_hertz_K(kelvin_estar(o->E1, o->nu1, o->E2, o->nu2), o->m.R);
  if (!(o->m.K > 0)) {
    kl_cli_error("--stiffness: must be > 0, got %g", o->m.K);
    return -1;
  }
  if (!(o->height >= 0)) {
    kl_cli_error("--height: must be >= 0 m, got %g", o->height);
    return -1;
  }
  if (!(o->m.g > 0)) {
    kl_cli_error("--gravity: must be > 0 m/s^2, got %g", o->m.g);
    return -1;
  }
  if (!(o->duration > 0 && o->duration <= 1e6)) {
    kl_cli_error("--duration: must be in (0, 1e6] s, got %g", o->duration);
    return -1;
  }
  if (!(o->dt > 0 && o->dt <= o->duration)) {
    kl_cli_error("--dt: must be > 0 and <= --duration (%g s), got %g", o->duration, o->dt);
    return -1;
  }
  if (o->duration / o->dt > 2e7) {
    kl_cli_error("--dt: %g s over %g s would write %.3g rows per case; use a larger --dt", o->dt, o->duration,
                 o->duration / o->dt);
    return -1;
  }
  /* the library's checks: every field of the model, and that the engine can do the work in finite time
   * (kelvin_ball_check: the static sag, the first impact's duration against the time resolution at
   * --duration and its depth against the radius), for every coefficient of restitution */
  kelvin_ball *b = NULL;
  if (kelvin_ball_create(&b) != KELVIN_OK) {
    kl_cli_error("bounce: out of memory");
    return -1;
  }
  for (int i = 0; i < o->ncr; ++i) {
    kelvin_ball_model m = o->m;
    m.cr = o->cr[i];
    if (kelvin_ball_check(b, &m, o->height, 0.0, o->duration) != KELVIN_OK) {
      if (o->ncr == 1)
        kl_cli_error("bounce: %s", kelvin_ball_errmsg(b));
      else
        kl_cli_error("bounce: cr %g: %s", o->cr[i], kelvin_ball_errmsg(b));
      kelvin_ball_free(b);
      return -1;
    }
  }
  kelvin_ball_free(b);
  return 0;
}

/* progress of a long case on stderr, as kelvin sweep gives it: at most once a second, for cases that last
 * longer than that (the "done" line ends them) */
typedef struct progress {
  const opts *o;
  const kelvin_ball *b;
  const char *tag;
  double t0, last; /* wall time of the start and of the last line */
} progress;

static void report(progress *p, double t)
{
  const double w = now();
  if (w - p->last < 1.0) return;
  p->last = w;
  const double f = t / p->o->duration, el = w - p->t0;
  kl_cli_note(&p->o->c, "bounce: cr %s: %5.1f%% (t = %g s of %g s, %ld sub-steps), %.0f s elapsed, ~%.0f s left", p->tag,
              100.0 * f, t, p->o->duration, kelvin_ball_substeps(p->b), el, f > 0 ? el * (1.0 - f) / f : 0.0);
}

/* the library's callback inside a long advance (kelvin_ball_set_progress): the same line */
static int on_progress(void *ctx, double fraction, const char *text)
{
  (void)fraction;
  (void)text;
  progress *p = ctx;
  kelvin_ball_state st;
  if (kelvin_ball_get_state(p->b, &st) == KELVIN_OK) report(p, st.t);
  return 0;
}

/* one case: time series to its CSV; returns 0 or -1 (message printed) */
static int run_case(const opts *o, const kelvin_ball_model *m, kelvin_ball *b, const char *tag, summary *s)
{
  kl_out f;
  char name[128];
  snprintf(name, sizeof name, "bounce_cr%s.csv", tag);
  if (kl_out_open(&f, o->c.out, name) != 0) return -1;
  fprintf(f.f, "t_s,penetration_m,penetration_rate_m_s,force_N,height_m,velocity_m_s,energy_J\n");
  const double t0 = now();
  if (kelvin_ball_start(b, m, o->height, 0.0, o->duration) != KELVIN_OK) {
    kl_cli_error("bounce: cr %g: %s", m->cr, kelvin_ball_errmsg(b));
    kl_out_abort(&f);
    return -1;
  }
  progress pg = {o, b, tag, t0, t0};
  kelvin_ball_set_progress(b, o->c.quiet ? NULL : on_progress, &pg);
  const long nout = (long)ceil(o->duration / o->dt - 1e-9);
  kelvin_ball_state st;
  for (long k = 0; k <= nout; ++k) {
    const double t = fmin((double)k * o->dt, o->duration);
    if (kelvin_ball_advance(b, t) != KELVIN_OK) {
      kl_cli_error("bounce: cr %g: %s", m->cr, kelvin_ball_errmsg(b));
      kelvin_ball_set_progress(b, NULL, NULL);
      kl_out_abort(&f);
      return -1;
    }
    kelvin_ball_get_state(b, &st);
    fprintf(f.f, "%.10g,%.10g,%.10g,%.10g,%.12g,%.12g,%.12g\n", t, st.penetration, st.rate, st.force, st.height,
            st.velocity, st.energy);
    if (!o->c.quiet && k % 256 == 0) report(&pg, t);
  }
  kelvin_ball_set_progress(b, NULL, NULL);
  if (kl_out_commit(&f) != 0) return -1;
  s->wall = now() - t0;
  s->cr = m->cr;
  s->ncontact = kelvin_ball_ncontact(b);
  s->nsub = kelvin_ball_substeps(b);
  const int napex = kelvin_ball_napex(b);
  s->napex = napex < NAPEX ? napex : NAPEX;
  for (int i = 0; i < s->napex; ++i) kelvin_ball_get_apex(b, i, NULL, &s->apex[i]);
  kelvin_ball_contact c;
  if (kelvin_ball_get_contact(b, 0, &c) == KELVIN_OK) {
    s->v_in = c.v_in;
    s->dmax = c.dmax;
    s->fpeak = c.fpeak;
    s->tc = c.t1 - c.t0;
    s->cr_eff = c.v_out / c.v_in;
    s->ediss = 100.0 * (1.0 - s->cr_eff * s->cr_eff);
  } else { /* no first contact: no figures of one (nan in the CSV, null in the JSON, as for missing apexes) */
    s->v_in = s->dmax = s->fpeak = s->tc = s->cr_eff = s->ediss = NAN;
  }
  return 0;
}

/* the first contact, densely sampled by the same engine (output period = contact time / 500) */
static int first_contact(const opts *o, const kelvin_ball_model *m, kelvin_ball *b, const char *tag)
{
  const double timp = sqrt(2.0 * o->height / m->g);
  if (kelvin_ball_start(b, m, o->height, 0.0, o->duration) != KELVIN_OK || kelvin_ball_advance(b, timp) != KELVIN_OK) {
    kl_cli_error("bounce: cr %g: %s", m->cr, kelvin_ball_errmsg(b));
    return -1;
  }
  const double vin = sqrt(2.0 * m->g * o->height);
  /* the general law: its impact by the step (kelvin_impact; k is K, n1 is n) */
  const kelvin_impact_in in = {m->m, m->K, m->n, m->cr, vin > 0 ? vin : 1e-9,
                               m->model == KELVIN_MODEL_KV ? m->m * m->g : 0.0, m->model, m->law, m->rule,
                               m->gen_c, m->gen_n2, m->gen_m};
  kelvin_impact_out io;
  const double span = 1.1 * (kelvin_impact(&in, &io) == KELVIN_OK ? io.tc : 1e-3);
  kl_out f;
  char name[128];
  snprintf(name, sizeof name, "first_contact_cr%s.csv", tag);
  if (kl_out_open(&f, o->c.out, name) != 0) return -1;
  fprintf(f.f, "t_ms,penetration_mm,penetration_rate_m_s,force_kN,velocity_m_s,energy_dissipated_pct\n");
  kelvin_ball_state st;
  kelvin_ball_get_state(b, &st);
  const double e0 = st.energy, ek = 0.5 * m->m * vin * vin;
  for (int k = 0; k <= NFIRST; ++k) {
    const double t = timp + span * k / NFIRST;
    if (kelvin_ball_advance(b, t) != KELVIN_OK) {
      kl_cli_error("bounce: cr %g: %s", m->cr, kelvin_ball_errmsg(b));
      kl_out_abort(&f);
      return -1;
    }
    kelvin_ball_get_state(b, &st);
    fprintf(f.f, "%.10g,%.10g,%.10g,%.10g,%.10g,%.8g\n", 1e3 * (t - timp), 1e3 * st.penetration, st.rate,
            1e-3 * st.force, st.velocity, ek > 0 ? 100.0 * (e0 - st.energy) / ek : 0.0);
  }
  return kl_out_commit(&f);
}

static int write_summary(const opts *o, const summary *s, int n)
{
  kl_out f;
  if (kl_out_open(&f, o->c.out, "summary.csv") != 0) return -1;
  fprintf(f.f, "cr,impact_speed_m_s,max_penetration_m,peak_force_N,contact_time_s,effective_restitution,"
               "energy_dissipated_pct,apex1_m,apex2_m,apex3_m,contacts,substeps\n");
  for (int i = 0; i < n; ++i) {
    fprintf(f.f, "%g,%.12g,%.12g,%.12g,%.12g,%.12g,%.8g", s[i].cr, s[i].v_in, s[i].dmax, s[i].fpeak, s[i].tc,
            s[i].cr_eff, s[i].ediss);
    for (int k = 0; k < NAPEX; ++k)
      if (k < s[i].napex)
        fprintf(f.f, ",%.12g", s[i].apex[k]);
      else
        fprintf(f.f, ",nan");
    fprintf(f.f, ",%d,%ld\n", s[i].ncontact, s[i].nsub);
  }
  if (kl_out_commit(&f) != 0) return -1;
  cJSON *d = cJSON_CreateObject();
  if (!d) return kl_json_write(o->c.out, "summary.json", NULL);
  cJSON_AddStringToObject(d, "command", "bounce");
  kl_json_meta(d, NULL);
  cJSON_AddStringToObject(d, "model", kelvin_model_name(o->m.model));
  cJSON_AddStringToObject(d, "law", kelvin_law_name(o->m.law));
  cJSON_AddStringToObject(d, "separation", kelvin_rule_name(o->m.rule));
  cJSON_AddNumberToObject(d, "stiffness", o->m.K);
  cJSON_AddNumberToObject(d, "exponent", o->m.n);
  if (o->m.model == KELVIN_MODEL_GEN) {
    cJSON_AddNumberToObject(d, "damping_c", o->m.gen_c);
    cJSON_AddNumberToObject(d, "n2", o->m.gen_n2);
    cJSON_AddNumberToObject(d, "rate_exponent", o->m.gen_m);
  }
  cJSON_AddNumberToObject(d, "mass_kg", o->m.m);
  cJSON_AddNumberToObject(d, "radius_m", o->m.R);
  cJSON_AddNumberToObject(d, "drop_height_m", o->height);
  cJSON_AddNumberToObject(d, "duration_s", o->duration);
  cJSON_AddNumberToObject(d, "output_period_s", o->dt);
  cJSON *cs = cJSON_AddArrayToObject(d, "cases");
  for (int i = 0; i < n && cs; ++i) {
    cJSON *c = cJSON_CreateObject();
    if (!c) break;
    cJSON_AddItemToArray(cs, c);
    cJSON_AddNumberToObject(c, "cr", s[i].cr);
    cJSON_AddNumberToObject(c, "impact_speed_m_s", s[i].v_in);
    cJSON_AddNumberToObject(c, "max_penetration_m", s[i].dmax);
    cJSON_AddNumberToObject(c, "peak_force_N", s[i].fpeak);
    cJSON_AddNumberToObject(c, "contact_time_s", s[i].tc);
    cJSON_AddNumberToObject(c, "effective_restitution", s[i].cr_eff);
    cJSON_AddNumberToObject(c, "energy_dissipated_pct", s[i].ediss);
    cJSON *ap = cJSON_AddArrayToObject(c, "apex_heights_m");
    for (int k = 0; k < s[i].napex && ap; ++k) cJSON_AddItemToArray(ap, cJSON_CreateNumber(s[i].apex[k]));
    cJSON_AddNumberToObject(c, "contacts", s[i].ncontact);
    cJSON_AddNumberToObject(c, "substeps", (double)s[i].nsub);
    cJSON_AddNumberToObject(c, "wall_s", s[i].wall);
  }
  return kl_json_write(o->c.out, "summary.json", d);
}

/* gnuplot reads about 4e5 rows of a CSV a second (measured on kelvin simulate's body CSV): a figure from
 * more rows than that is announced with its estimate, so the run has no silent phase */
#define PLOT_ROWS_PER_S 4e5

static int figures(const opts *o, char tags[][32], int n)
{
  char plots[4][4096];
  const char *cols[4][2] = {{"1", "4"}, {"2", "4"}, {"1", "5"}, {"1", "6"}};
  for (int p = 0; p < 4; ++p) {
    plots[p][0] = '\0';
    for (int i = 0; i < n; ++i) {
      char one[256];
      snprintf(one, sizeof one, "%s'first_contact_cr%s.csv' using %s:%s with lines lw 2 title 'CR %s'", i ? ", " : "",
               tags[i], cols[p][0], cols[p][1], tags[i]);
      strncat(plots[p], one, sizeof plots[p] - strlen(plots[p]) - 1);
    }
  }
  char script[20000];
  snprintf(script, sizeof script,
           "# kelvin bounce: the panels of the paper's Fig. 3 (first contact)\n"
           "if (!exists('OUTPUT')) OUTPUT = 'bounce.png'\n"
           "set terminal pngcairo size 1400,1000 font ',11'\nset output OUTPUT\n"
           "set datafile separator ','\nset key top right\nset grid\nset multiplot layout 2,2 title "
           "'Ball on plane, %s model: first contact for each coefficient of restitution'\n"
           "set title '(a) contact force vs time'\nset xlabel 't [ms]'\nset ylabel 'F [kN]'\nplot %s\n"
           "set title '(b) contact force vs penetration'\nset xlabel 'penetration [mm]'\nset ylabel 'F [kN]'\nplot %s\n"
           "set key bottom right\nset title '(c) ball velocity vs time'\nset xlabel 't [ms]'\nset ylabel 'v [m/s]'\nplot %s\n"
           "set key top left\nset title '(d) energy dissipated'\nset xlabel 't [ms]'\nset ylabel '%% of impact energy'\nplot %s\n"
           "unset multiplot\n",
           kelvin_model_name(o->m.model), plots[0], plots[1], plots[2], plots[3]);
  int rc = kl_cli_gnuplot(&o->c, o->c.out, "bounce.png", script);
  if (rc < 0) return -1;
  char hp[4096] = "";
  for (int i = 0; i < n; ++i) {
    char one[256];
    snprintf(one, sizeof one, "%s'bounce_cr%s.csv' using 1:5 with lines title 'CR %s'", i ? ", " : "", tags[i],
             tags[i]);
    strncat(hp, one, sizeof hp - strlen(hp) - 1);
  }
  snprintf(script, sizeof script,
           "if (!exists('OUTPUT')) OUTPUT = 'bounce_height.png'\n"
           "set terminal pngcairo size 1000,500 font ',11'\nset output OUTPUT\nset datafile separator ','\n"
           "set grid\nset xlabel 't [s]'\nset ylabel 'height of lowest point [m]'\n"
           "set title 'Bouncing ball, output period %g s'\nplot %s\n",
           o->dt, hp);
  const double rows = (double)n * (ceil(o->duration / o->dt - 1e-9) + 1);
  if (rows >= 0.5 * PLOT_ROWS_PER_S)
    kl_cli_note(&o->c, "bounce: drawing bounce_height.png from %.0f rows (~%.1f s)", rows, rows / PLOT_ROWS_PER_S);
  rc = kl_cli_gnuplot(&o->c, o->c.out, "bounce_height.png", script);
  return rc < 0 ? -1 : 0;
}

int kl_cmd_bounce(int argc, char **argv)
{
  opts o;
  const int pr = parse(argc, argv, &o);
  if (pr > 0) return KL_EXIT_OK;
  if (pr < 0) return KL_EXIT_USAGE;
  if (kl_run_begin(o.c.out) != 0) return KL_EXIT_RUNTIME;
  kelvin_ball *b = NULL;
  if (kelvin_ball_create(&b) != KELVIN_OK) {
    kl_cli_error("bounce: out of memory");
    return KL_EXIT_RUNTIME;
  }
  summary s[MAXCASES];
  char tags[MAXCASES][32];
  memset(s, 0, sizeof s);
  int rc = KL_EXIT_OK;
  for (int i = 0; i < o.ncr && rc == KL_EXIT_OK; ++i) {
    kelvin_ball_model m = o.m;
    m.cr = o.cr[i];
    snprintf(tags[i], sizeof tags[i], "%.2f", m.cr);
    if (run_case(&o, &m, b, tags[i], &s[i]) != 0 || first_contact(&o, &m, b, tags[i]) != 0) {
      rc = KL_EXIT_RUNTIME;
      break;
    }
    kl_cli_note(&o.c, "bounce: cr %s done: %d contacts, %ld sub-steps, %.3f s", tags[i], s[i].ncontact, s[i].nsub,
                s[i].wall);
  }
  kelvin_ball_free(b);
  if (rc != KL_EXIT_OK) return rc;
  if (write_summary(&o, s, o.ncr) != 0) return KL_EXIT_RUNTIME;
  if (!o.c.quiet) {
    printf("kelvin bounce: %s model, K = %.6g, n = %g, m = %g kg, R = %g m, drop %g m, %g s at output period %g s\n",
           kelvin_model_name(o.m.model), o.m.K, o.m.n, o.m.m, o.m.R, o.height, o.duration, o.dt);
    printf("first contact of each case; apex heights of the lowest point after each bounce\n\n");
    printf("| cr | impact speed m/s | max penetration mm | peak force kN | contact time ms | cr_eff | energy dissipated %% "
           "| apex 1 m | apex 2 m | apex 3 m | contacts |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < o.ncr; ++i) {
      if (s[i].ncontact > 0)
        printf("| %.2f | %.6f | %.6f | %.4f | %.6f | %.6f | %.4f |", s[i].cr, s[i].v_in, 1e3 * s[i].dmax,
               1e-3 * s[i].fpeak, 1e3 * s[i].tc, s[i].cr_eff, s[i].ediss);
      else
        printf("| %.2f | - | - | - | - | - | - |", s[i].cr);
      for (int k = 0; k < NAPEX; ++k)
        if (k < s[i].napex)
          printf(" %.6f |", s[i].apex[k]);
        else
          printf(" - |");
      printf(" %d |\n", s[i].ncontact);
    }
    printf("\n");
  }
  if (figures(&o, tags, o.ncr) != 0 || kl_run_commit() != 0) return KL_EXIT_RUNTIME;
  kl_cli_note(&o.c, "bounce: wrote %s/{bounce_cr*.csv, first_contact_cr*.csv, summary.csv, summary.json, bounce.png, "
                    "bounce_height.png}",
              o.c.out);
  return KL_EXIT_OK;
}
