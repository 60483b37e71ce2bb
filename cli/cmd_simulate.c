/* cli/cmd_simulate.c: `kelvin simulate scene.yaml`, the variable-time-step 3-D engine
 * (kelvin/engine.h) on a scene from YAML (kelvin_world_load). Writes per-body and per-contact
 * time series, the contact-event log, a summary (stdout and JSON) and a figure of contact forces. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "commands.h"
#include <kelvin/engine.h>

/* seconds on the monotonic clock (only differences mean anything) */
static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* `kelvin simulate --help` */
static void help(void)
{
  printf(
    "usage: kelvin simulate [options] scene.yaml\n\n"
    "Runs the variable-time-step 3-D engine (docs/design.md section 3) on a scene: rigid bodies with spheres,\n"
    "boxes, capsules, cylinders, convex hulls, static planes and triangle meshes (STL/OBJ/PLY), compliant\n"
    "contacts in closed form (Kelvin-Voigt, paper eq. 1-10; Hunt-Crossley linearised), regularised Coulomb\n"
    "friction, contact onset and end located inside steps. output_step only sets where states are written.\n\n"
    "options:\n"
    "  --out DIR   output folder [kelvin-out/simulate]\n"
    "  --quiet     no progress and no summary table\n"
    "  --max-substeps N  the work limit: a scene whose sub-steps, estimated up front from its stiffest time\n"
    "              scale (docs/design.md section 3), exceed N is refused (exit 2) [1e7]\n"
    "  --help      this text\n\n"
    "scene.yaml (SI units; defaults in brackets; unknown keys are errors):\n"
    "  duration: 5            simulated time [1]        output_step: 0.01   output period [1e-3]\n"
    "  gravity: [0, 0, -9.81]\n"
    "  contact:               model: kv | hc [kv]; exponent [1; 1.5 for hc]; law (hc): hunt-crossley,\n"
    "                         lankarani-nikravesh, flores, gonthier, exact [exact]; separation: penetration\n"
    "                         | force [penetration]; friction_velocity [1e-3 m/s]; substep_fraction [0.05];\n"
    "                         onset_tolerance [1e-12 m]; max_contacts [64]; model: general takes\n"
    "                         F = k d^n1 + c sgn(d')|d'|^m d^n2 (>= 0): k (required), c [0], n1 [1.5],\n"
    "                         n2 [n1], m [1], for every pair (the materials' stiffness and restitution unused)\n"
    "  bodies:                a list; each: name, type: dynamic | static | kinematic [dynamic], mass [1],\n"
    "                         inertia [from the shapes], position, orientation [w, x, y, z], velocity,\n"
    "                         angular_velocity (kinematic: kept constant), material: {stiffness [1e6],\n"
    "                         restitution [1], damping [0: from restitution], friction [0]},\n"
    "                         holder: {anchor [position], anchor_velocity, stiffness [x, y, z], damping},\n"
    "                         shapes: a list of {type: sphere (radius) | box (half_extents) | capsule\n"
    "                         (radius, half_length) | cylinder (radius, half_length) | hull (vertices) |\n"
    "                         plane (normal [0, 0, 1], point) | mesh (file, scale [1]), position,\n"
    "                         orientation, padding [0]}. Planes and meshes belong to static bodies;\n"
    "                         mesh files are relative to the scene file.\n"
    "  pairs:                 optional list of {bodies: [a, b], stiffness, restitution, damping, friction;\n"
    "                         general: k, c, n1, n2, m over the contact section's}\n"
    "                         replacing the blend of the two bodies' materials (docs/design.md 2.4).\n\n"
    "writes, in DIR: body_<name>.csv per moving body (t, position, orientation, velocity, angular\n"
    "velocity, contact force), contacts.csv (every active contact at every output: point, normal,\n"
    "depth, rate, force, step-averaged force, friction), events.csv (each contact from onset to end),\n"
    "energy.csv, summary.json, contact_forces.png. Exit status 0 ok, 1 runtime failure (a diverged run among\n"
    "them: the message gives the time, the force and the stiffest time scale), 2 bad input (and a run over the\n"
    "work limit).\n");
}

