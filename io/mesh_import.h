/* io/mesh_import.h: a workpiece or scene mesh from a file (STL, OBJ or PLY, read by assimp) into an
 * engine mesh (engine/mesh.h). */
#ifndef KL_IO_MESH_IMPORT_H
#define KL_IO_MESH_IMPORT_H

#include "engine/mesh.h"

#define KL_MESH_MAX_BYTES (512L << 20)   /* file size */
#define KL_MESH_MAX_TRIANGLES 10000000L /* after import */

/* Import STL, OBJ or PLY (by content, via the mesh library), scaled by `scale` (e.g. 1e-3 for mm).
 * Refused, with the limit named: not a regular file, more than KL_MESH_MAX_BYTES or
 * KL_MESH_MAX_TRIANGLES, an ASCII STL without its closing "endsolid" (truncated).
 * On failure *out = NULL and msg names the file and the problem. */
kelvin_status kl_mesh_load(const char *path, double scale, kl_mesh **out, char *msg, int cap);

#endif
