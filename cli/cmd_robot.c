/* cli/cmd_robot.c: `kelvin robot`, the arm's effective mass and feed-speed bound along a path
 * (docs/design.md section 6), on the public API kelvin/robot.h: inverse kinematics per sample, m_eff along
 * the surface normal, the joint-speed bound on the feed, reachability and joint-limit margins. Writes a
 * CSV and a figure; prints a summary. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <kelvin/robot.h>

#include "cli.h"
#include "commands.h"

#define DEFAULT_NS 200

/* `kelvin robot --help` */
static void help(void)
{
  printf(
    "usage: kelvin robot [robot.yaml|robot.urdf] [options]\n\n"
    "The robot's effective mass along the surface normal and the feed-speed bound from its joint speed\n"
    "limits, at every sample of a grinding path (the paper's multi-joint effective inertia, Zhou et al.\n"
    "2024). At each sample the tool's z-axis points into the surface (along -normal) and its x-axis along\n"
    "the path; inverse kinematics picks the branch closest to the previous sample. m_eff = 1/(n^T J_v\n"
    "M^-1 J_v^T n) with M(q) from the composite rigid body algorithm; the speed bound keeps every joint\n"
    "within its limit, counting the tool's rotation along a curved path.\n\n"
    "robot file: a YAML file of DH or modified-DH parameters (see examples/robot_er10.yaml) or a URDF;\n"
    "without one, the built-in illustrative arm of the ESTUN ER10-900's size (0.9 m reach, 10 kg\n"
    "payload class, 2.5 kg spindle; plausible numbers, not manufacturer data).\n\n"
    "options:\n"
    "  --path FILE     path CSV with a header line naming the columns x_m,y_m,z_m,nx,ny,nz (or x,y,z;\n"
    "                  world frame, m; outward unit surface normal, |n| = 1 within 1e-6; other columns\n"
    "                  are ignored; '#' lines before the header are skipped). Tangents come from\n"
    "                  finite differences.\n"
    "                  [built-in: 200 samples along a 200 mm straight line (x = 0.45..0.65 m, y = 0)\n"
    "                  over a cylindrical panel of radius 0.4 m whose crest is 0.25 m above the base,\n"
    "                  normal up at the crest]\n"
    "  --base X,Y,Z    robot base position in the world, m [from the robot file; built-in: 0,0,0]\n"
    "  --out DIR       output folder [kelvin-out/robot]\n"
    "  --quiet         no summary\n"
    "  --help          this text\n\n"
    "writes, in DIR: summary.json, robot_path.csv (s, position, normal, m_eff [kg], vmax [m/s], reach, smallest\n"
    "joint-limit margin [rad], stiffness along the normal k_n [N/m] where joint stiffness is given,\n"
    "joint angles [rad]) and robot_path.png (m_eff and vmax against the path position).\n"
    "Exit status: 0 ok; 1 some sample is unreachable or outside a joint limit (the CSV still shows\n"
    "every sample, the message names the first); 2 bad option, robot file or path file.\n");
}

typedef struct opts {
  const char *robot;
  const char *path;
  double base[3];
  int have_base;
  kl_cli_common c;
} opts;