/* parse options; 0 ok, 1 help shown, -1 usage error */
static int parse(int argc, char **argv, kl_cli_common *c, const char **scene, double *max_substeps)
{
  static const struct option lo[] = {{"out", required_argument, 0, 'o'},
                                     {"max-substeps", required_argument, 0, 'm'},
                                     {"quiet", no_argument, 0, 'q'},
                                     {"help", no_argument, 0, 'h'},
                                     {0, 0, 0, 0}};
  memset(c, 0, sizeof *c);
  c->out = "kelvin-out/simulate";
  *scene = NULL;
  opterr = 0;
  optind = 1;
  int ch;
  while ((ch = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
    switch (ch) {
    case 'o': c->out = optarg; break;
    case 'q': c->quiet = 1; break;
    case 'm': {
      char *end = NULL;
      *max_substeps = strtod(optarg, &end);
      if (end == optarg || *end != '\0' || !(*max_substeps >= 1 && *max_substeps <= 1e15)) {
        kl_cli_error("simulate: --max-substeps: must be a number in [1, 1e15], got '%s'", optarg);
        return -1;
      }
      break;
    }
    case 'h': help(); return 1;
    case ':': kl_cli_error("simulate: option '%s' needs a value (try 'kelvin simulate --help')", argv[optind - 1]); return -1;
    default: kl_cli_error("simulate: unknown option '%s' (try 'kelvin simulate --help')", argv[optind - 1]); return -1;
    }
  }
  if (optind >= argc) {
    kl_cli_error("simulate: missing scene file (usage: kelvin simulate [options] scene.yaml)");
    return -1;
  }
  if (optind + 1 < argc) {
    kl_cli_error("simulate: unexpected argument '%s' (one scene file)", argv[optind + 1]);
    return -1;
  }
  *scene = argv[optind];
  return 0;
}

/* the output files of a run */
typedef struct outputs {
  kl_out *body; /* (nbody), unused for static bodies */
  kl_out contacts, events, energy;
} outputs;

/* remove every temporary output */
static void abort_all(const kelvin_world *w, outputs *o)
{
  for (int b = 0; b < kelvin_world_nbody(w); ++b) kl_out_abort(&o->body[b]);
  kl_out_abort(&o->contacts);
  kl_out_abort(&o->events);
  kl_out_abort(&o->energy);
}

/* open every output with its header; -1 (message printed) on failure */
static int open_all(const kl_cli_common *c, const kelvin_world *w, outputs *o)
{
  const int nbody = kelvin_world_nbody(w);
  memset(&o->contacts, 0, sizeof o->contacts);
  memset(&o->events, 0, sizeof o->events);
  memset(&o->energy, 0, sizeof o->energy);
  for (int b = 0; b < nbody; ++b) memset(&o->body[b], 0, sizeof o->body[b]);
  for (int b = 0; b < nbody; ++b) {
    if (kelvin_world_body_type(w, b) == KELVIN_BODY_STATIC) continue;
    char name[256];
    snprintf(name, sizeof name, "body_%s.csv", kelvin_world_body_name(w, b));
    if (kl_out_open(&o->body[b], c->out, name) != 0) return -1;
    fprintf(o->body[b].f, "t_s,x_m,y_m,z_m,qw,qx,qy,qz,vx_m_s,vy_m_s,vz_m_s,wx_rad_s,wy_rad_s,wz_rad_s,"
                          "fx_N,fy_N,fz_N,contact_force_N,contacts\n");
  }
  if (kl_out_open(&o->contacts, c->out, "contacts.csv") != 0 || kl_out_open(&o->events, c->out, "events.csv") != 0 ||
      kl_out_open(&o->energy, c->out, "energy.csv") != 0)
    return -1;
  fprintf(o->contacts.f, "t_s,body_a,body_b,shape_a,shape_b,feature,px_m,py_m,pz_m,nx,ny,nz,depth_m,rate_m_s,"
                         "force_N,force_avg_N,ftx_N,fty_N,ftz_N\n");
  fprintf(o->events.f, "t_onset_s,t_end_s,body_a,body_b,shape_a,shape_b,approach_speed_m_s,separation_speed_m_s,"
                       "max_depth_m,peak_force_N\n");
  fprintf(o->energy.f, "t_s,energy_J,contacts,substeps\n");
  return 0;
}

/* one output row for every body, contact and the energy */
static void write_rows(const kelvin_world *w, const kelvin_world_data *d, outputs *o)
{
  const int nbody = kelvin_world_nbody(w), ncon = kelvin_world_ncontact(d);
  const double t = kelvin_world_time(d);
  for (int b = 0; b < nbody; ++b) {
    if (kelvin_world_body_type(w, b) == KELVIN_BODY_STATIC) continue;
    double f[3], x[3], q[4], v[3], om[3];
    kelvin_world_force(d, b, f);
    kelvin_world_body_state(d, b, x, q, v, om);
    int nc = 0;
    for (int k = 0; k < ncon; ++k) {
      kelvin_contact c;
      kelvin_world_contact(d, k, &c);
      nc += c.body[0] == b || c.body[1] == b;
    }
    fprintf(o->body[b].f, "%.10g,%.12g,%.12g,%.12g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%d\n",
            t, x[0], x[1], x[2], q[0], q[1], q[2], q[3], v[0], v[1], v[2], om[0], om[1], om[2], f[0], f[1], f[2],
            sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]), nc);
  }
  for (int k = 0; k < ncon; ++k) {
    kelvin_contact c;
    kelvin_world_contact(d, k, &c);
    fprintf(o->contacts.f, "%.10g,", t);
    kl_csv_field(o->contacts.f, kelvin_world_body_name(w, c.body[0]));
    fputc(',', o->contacts.f);
    kl_csv_field(o->contacts.f, kelvin_world_body_name(w, c.body[1]));
    fprintf(o->contacts.f, ",%d,%d,%d,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g\n",
            c.shape[0], c.shape[1], c.feature, c.pos[0], c.pos[1], c.pos[2], c.normal[0], c.normal[1], c.normal[2],
            c.depth, c.rate, c.force, c.force_avg, c.friction[0], c.friction[1], c.friction[2]);
  }
  fprintf(o->energy.f, "%.10g,%.12g,%d,%ld\n", t, kelvin_world_energy(d), ncon, kelvin_world_substeps(d));
}

