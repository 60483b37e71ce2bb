/* kelvin/batch.h: many scenarios at once (docs/design.md section 4). A kelvin_device is where batches
 * run: an OpenCL device (a GPU, or pocl on the CPU) or the OpenMP twin, which runs the same closed forms
 * on the host's cores. On it run impact batches (thousands of kelvin_impact scenarios) and grinding
 * rollouts (candidate passes of a kelvin_grind problem, kelvin/grind.h).
 *
 * Threads: a handle is used by one thread at a time; different handles may be used from different
 * threads. A device is shared by the batches and rollouts run on it, one run at a time, and must outlive
 * the rollouts created on it. */
#ifndef KELVIN_BATCH_H
#define KELVIN_BATCH_H

#include <stddef.h>

#include <kelvin/contact.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------------
 * Devices */

typedef struct kelvin_device kelvin_device;

#define KELVIN_DEVICE_CPU 1 /* flag of kelvin_device_open: the OpenMP twin, no OpenCL at all */

/* A closed device handle into *out; KELVIN_ERR_NOMEM (*out = NULL) is the only failure. */
KELVIN_API kelvin_status kelvin_device_create(kelvin_device **out);

/* Open dev on an OpenCL device, or on the OpenMP twin. spec (nullable) picks the device: "P:D" (platform
 * and device index), "gpu", "cpu" or a substring of the device name; NULL: the environment variable
 * KELVIN_DEVICE, else the first GPU with double precision, else the first device with double precision,
 * else the OpenMP twin. flags: KELVIN_DEVICE_CPU for the twin. KELVIN_ERR_NODEVICE (a spec that matches
 * no device with double precision; the message lists the devices found), KELVIN_ERR_OPENCL. Opening an
 * open handle first closes it.
 * The OpenCL programs are built when first needed, not here: the impact program by the first
 * kelvin_impact_batch_run on dev, the rollout program by the first optimisation or evaluation; that
 * call then returns KELVIN_ERR_BUILD if the build fails (the build log, named by kernels/ file and line,
 * is in its message). Extra build options come from the environment variable KELVIN_CL_BUILD_OPTIONS.
 * A driver's first build of a program can take seconds (pocl) to tens of seconds (a GPU driver); both
 * keep the build for later runs. */
KELVIN_API kelvin_status kelvin_device_open(kelvin_device *dev, const char *spec, int flags);

/* 1 if dev runs batches on an OpenCL device, 0 on the OpenMP twin or when not open. */
KELVIN_API int kelvin_device_is_opencl(const kelvin_device *dev);

/* One line saying which device runs and why ("OpenCL device 0:0 'cpu-...' (Portable Computing
 * Language, CPU, 2 compute units)"); "" when not open; never NULL. */
KELVIN_API const char *kelvin_device_describe(const kelvin_device *dev);

/* The last error message; "" if none; never NULL (also for dev = NULL). */
KELVIN_API const char *kelvin_device_errmsg(const kelvin_device *dev);

/* How messages name the spec given to kelvin_device_open and kelvin_device_choose: the program's own
 * option or setting ("--device", "compute.device"), so that a spec that matches nothing is reported as
 * "no OpenCL device matches --device 'SPEC' ...". Default (and with NULL or ""): "kelvin_device_open".
 * Copied, up to 63 characters. A spec taken from the environment variable is always named as such. */
KELVIN_API void kelvin_device_set_spec_name(kelvin_device *dev, const char *name);

/* One OpenCL device as kelvin_device_list finds it. */
typedef struct kelvin_device_info {
  int platform, device;          /* platform index and device index within it: "P:D" in a spec */
  char platform_name[128];       /* CL_PLATFORM_NAME */
  char name[128];                /* CL_DEVICE_NAME */
  char version[128];             /* CL_DEVICE_VERSION */
  char type[16];                 /* "GPU", "CPU", "accelerator", "custom" or "other" */
  unsigned compute_units;        /* CL_DEVICE_MAX_COMPUTE_UNITS */
  int fp64;                      /* 1 if the device has double precision, which kelvin needs */
  unsigned long long global_mem; /* global memory [bytes] */
} kelvin_device_info;

