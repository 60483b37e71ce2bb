/* cli/main.c: `kelvin COMMAND [options] [file]` */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <kelvin/kelvin.h>
#include "cli.h"
#include "commands.h"

typedef struct command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} command;

static const command commands[] = {
  {"optimise", kl_cmd_optimise, "grinding pass: offsets and feed speeds that hit a target force (the main job)"},
  {"evaluate", kl_cmd_evaluate, "a grinding pass you already have: device prediction and 3-D verification"},
  {"bounce", kl_cmd_bounce, "the paper's bouncing-ball study (section 4.1): data, summary, figure"},
  {"simulate", kl_cmd_simulate, "the variable-time-step 3-D engine on a YAML scene: states, contacts, figure"},
  {"sweep", kl_cmd_sweep, "impact scenarios in one OpenCL/OpenMP batch: metrics CSV, summary, figure"},
  {"check", kl_cmd_check, "validate a config, scene, robot, mesh or CSV input without running; print it in brief"},
  {"devices", kl_cmd_devices, "the OpenCL platforms and devices found, and which one is used"},
  {"robot", kl_cmd_robot, "robot effective mass and feed-speed bound along a path (IK, M(q), limits)"},
  {"fit", kl_cmd_fit, "calibrate the general contact law (k, c, n1, n2, m) to a measured impact or force trace"},
};
#define NCOMMANDS ((int)(sizeof commands / sizeof commands[0]))

static void usage(FILE *f)
{
  fprintf(f, "usage: kelvin COMMAND [options] [file]\n\n"
             "Compliant-contact simulation and force-aware trajectory optimisation.\n\ncommands:\n");
  for (int i = 0; i < NCOMMANDS; ++i) fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "\n'kelvin COMMAND --help' describes each command's options.\n"
             "  --version  print the version\n  --help     this text\n"
             "Exit status: 0 success, 1 runtime failure, 2 usage or input error.\n");
}

int main(int argc, char **argv)
{
  /* a closed standard stream (`2>&-`) is given /dev/null: else the next file opened (the output folder's
   * lock, an output) would take its number, and messages would be written into it */
  for (int fd = 0; fd < 3; ++fd)
    if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      const int n = open("/dev/null", fd ? O_WRONLY : O_RDONLY);
      if (n >= 0 && n != fd) close(n);
    }
  kl_cli_set_argv(argc, argv); /* (GSL errors: the library installs its own handler, engine/gsl_guard.h) */
  if (argc < 2) {
    usage(stderr);
    return KL_EXIT_USAGE;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
    usage(stdout);
    return KL_EXIT_OK;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("kelvin %s\n", kelvin_version());
    return KL_EXIT_OK;
  }
  for (int i = 0; i < NCOMMANDS; ++i)
    if (strcmp(argv[1], commands[i].name) == 0) {
      const int rc = commands[i].run(argc - 1, argv + 1);
      kl_run_abort(); /* whatever the command did not commit: nothing half-written stays */
      return rc;
    }
  kl_cli_error("unknown command '%s' (try 'kelvin --help')", argv[1]);
  return KL_EXIT_USAGE;
}