/* contact_forces.png: total normal contact force of each dynamic body (gnuplot) */
/* gnuplot reads about 4e5 rows of a body's CSV a second (0.47 s of CPU for 2e5 rows here): a figure from
 * more rows than that is announced with its estimate, so the run has no silent phase */
#define PLOT_ROWS_PER_S 4e5

static int figure(const kl_cli_common *c, const kelvin_world *w, long rows)
{
  char plots[8192] = "";
  int np = 0;
  for (int b = 0; b < kelvin_world_nbody(w); ++b) {
    if (kelvin_world_body_type(w, b) != KELVIN_BODY_DYNAMIC) continue;
    char one[1400], file[300], qfile[620], qname[300];
    snprintf(file, sizeof file, "body_%s.csv", kelvin_world_body_name(w, b));
    kl_gp_str(qfile, sizeof qfile, file);
    kl_gp_str(qname, sizeof qname, kelvin_world_body_name(w, b));
    snprintf(one, sizeof one, "%s%s every ::1 using 1:18 with lines lw 2 title %s.' (at the output instants)' noenhanced",
             np ? ", " : "", qfile, qname);
    strncat(plots, one, sizeof plots - strlen(plots) - 1);
    ++np;
  }
  if (np == 0) return 0;
  if ((double)rows * np >= 0.5 * PLOT_ROWS_PER_S)
    kl_cli_note(c, "simulate: drawing contact_forces.png from %ld rows (~%.1f s)", rows * np, (double)rows * np / PLOT_ROWS_PER_S);
  /* every finished contact from the log, however short and wherever it falls between output instants:
   * its peak force (located inside the engine's sub-steps) as an impulse over its time span's middle */
  strncat(plots, ", 'events.csv' every ::1 using (($1 + $2) / 2):10 with impulses lw 1 lc rgb 'black' "
                 "title 'peak force of each contact (contact log)'",
          sizeof plots - strlen(plots) - 1);
  char script[12000];
  snprintf(script, sizeof script,
           "# kelvin simulate: total normal contact force on each dynamic body at the output instants, and the\n"
           "# peak force of every contact from the contact log (between output instants too)\n"
           "if (!exists('OUTPUT')) OUTPUT = 'contact_forces.png'\n"
           "set terminal pngcairo size 1200,600 font ',11'\nset output OUTPUT\nset datafile separator ','\n"
           "set grid\nset xlabel 't [s]'\nset ylabel 'contact force [N]'\n"
           "set title 'Contact forces: at the output instants (lines) and the peak of each contact (impulses)'\nplot %s\n",
           plots);
  return kl_cli_gnuplot(c, c->out, "contact_forces.png", script) < 0 ? -1 : 0;
}

