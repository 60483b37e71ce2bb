/* host/clerr.h: readable names for OpenCL and CLBlast status codes. */
#ifndef KL_HOST_CLERR_H
#define KL_HOST_CLERR_H

/* "CL_BUILD_PROGRAM_FAILURE" for -11, ...; "unknown OpenCL error" for a code no header defines.
 * Covers OpenCL 1.0-3.0 and the Khronos/vendor extension codes of the Khronos headers. Never NULL. */
const char *kl_cl_errname(int err);

/* CLBlast status name: the OpenCL name for the codes CLBlast shares with OpenCL, else
 * "CLBlastNotImplemented", "CLBlastNoDoublePrecision", ...; never NULL. */
const char *kl_clblast_errname(int err);

#endif