/* Every OpenCL device of every platform: their number into *n (0 when no OpenCL platform is installed,
 * which is not an error). The list is made once and kept on dev, which need not be open.
 * KELVIN_ERR_OPENCL (*n = 0) if a platform cannot be queried. */
KELVIN_API kelvin_status kelvin_device_list(kelvin_device *dev, int *n);

/* Device i of that list (made first if needed) into *out (zeroed on failure). KELVIN_ERR_ARG for an
 * index outside the list, KELVIN_ERR_OPENCL. */
KELVIN_API kelvin_status kelvin_device_list_info(kelvin_device *dev, int i, kelvin_device_info *out);

/* The device kelvin_device_open(dev, spec, flags) would choose, without opening anything: *index into
 * the list of kelvin_device_list, or -1 for the OpenMP twin (KELVIN_DEVICE_CPU, or no OpenCL device
 * with double precision). KELVIN_ERR_NODEVICE as kelvin_device_open (*index = -1; the message lists
 * the devices found), KELVIN_ERR_OPENCL. */
KELVIN_API kelvin_status kelvin_device_choose(kelvin_device *dev, const char *spec, int flags, int *index);

/* Release the device (its OpenCL context, queue, programs); NULL is a no-op. */
KELVIN_API void kelvin_device_free(kelvin_device *dev);

/* ---------------------------------------------------------------------------------------------------
 * Impact batches: n scenarios of kelvin_impact, evaluated together */

typedef struct kelvin_impact_batch kelvin_impact_batch;

/* A batch of n >= 1 scenarios, each with nsamples >= 0 samples along its impact (abscissa, penetration,
 * force; see kelvin_impact_batch_sample), every scenario zeroed (set them before running). *out = NULL
 * and KELVIN_ERR_NOMEM, or KELVIN_ERR_ARG for sizes that overflow memory. */
KELVIN_API kelvin_status kelvin_impact_batch_create(size_t n, int nsamples, kelvin_impact_batch **out);

/* Scenarios in the batch (0 for NULL). */
KELVIN_API size_t kelvin_impact_batch_size(const kelvin_impact_batch *b);

/* Store scenario i (i < size). KELVIN_ERR_ARG for a bad index or NULL. Bad values are not an error here:
 * that scenario's flags say what is wrong after the run. */
KELVIN_API kelvin_status kelvin_impact_batch_set(kelvin_impact_batch *b, size_t i, const kelvin_impact_in *in);

/* Evaluate every scenario on dev (an open device), or, with dev = NULL, in a plain serial loop on the
 * calling thread (the reference the device paths are tested against). Per-scenario trouble is in that
 * scenario's flags, never an error; errors are OpenCL failures (KELVIN_ERR_OPENCL), the build of the
 * impact program on the device's first run (KELVIN_ERR_BUILD) and a device that is not open
 * (KELVIN_ERR_ARG). The message is on the batch.
 * With a shard on dev (kelvin/shard.h; collective): each rank evaluates its own contiguous share of the
 * scenarios (progress counts that share), the ranks agree on the status (a failure or a stop on one rank
 * fails every rank with "rank R: ..."), then the results are gathered on rank 0 only: rank 0 holds every
 * scenario's results, bit for bit those of one process; another rank holds its own share's results and,
 * elsewhere, what the batch held before. Every rank must have set the same scenarios. */
KELVIN_API kelvin_status kelvin_impact_batch_run(kelvin_impact_batch *b, kelvin_device *dev);

/* Progress and stop for the runs of b (kelvin_progress_fn, kelvin/kelvin.h); NULL for none (the
 * default). fn is called after each chunk of scenarios, in order: on an OpenCL device chunks of at most
 * a twentieth of the batch (but 65536 scenarios at least), on the OpenMP twin and in the serial loop
 * 65536 scenarios; with the fraction done and a line "impact batch: 131072 of 1000000 scenarios".
 * kelvin_impact_batch_done is up to date during the call. A nonzero return stops the run after that
 * chunk: kelvin_impact_batch_run returns KELVIN_ERR_STOPPED, scenarios [0, kelvin_impact_batch_done(b))
 * hold their results and the others what they held before. */
