/* cli/cmd_check.c: `kelvin check FILE`: validate any input file without running anything (like MuJoCo's
 * compile), through kelvin_check_file (kelvin/check.h): prints the parsed model in brief on stdout; exit
 * 0 when the file is good, 2 with the one-line message of the run that would have failed (1 when memory
 * ran out). */
#include <getopt.h>
#include <stdio.h>

#include <kelvin/check.h>

#include "cli.h"
#include "commands.h"

static void help(void)
{
  printf("usage: kelvin check FILE\n\n"
         "Validate an input file without running anything, and print what was read, in brief:\n"
         "  optimise/evaluate config (.yaml with workpiece:, path:, ... sections): the settings, every file they\n"
         "      name (mesh, path, target, robot) and the problem prepared from them: mesh bounds, path length\n"
         "      and samples, offset and speed bounds, contact law and constants, and the contact's share of the\n"
         "      compliance at the mean target force F (F = K delta^n: d(delta)/dF = delta/(n F), against 1/holder K),\n"
         "      as `kelvin optimise` prepares them\n"
         "  sweep config (sweep:), scene (bodies:), robot (robot: or .urdf), mesh (.stl, .obj, .ply),\n"
         "  CSV input: path (x,y,z,nx,ny,nz), target (s,force), pass (s,offset,speed) or sweep scenarios\n"
         "      (m,K,cr,v0,model), told apart by the header.\n"
         "Exit status: 0 the file is good; 2 it is not (one line names the file, line and field).\n");
}

int kl_cmd_check(int argc, char **argv)
{
  static const struct option lo[] = {{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
  opterr = 0;
  optind = 1;
  int ch;
  while ((ch = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
    if (ch == 'h') {
      help();
      return KL_EXIT_OK;
    }
    kl_cli_error("check: unknown option '%s' (try 'kelvin check --help')", argv[optind - 1]);
    return KL_EXIT_USAGE;
  }
  if (optind + 1 != argc) {
    kl_cli_error("check: expected one FILE (usage: kelvin check FILE)");
    return KL_EXIT_USAGE;
  }
  kelvin_check *c = NULL;
  if (kelvin_check_create(&c) != KELVIN_OK) {
    kl_cli_error("out of memory");
    return KL_EXIT_RUNTIME;
  }
  const kelvin_status st = kelvin_check_file(c, argv[optind]);
  int rc = KL_EXIT_OK;
  if (st == KELVIN_OK)
    kl_cli_puts_safe(stdout, kelvin_check_summary(c)); /* names from the user's files, escaped */
  else {
    kl_cli_error("%s", kelvin_check_errmsg(c));
    rc = st == KELVIN_ERR_NOMEM ? KL_EXIT_RUNTIME : KL_EXIT_USAGE;
  }
  kelvin_check_free(c);
  return rc;
}
