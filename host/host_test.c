/* host/host_test.c: device choice, error names and messages of host/host.c and host/device.c, none of
 * which needs an OpenCL device: the default choice and device specs on a synthetic device list, a spec
 * that names nothing (option and env var), the OpenMP twin on request, a failing OpenCL call through
 * KL_CL. Program build failures, which need a device, are in host/host_build_test.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "host/clerr.h"
#include "host/cllog.h"
#include "host/host_impl.h"

/* A fake device for the choice tests. */
static kl_device_info fake(int pi, int di, const char *plat, const char *name, cl_device_type t, int fp64)
{
  kl_device_info d;
  memset(&d, 0, sizeof d);
  d.platform = pi;
  d.device = di;
  snprintf(d.platform_name, sizeof d.platform_name, "%s", plat);
  snprintf(d.name, sizeof d.name, "%s", name);
  d.type = t;
  d.fp64 = fp64;
  d.max_wgs = 1024;
  return d;
}

/* Names of OpenCL and CLBlast codes, and the fallback for unknown ones. */
static void test_error_names(void **state)
{
  (void)state;
  assert_string_equal(kl_cl_errname(0), "CL_SUCCESS");
  assert_string_equal(kl_cl_errname(-11), "CL_BUILD_PROGRAM_FAILURE");
  assert_string_equal(kl_cl_errname(-38), "CL_INVALID_MEM_OBJECT");
  assert_string_equal(kl_cl_errname(-72), "CL_MAX_SIZE_RESTRICTION_EXCEEDED");
  assert_string_equal(kl_cl_errname(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
  assert_string_equal(kl_cl_errname(-9999), "unknown OpenCL error");
  assert_string_equal(kl_clblast_errname(-2044), "CLBlastNoDoublePrecision");
  assert_string_equal(kl_clblast_errname(-1017), "CLBlastInvalidDimension");
  assert_string_equal(kl_clblast_errname(-5), "CL_OUT_OF_RESOURCES");
  /* every code from 0 to -72 has a name except the gap -20 ... -29 that no OpenCL version uses */
  for (int e = 0; e >= -72; --e)
    if (e > -20 || e < -29) assert_string_not_equal(kl_cl_errname(e), "unknown OpenCL error");
}

/* Default: the first GPU with fp64, else the first device with fp64, else the twin. */
static void test_default_choice(void **state)
{
  (void)state;
  kl_device_info d[4];
  d[0] = fake(0, 0, "Portable Computing Language", "pthread-cpu", CL_DEVICE_TYPE_CPU, 1);
  d[1] = fake(1, 0, "Vendor A", "Small GPU", CL_DEVICE_TYPE_GPU, 0);
  d[2] = fake(1, 1, "Vendor A", "Big GPU", CL_DEVICE_TYPE_GPU, 1);
  d[3] = fake(2, 0, "Vendor B", "Other GPU", CL_DEVICE_TYPE_GPU, 1);
  assert_int_equal(kl_device_default(d, 4), 2);
  assert_int_equal(kl_device_default(d, 2), 0);
  assert_int_equal(kl_device_default(d + 1, 1), -1);
  assert_int_equal(kl_device_default(d, 0), -1);
}

/* Work-group sizes from the device table: by platform name first (pocl, NVIDIA), else by type for the
 * rollout kernel (a CPU runs a group on one thread: 1; a GPU: a warp of 32), clamped to the device's
 * maximum as a power of two. */
static void test_work_group_sizes(void **state)
{
  (void)state;
  kl_device_info pocl = fake(0, 0, "Portable Computing Language", "pthread-cpu", CL_DEVICE_TYPE_CPU, 1);
  kl_device_info nv = fake(1, 0, "NVIDIA CUDA", "NVIDIA H200", CL_DEVICE_TYPE_GPU, 1);
  kl_device_info gpu = fake(2, 0, "Vendor B", "Other GPU", CL_DEVICE_TYPE_GPU, 1);
  kl_device_info cpu = fake(3, 0, "Vendor C", "Other CPU", CL_DEVICE_TYPE_CPU, 1);
  assert_int_equal(kl_device_wgs(&pocl), 64);
  assert_int_equal(kl_device_wgs(&nv), 128);
  assert_int_equal(kl_device_wgs(&gpu), 64);
  assert_int_equal(kl_device_rollout_wgs(&pocl), 1);
  assert_int_equal(kl_device_rollout_wgs(&nv), 32);
  assert_int_equal(kl_device_rollout_wgs(&gpu), 32);
  assert_int_equal(kl_device_rollout_wgs(&cpu), 1);
  nv.max_wgs = 24; /* not a power of two: the largest one below it */
  assert_int_equal(kl_device_wgs(&nv), 16);
  assert_int_equal(kl_device_rollout_wgs(&nv), 16);
}

/* The fast kernel's shape (kernels/impact.cl): a CPU device's work-item takes KL_FAST_ROWS_CPU rows, a GPU's one;
 * the loop is as wide as the device's preferred vector width for double when it is 2, 4 or 8, else 4. */
static void test_fast_kernel_shape(void **state)
{
  (void)state;
  kl_device_info cpu = fake(0, 0, "Portable Computing Language", "pthread-cpu", CL_DEVICE_TYPE_CPU, 1);
  kl_device_info gpu = fake(1, 0, "NVIDIA CUDA", "NVIDIA H200", CL_DEVICE_TYPE_GPU, 1);
  assert_int_equal(kl_device_fast_rows(&cpu), 16);
  assert_int_equal(kl_device_fast_rows(&gpu), 1);
  const unsigned reported[7] = {0, 1, 2, 3, 4, 8, 16};
  const int width[7] = {4, 4, 2, 4, 4, 8, 4};
  for (int i = 0; i < 7; ++i) {
    cpu.vec_double = reported[i];
    assert_int_equal(kl_device_fast_width(&cpu), width[i]);
  }
}

/* Specs: PLATFORM:DEVICE, type words, name substrings; no match and no fp64 are errors with lists. */
static void test_device_specs(void **state)
{
  (void)state;
  kl_host *h = NULL;
  assert_int_equal(kl_host_create(&h), KELVIN_OK);
  kl_device_info d[3];
  d[0] = fake(0, 0, "Portable Computing Language", "pthread-cpu", CL_DEVICE_TYPE_CPU, 1);
  d[1] = fake(1, 0, "Vendor A", "Small GPU", CL_DEVICE_TYPE_GPU, 0);
  d[2] = fake(1, 1, "Vendor A", "Big GPU", CL_DEVICE_TYPE_GPU, 1);
  int idx = -7;
  assert_int_equal(kl_device_match(h, d, 3, "1:1", "--device", &idx), KELVIN_OK);
  assert_int_equal(idx, 2);
  assert_int_equal(kl_device_match(h, d, 3, "gpu", "--device", &idx), KELVIN_OK);
  assert_int_equal(idx, 2); /* the first GPU *with fp64* */
  assert_int_equal(kl_device_match(h, d, 3, "cpu", "--device", &idx), KELVIN_OK);
  assert_int_equal(idx, 0);
  assert_int_equal(kl_device_match(h, d, 3, "big", "--device", &idx), KELVIN_OK);
  assert_int_equal(idx, 2);
  assert_int_equal(kl_device_match(h, d, 3, "portable", "--device", &idx), KELVIN_OK);
  assert_int_equal(idx, 0);
  /* a device without double precision is refused by name */
  assert_int_equal(kl_device_match(h, d, 3, "1:0", "--device", &idx), KELVIN_ERR_NODEVICE);
  assert_int_equal(idx, -1);
  assert_non_null(strstr(kl_host_errmsg(h), "'Small GPU'"));
  assert_non_null(strstr(kl_host_errmsg(h), "no double precision"));
  /* nothing matches: the message names the spec, where it came from, and the devices found */
  assert_int_equal(kl_device_match(h, d, 3, "nosuch", "--device", &idx), KELVIN_ERR_NODEVICE);
  printf("message: %s\n", kl_host_errmsg(h));
  assert_non_null(strstr(kl_host_errmsg(h), "no OpenCL device matches --device 'nosuch'"));
  assert_non_null(strstr(kl_host_errmsg(h), "1:1 'Big GPU' (Vendor A, GPU)"));
  assert_non_null(strstr(kl_host_errmsg(h), "kelvin devices"));
  assert_int_equal(kl_device_match(h, d, 3, "3:0", "--device", &idx), KELVIN_ERR_NODEVICE);
  assert_int_equal(kl_device_match(h, d, 0, "0:0", "--device", &idx), KELVIN_ERR_NODEVICE);
  assert_non_null(strstr(kl_host_errmsg(h), "no OpenCL platform or device was found"));
  kl_host_destroy(h);
}

/* Through the real device list: a spec naming nothing fails whether or not OpenCL exists, from the
 * option and from the env var; --cpu never touches OpenCL. */
static void test_missing_device(void **state)
{
  (void)state;
  kl_host *h = NULL;
  assert_int_equal(kl_host_create(&h), KELVIN_OK);
  kl_host_opts o;
  kl_host_opts_default(&o);
  o.device = "no-such-device-xyz";
  o.device_origin = "--device";
  assert_int_equal(kl_host_open(h, &o), KELVIN_ERR_NODEVICE);
  assert_false(kl_host_is_opencl(h));
  assert_non_null(strstr(kl_host_errmsg(h), "--device 'no-such-device-xyz'"));
  kl_host_opts_default(&o);
  setenv("KELVIN_DEVICE", "no-such-device-xyz", 1);
  assert_int_equal(kl_host_open(h, &o), KELVIN_ERR_NODEVICE);
  assert_non_null(strstr(kl_host_errmsg(h), "env var KELVIN_DEVICE 'no-such-device-xyz'"));
  o.cpu = 1; /* --cpu wins over the env var */
  assert_int_equal(kl_host_open(h, &o), KELVIN_OK);
  assert_false(kl_host_is_opencl(h));
  assert_non_null(strstr(kl_host_notice(h), "OpenMP twin on the host"));
  assert_non_null(strstr(kl_host_notice(h), "CPU path requested"));
  unsetenv("KELVIN_DEVICE");
  kl_host_destroy(h);
  kl_host_destroy(NULL); /* a no-op */
  assert_string_equal(kl_host_errmsg(NULL), "out of memory");
}

/* A failing OpenCL call through the checking macro: call, error name, file and line on the handle. */
static kelvin_status failing_call(kl_host *h, int *line)
{
  kelvin_status st = KELVIN_OK;
  *line = __LINE__ + 1;
  KL_CL(h, clReleaseMemObject(NULL));
  st = KELVIN_ERR_ARG; /* not reached */
cleanup:
  return st;
}
/* The message KL_CL leaves: call name, CL error name and number, file:line. */
static void test_cl_macro(void **state)
{
  (void)state;
  kl_host *h = NULL;
  assert_int_equal(kl_host_create(&h), KELVIN_OK);
  int line = 0;
  assert_int_equal(failing_call(h, &line), KELVIN_ERR_OPENCL);
  char want[256];
  snprintf(want, sizeof want, "host_test.c:%d", line);
  printf("message: %s\n", kl_host_errmsg(h));
  assert_non_null(strstr(kl_host_errmsg(h), "OpenCL call clReleaseMemObject failed: CL_INVALID_MEM_OBJECT (-38)"));
  assert_non_null(strstr(kl_host_errmsg(h), want));
  kl_host_destroy(h);
}

/* Compiler logs that give physical lines of the whole program text under the device's own name for it
 * (NVIDIA's OpenCL compiler ignores #line and writes "<kernel>:LINE:COL:") are mapped back to the files
 * the #line markers name; logs that already name the files (pocl) are left alone. The NVIDIA lines are
 * as its compiler (driver 580, H200) wrote them for host_build_test's broken source and bad option. */
static void test_log_lines(void **state)
{
  (void)state;
  const char *src = "#line 1 \"kernels/kl_a.h\"\n" /* physical 1 */
                    "double a(double x)\n"         /* 2: kl_a.h:1 */
                    "{ return x; }\n"              /* 3: kl_a.h:2 */
                    "\n"                           /* 4: kl_a.h:3 */
                    "#line 1 \"kernels/broken.cl\"\n" /* 5 */
                    "__kernel void broken(__global double *x)\n" /* 6: broken.cl:1 */
                    "{\n"                                         /* 7: broken.cl:2 */
                    "  x[0] = no_such_function(x[1]);\n"          /* 8: broken.cl:3 */
                    "}\n";                                        /* 9: broken.cl:4 */
  const char *nv = "<kernel>:8:10: warning: implicit declaration of function 'no_such_function' is invalid\n"
                   "  x[0] = no_such_function(x[1]);\n"
                   "<kernel>:3:3: error: x\n"
                   "<kernel>:9:1: note: end; <kernel>:10:1: <kernel>:40:1: past the end; <built-in>:3:16: note: expanded\n"
                   "ptxas fatal   : Unresolved extern function 'no_such_function'\n";
  char *m = kl_cl_log_map(src, nv);
  assert_non_null(m);
  printf("mapped:\n%s", m);
  assert_string_equal(m, "kernels/broken.cl:3:10: warning: implicit declaration of function 'no_such_function' "
                         "is invalid\n"
                         "  x[0] = no_such_function(x[1]);\n"
                         "kernels/kl_a.h:2:3: error: x\n"
                         "kernels/broken.cl:4:1: note: end; <kernel>:10:1: <kernel>:40:1: past the end; <built-in>:3:16: note: "
                         "expanded\n"
                         "ptxas fatal   : Unresolved extern function 'no_such_function'\n");
  free(m);
  /* before the first marker there is no file to name: the device's name stays */
  m = kl_cl_log_map("int x;\n#line 1 \"kernels/b.cl\"\nint y;\n", "<kernel>:1:5: error\n<kernel>:3:5: error\n");
  assert_non_null(m);
  assert_string_equal(m, "<kernel>:1:5: error\nkernels/b.cl:1:5: error\n");
  free(m);
  /* a long log whose mapped locations are longer than the device's: the output grows past its first room */
  char nvlong[40 * 16 + 1] = "", want[40 * 26 + 1] = "";
  for (int i = 0; i < 40; ++i) {
    strcat(nvlong, "<kernel>:8:1: x\n");
    strcat(want, "kernels/broken.cl:3:1: x\n");
  }
  m = kl_cl_log_map(src, nvlong);
  assert_non_null(m);
  assert_string_equal(m, want);
  free(m);
  /* pocl's log already names the files and is returned as it came */
  const char *pocl = "kernels/broken.cl:3:10: error: implicit declaration of function 'no_such_function'\n<x>y:2:\n";
  m = kl_cl_log_map(src, pocl);
  assert_non_null(m);
  assert_string_equal(m, pocl);
  free(m);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_error_names),     cmocka_unit_test(test_default_choice),
    cmocka_unit_test(test_device_specs),    cmocka_unit_test(test_missing_device),
    cmocka_unit_test(test_cl_macro),        cmocka_unit_test(test_log_lines),
    cmocka_unit_test(test_work_group_sizes),
    cmocka_unit_test(test_fast_kernel_shape),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