/* 0 ok, 1 help shown, -1 usage error (message printed) */
static int parse(int argc, char **argv, opts *o)
{
  static const struct option lo[] = {{"path", required_argument, 0, 'p'}, {"base", required_argument, 0, 'b'},
                                     {"out", required_argument, 0, 'o'},  {"quiet", no_argument, 0, 'q'},
                                     {"help", no_argument, 0, 'h'},       {0, 0, 0, 0}};
  memset(o, 0, sizeof *o);
  o->c.out = "kelvin-out/robot";
  opterr = 0;
  optind = 1;
  int ch, n;
  while ((ch = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
    switch (ch) {
    case 'p': o->path = optarg; break;
    case 'b':
      if (kl_cli_double_list("--base", optarg, o->base, 3, &n) != 0) return -1;
      if (n != 3) {
        kl_cli_error("--base: expected X,Y,Z (three numbers, m), got '%s'", optarg);
        return -1;
      }
      o->have_base = 1;
      break;
    case 'o': o->c.out = optarg; break;
    case 'q': o->c.quiet = 1; break;
    case 'h': help(); return 1;
    case ':': kl_cli_error("robot: option '%s' needs a value (try 'kelvin robot --help')", argv[optind - 1]); return -1;
    default: kl_cli_error("robot: unknown option '%s' (try 'kelvin robot --help')", argv[optind - 1]); return -1;
    }
  }
  if (optind < argc) o->robot = argv[optind++];
  if (optind < argc) {
    kl_cli_error("robot: unexpected argument '%s' (one robot file at most; try 'kelvin robot --help')", argv[optind]);
    return -1;
  }
  return 0;
}

/* the CSV of every sample */
static int write_csv(const opts *o, int ndof, int ns, const double *pos, const double *nrm, const double *meff,
                     const double *vmax, const double *reach, const double *margin, const double *kn, const double *q,
                     const double *s, int have_kn)
{
  kl_out f;
  if (kl_out_open(&f, o->c.out, "robot_path.csv") != 0) return -1;
  fprintf(f.f, "s_m,x_m,y_m,z_m,nx,ny,nz,meff_kg,vmax_m_s,reach,margin_rad%s", have_kn ? ",kn_N_m" : "");
  for (int i = 0; i < ndof; ++i) fprintf(f.f, ",q%d_rad", i + 1);
  fprintf(f.f, "\n");
  for (int k = 0; k < ns; ++k) {
    fprintf(f.f, "%.9g,%.12g,%.12g,%.12g,%.12g,%.12g,%.12g,%.12g,%.12g,%d,%.9g", s[k], pos[3 * k], pos[3 * k + 1],
            pos[3 * k + 2], nrm[3 * k], nrm[3 * k + 1], nrm[3 * k + 2], meff[k], vmax[k], (int)reach[k], margin[k]);
    if (have_kn) fprintf(f.f, ",%.12g", kn[k]);
    for (int i = 0; i < ndof; ++i) fprintf(f.f, ",%.15g", q[(size_t)k * (size_t)ndof + (size_t)i]);
    fprintf(f.f, "\n");
  }
  return kl_out_commit(&f);
}

/* robot_path.png: m_eff, vmax (and k_n) against the path position */
static int figure(const opts *o, const char *robot, int have_kn)
{
  char script[4096], name[200];
  kl_gp_str(name, sizeof name, robot);
  snprintf(script, sizeof script,
           "# kelvin robot: effective mass and feed-speed bound along the path\n"
           "if (!exists('OUTPUT')) OUTPUT = 'robot_path.png'\n"
           "set terminal pngcairo size 1000,%d font ',11'\nset output OUTPUT\n"
           "set datafile separator ','\nset datafile missing 'nan'\nset grid\nset key off\n"
           "set autoscale xfix\nset lmargin 12\n"
           "set multiplot layout %d,1 title %s.': effective mass and speed bound along the path' noenhanced\n"
           "set xlabel 'path position s [mm]'\n"
           "set title '(a) effective mass along the surface normal, m_{eff} = 1/(n^T J_v M^{-1} J_v^T n)'\n"
           "set ylabel 'm_{eff} [kg]'\nplot 'robot_path.csv' using ($1*1000):8 with lines lw 2 lc rgb '#1f77b4'\n"
           "set title '(b) feed-speed bound from the joint speed limits'\n"
           "set ylabel 'v_{max} [m/s]'\nplot 'robot_path.csv' using ($1*1000):9 with lines lw 2 lc rgb '#d62728'\n"
           "%s"
           "unset multiplot\n",
           have_kn ? 1050 : 750, have_kn ? 3 : 2, name,
           have_kn ? "set title '(c) stiffness along the normal from the joint stiffnesses'\n"
                     "set ylabel 'k_n [N/mm]'\nplot 'robot_path.csv' using ($1*1000):($12/1000) with lines lw 2 lc rgb "
                     "'#2ca02c'\n"
                   : "");
  return kl_cli_gnuplot(&o->c, o->c.out, "robot_path.png", script) < 0 ? -1 : 0;
}

/* summary.json: what the CSV's rows belong to (robot, base, path) and the kelvin metadata */
static int write_json(const opts *o, const kelvin_robot *r, int ns, const double *reach)
{
  cJSON *d = cJSON_CreateObject();
  if (!d) return kl_json_write(o->c.out, "summary.json", NULL);
  cJSON_AddStringToObject(d, "command", "robot");
  kl_json_meta(d, o->robot);
  double base[3];
  kelvin_robot_base(r, base, NULL);
  cJSON_AddStringToObject(d, "robot", kelvin_robot_name(r));
  cJSON_AddNumberToObject(d, "joints", kelvin_robot_joints(r));
  cJSON_AddItemToObject(d, "base_m", cJSON_CreateDoubleArray(base, 3));
  cJSON_AddStringToObject(d, "path", o->path ? o->path : "built-in");
  cJSON_AddNumberToObject(d, "samples", ns);
  int nr = 0;
  for (int k = 0; k < ns; ++k) nr += reach[k] != 0;
  cJSON_AddNumberToObject(d, "reachable_samples", nr);
  return kl_json_write(o->c.out, "summary.json", d);
}

/* `kelvin robot`: load, evaluate the path, write the CSV and figure, summarise */
int kl_cmd_robot(int argc, char **argv)
{
  opts o;
  const int pr = parse(argc, argv, &o);
  if (pr > 0) return KL_EXIT_OK;
  if (pr < 0) return KL_EXIT_USAGE;
  kelvin_robot *r = NULL;
  if (kelvin_robot_create(&r) != KELVIN_OK) {
    kl_cli_error("robot: out of memory");
    return KL_EXIT_RUNTIME;
  }
  kelvin_status st = o.robot ? kelvin_robot_load(r, o.robot) : kelvin_robot_builtin(r);
  if (st != KELVIN_OK) {
    kl_cli_error("robot: %s", kelvin_robot_errmsg(r));
    kelvin_robot_free(r);
    return st == KELVIN_ERR_NOMEM ? KL_EXIT_RUNTIME : KL_EXIT_USAGE;
  }
  if (o.have_base && kelvin_robot_set_base(r, o.base, NULL) != KELVIN_OK) {
    kl_cli_error("--base: must be three finite numbers");
    kelvin_robot_free(r);
    return KL_EXIT_USAGE;
  }
  st = o.path ? kelvin_robot_load_path(r, o.path) : kelvin_robot_demo_path(r, DEFAULT_NS);
  if (st != KELVIN_OK) {
    if (o.path)
      kl_cli_error("%s", kelvin_robot_errmsg(r));
    else
      kl_cli_error("robot: %s", kelvin_robot_errmsg(r));
    kelvin_robot_free(r);
    return st == KELVIN_ERR_NOMEM ? KL_EXIT_RUNTIME : KL_EXIT_USAGE;
  }
  const int ns = kelvin_robot_samples(r), ndof = kelvin_robot_joints(r);
  int rc = KL_EXIT_OK;
  const size_t n = (size_t)ns, nd = (size_t)ndof;
  double *pos = malloc(sizeof(double) * 3 * n), *nrm = malloc(sizeof(double) * 3 * n);
  double *meff = malloc(sizeof(double) * n);
  double *vmax = malloc(sizeof(double) * n), *margin = malloc(sizeof(double) * n), *kn = malloc(sizeof(double) * n);
  double *q = malloc(sizeof(double) * n * nd), *s = malloc(sizeof(double) * n), *reach = malloc(sizeof(double) * n);
  char msg[4096];
  if (!pos || !nrm || !meff || !vmax || !margin || !kn || !q || !s || !reach) {
    kl_cli_error("robot: out of memory for %d samples", ns);
    rc = KL_EXIT_RUNTIME;
    goto done;
  }
  if (kl_run_begin(o.c.out) != 0) {
    rc = KL_EXIT_RUNTIME;
    goto done;
  }
  st = kelvin_robot_evaluate(r);
  snprintf(msg, sizeof msg, "%s", kelvin_robot_errmsg(r));
  if (st != KELVIN_OK && st != KELVIN_ERR_ARG) { /* out of memory: nothing evaluated */
    kl_cli_error("robot: %s", msg);
    rc = KL_EXIT_RUNTIME;
    goto done;
  }
  kelvin_robot_series(r, KELVIN_ROBOT_S, s);
  kelvin_robot_series(r, KELVIN_ROBOT_POINTS, pos);
  kelvin_robot_series(r, KELVIN_ROBOT_NORMALS, nrm);
  kelvin_robot_series(r, KELVIN_ROBOT_MEFF, meff);
  kelvin_robot_series(r, KELVIN_ROBOT_VMAX, vmax);
  kelvin_robot_series(r, KELVIN_ROBOT_REACH, reach);
  kelvin_robot_series(r, KELVIN_ROBOT_MARGIN, margin);
  kelvin_robot_series(r, KELVIN_ROBOT_KN, kn);
  kelvin_robot_series(r, KELVIN_ROBOT_Q, q);
  const int have_kn = kelvin_robot_compliant(r);
  int nreach = 0;
  for (int k = 0; k < ns; ++k) nreach += reach[k] != 0;
  /* (no sample reachable: nothing to plot, and gnuplot would fail on the empty range; an earlier run's
   * figure goes, so that none stays beside the new CSV) */
  if (write_csv(&o, ndof, ns, pos, nrm, meff, vmax, reach, margin, kn, q, s, have_kn) != 0 ||
      (nreach > 0 && figure(&o, kelvin_robot_name(r), have_kn) != 0) ||
      (nreach == 0 &&
       (kl_out_remove(o.c.out, "robot_path.png") != 0 || kl_out_remove(o.c.out, "robot_path.png.gp") != 0)) ||
      write_json(&o, r, ns, reach) != 0 ||
      kl_run_commit() != 0) {
    rc = KL_EXIT_RUNTIME;
    goto done;
  }
  if (!o.c.quiet) {
    double mlo = INFINITY, mhi = -INFINITY, vlo = INFINITY, vhi = -INFINITY, klo = INFINITY, khi = -INFINITY,
           mg = INFINITY, base[3];
    int kmlo = 0, kmhi = 0, kvlo = 0;
    for (int k = 0; k < ns; ++k) {
      if (!reach[k]) continue;
      if (meff[k] < mlo) mlo = meff[k], kmlo = k;
      if (meff[k] > mhi) mhi = meff[k], kmhi = k;
      if (vmax[k] < vlo) vlo = vmax[k], kvlo = k;
      vhi = fmax(vhi, vmax[k]);
      klo = fmin(klo, kn[k]), khi = fmax(khi, kn[k]);
      mg = fmin(mg, margin[k]);
    }
    kelvin_robot_base(r, base, NULL);
    fputs("kelvin robot: ", stdout); /* the name and the path's file name from the user, escaped */
    kl_cli_puts_safe(stdout, kelvin_robot_name(r));
    printf(", %d joints (%s IK), base at (%g, %g, %g) m\npath: ", ndof,
           kelvin_robot_closed_ik(r) ? "closed-form spherical-wrist" : "damped least squares", base[0], base[1],
           base[2]);
    kl_cli_puts_safe(stdout, o.path ? o.path : "built-in (200 mm line over a curved panel)");
    printf(", %d samples, %.1f mm long\n", ns, 1e3 * s[ns - 1]);
    printf("reachable within the joint limits: %d of %d samples\n", nreach, ns);
    if (nreach > 0) {
      printf("effective mass along the normal: %.4g kg (s = %.1f mm) .. %.4g kg (s = %.1f mm)\n", mlo, 1e3 * s[kmlo], mhi,
             1e3 * s[kmhi]);
      printf("feed-speed bound from the joint speed limits: %.4g .. %.4g m/s (lowest at s = %.1f mm)\n", vlo, vhi,
             1e3 * s[kvlo]);
      if (have_kn) printf("stiffness along the normal: %.4g .. %.4g N/mm\n", klo / 1e3, khi / 1e3);
      printf("smallest joint-limit margin: %.2f deg\n", mg * 180.0 / 3.14159265358979323846);
    }
  }
  if (st == KELVIN_OK) kl_cli_note(&o.c, "robot: wrote %s/{robot_path.csv, robot_path.png}", o.c.out);
  if (st != KELVIN_OK) {
    kl_cli_error("robot: %s (see the reach column of %s/robot_path.csv%s)", msg, o.c.out,
                 nreach > 0 ? "" : "; no sample is reachable, so no figure");
    rc = KL_EXIT_RUNTIME;
  }
done:
  free(pos), free(nrm), free(meff), free(vmax), free(margin), free(kn), free(q), free(s), free(reach);
  kelvin_robot_free(r);
  return rc;
}
