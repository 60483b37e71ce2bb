/* tests/cli_fulldisk_test.c: a full disk during `kelvin optimise` (issue 31, item 4). A 64 KiB tmpfs, mounted
 * in a user and mount namespace of its own (`unshare -rm`, no root needed where unprivileged user
 * namespaces are allowed), holds the output folder: the CSVs and the report fit, the figure (some 87 KB)
 * does not. gnuplot exits 0 on a PNG it could not finish, so the program must find the cut file itself:
 * exit 1, one line naming optimise.png, and the folder as it was (only the earlier file in it). Skipped
 * (exit 77) without unshare, without gnuplot, or where the namespace or the mount is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tests/cli_util.h"

static char tmp[256];

/* the namespace's script: $1 the case's folder, $2 kelvin; prints kelvin's stderr, its status and the
 * folder's entries (hidden ones too) */
static const char script[] =
  "cd \"$1\" && mount -t tmpfs -o size=64k none mnt || exit 3\n"
  "mkdir mnt/o && echo keep > mnt/o/keep.txt || exit 3\n"
  "\"$2\" optimise c.yaml --cpu --quiet --out mnt/o 2>&1\n"
  "echo \"rc=$?\"\n"
  "ls -A mnt/o\n"
  "cat mnt/o/keep.txt\n";

static int skip_reason(char *why, size_t cap)
{
  if (!kl_test_have("unshare")) return snprintf(why, cap, "no unshare (util-linux)"), 1;
  if (!kl_test_have("gnuplot")) return snprintf(why, cap, "no gnuplot (no figure to cut short)"), 1;
  char out[4096];
  char *argv[] = {(char *)"unshare", (char *)"-rm", (char *)"sh", (char *)"-c",
                  (char *)"mount -t tmpfs -o size=64k none \"$1\" 2>&1", (char *)"sh", tmp, NULL};
  const int rc = kl_test_run(NULL, NULL, argv, 1, out, sizeof out);
  if (rc != 0) return snprintf(why, cap, "cannot mount a tmpfs in a user namespace here (%d): %.200s", rc, out), 1;
  return 0;
}

static void test_full_disk(void **state)
{
  (void)state;
  char dir[512], exe[1024], out[16384];
  snprintf(dir, sizeof dir, "%s/case", tmp);
  assert_int_equal(mkdir(dir, 0777), 0);
  char mnt[600];
  snprintf(mnt, sizeof mnt, "%s/mnt", dir);
  assert_int_equal(mkdir(mnt, 0777), 0);
  kl_test_write(dir, "c.yaml", "path: {samples: 41, start: -0.02, end: 0.02}\nworkpiece: {extent: [0.06, 0.02], "
                               "resolution: 1e-3}\noffset: {control_points: 6}\nspeed: {control_points: 4}\n"
                               "optimiser: {screening: 16, keep: 1, maxeval: 1}\nverify: {count: 1}\n");
  snprintf(exe, sizeof exe, "%s/kelvin", KELVIN_BINARY_DIR);
  char *argv[] = {(char *)"unshare", (char *)"-rm", (char *)"sh", (char *)"-c", (char *)script, (char *)"sh", dir, exe, NULL};
  const int rc = kl_test_run(NULL, NULL, argv, 1, out, sizeof out);
  printf("# kelvin optimise onto a 64 KiB tmpfs (the namespace's script -> %d):\n%s", rc, out);
  assert_int_equal(rc, 0);
  /* one line from kelvin, its status, the folder holding only the earlier file, that file intact */
  assert_string_equal(out + strcspn(out, "\n") + 1, "rc=1\nkeep.txt\nkeep\n");
  static const char head[] = "kelvin: cannot write 'mnt/o/optimise.png': gnuplot left it incomplete (";
  assert_int_equal(strncmp(out, head, strlen(head)), 0);
  assert_non_null(strstr(out, "no PNG end chunk); is the disk full?\n"));
}

/* the namespace's script for a rename that fails after the checks: $1 the case's folder, $2 kelvin. An
 * earlier bounce run in mnt/o, then summary.json made a mount point (a bind mount of itself: the same file
 * system, so no check before the renames can tell, and rename(2) refuses it with EBUSY); the second run
 * (another cr too, so one of its CSVs is new) renames its CSVs first and then fails on summary.json: the
 * renames done must be undone, the new file removed. Prints kelvin's
 * stderr, its status and whether every file (names, sizes, checksums) is as before. */
static const char rollback[] =
  "cd \"$1\" && mount -t tmpfs -o size=4m none mnt || exit 3\n"
  "\"$2\" bounce --duration 0.2 --cr 0.5 --quiet --out mnt/o || exit 4\n"
  "sum() { (cd mnt/o && ls -A && cksum *); }\n"
  "sum > before.txt\n"
  "mount --bind mnt/o/summary.json mnt/o/summary.json || exit 3\n"
  "\"$2\" bounce --duration 0.3 --cr 0.5,0.7 --quiet --out mnt/o 2>&1\n"
  "echo \"rc=$?\"\n"
  "umount mnt/o/summary.json\n"
  "sum > after.txt\n"
  "cmp -s before.txt after.txt && echo same || { echo differ; diff before.txt after.txt; }\n";

static void test_rename_fails(void **state)
{
  (void)state;
  char dir[512], exe[1024], out[16384], mnt[600];
  snprintf(dir, sizeof dir, "%s/rename", tmp);
  assert_int_equal(mkdir(dir, 0777), 0);
  snprintf(mnt, sizeof mnt, "%s/mnt", dir);
  assert_int_equal(mkdir(mnt, 0777), 0);
  snprintf(exe, sizeof exe, "%s/kelvin", KELVIN_BINARY_DIR);
  char *argv[] = {(char *)"unshare", (char *)"-rm", (char *)"sh", (char *)"-c", (char *)rollback, (char *)"sh", dir, exe, NULL};
  const int rc = kl_test_run(NULL, NULL, argv, 1, out, sizeof out);
  printf("# a rename refused after the checks (the namespace's script -> %d):\n%s", rc, out);
  assert_int_equal(rc, 0);
  static const char head[] = "kelvin: cannot replace 'mnt/o/summary.json': Device or resource busy; no output written, "
                             "the earlier files put back\nrc=1\nsame\n";
  assert_string_equal(out, head);
}

int main(void)
{
  snprintf(tmp, sizeof tmp, "/tmp/kl_cli_fulldisk_XXXXXX");
  if (!mkdtemp(tmp)) return 1;
  char why[512];
  if (skip_reason(why, sizeof why)) {
    printf("cli_fulldisk_test skipped: %s\n", why);
    kl_test_rmtree(tmp);
    return 77;
  }
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_full_disk), cmocka_unit_test(test_rename_fails)};
  const int rc = cmocka_run_group_tests(tests, NULL, NULL);
  if (kl_test_rmtree(tmp) != 0) return 1;
  return rc;
}
