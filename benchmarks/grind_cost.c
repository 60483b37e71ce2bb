/* benchmarks/grind_cost.c: cost of the grinding tool pass against the workpiece mesh size.
 *
 * The same pass (a 60 mm path at 10 mm/s over a 70 x 20 mm strip with a 0.2 mm weld bead, 401 path
 * samples, Kelvin-Voigt contact, ftol 1e-3) is run over meshes of about 1e4, 1e5 and 1e6 triangles:
 *   1. kl_grind_run (benchmarks/grind_twin.h, this benchmark's CPU twin of the 1-D model: holder dynamics,
 *      exponential sub-steps, BVH closest point);
 *   2. kl_grind_run_many, 8 passes with OpenMP across passes;
 *   3. the 3-D engine (engine/world.h): a sphere tool on a holder over the same mesh.
 * Prints simulated seconds per wall second, the mesh build time, and the growth of the cost per pass
 * from one mesh size to the next (the BVH keeps it logarithmic, far below the 10x of a linear scan).
 *   grind_cost [--quick]     (--quick: 1e4 and 1e5 only)
 *
 * Checked before a row is printed (a row with wrong results gets no rate and the program exits 1):
 *   - off the bead (x <= 6 mm, 8 bead widths away) the force is the static equilibrium written out,
 *     K_h (o - z) + F_g = K z, F = K (K_h o + F_g) / (K_h + K) = 6.6667 N, to 3e-13 relative (measured
 *     2.2e-14: the sub-steps hold the rest state to rounding);
 *   - the OpenMP batch's pass with the same offset reproduces the single pass exactly (every sample);
 *   - the 3-D engine's peak force agrees with the 1-D twin's to 3e-3 relative (two formulations of the same
 *     pass; measured 3.0e-4 at 1e4 and 1e5 triangles);
 *   - the peak force agrees with the previous (10x coarser) mesh's to 2e-3 (measured 1.8e-4, 1e4 -> 1e5). */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "benchmarks/bench_util.h"
#include "benchmarks/grind_twin.h"
#include "engine/world.h"
#include "kernels/kl_impact.h"

/* strip [-5, 65] x [-10, 10] mm, nx x ny cells, z = bead(x) */
static kl_mesh *strip(int nx, int ny, double *build_s)
{
  const int nv = (nx + 1) * (ny + 1);
  double *v = malloc((size_t)nv * 3 * sizeof *v);
  for (int j = 0; j <= ny; ++j)
    for (int i = 0; i <= nx; ++i) {
      double *p = v + 3 * ((size_t)j * (nx + 1) + i);
      p[0] = -5e-3 + 70e-3 * i / nx;
      p[1] = -10e-3 + 20e-3 * j / ny;
      p[2] = 0.2e-3 * exp(-(p[0] - 30e-3) * (p[0] - 30e-3) / (2 * 3e-3 * 3e-3));
    }
  kl_mesh *m = NULL;
  char msg[256];
  const double t0 = kl_bench_now();
  if (kl_mesh_from_grid(v, nx, ny, &m, msg, sizeof msg) != KELVIN_OK) {
    fprintf(stderr, "grind_cost: %s\n", msg);
    exit(1);
  }
  *build_s = kl_bench_now() - t0;
  free(v);
  return m;
}

enum { NS = 401, NPASS = 8 };

typedef struct pass_buf {
  double s[NS], p[3 * NS], n[3 * NS], tn[3 * NS], m[NS], fg[NS], off[NS], spd[NS];
  double force[NS], favg[NS], time[NS], z[NS], depth[NS];
  int contact[NS];
} pass_buf;

/* the pass of the header comment over mesh, outputs into P */
static void setup(pass_buf *P, kl_grind_scene *g, const kl_mesh *mesh, kl_grind_result *r)
{
  memset(P, 0, sizeof *P);
  for (int k = 0; k < NS; ++k) {
    P->s[k] = 60e-3 * k / (NS - 1);
    P->p[3 * k] = P->s[k];
    P->n[3 * k + 2] = 1;
    P->tn[3 * k] = 1;
    P->m[k] = 2.0;
    P->fg[k] = 2.0;
    P->off[k] = 0.3e-3;
    P->spd[k] = 10e-3;
  }
  memset(g, 0, sizeof *g);
  g->actual = mesh;
  g->ns = NS;
  g->s = P->s, g->p = P->p, g->nrm = P->n, g->tan = P->tn, g->meff = P->m, g->fg = P->fg;
  g->tool_R = 5e-3;
  g->holder_K = 2e4;
  g->holder_D = 280;
  g->model = KL_MODEL_KV;
  g->K = 1e5;
  g->n = 1;
  g->D = kl_kv_damping(0.5, 1e5, 2.0);
  g->ftol = 1e-3;
  r->force = P->force, r->favg = P->favg, r->time = P->time, r->z = P->z, r->depth = P->depth, r->contact = P->contact;
}

