/* kelvin/kelvin.h: compliant-contact simulation and force-aware grinding-trajectory optimisation.
 *
 * What every part of the public C API shares: the export macro, the status codes and the version. The
 * API itself is in ten headers, each including this one:
 *   kelvin/contact.h  closed forms: impact metrics of each contact model and damping law, the exact
 *                     Kelvin-Voigt step, Hertz stiffness, damping from restitution (paper eq. 10)
 *   kelvin/batch.h    a compute device (OpenCL, or the OpenMP twin), impact batches, grinding rollouts
 *   kelvin/engine.h   the variable-time-step 3-D engine: world model and data, bodies, shapes, meshes
 *   kelvin/grind.h    a grinding problem from memory or a config file: optimise, evaluate, verify, results
 *   kelvin/ball.h     the paper's ball on a plane in the variable-time-step engine's 1-D slice
 *   kelvin/robot.h    a serial arm holding the tool: effective mass, stiffness and feed-speed bound along a path
 *   kelvin/check.h    validate any input file without running it, and say in brief what it holds
 *   kelvin/fit.h      calibrate the generalised contact law to a measured impact or force trace
 *   kelvin/removal.h  material removal: passes planned to a target surface, the surface they leave
 *   kelvin/robust.h   robust passes over sampled parts and process conditions; the out-of-sample check
 * Conventions (docs/api.md): opaque handles made by *_create and released by *_free (NULL is a no-op);
 * every fallible call returns a kelvin_status and leaves a message for a person on the handle it was
 * given (*_errmsg); outputs are set to a safe value before anything can fail; SI units throughout. */
#ifndef KELVIN_KELVIN_H
#define KELVIN_KELVIN_H

#include <kelvin/version.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the functions libkelvin exports; everything else in the library is hidden. */
#if defined(__GNUC__) || defined(__clang__)
#define KELVIN_API __attribute__((visibility("default")))
#else
#define KELVIN_API
#endif

typedef enum kelvin_status {
  KELVIN_OK = 0,
  KELVIN_ERR_ARG = -1,     /* caller error; the message names the argument and value */
  KELVIN_ERR_CONFIG = -2,  /* bad input file or settings; the message names file, line and field */
  KELVIN_ERR_NOMEM = -3,
  KELVIN_ERR_IO = -4,
  KELVIN_ERR_OPENCL = -5,  /* the message carries the CL call, error name, file:line */
  KELVIN_ERR_BUILD = -6,   /* kernel build failed; the message carries the build log */
  KELVIN_ERR_NUMERIC = -7, /* the computation went non-finite or did not converge */
  KELVIN_ERR_NLOPT = -8,   /* NLopt failed; message has nlopt_result_to_string() */
  KELVIN_ERR_NODEVICE = -9, /* no OpenCL device matched */
  KELVIN_ERR_STOPPED = -10, /* the caller asked the operation to stop (its progress callback returned
                               nonzero); the call documents what it leaves */
  KELVIN_ERR_LIMIT = -11,   /* a documented work or time limit would be (or was) exceeded; the message
                               gives the estimate, the limit and the setting that raises it */
  KELVIN_ERR_DIVERGED = -12 /* a simulation diverged: a state or force went non-finite, or a force beyond
                               a documented multiple of the largest plausible one; the message gives the
                               time, the force and the stiffest time scale (the likely cause) */
} kelvin_status;

/* Progress of a long operation (a sweep, an optimisation, a verification, a simulation), and the way
 * to stop it. Called from the thread that made the call, at the operation's checkpoints (a few times a
 * second at most, and once at the end): fraction in [0, 1] of the whole operation, or negative when
 * it is not known; text a line for a person ("refinement: step 3/40, RMS 0.42 %"), never NULL, valid
 * during the call only. Return 0 to go on; nonzero asks the operation to stop: it returns
 * KELVIN_ERR_STOPPED at its next checkpoint. A callback may be installed on a handle (or passed to
 * a call) as NULL for none. */
typedef int (*kelvin_progress_fn)(void *ctx, double fraction, const char *text);

/* "KELVIN_ERR_OPENCL", ...; never NULL. */
KELVIN_API const char *kelvin_status_str(kelvin_status st);

/* The library's version, KELVIN_VERSION_STRING of the build ("0.1.0"); compare with the header's to
 * detect a program running against another libkelvin than it was compiled with. */
KELVIN_API const char *kelvin_version(void);

#ifdef __cplusplus
}
#endif
#endif
