/* kelvin: compliant-contact simulation and force-aware trajectory optimisation.
 * Public API: status codes and version. Physics lives in kernels/ (closed forms), engine/ (CPU engine),
 * host/ (OpenCL batches) and optimiser/ (NLopt pipeline). */
#ifndef KELVIN_KELVIN_H
#define KELVIN_KELVIN_H

#ifdef __cplusplus
extern "C" {
#endif

#define KELVIN_VERSION_STRING "0.1.0"

typedef enum kelvin_status {
  KELVIN_OK = 0,
  KELVIN_ERR_ARG = -1,     /* caller error; the message names the argument and value */
  KELVIN_ERR_CONFIG = -2,  /* bad input file; the message names file, line and field */
  KELVIN_ERR_NOMEM = -3,
  KELVIN_ERR_IO = -4,
  KELVIN_ERR_OPENCL = -5,  /* the message carries the CL call, error name, file:line */
  KELVIN_ERR_BUILD = -6,   /* kernel build failed; the message carries the build log */
  KELVIN_ERR_NUMERIC = -7, /* every scenario in the batch went non-finite */
  KELVIN_ERR_NLOPT = -8,   /* NLopt failed; message has nlopt_result_to_string() */
  KELVIN_ERR_NODEVICE = -9 /* no OpenCL device matched */
} kelvin_status;

/* "KELVIN_ERR_OPENCL", ...; never NULL. */
const char *kelvin_status_str(kelvin_status st);

/* "0.1.0" */
const char *kelvin_version(void);

#ifdef __cplusplus
}
#endif
#endif
