/* host/device.c: OpenCL platform and device discovery, the device spec, the default choice and the
 * launch-tuning table. */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/clerr.h"
#include "host/host_impl.h"

#define MAXPLAT 16
#define MAXDEV 64

//------- tuning table (docs/style.md section 3: CLBlast's database idea, as a few rows) -------

typedef struct tune_row {
  const char *match; /* substring of the device or platform name; "" is the default row */
  int wgs;           /* work-group size of the impact kernel */
  int rollout_wgs;   /* work-group size of the rollout kernel; 0: by device type (CPU 1, else 32) */
  const char *opts;  /* extra build options; NULL: none */
} tune_row;

/* Impact kernel: GPUs schedule warps/wavefronts of 32/64, so 128 keeps several per group; pocl's CPU
 * device runs a work-group as a loop and vectorises across it, where 64 measured as well as larger
 * groups (benchmarks/sweep_throughput.c).
 * Rollout kernel: one candidate's rollout is long and its cost varies, so small groups let many of them
 * balance the compute units; pocl runs a work-group on one thread, where 1 measured best; 32 is one
 * warp on a GPU (ran on an NVIDIA H200: benchmarks/RESULTS.md). KELVIN_ROLLOUT_WGS overrides it.
 * Oclgrind (the simulator tests/oclgrind_test.sh runs) needs every function inlined: kernels/kl_common.h. */
static const tune_row tune[] = {
  {"NVIDIA", 128, 32, NULL},
  {"AMD Accelerated Parallel Processing", 128, 32, NULL},
  {"Intel(R) Graphics", 128, 32, NULL},
  {"Portable Computing Language", 64, 1, NULL},
  {"Oclgrind", 64, 0, "-DKL_INLINE_ALL"},
  {"", 64, 0, NULL},
};

static const tune_row *tune_of(const kl_device_info *d)
{
  for (size_t i = 0; i < sizeof tune / sizeof tune[0]; ++i)
    if (tune[i].match[0] == '\0' || strstr(d->name, tune[i].match) || strstr(d->platform_name, tune[i].match))
      return &tune[i];
  return &tune[sizeof tune / sizeof tune[0] - 1];
}

/* wgs halved until the device takes it (a power of two stays one) */
static int fit(const kl_device_info *d, int wgs)
{
  while (wgs > 1 && (size_t)wgs > d->max_wgs) wgs /= 2;
  return wgs;
}

int kl_device_wgs(const kl_device_info *d) { return fit(d, tune_of(d)->wgs); }

int kl_device_fast_rows(const kl_device_info *d) { return (d->type & CL_DEVICE_TYPE_CPU) ? KL_FAST_ROWS_CPU : 1; }

int kl_device_fast_width(const kl_device_info *d)
{
  const unsigned v = d->vec_double;
  return v == 2 || v == 4 || v == 8 ? (int)v : 4;
}

const char *kl_device_build_options(const kl_device_info *d)
{
  const char *o = tune_of(d)->opts;
  return o ? o : "";
}

int kl_device_rollout_wgs(const kl_device_info *d)
{
  const int wgs = tune_of(d)->rollout_wgs;
  return fit(d, wgs ? wgs : (d->type & CL_DEVICE_TYPE_CPU) ? 1 : 32);
}

//------- discovery -------

