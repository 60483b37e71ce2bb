/* examples/api/impact.c: an impact sweep with libkelvin. A 1 kg mass strikes a compliant contact at 20
 * speeds from 0.1 to 2 m/s, for three restitution coefficients and three contact models (Kelvin-Voigt;
 * Hertz + Hunt-Crossley with the exact-restitution law and with Hunt and Crossley's own law), all 180
 * scenarios in one batch on an OpenCL device or, with --cpu, the OpenMP twin. Prints one row per
 * scenario: the inputs and the maximum penetration, contact time, peak force and effective restitution.
 *
 *   cc impact.c $(pkg-config --cflags --libs kelvin) -o impact && ./impact [--cpu]
 */
#include <stdio.h>
#include <string.h>

#include <kelvin/batch.h>

int main(int argc, char **argv)
{
  const int cpu = argc > 1 && strcmp(argv[1], "--cpu") == 0;
  const double cr[3] = {1.0, 0.8, 0.5};
  struct {
    kelvin_model model;
    kelvin_law law;
    double n, K; /* exponent, stiffness [N/m^n] */
    const char *name;
  } const kind[3] = {{KELVIN_MODEL_KV, KELVIN_LAW_EXACT, 1.0, 1e6, "kv"},
                     {KELVIN_MODEL_HC, KELVIN_LAW_EXACT, 1.5, 1e9, "hc-exact"},
                     {KELVIN_MODEL_HC, KELVIN_LAW_HUNT_CROSSLEY, 1.5, 1e9, "hc-hunt-crossley"}};
  enum { NV = 20, N = 3 * 3 * NV };

  kelvin_device *dev = NULL;
  kelvin_impact_batch *b = NULL;
  int rc = 1;
  if (kelvin_device_create(&dev) != KELVIN_OK || kelvin_impact_batch_create(N, 0, &b) != KELVIN_OK) {
    fprintf(stderr, "impact: out of memory\n");
    goto done;
  }
  if (kelvin_device_open(dev, NULL, cpu ? KELVIN_DEVICE_CPU : 0) != KELVIN_OK) {
    fprintf(stderr, "impact: %s\n", kelvin_device_errmsg(dev));
    goto done;
  }
  printf("# libkelvin %s on %s\n", kelvin_version(), kelvin_device_describe(dev));

  /* the scenarios */
  size_t i = 0;
  for (int k = 0; k < 3; ++k)
    for (int c = 0; c < 3; ++c)
      for (int j = 0; j < NV; ++j, ++i) {
        kelvin_impact_in in;
        kelvin_impact_in_init(&in);
        in.m = 1.0;
        in.K = kind[k].K;
        in.n = kind[k].n;
        in.model = kind[k].model;
        in.law = kind[k].law;
        in.cr = cr[c];
        in.v0 = 0.1 + (2.0 - 0.1) * j / (NV - 1);
        kelvin_impact_batch_set(b, i, &in);
      }
  if (kelvin_impact_batch_run(b, dev) != KELVIN_OK) {
    fprintf(stderr, "impact: %s\n", kelvin_impact_batch_errmsg(b));
    goto done;
  }

  /* the table */
  printf("model m K n cr v0 dmax_m tc_s fpeak_N cr_eff flags\n");
  i = 0;
  for (int k = 0; k < 3; ++k)
    for (int c = 0; c < 3; ++c)
      for (int j = 0; j < NV; ++j, ++i) {
        kelvin_impact_out o;
        kelvin_impact_batch_get(b, i, &o);
        printf("%s 1 %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %d\n", kind[k].name, kind[k].K, kind[k].n, cr[c],
               0.1 + (2.0 - 0.1) * j / (NV - 1), o.dmax, o.tc, o.fpeak, o.cr_eff, o.flags);
      }
  rc = 0;
done:
  kelvin_impact_batch_free(b);
  kelvin_device_free(dev);
  return rc;
}
