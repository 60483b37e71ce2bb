/* examples/api/optimise.c: a grinding-pass optimisation on a part built in memory with libkelvin.
 * The part as it is: a flat aluminium plate, 160 x 40 mm, with a weld bead across the path (Gaussian,
 * 0.4 mm high, sigma 1.5 mm, at x = 10 mm), meshed from arrays. The path as planned on the CAD, which
 * knows nothing of the bead: a straight line over the flat plate, given as points and normals. The tool
 * and holder are the built-in example's (a 6 mm ball-end on a 5 kN/m compliant holder), the target is
 * 5 N. The naive pass (a constant offset) hits the bead; the optimised pass lifts the tool over it.
 * Settings are set by the keys of examples/optimise.yaml; a small screening and refinement keep it short.
 *
 *   cc optimise.c $(pkg-config --cflags --libs kelvin) -lm -o optimise && ./optimise [--cpu]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kelvin/grind.h>

#define NX 321 /* 0.5 mm along x */
#define NY 21  /* 2 mm along y */
#define NP 25  /* path points on the CAD */

/* print the message of a failed call and leave */
#define CHECK(call)                                                                                          \
  do {                                                                                                       \
    if ((call) != KELVIN_OK) {                                                                               \
      fprintf(stderr, "optimise: %s\n", kelvin_grind_errmsg(g));                                             \
      goto done;                                                                                             \
    }                                                                                                        \
  } while (0)

int main(int argc, char **argv)
{
  const int cpu = argc > 1 && strcmp(argv[1], "--cpu") == 0;
  int rc = 1;
  kelvin_grind *g = NULL;
  kelvin_device *dev = NULL;
  double *vert = malloc(sizeof(double) * 3 * NX * NY);
  int *tri = malloc(sizeof(int) * 6 * (NX - 1) * (NY - 1));
  double *series = NULL;
  if (!vert || !tri || kelvin_grind_create(&g) != KELVIN_OK || kelvin_device_create(&dev) != KELVIN_OK) {
    fprintf(stderr, "optimise: out of memory\n");
    goto done;
  }

  /* the part as it is: a height field z(x, y) = bead(x), two triangles per cell */
  for (int j = 0; j < NY; ++j)
    for (int i = 0; i < NX; ++i) {
      double *p = &vert[3 * (j * NX + i)];
      p[0] = -0.08 + 0.16 * i / (NX - 1);
      p[1] = -0.02 + 0.04 * j / (NY - 1);
      const double u = (p[0] - 0.01) / 1.5e-3;
      p[2] = 4e-4 * exp(-0.5 * u * u);
    }
  int nt = 0;
  for (int j = 0; j + 1 < NY; ++j)
    for (int i = 0; i + 1 < NX; ++i) {
      const int a = j * NX + i, b = a + 1, c = a + NX, d = c + 1;
      const int t[6] = {a, b, d, a, d, c}; /* counter-clockwise seen from +z */
      memcpy(&tri[3 * nt], t, sizeof t);
      nt += 2;
    }
  CHECK(kelvin_grind_set_mesh(g, vert, NX * NY, tri, nt));

  /* the path on the CAD (the plane z = 0): x from -60 to 60 mm at y = 0, normals up */
  double pts[3 * NP], nrm[3 * NP];
  for (int k = 0; k < NP; ++k) {
    pts[3 * k] = -0.06 + 0.12 * k / (NP - 1);
    pts[3 * k + 1] = pts[3 * k + 2] = 0;
    nrm[3 * k] = nrm[3 * k + 1] = 0;
    nrm[3 * k + 2] = 1;
  }
  CHECK(kelvin_grind_set_path(g, pts, nrm, NP));

  /* settings by key (examples/optimise.yaml has them all, with their defaults) */
  CHECK(kelvin_grind_set(g, "target.force", 5.0));
  CHECK(kelvin_grind_set(g, "path.samples", 121));
  CHECK(kelvin_grind_set(g, "offset.control_points", 48));
  CHECK(kelvin_grind_set(g, "optimiser.screening", 512));
  CHECK(kelvin_grind_set(g, "optimiser.maxeval", 12));
  CHECK(kelvin_grind_set(g, "optimiser.keep", 1));
  CHECK(kelvin_grind_set(g, "verify.count", 1));
  CHECK(kelvin_grind_set_string(g, "contact.law", "exact"));

  if (kelvin_device_open(dev, NULL, cpu ? KELVIN_DEVICE_CPU : 0) != KELVIN_OK) {
    fprintf(stderr, "optimise: %s\n", kelvin_device_errmsg(dev));
    goto done;
  }
  printf("# libkelvin %s on %s\n", kelvin_version(), kelvin_device_describe(dev));
  CHECK(kelvin_grind_optimise(g, dev));

  /* the results */
  const int ns = kelvin_grind_nsamples(g), best = kelvin_grind_best(g);
  double x0;
  kelvin_grind_pass_control(g, 0, &x0, 1);
  printf("path %.1f mm in %d samples, naive offset %.9g m\n", 1e3 * kelvin_grind_length(g), ns, x0);
  printf("pass best rms_predicted rms_verified pass_time_s mean_verified_force_N\n");
  series = malloc(sizeof(double) * (size_t)ns);
  if (!series) goto done;
  for (int i = 0; i < kelvin_grind_npass(g); ++i) {
    double mean = NAN;
    if (kelvin_grind_pass_series(g, i, KELVIN_SERIES_FORCE_VERIFIED, series) == KELVIN_OK) {
      mean = 0;
      for (int k = ns / 10; k < ns; ++k) mean += series[k] / (ns - ns / 10); /* after the approach */
    }
    printf("%s %d %.6g %.6g %.6g %.6g\n", kelvin_grind_pass_label(g, i), i == best,
           kelvin_grind_pass_value(g, i, KELVIN_PASS_RMS), kelvin_grind_pass_value(g, i, KELVIN_PASS_RMS_VERIFIED),
           kelvin_grind_pass_value(g, i, KELVIN_PASS_TIME), mean);
  }
  printf("%ld rollouts\n", kelvin_grind_rollouts(g));
  rc = 0;
done:
  free(series);
  free(vert);
  free(tri);
  kelvin_device_free(dev);
  kelvin_grind_free(g);
  return rc;
}