/* progress of a long run on stderr, as kelvin sweep gives it: at most once a second, for runs that last
 * longer than that (and a last line at the end of those), between output instants and, through the
 * library's callback (kelvin_world_set_progress), inside a long advance */
typedef struct progress {
  const kl_cli_common *c;
  const kelvin_world_data *d;
  double duration;
  double t0, last; /* wall time of the start and of the last line */
  int printed;
} progress;

static void report(progress *p, int final)
{
  const double w = now();
  if (!final && w - p->last < 1.0) return;
  if (final && !p->printed) return;
  p->last = w;
  p->printed = 1;
  const double t = kelvin_world_time(p->d), f = t / p->duration, el = w - p->t0;
  kl_cli_note(p->c, "simulate: %5.1f%% (t = %g s of %g s, %ld sub-steps), %.0f s elapsed, ~%.0f s left", 100.0 * f, t,
              p->duration, kelvin_world_substeps(p->d), el, f > 0 ? el * (1.0 - f) / f : 0.0);
}

static int on_progress(void *ctx, double fraction, const char *text)
{
  (void)fraction;
  (void)text;
  report(ctx, 0);
  return 0;
}

/* the contact log into events.csv */
static void write_events(const kelvin_world *w, const kelvin_world_data *d, FILE *f)
{
  for (int k = 0; k < kelvin_world_nevent(d); ++k) {
    kelvin_contact_event e;
    kelvin_world_event(d, k, &e);
    fprintf(f, "%.12g,%.12g,", e.t0, e.t1);
    kl_csv_field(f, kelvin_world_body_name(w, e.body[0]));
    fputc(',', f);
    kl_csv_field(f, kelvin_world_body_name(w, e.body[1]));
    fprintf(f, ",%d,%d,%.10g,%.10g,%.10g,%.10g\n", e.shape[0], e.shape[1], e.v_in, e.v_out, e.dmax, e.fpeak);
  }
}

