/* benchmarks/maxstep/mx_node.c: the WebAssembly peers (MuJoCo 3.x from npm mujoco-js, PhysX 4.1.1 from
 * npm @cocos/physx, Rapier from npm @dimforge/rapier3d-compat) as runners. One node process runs
 * peer_node.mjs (beside this file; its packages are installed there by scripts/install-deps.sh --bench)
 * for the whole benchmark, started by posix_spawnp with an argument vector (no shell), and answers one
 * request line per run:
 *   request  "run ENGINE CONFIG h tend m R I g K D cr z0 work_cap sample_cap\n"
 *   answer   "ok n nstep nfev work wall bad capped fpeak_int dmax_int\n" and then n doubles each of t, z,
 *            vz, f (little-endian binary), or "err MESSAGE\n".
 * At start it says its version and which engines loaded: "hello\tNODE\tM\tP\tR\n", each engine field
 * "ok:VERSION" or "no:REASON".
 * node, the script or a package missing makes those rows "not run" with the reason, never a failure. */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchmarks/maxstep/mx.h"

#ifndef MX_NODE_SCRIPT
#define MX_NODE_SCRIPT "peer_node.mjs"
#endif

extern char **environ;

static struct {
  int tried, alive;
  pid_t pid;
  FILE *to, *from;
  char version[4][96]; /* the three engines, then node itself */
  char reason[3][200];
  char general[200];
} nd;

/* note the same reason for every engine */
static void all_reasons(const char *why)
{
  snprintf(nd.general, sizeof nd.general, "%s", why);
  for (int e = 0; e < 3; ++e) snprintf(nd.reason[e], sizeof nd.reason[e], "%s", why);
}

/* start node once; 0 if it said hello */
static int node_start(void)
{
  if (nd.tried) return nd.alive ? 0 : -1;
  nd.tried = 1;
  all_reasons("node did not start (not installed?)");
  if (access(MX_NODE_SCRIPT, R_OK) != 0) {
    all_reasons("peer_node.mjs not found beside the benchmark's sources");
    return -1;
  }
  signal(SIGPIPE, SIG_IGN); /* a node that died is read as EOF, not a signal */
  int in[2], out[2];
  if (pipe(in) != 0) return -1;
  if (pipe(out) != 0) {
    close(in[0]);
    close(in[1]);
    return -1;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addclose(&fa, in[1]);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  char *argv[] = {"node", MX_NODE_SCRIPT, NULL};
  const int rc = posix_spawnp(&nd.pid, "node", &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(out[1]);
  if (rc != 0) {
    close(in[1]);
    close(out[0]);
    all_reasons("node not found on PATH");
    return -1;
  }
  nd.to = fdopen(in[1], "w");
  nd.from = fdopen(out[0], "r");
  char line[1024];
  if (!nd.to || !nd.from || !fgets(line, sizeof line, nd.from) || strncmp(line, "hello\t", 6)) {
    all_reasons("node started but peer_node.mjs did not answer");
    mx_node_stop();
    return -1;
  }
  line[strcspn(line, "\n")] = '\0';
  char *p = line + 6, *tab0 = strchr(p, '\t');
  if (tab0) *tab0 = '\0';
  snprintf(nd.version[3], sizeof nd.version[3], "%.90s", p);
  p = tab0 ? tab0 + 1 : NULL;
  for (int e = 0; e < 3 && p; ++e) {
    char *tab = strchr(p, '\t');
    if (tab) *tab = '\0';
    if (!strncmp(p, "ok:", 3)) {
      snprintf(nd.version[e], sizeof nd.version[e], "%.90s", p + 3);
      nd.reason[e][0] = '\0';
    } else {
      snprintf(nd.reason[e], sizeof nd.reason[e], "%.190s", !strncmp(p, "no:", 3) ? p + 3 : p);
    }
    p = tab ? tab + 1 : NULL;
  }
  nd.alive = 1;
  return 0;
}

/* version string of WebAssembly engine e (0 MuJoCo, 1 PhysX, 2 Rapier; 3: node itself), or NULL if it
 * cannot run */
const char *mx_node_version(int engine)
{
  if (engine < 0 || engine > 3) return NULL;
  node_start();
  return nd.version[engine][0] ? nd.version[engine] : NULL;
}

/* why WebAssembly engine e cannot run ("" if it can) */
const char *mx_node_reason(int engine)
{
  if (engine < 0 || engine > 2) return nd.general;
  node_start();
  return nd.reason[engine];
}

/* end the node process (stdin closed: it exits), if one was started */
void mx_node_stop(void)
{
  if (nd.to) fclose(nd.to);
  if (nd.from) fclose(nd.from);
  nd.to = nd.from = NULL;
  if (nd.pid > 0) {
    int st;
    waitpid(nd.pid, &st, 0);
    nd.pid = 0;
  }
  nd.alive = 0;
}

/* read n doubles into x; 0 on success */
static int read_doubles(double *x, long n) { return fread(x, sizeof(double), (size_t)n, nd.from) == (size_t)n ? 0 : -1; }

/* run one case in the node process (mx.h) */
int mx_node_run(const mx_case *c, int v, double h, mx_trace *tr)
{
  const int engine = v >> 8;
  if (node_start() != 0 || !mx_node_version(engine)) {
    snprintf(tr->err, sizeof tr->err, "node: %.190s", mx_node_reason(engine));
    return -1;
  }
  fprintf(nd.to, "run %d %d %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %ld %ld\n", engine, v & 255, h,
          c->tend, c->m, c->R, c->I, c->g, c->K, c->D, c->cr, c->z0, tr->work_cap, tr->cap);
  fflush(nd.to);
  char line[512];
  if (!fgets(line, sizeof line, nd.from)) {
    snprintf(tr->err, sizeof tr->err, "node: the process ended during a run");
    mx_node_stop();
    all_reasons("the node process ended during an earlier run");
    return -1;
  }
  if (strncmp(line, "ok ", 3)) {
    line[strcspn(line, "\n")] = '\0';
    snprintf(tr->err, sizeof tr->err, "node: %.190s", line);
    return -1;
  }
  long n = 0;
  int bad = 0, capped = 0;
  if (sscanf(line + 3, "%ld %ld %ld %ld %lf %d %d %lf %lf", &n, &tr->nstep, &tr->nfev, &tr->work, &tr->wall, &bad,
             &capped, &tr->fpeak_int, &tr->dmax_int) != 9 ||
      n < 0 || n > tr->cap) {
    snprintf(tr->err, sizeof tr->err, "node: bad answer '%.150s'", line);
    mx_node_stop();
    all_reasons("the node process answered out of protocol");
    return -1;
  }
  if (read_doubles(tr->t, n) || read_doubles(tr->z, n) || read_doubles(tr->vz, n) || read_doubles(tr->f, n)) {
    snprintf(tr->err, sizeof tr->err, "node: short read of the samples");
    mx_node_stop();
    all_reasons("the node process ended during an earlier run");
    return -1;
  }
  tr->n = n;
  tr->bad = bad;
  tr->capped = capped;
  return 0;
}