KELVIN_API void kelvin_impact_batch_set_progress(kelvin_impact_batch *b, kelvin_progress_fn fn, void *ctx);

/* Scenarios the last run evaluated, the first ones in order: the batch size after a run that succeeded,
 * fewer after a stop (or a failure, counted at the last progress call), 0 before any run. With a shard:
 * after success the batch size on rank 0 and the size of its own share on another rank; during the run and
 * after a stop, the scenarios done of this rank's share, the first ones of it. */
KELVIN_API size_t kelvin_impact_batch_done(const kelvin_impact_batch *b);

/* Scenario i as stored (kelvin_impact_batch_set, or a sweep's; kelvin_sweep_batch) into *in (zeroed on
 * failure). KELVIN_ERR_ARG for a bad index or NULL. */
KELVIN_API kelvin_status kelvin_impact_batch_input(const kelvin_impact_batch *b, size_t i, kelvin_impact_in *in);

/* Samples per scenario (nsamples of kelvin_impact_batch_create; 0 for NULL). */
KELVIN_API int kelvin_impact_batch_nsamples(const kelvin_impact_batch *b);

/* The metrics of scenario i after a run (zeros before). KELVIN_ERR_ARG for a bad index. */
KELVIN_API kelvin_status kelvin_impact_batch_get(const kelvin_impact_batch *b, size_t i, kelvin_impact_out *out);

/* Sample j (< nsamples) of scenario i after a run: abscissa *s (time [s] for Kelvin-Voigt; the phase in
 * [0, 2] for the nonlinear models: [0, 1] compression, [1, 2] restitution), penetration *d [m], force
 * *f [N] (each nullable). KELVIN_ERR_ARG for bad indices. */
KELVIN_API kelvin_status kelvin_impact_batch_sample(const kelvin_impact_batch *b, size_t i, int j, double *s, double *d,
                                                    double *f);

/* Table formats of kelvin_impact_batch_write. */
typedef enum kelvin_format {
  KELVIN_FORMAT_CSV = 0, /* a header row, then one row per scenario; numbers as "%.17g" (exact on reading back) */
  KELVIN_FORMAT_HDF5 = 1 /* HDF5: one dataset per column, chunked, shuffled and deflated; units as attributes */
} kelvin_format;

/* Write every scenario of b, its inputs and its results (zeros before a run), as one table file at path:
 * the columns of kelvin_impact_batch_column, in that order, under those names, one row per scenario in
 * batch order (`kelvin sweep`'s sweep.csv / sweep.h5). HDF5: a dataset per column at the root (int64
 * id, int32 status, doubles, fixed-length NUL-padded strings as wide as the longest value present), each
 * with string attributes "units" and "description"; the file's attribute "columns" lists the names in
 * order, and the root group keeps them in that order (h5py: pandas.DataFrame({k: f[k][:] for k in f});
 * docs/api.md). The file is written to "<path>.tmp.<pid>" and renamed into place when whole: a failure
 * or a stop leaves no file (and an earlier one at path untouched). The batch's progress callback
 * (kelvin_impact_batch_set_progress) is called after each block of rows with the fraction written and
 * "writing NAME: 65536 of 1000000 rows"; a nonzero return stops: KELVIN_ERR_STOPPED. KELVIN_ERR_ARG
 * (NULL, an unknown format), KELVIN_ERR_IO (the message names the file and the reason), KELVIN_ERR_NOMEM.
 * The host's cores format (CSV) or compress (HDF5) blocks in parallel (OpenMP). */
KELVIN_API kelvin_status kelvin_impact_batch_write(kelvin_impact_batch *b, const char *path, kelvin_format format);

/* Column i (0, 1, ...) of kelvin_impact_batch_write's table: its name ("fpeak_N"), unit ("N"; "1" for a
 * number without unit, "-" for a name) and a line on its meaning (each nullable). 1, or 0 past the last
 * (outputs NULL). */
KELVIN_API int kelvin_impact_batch_column(int i, const char **name, const char **unit, const char **doc);