const char *kl_device_type_str(cl_device_type t)
{
  if (t & CL_DEVICE_TYPE_GPU) return "GPU";
  if (t & CL_DEVICE_TYPE_CPU) return "CPU";
  if (t & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
#ifdef CL_DEVICE_TYPE_CUSTOM
  if (t & CL_DEVICE_TYPE_CUSTOM) return "custom";
#endif
  return "other";
}

/* Copy a string info value into buf (cap bytes), "?" if the query fails. */
static void devstr(cl_device_id d, cl_device_info what, char *buf, size_t cap)
{
  if (clGetDeviceInfo(d, what, cap, buf, NULL) != CL_SUCCESS) snprintf(buf, cap, "?");
  buf[cap - 1] = '\0';
}

/* Fill the info of device id (platform index pi, device index di). */
static void describe(kl_device_info *o, cl_platform_id pid, cl_device_id id, int pi, int di)
{
  memset(o, 0, sizeof *o);
  o->platform = pi;
  o->device = di;
  o->pid = pid;
  o->id = id;
  if (clGetPlatformInfo(pid, CL_PLATFORM_NAME, sizeof o->platform_name, o->platform_name, NULL) != CL_SUCCESS)
    snprintf(o->platform_name, sizeof o->platform_name, "?");
  o->platform_name[sizeof o->platform_name - 1] = '\0';
  devstr(id, CL_DEVICE_NAME, o->name, sizeof o->name);
  devstr(id, CL_DEVICE_VERSION, o->version, sizeof o->version);
  cl_device_type t = 0;
  cl_uint cu = 0;
  cl_ulong gm = 0, ma = 0;
  size_t wg = 1;
  cl_uint vd = 0;
  cl_device_fp_config fp = 0;
  (void)clGetDeviceInfo(id, CL_DEVICE_TYPE, sizeof t, &t, NULL);
  (void)clGetDeviceInfo(id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
  (void)clGetDeviceInfo(id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof gm, &gm, NULL);
  (void)clGetDeviceInfo(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof ma, &ma, NULL);
  (void)clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
  (void)clGetDeviceInfo(id, CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE, sizeof vd, &vd, NULL);
  if (clGetDeviceInfo(id, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp, &fp, NULL) != CL_SUCCESS) fp = 0;
  if (fp == 0) { /* OpenCL 1.1 devices report fp64 only as an extension */
    char ext[8192];
    devstr(id, CL_DEVICE_EXTENSIONS, ext, sizeof ext);
    if (strstr(ext, "cl_khr_fp64")) fp = CL_FP_FMA;
  }
  o->type = t;
  o->compute_units = cu;
  o->global_mem = gm;
  o->max_alloc = ma;
  o->max_wgs = wg ? wg : 1;
  o->vec_double = vd;
  o->fp64 = fp != 0;
}

kelvin_status kl_device_enumerate(kl_host *h, kl_device_info **list, int *n)
{
  *list = NULL;
  *n = 0;
  cl_platform_id plat[MAXPLAT];
  cl_uint np = 0;
  const cl_int e = clGetPlatformIDs(MAXPLAT, plat, &np);
  /* the ICD loader says CL_PLATFORM_NOT_FOUND_KHR (-1001) when no driver is installed: no devices */
  if (e == -1001 || (e == CL_SUCCESS && np == 0)) return KELVIN_OK;
  if (e != CL_SUCCESS) {
    kl_host_clfail(h, "clGetPlatformIDs", __FILE__, __LINE__, e);
    return KELVIN_ERR_OPENCL;
  }
  if (np > MAXPLAT) np = MAXPLAT;
  kl_device_info *out = calloc(MAXPLAT * MAXDEV, sizeof *out);
  if (!out) return kl_host_fail(h, KELVIN_ERR_NOMEM, "out of memory listing OpenCL devices");
  int cnt = 0;
  for (cl_uint pi = 0; pi < np; ++pi) {
    cl_device_id ids[MAXDEV];
    cl_uint nd = 0;
    /* a platform without devices answers CL_DEVICE_NOT_FOUND: skip it, it is not an error */
    if (clGetDeviceIDs(plat[pi], CL_DEVICE_TYPE_ALL, MAXDEV, ids, &nd) != CL_SUCCESS) continue;
    if (nd > MAXDEV) nd = MAXDEV;
    for (cl_uint di = 0; di < nd; ++di) describe(&out[cnt++], plat[pi], ids[di], (int)pi, (int)di);
  }
  *list = out;
  *n = cnt;
  return KELVIN_OK;
}

//------- choice -------

int kl_device_default(const kl_device_info *list, int n)
{
  for (int i = 0; i < n; ++i)
    if ((list[i].type & CL_DEVICE_TYPE_GPU) && list[i].fp64) return i;
  for (int i = 0; i < n; ++i)
    if (list[i].fp64) return i;
  return -1;
}

/* 1 if needle occurs in hay, ignoring case. */
static int contains_nocase(const char *hay, const char *needle)
{
  const size_t ln = strlen(needle);
  for (const char *p = hay; *p; ++p) {
    size_t i = 0;
    while (i < ln && p[i] && tolower((unsigned char)p[i]) == tolower((unsigned char)needle[i])) ++i;
    if (i == ln) return 1;
  }
  return ln == 0;
}

/* Parse "P:D" (two non-negative integers); 1 on success. */
static int parse_pair(const char *s, int *p, int *d)
{
  char *end = NULL;
  if (!isdigit((unsigned char)s[0])) return 0;
  const long a = strtol(s, &end, 10);
  if (*end != ':' || !isdigit((unsigned char)end[1])) return 0;
  const char *s2 = end + 1;
  const long b = strtol(s2, &end, 10);
  if (*end != '\0' || a > INT_MAX || b > INT_MAX) return 0;
  *p = (int)a;
  *d = (int)b;
  return 1;
}

/* Append "P:D 'name' (platform, TYPE, fp64|no fp64)" for every device to buf. */
static void list_devices(char *buf, size_t cap, const kl_device_info *list, int n)
{
  size_t len = strlen(buf);
  for (int i = 0; i < n && len + 1 < cap; ++i) {
    snprintf(buf + len, cap - len, "%s%d:%d '%s' (%s, %s%s)", i ? "; " : "", list[i].platform, list[i].device,
             list[i].name, list[i].platform_name, kl_device_type_str(list[i].type), list[i].fp64 ? "" : ", no fp64");
    len = strlen(buf);
  }
}

kelvin_status kl_device_match(kl_host *h, const kl_device_info *list, int n, const char *spec, const char *origin,
                              int *index)
{
  *index = -1;
  int pi, di;
  int found = -1;
  if (parse_pair(spec, &pi, &di)) {
    for (int i = 0; i < n; ++i)
      if (list[i].platform == pi && list[i].device == di) found = i;
  } else {
    cl_device_type want = 0;
    if (strcmp(spec, "gpu") == 0 || strcmp(spec, "GPU") == 0) want = CL_DEVICE_TYPE_GPU;
    if (strcmp(spec, "cpu") == 0 || strcmp(spec, "CPU") == 0) want = CL_DEVICE_TYPE_CPU;
    if (strcmp(spec, "accelerator") == 0) want = CL_DEVICE_TYPE_ACCELERATOR;
    /* by type: the first such device with fp64, else the first such device (reported below) */
    for (int pass = 0; want && pass < 2 && found < 0; ++pass)
      for (int i = 0; i < n && found < 0; ++i)
        if ((list[i].type & want) && (pass == 1 || list[i].fp64)) found = i;
    for (int pass = 0; !want && pass < 2 && found < 0; ++pass)
      for (int i = 0; i < n && found < 0; ++i)
        if ((contains_nocase(list[i].name, spec) || contains_nocase(list[i].platform_name, spec)) &&
            (pass == 1 || list[i].fp64))
          found = i;
  }
  char devs[4096] = "";
  if (n == 0)
    snprintf(devs, sizeof devs, "no OpenCL platform or device was found (is an ICD such as pocl-opencl-icd installed?)");
  else {
    snprintf(devs, sizeof devs, "devices found: ");
    list_devices(devs, sizeof devs, list, n);
  }
  if (found < 0)
    return kl_host_fail(h, KELVIN_ERR_NODEVICE,
                        "no OpenCL device matches %s '%s' (expected PLATFORM:DEVICE like 0:1, gpu, cpu, or part "
                        "of a device name); %s. Run 'kelvin devices' to list them, or use --cpu for the OpenMP path",
                        origin, spec, devs);
  if (!list[found].fp64)
    return kl_host_fail(h, KELVIN_ERR_NODEVICE,
                        "OpenCL device %d:%d '%s' chosen by %s '%s' has no double precision (cl_khr_fp64), which "
                        "kelvin needs; %s",
                        list[found].platform, list[found].device, list[found].name, origin, spec, devs);
  *index = found;
  return KELVIN_OK;
}
