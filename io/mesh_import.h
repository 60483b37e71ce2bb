/* io/mesh_import.h: a workpiece or scene mesh from a file (STL, OBJ or PLY, read by assimp) into an
 * engine mesh (engine/mesh.h). */
#ifndef KL_IO_MESH_IMPORT_H
#define KL_IO_MESH_IMPORT_H

#include "engine/mesh.h"

/* file size: 128 MiB bounds what assimp and the mesh build allocate (a 50 MB binary STL of 10^6 triangles
 * peaks at 2 GB); a binary STL at the limit holds 2.7 million triangles (docs/design.md section 8.1) */
#define KL_MESH_MAX_BYTES (128L << 20)
#define KL_MESH_MAX_TRIANGLES 10000000L /* declared in the file (io/mesh_check.h), and after import */
#define KL_MESH_MAX_VERTICES (3 * KL_MESH_MAX_TRIANGLES)

/* Import STL, OBJ or PLY (by content, via the mesh library), scaled by `scale` (e.g. 1e-3 for mm).
 * Refused, with the limit named: not a regular file (checked before it is opened), more than
 * KL_MESH_MAX_BYTES, more than KL_MESH_MAX_TRIANGLES or KL_MESH_MAX_VERTICES declared (PLY element counts,
 * a binary STL's count, an OBJ's v and f lines: counted before assimp runs), a file shorter than it declares
 * (a PLY cut in its data, a binary STL shorter than 84 + 50 n bytes), an ASCII STL without its closing
 * "endsolid" (truncated); see io/mesh_check.h.
 * On failure *out = NULL and msg names the file and the problem. */
kelvin_status kl_mesh_load(const char *path, double scale, kl_mesh **out, char *msg, int cap);

#endif