/* The last error message; "" if none; never NULL. */
KELVIN_API const char *kelvin_impact_batch_errmsg(const kelvin_impact_batch *b);

/* NULL is a no-op. */
KELVIN_API void kelvin_impact_batch_free(kelvin_impact_batch *b);

/* ---------------------------------------------------------------------------------------------------
 * Sweeps: the impact scenarios of a `kelvin sweep` config file (the format of examples/sweep.yaml: the
 * cartesian product of models, damping laws, separation rules and parameter values, or the rows of a
 * scenarios CSV file it names), as an impact batch to run on a device */

typedef struct kelvin_sweep kelvin_sweep;

#define KELVIN_SWEEP_MAX 50000000L /* scenarios per sweep at most (50e6 are ~6 GB of inputs and outputs) */

/* A handle holding the built-in sweep (`kelvin sweep` without a config): every model, law and rule,
 * m = 1 kg, K = 1e9, n = 1.5, 39 values of cr and 16 of v0, 4992 scenarios. KELVIN_ERR_NOMEM
 * (*out = NULL) is the only failure. */
KELVIN_API kelvin_status kelvin_sweep_create(kelvin_sweep **out);

/* Load a sweep config file (YAML, `kelvin sweep --help` and examples/sweep.yaml; a scenarios CSV it
 * names is relative to the config's folder): its scenarios, in a new batch with the config's samples
 * per scenario, replace the handle's. KELVIN_ERR_IO (a file that cannot be read), KELVIN_ERR_CONFIG
 * ("FILE:LINE: sweep.cr: must be > 0, got 0"; "FILE:LINE: column 'cr': ..." for the CSV; an empty
 * sweep), KELVIN_ERR_LIMIT (more than KELVIN_SWEEP_MAX scenarios), KELVIN_ERR_NOMEM, KELVIN_ERR_STOPPED
 * (kelvin_sweep_set_progress); on failure the handle keeps its scenarios. */
KELVIN_API kelvin_status kelvin_sweep_load(kelvin_sweep *s, const char *path);

/* Progress and stop for kelvin_sweep_load (kelvin_progress_fn); NULL for none (the default). While it
 * reads a scenarios CSV, fn is called every 65536 rows with fraction -1 (the total is not known yet) and
 * "reading FILE: N scenarios"; a nonzero return stops the load: KELVIN_ERR_STOPPED, the handle keeps
 * its scenarios. */
KELVIN_API void kelvin_sweep_set_progress(kelvin_sweep *s, kelvin_progress_fn fn, void *ctx);

/* The scenarios as an impact batch owned by s, valid until the next successful kelvin_sweep_load or
 * kelvin_sweep_free: read them (kelvin_impact_batch_size, kelvin_impact_batch_input), run them
 * (kelvin_impact_batch_set_progress, kelvin_impact_batch_run), read the results (kelvin_impact_batch_get,
 * kelvin_impact_batch_sample). NULL only for s = NULL. */
KELVIN_API kelvin_impact_batch *kelvin_sweep_batch(kelvin_sweep *s);

/* The last error message; "" if none; never NULL (also for s = NULL). */
KELVIN_API const char *kelvin_sweep_errmsg(const kelvin_sweep *s);

/* NULL is a no-op; frees the batch of kelvin_sweep_batch too. */
KELVIN_API void kelvin_sweep_free(kelvin_sweep *s);

/* The number parameters of a sweep config (m, K, n, cr, v0, fe), for a help text or a form: parameter
 * i (0, 1, ...) as its key, its default as a config would write it ("1e9", "{min: 0.05, max: 1, n: 39}")
 * and a line on its meaning, unit and domain (each nullable). 1, or 0 past the last (outputs NULL). */
KELVIN_API int kelvin_sweep_param(int i, const char **key, const char **def, const char **doc);

/* ---------------------------------------------------------------------------------------------------
 * Grinding rollouts: candidate passes of a grinding problem (kelvin/grind.h), evaluated together.
 * A candidate is a column of nc control points: the n_o offset spline values [m] (commanded depth along
 * -n below the nominal surface) then the n_v feed-speed spline values [m/s]; nc = kelvin_grind_ncontrol. */

