/* cli/main.c: `kelvin COMMAND [options] [file]` */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
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
             "Exit status: 0 success, 1 runtime failure, 2 usage or input error.\n\n"
             "Across MPI ranks (a build with -DKELVIN_MPI=ON): mpirun -n N kelvin sweep|optimise|evaluate ...\n"
             "shares the work among N processes, each on its own device (the node's processes spread over its\n"
             "GPUs; --device still picks one), with the outputs of one process; rank 0 prints and writes them.\n"
             "The other commands run on one process.\n");
}

#ifdef KELVIN_HAVE_MPI
#include <kelvin/mpi.h>
static kelvin_shard mpi_shard;
static int mpi_on; /* MPI_Init was called */
#endif

/* Under an MPI launcher (mpirun, srun: OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK in the environment),
 * MPI_Init and the run's group over MPI_COMM_WORLD (kl_cli_set_shard; docs/design.md section 11); a plain
 * `kelvin ...`, or a build without MPI, never touches MPI. 0, or -1 with a message. */
static int mpi_begin(int *argc, char ***argv)
{
#ifdef KELVIN_HAVE_MPI
  if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMI_SIZE") && !getenv("PMIX_RANK")) return 0;
  if (MPI_Init(argc, argv) != MPI_SUCCESS) {
    kl_cli_error("MPI_Init failed");
    return -1;
  }
  mpi_on = 1;
  const kelvin_status st = kelvin_shard_mpi(&mpi_shard, MPI_COMM_WORLD);
  if (st != KELVIN_OK) {
    kl_cli_error("the MPI group could not be set up (%s)", kelvin_status_str(st));
    MPI_Abort(MPI_COMM_WORLD, KL_EXIT_RUNTIME);
    return -1;
  }
  kl_cli_set_shard(&mpi_shard);
#else
  (void)argc, (void)argv;
#endif
  return 0;
}

/* The end of a run under MPI: every rank agrees on the exit status (the lowest failing rank's; a rank > 0
 * that failed alone, so that rank 0 printed nothing about it, prints its own message), then the group is
 * freed and MPI finalised. Returns the exit status. */
static int mpi_end(int rc)
{
#ifdef KELVIN_HAVE_MPI
  if (!mpi_on) return rc;
  const kelvin_shard *sh = kl_cli_shard();
  if (sh) {
    kelvin_status st = rc == KL_EXIT_OK ? KELVIN_OK : rc == KL_EXIT_USAGE ? KELVIN_ERR_ARG : KELVIN_ERR_IO;
    char msg[1200];
    snprintf(msg, sizeof msg, "%s", kl_cli_rank_msg()[0] ? kl_cli_rank_msg() : "failed");
    st = kelvin_shard_agree(sh, st, msg, sizeof msg);
    int who = -1;
    if (st != KELVIN_OK && sscanf(msg, "rank %d:", &who) == 1 && who == sh->rank && who > 0 && kl_cli_rank_msg()[0])
      fprintf(stderr, "kelvin: %s\n", msg);
    rc = st == KELVIN_OK ? KL_EXIT_OK : st == KELVIN_ERR_ARG ? KL_EXIT_USAGE : KL_EXIT_RUNTIME;
    /* what sharing cost rank 0 (benchmarks/mpi_scaling.sh reads this line; docs/design.md section 11.5) */
    kelvin_shard_stats ss;
    kelvin_shard_mpi_stats(sh, &ss);
    if (rc == KL_EXIT_OK && sh->rank == 0)
      fprintf(stderr, "kelvin: across %d ranks: %ld collectives, %.1f MB received, %.3f s in them\n", sh->size,
              ss.calls, ss.bytes / 1e6, ss.seconds);
  }
  kl_cli_set_shard(NULL);
  kelvin_shard_mpi_free(&mpi_shard);
  MPI_Finalize();
#endif
  return rc;
}

/* The commands whose work is shared across MPI ranks (kl_cli_shard); the others run on one process. */
static int sharded(const char *name)
{
  return strcmp(name, "sweep") == 0 || strcmp(name, "optimise") == 0 || strcmp(name, "evaluate") == 0;
}

static int run(int argc, char **argv)
{
  if (argc < 2) {
    if (kl_cli_rank() == 0) usage(stderr);
    return KL_EXIT_USAGE;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
    usage(stdout);
    return KL_EXIT_OK;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("kelvin %s\n", kelvin_version());
#ifdef KELVIN_HAVE_MPI /* a build that runs across MPI ranks says with which MPI (benchmarks/mpi_scaling.sh asks) */
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (MPI_Get_library_version(lib, &len) == MPI_SUCCESS) printf("MPI: %.*s\n", (int)strcspn(lib, ",\n"), lib);
#endif
    return KL_EXIT_OK;
  }
  for (int i = 0; i < NCOMMANDS; ++i)
    if (strcmp(argv[1], commands[i].name) == 0) {
      if (kl_cli_shard() && !sharded(commands[i].name)) {
        kl_cli_error("kelvin %s runs on one process; run it without mpirun", commands[i].name);
        return KL_EXIT_USAGE;
      }
      const int rc = commands[i].run(argc - 1, argv + 1);
      kl_run_abort(); /* whatever the command did not commit: nothing half-written stays */
      return rc;
    }
  kl_cli_error("unknown command '%s' (try 'kelvin --help')", argv[1]);
  return KL_EXIT_USAGE;
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
  if (mpi_begin(&argc, &argv) != 0) return KL_EXIT_RUNTIME;
  return mpi_end(run(argc, argv));
}
