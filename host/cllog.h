/* host/cllog.h: OpenCL compiler logs that name our files. */
#ifndef KL_HOST_CLLOG_H
#define KL_HOST_CLLOG_H

/* The compiler log `log` of a build of `src`, with every location the device's compiler gave by its own
 * name for the source and a physical line of it ("<kernel>:1886:46:", as NVIDIA's compiler writes, which
 * ignores #line) rewritten as the file and line that the #line markers of src name there
 * ("kernels/impact.cl:29:46:"). A location is "<NAME>:LINE:" with NAME free of '<', '>', ':' and
 * whitespace, other than clang's "<built-in>" (the predefined macros); a line past the end of src, or
 * before its first marker, is left as it is. Logs that already name the files (pocl
 * honours #line) come back unchanged. Returns a malloc'd string, NULL when out of memory. */
char *kl_cl_log_map(const char *src, const char *log);

#endif
