/* core/status.c: status names and version (public API). */
#include "kelvin/kelvin.h"

const char *kelvin_status_str(kelvin_status st)
{
  switch (st) {
  case KELVIN_OK: return "KELVIN_OK";
  case KELVIN_ERR_ARG: return "KELVIN_ERR_ARG";
  case KELVIN_ERR_CONFIG: return "KELVIN_ERR_CONFIG";
  case KELVIN_ERR_NOMEM: return "KELVIN_ERR_NOMEM";
  case KELVIN_ERR_IO: return "KELVIN_ERR_IO";
  case KELVIN_ERR_OPENCL: return "KELVIN_ERR_OPENCL";
  case KELVIN_ERR_BUILD: return "KELVIN_ERR_BUILD";
  case KELVIN_ERR_NUMERIC: return "KELVIN_ERR_NUMERIC";
  case KELVIN_ERR_NLOPT: return "KELVIN_ERR_NLOPT";
  case KELVIN_ERR_NODEVICE: return "KELVIN_ERR_NODEVICE";
  case KELVIN_ERR_STOPPED: return "KELVIN_ERR_STOPPED";
  case KELVIN_ERR_LIMIT: return "KELVIN_ERR_LIMIT";
  case KELVIN_ERR_DIVERGED: return "KELVIN_ERR_DIVERGED";
  }
  return "KELVIN_ERR_UNKNOWN";
}

const char *kelvin_version(void) { return KELVIN_VERSION_STRING; }