/* the 3-D engine: tool sphere on a holder over the mesh, the same pass; returns wall seconds */
static double world_pass(const kl_mesh *mesh, double T, long *nsub, double *fpeak)
{
  kl_world_model *m = kl_world_create();
  m->gravity[2] = -1.0;
  m->rule = KL_SEP_FORCE;
  kl_body_def b;
  kl_world_default_body(&b);
  b.type = KL_BODY_STATIC, b.K = 1e5, b.cr = 0.5;
  const int w = kl_world_add_body(m, &b);
  kl_shape_def s;
  kl_world_default_shape(&s);
  s.type = KL_SHAPE_MESH, s.mesh = mesh;
  kl_world_add_shape(m, w, &s);
  kl_world_default_body(&b);
  b.mass = 2, b.K = 1e5, b.cr = 0.5, b.pos[2] = 5e-3;
  b.holder = 1;
  b.anchor[2] = 5e-3 - 0.3e-3;
  b.anchor_vel[0] = 10e-3;
  b.holder_K[0] = b.holder_K[1] = 2e5, b.holder_K[2] = 2e4;
  b.holder_D[0] = b.holder_D[1] = 885, b.holder_D[2] = 280;
  const int tool = kl_world_add_body(m, &b);
  kl_world_default_shape(&s);
  s.size[0] = 5e-3;
  kl_world_add_shape(m, tool, &s);
  char msg[256];
  if (kl_world_compile(m, msg, sizeof msg) != KELVIN_OK) {
    fprintf(stderr, "grind_cost: %s\n", msg);
    exit(1);
  }
  kl_world_data *d = kl_world_data_create(m);
  const double t0 = kl_bench_now();
  *fpeak = 0;
  for (int k = 1; k <= 600; ++k) {
    if (kl_world_advance(m, d, T * k / 600, msg, sizeof msg) != KELVIN_OK) {
      fprintf(stderr, "grind_cost: %s\n", msg);
      exit(1);
    }
    double f[3];
    kl_world_contact_force(m, d, tool, f);
    *fpeak = fmax(*fpeak, f[2]);
  }
  const double wall = kl_bench_now() - t0;
  *nsub = d->nsub;
  kl_world_data_free(d);
  kl_world_free(m);
  return wall;
}