typedef struct kelvin_grind kelvin_grind;
typedef struct kelvin_rollout kelvin_rollout;

/* Objective terms per candidate: obj[term * P + p] */
#define KELVIN_OBJ_J 0      /* the weighted objective */
#define KELVIN_OBJ_RMS 1    /* RMS of (F_k - F*_k) / F_ref over the samples (the scored force measure) */
#define KELVIN_OBJ_LOSS 2   /* fraction of the pass time out of contact */
#define KELVIN_OBJ_OVER 3   /* mean of (max(0, F_k - F_max) / F_ref)^2 */
#define KELVIN_OBJ_TIME 4   /* pass time / reference time */
#define KELVIN_OBJ_ROUGH 5  /* mean squared second differences of the commands, scaled */
#define KELVIN_OBJ_ACC 6    /* mean of max(0, |v dv/ds| / a_max - 1)^2 */
#define KELVIN_OBJ_T 7      /* pass time [s] */
#define KELVIN_OBJ_NSUB 8   /* sub-steps taken */
#define KELVIN_OBJ_STATUS 9 /* 0, or status bits (non-finite state, sub-step limit): the objective is then huge */
#define KELVIN_OBJ_FMAX 10  /* the largest scored force F_k over the samples the RMS term sums [N] (0 if none) */
#define KELVIN_OBJ_FMIN 11  /* the smallest scored force F_k over those samples [N] (0 if none) */
#define KELVIN_OBJ_N 12

/* Per-sample outputs per candidate, optional: out[(field * ns + k) * P + p] */
#define KELVIN_SO_F 0    /* instantaneous contact force at sample k [N] */
#define KELVIN_SO_FAVG 1 /* step-averaged contact force over the interval ending at sample k [N] */
#define KELVIN_SO_T 2    /* time [s] */
#define KELVIN_SO_Z 3    /* tool depth [m] */
#define KELVIN_SO_D 4    /* penetration [m] (0 out of contact) */
#define KELVIN_SO_C 5    /* 1 in contact at the sample */
#define KELVIN_SO_ZD 6   /* tool depth rate dz/dt at the sample [m/s] */
#define KELVIN_SO_N 7

/* Prepare g's problem (kelvin_grind_prepare) and set up its rollouts on dev (an open device): on OpenCL
 * the rollout program is built, and the problem uploaded, by the first kelvin_rollout_eval (which then
 * returns KELVIN_ERR_BUILD if the build fails). Every batch runs on dev, however small (kelvin optimise
 * itself sends small batches from a GPU to the host: docs/design.md section 4). The rollout copies what
 * it needs: later changes to g do not affect it. dev must outlive it. *out = NULL on failure, the
 * message on g. */
KELVIN_API kelvin_status kelvin_rollout_create(kelvin_grind *g, kelvin_device *dev, kelvin_rollout **out);

/* Path samples ns and control points nc of the candidates. */
KELVIN_API int kelvin_rollout_nsamples(const kelvin_rollout *r);
KELVIN_API int kelvin_rollout_ncontrol(const kelvin_rollout *r);

/* Roll out P >= 1 candidates: ctrl (nc x P, candidate fastest: ctrl[j * P + p]) -> obj (KELVIN_OBJ_N x P)
 * and, if samples is not NULL, the per-sample outputs (KELVIN_SO_N x ns x P). Per-candidate trouble is a
 * status term with the objective set huge, never an error; errors are OpenCL failures and, on the first
 * call, a failed build of the rollout program (message on r). */
KELVIN_API kelvin_status kelvin_rollout_eval(kelvin_rollout *r, size_t P, const double *ctrl, double *obj,
                                             double *samples);

/* The last error message; "" if none; never NULL. */
KELVIN_API const char *kelvin_rollout_errmsg(const kelvin_rollout *r);

/* NULL is a no-op. */
KELVIN_API void kelvin_rollout_free(kelvin_rollout *r);

#ifdef __cplusplus
}
#endif
#endif
