/* cli/cmd_devices.c: `kelvin devices`: the OpenCL platforms and devices found, and which path
 * `kelvin sweep` (and every batch command) would use with the same --device / --cpu / KELVIN_DEVICE,
 * through the public API (kelvin_device_list, kelvin_device_choose: kelvin/batch.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kelvin/batch.h>

#include "cli.h"
#include "commands.h"

/* --help text on stdout. */
static void help(void)
{
  printf("usage: kelvin devices [--device SPEC | --cpu]\n\n"
         "List every OpenCL device: PLATFORM:DEVICE index, platform, name, type, compute units, double\n"
         "precision (fp64, which kelvin needs), global memory, and mark the one batch commands would use.\n"
         "The choice: --device SPEC (PLATFORM:DEVICE like 0:1, gpu, cpu, or part of the device or platform\n"
         "name), else the env var KELVIN_DEVICE, else the first GPU with fp64, else the first device with\n"
         "fp64, else the OpenMP twin on the host. --cpu always chooses the twin.\n"
         "Exit status 0 ok, 1 OpenCL failure, 2 bad option or no device matching SPEC.\n");
}

/* `kelvin devices`: the device table and the choice the same options would make. */
int kl_cmd_devices(int argc, char **argv)
{
  static const struct option lo[] = {{"device", required_argument, 0, 'd'},
                                     {"cpu", no_argument, 0, 'c'},
                                     {"help", no_argument, 0, 'h'},
                                     {0, 0, 0, 0}};
  const char *spec = NULL;
  int cpu = 0;
  opterr = 0;
  optind = 1;
  int ch;
  while ((ch = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
    switch (ch) {
    case 'd': spec = optarg; break;
    case 'c': cpu = 1; break;
    case 'h': help(); return KL_EXIT_OK;
    case ':': kl_cli_error("devices: option '%s' needs a value", argv[optind - 1]); return KL_EXIT_USAGE;
    default: kl_cli_error("devices: unknown option '%s' (try 'kelvin devices --help')", argv[optind - 1]); return KL_EXIT_USAGE;
    }
  }
  if (optind < argc) {
    kl_cli_error("devices: unexpected argument '%s'", argv[optind]);
    return KL_EXIT_USAGE;
  }
  if (cpu && spec) {
    kl_cli_error("devices: --cpu and --device exclude each other");
    return KL_EXIT_USAGE;
  }
  kelvin_device *dev = NULL;
  if (kelvin_device_create(&dev) != KELVIN_OK) {
    kl_cli_error("out of memory");
    return KL_EXIT_RUNTIME;
  }
  kelvin_device_set_spec_name(dev, "--device");
  int rc = KL_EXIT_OK;
  int n = 0, chosen = -1;
  kelvin_status st = kelvin_device_list(dev, &n);
  if (st == KELVIN_OK) st = kelvin_device_choose(dev, spec, cpu ? KELVIN_DEVICE_CPU : 0, &chosen);
  if (st != KELVIN_OK && st != KELVIN_ERR_NODEVICE) {
    kl_cli_error("%s", kelvin_device_errmsg(dev));
    kelvin_device_free(dev);
    return KL_EXIT_RUNTIME;
  }
  kelvin_device_info c = {0};
  if (n == 0) printf("no OpenCL platform or device found (install an ICD, e.g. pocl-opencl-icd, for the CPU)\n");
  else {
    printf("  %-5s %-30s %-36s %-11s %5s %5s %10s\n", "index", "platform", "device", "type", "CUs", "fp64", "memory");
    for (int i = 0; i < n; ++i) {
      kelvin_device_info d;
      if (kelvin_device_list_info(dev, i, &d) != KELVIN_OK) continue;
      if (i == chosen) c = d;
      printf("%c %d:%-3d %-30.30s %-36.36s %-11s %5u %5s %6.1f GiB\n", i == chosen ? '*' : ' ', d.platform, d.device,
             d.platform_name, d.name, d.type, d.compute_units, d.fp64 ? "yes" : "no",
             (double)d.global_mem / (1024.0 * 1024.0 * 1024.0));
    }
  }
  if (st == KELVIN_ERR_NODEVICE) {
    kl_cli_error("%s", kelvin_device_errmsg(dev));
    rc = KL_EXIT_USAGE;
  } else if (chosen >= 0)
    printf("chosen (*): %d:%d '%s' (%s)\n", c.platform, c.device, c.name,
           spec ? "--device" : (getenv("KELVIN_DEVICE") && getenv("KELVIN_DEVICE")[0]) ? "KELVIN_DEVICE" : "default");
  else
    printf("chosen: the OpenMP twin on the host (%s)\n",
           cpu ? "--cpu" : n == 0 ? "no OpenCL device" : "no OpenCL device with fp64");
  kelvin_device_free(dev);
  return rc;
}