int kl_cmd_simulate(int argc, char **argv)
{
  kl_cli_common c;
  const char *path;
  double max_substeps = 0; /* 0: the library's KELVIN_WORK_LIMIT */
  const int pr = parse(argc, argv, &c, &path, &max_substeps);
  if (pr > 0) return KL_EXIT_OK;
  if (pr < 0) return KL_EXIT_USAGE;
  kelvin_world *w = NULL;
  if (kelvin_world_create(&w) != KELVIN_OK) {
    kl_cli_error("simulate: out of memory");
    return KL_EXIT_RUNTIME;
  }
  const kelvin_status st = kelvin_world_load(w, path);
  if (st != KELVIN_OK) {
    kl_cli_error("%s", kelvin_world_errmsg(w));
    kelvin_world_free(w);
    return st == KELVIN_ERR_NOMEM ? KL_EXIT_RUNTIME : KL_EXIT_USAGE;
  }
  const int nbody = kelvin_world_nbody(w);
  const double duration = kelvin_world_duration(w), output_step = kelvin_world_output_step(w);
  kelvin_world_data *d = NULL;
  outputs o;
  o.body = calloc((size_t)nbody, sizeof *o.body);
  if (kelvin_world_data_create(w, &d) != KELVIN_OK || !o.body) {
    kl_cli_error("simulate: out of memory");
    kelvin_world_data_free(d);
    free(o.body);
    kelvin_world_free(w);
    return KL_EXIT_RUNTIME;
  }
  /* the work, estimated from the stiffest time scale and refused up front beyond the limit (docs/design.md
   * section 8, "Bounded physics"), before the output folder is touched */
  const kelvin_status sp = kelvin_world_plan(d, duration, output_step, max_substeps, NULL);
  if (sp != KELVIN_OK || kl_run_begin(c.out) != 0) {
    if (sp != KELVIN_OK)
      kl_cli_error("simulate: %s: %s (--max-substeps)", path, kelvin_world_data_errmsg(d));
    kelvin_world_data_free(d);
    free(o.body);
    kelvin_world_free(w);
    return sp == KELVIN_ERR_LIMIT ? KL_EXIT_USAGE : KL_EXIT_RUNTIME;
  }
  int rc = KL_EXIT_OK;
  if (open_all(&c, w, &o) != 0) {
    abort_all(w, &o);
    rc = KL_EXIT_RUNTIME;
  }
  const double t0 = now();
  const double e0 = kelvin_world_energy(d);
  progress pg = {&c, d, duration, t0, t0, 0};
  if (!c.quiet) kelvin_world_set_progress(d, on_progress, &pg);
  if (rc == KL_EXIT_OK) {
    write_rows(w, d, &o);
    const long nout = (long)ceil(duration / output_step - 1e-9);
    for (long k = 1; k <= nout; ++k) {
      const double t = fmin((double)k * output_step, duration);
      if (kelvin_world_advance(d, t) != KELVIN_OK) {
        kl_cli_error("simulate: %s: %s", path, kelvin_world_data_errmsg(d));
        abort_all(w, &o);
        rc = KL_EXIT_RUNTIME;
        break;
      }
      write_rows(w, d, &o);
      if (!c.quiet) report(&pg, 0);
    }
    if (rc == KL_EXIT_OK && !c.quiet) report(&pg, 1);
  }
  kelvin_world_set_progress(d, NULL, NULL);
  const double wall = now() - t0;
  kelvin_world_counts cnt;
  kelvin_world_get_counts(d, &cnt);
  if (rc == KL_EXIT_OK) {
    write_events(w, d, o.events.f);
    for (int b = 0; b < nbody && rc == KL_EXIT_OK; ++b)
      if (kelvin_world_body_type(w, b) != KELVIN_BODY_STATIC && kl_out_commit(&o.body[b]) != 0) rc = KL_EXIT_RUNTIME;
    if (rc == KL_EXIT_OK && (kl_out_commit(&o.contacts) != 0 || kl_out_commit(&o.events) != 0 || kl_out_commit(&o.energy) != 0))
      rc = KL_EXIT_RUNTIME;
    if (rc != KL_EXIT_OK) abort_all(w, &o);
  }
  if (rc == KL_EXIT_OK) {
    const double e1 = kelvin_world_energy(d);
    const int ncon = kelvin_world_ncontact(d);
    double fpk = 0;
    for (int k = 0; k < kelvin_world_nevent(d); ++k) {
      kelvin_contact_event e;
      kelvin_world_event(d, k, &e);
      fpk = fmax(fpk, e.fpeak);
    }
    for (int k = 0; k < ncon; ++k) {
      kelvin_contact cc;
      kelvin_world_contact(d, k, &cc);
      fpk = fmax(fpk, cc.fpeak);
    }
    cJSON *js = cJSON_CreateObject();
    if (js) {
      cJSON_AddStringToObject(js, "command", "simulate");
      kl_json_meta(js, path);
      cJSON_AddStringToObject(js, "scene", path);
      cJSON_AddNumberToObject(js, "duration_s", duration);
      cJSON_AddNumberToObject(js, "output_step_s", output_step);
      cJSON_AddNumberToObject(js, "substeps", (double)cnt.substeps);
      cJSON_AddNumberToObject(js, "contact_onsets", (double)cnt.onsets);
      cJSON_AddNumberToObject(js, "contact_ends", (double)cnt.ends);
      cJSON_AddNumberToObject(js, "contacts_active_at_end", ncon);
      cJSON_AddNumberToObject(js, "contact_overflow", (double)cnt.contact_overflow);
      cJSON_AddNumberToObject(js, "event_log_overflow", (double)cnt.event_overflow);
      cJSON_AddNumberToObject(js, "peak_force_N", fpk);
      cJSON_AddNumberToObject(js, "energy_start_J", e0);
      cJSON_AddNumberToObject(js, "energy_end_J", e1);
      cJSON_AddNumberToObject(js, "wall_s", wall);
      cJSON_AddNumberToObject(js, "simulated_s_per_wall_s", wall > 0 ? duration / wall : 0.0);
      cJSON *bs = cJSON_AddArrayToObject(js, "bodies");
      for (int b = 0; b < nbody && bs; ++b) {
        double x[3], v[3];
        kelvin_world_body_state(d, b, x, NULL, v, NULL);
        cJSON *o1 = cJSON_CreateObject();
        if (!o1) break;
        cJSON_AddItemToArray(bs, o1);
        cJSON_AddStringToObject(o1, "name", kelvin_world_body_name(w, b));
        cJSON_AddItemToObject(o1, "final_position_m", cJSON_CreateDoubleArray(x, 3));
        cJSON_AddItemToObject(o1, "final_velocity_m_s", cJSON_CreateDoubleArray(v, 3));
      }
    }
    if (kl_json_write(c.out, "summary.json", js) != 0) rc = KL_EXIT_RUNTIME;
    if (rc == KL_EXIT_OK && !c.quiet) {
      fputs("kelvin simulate ", stdout); /* the scene's file name and the bodies' names from the user, escaped */
      kl_cli_puts_safe(stdout, path);
      printf(": %g s at output step %g s in %.3f s wall (%.3g simulated s per wall s)\n", duration, output_step, wall,
             wall > 0 ? duration / wall : 0.0);
      printf("| sub-steps | onsets | ends | active at end | peak force N | energy start J | energy end J | overflow |\n"
             "|---|---|---|---|---|---|---|---|\n| %ld | %ld | %ld | %d | %.6g | %.9g | %.9g | %ld |\n",
             cnt.substeps, cnt.onsets, cnt.ends, ncon, fpk, e0, e1, cnt.contact_overflow + cnt.event_overflow);
      for (int b = 0; b < nbody; ++b)
        if (kelvin_world_body_type(w, b) == KELVIN_BODY_DYNAMIC) {
          double x[3];
          kelvin_world_body_state(d, b, x, NULL, NULL, NULL);
          kl_cli_puts_safe(stdout, kelvin_world_body_name(w, b));
          printf(": final position (%.9g, %.9g, %.9g) m\n", x[0], x[1], x[2]);
        }
    }
    if (cnt.contact_overflow > 0) {
      double cap = 0;
      kelvin_world_get(w, "contact_capacity", &cap);
      kl_cli_note(&c, "simulate: %ld contacts did not fit (contact.max_contacts = %d)", cnt.contact_overflow, (int)cap);
    }
  }
  if (rc == KL_EXIT_OK && (figure(&c, w, (long)ceil(duration / output_step - 1e-9) + 1) != 0 || kl_run_commit() != 0))
    rc = KL_EXIT_RUNTIME;
  if (rc == KL_EXIT_OK)
    kl_cli_note(&c, "simulate: wrote %s/{body_*.csv, contacts.csv, events.csv, energy.csv, summary.json, contact_forces.png}", c.out);
  free(o.body);
  kelvin_world_data_free(d);
  kelvin_world_free(w);
  return rc;
}