int main(int argc, char **argv)
{
  int quick = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) {
      quick = 1;
    } else {
      return kl_bench_usage(argv[i], "usage: grind_cost [--quick]\n\nOne grinding tool pass over meshes of about 1e4, "
                                     "1e5 and 1e6 triangles (--quick: 1e4 and 1e5 only):\nthe 1-D pass of "
                                     "benchmarks/grind_twin.h, eight of them with OpenMP, and the 3-D engine; a "
                                     "Markdown table on stdout.\nExit status: 0 ok; 1 a row's results failed their check; 2 usage.\n");
    }
  }
  const int sizes[3][2] = {{250, 20}, {790, 63}, {2500, 200}}; /* 2 nx ny ~ 1e4, 1e5, 1e6 triangles */
  const int nsize = quick ? 2 : 3;
  printf("grind_cost: one tool pass (60 mm at 10 mm/s = 6 s simulated, %d samples) over a bead strip; %d OpenMP threads\n\n",
         NS, omp_get_max_threads());
  printf("| triangles | BVH build s | 1-D twin pass: sim s / wall s | sub-steps | x vs previous | %d passes OpenMP: sim s / wall s | "
         "3-D engine pass: sim s / wall s | sub-steps | x vs previous | peak force N (1-D twin, 3-D) |\n",
         NPASS);
  printf("|---|---|---|---|---|---|---|---|---|---|\n");
  pass_buf *P = malloc(sizeof *P);
  pass_buf *PP = malloc(NPASS * sizeof *PP);
  double prev1 = 0, prev3 = 0, prevf = 0;
  for (int i = 0; i < nsize; ++i) {
    double build;
    kl_mesh *mesh = strip(sizes[i][0], sizes[i][1], &build);
    kl_grind_scene g;
    kl_grind_result r;
    setup(P, &g, mesh, &r);
    char msg[256];
    /* repeat until 0.5 s of wall time so small meshes are timed too */
    int reps = 0;
    const double t0 = kl_bench_now();
    double wall;
    do {
      if (kl_grind_run(&g, P->off, P->spd, &r, msg, sizeof msg) != KELVIN_OK) {
        fprintf(stderr, "grind_cost: %s\n", msg);
        return 1;
      }
      ++reps;
      wall = kl_bench_now() - t0;
    } while (wall < 0.5);
    const double per = wall / reps, T = P->time[NS - 1];
    double fpk = 0;
    for (int k = 0; k < NS; ++k) fpk = fmax(fpk, P->force[k]);
    /* several passes at once */
    kl_grind_result rr[NPASS];
    double offs[NPASS * NS], spds[NPASS * NS];
    for (int p = 0; p < NPASS; ++p) {
      kl_grind_scene gg;
      setup(&PP[p], &gg, mesh, &rr[p]);
      for (int k = 0; k < NS; ++k) {
        offs[p * NS + k] = P->off[k] + (p - 2) * 0.05e-3; /* pass 2: the single pass's offset, exactly */
        spds[p * NS + k] = 10e-3;
      }
    }
    const double t1 = kl_bench_now();
    if (kl_grind_run_many(&g, NPASS, offs, spds, rr, msg, sizeof msg) != KELVIN_OK) {
      fprintf(stderr, "grind_cost: %s\n", msg);
      return 1;
    }
    const double wmany = kl_bench_now() - t1;
    long nsub3;
    double f3;
    const double w3 = world_pass(mesh, T, &nsub3, &f3);
    /* checks before the row */
    const double Fstatic = g.K * (g.holder_K * 0.3e-3 + 2.0) / (g.holder_K + g.K);
    double e_static = 0;
    for (int k = 0; k < NS && P->s[k] <= 6e-3 + 1e-12; ++k) e_static = fmax(e_static, fabs(P->force[k] - Fstatic) / Fstatic);
    int same = 1;
    for (int k = 0; k < NS; ++k) same &= PP[2].force[k] == P->force[k] && PP[2].favg[k] == P->favg[k];
    const double e_3d = fabs(f3 - fpk) / fpk, e_mesh = prevf > 0 ? fabs(fpk - prevf) / prevf : 0.0;
    fprintf(stderr, "grind_cost: %d triangles: static force off the bead %.2e relative, OpenMP pass %s, 3-D vs 1-D twin "
                    "peak %.2e, peak vs previous mesh %.2e\n",
            kl_mesh_ntri(mesh), e_static, same ? "identical" : "DIFFERENT", e_3d, e_mesh);
    if (!(e_static <= 3e-13) || !same || !(e_3d <= 3e-3) || !(e_mesh <= 2e-3)) {
      printf("| %d | wrong results: no rate (static %.1e, OpenMP %s, 3-D %.1e, mesh %.1e) | | | | | | | | |\n",
             kl_mesh_ntri(mesh), e_static, same ? "same" : "different", e_3d, e_mesh);
      kl_mesh_free(mesh);
      free(P);
      free(PP);
      return 1;
    }
    prevf = fpk;
    printf("| %d | %.3f | %.1f | %ld | %.2f | %.1f | %.1f | %ld | %.2f | %.3f, %.3f |\n", kl_mesh_ntri(mesh), build,
           T / per, r.nsub, prev1 > 0 ? per / prev1 : 1.0, NPASS * T / wmany, T / w3, nsub3,
           prev3 > 0 ? w3 / prev3 : 1.0, fpk, f3);
    fflush(stdout);
    prev1 = per;
    prev3 = w3;
    kl_mesh_free(mesh);
  }
  printf("\n'x vs previous': wall time per pass over the previous row's (10x fewer triangles); a linear scan would be ~10.\n");
  free(P);
  free(PP);
  return 0;
}
