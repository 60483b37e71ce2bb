/* io/mesh_check.h: a mesh file's structure counted before assimp reads it (docs/design.md section 8.1):
 * the sizes a file declares (PLY element counts, a binary STL's triangle count) against the limits in
 * io/mesh_import.h before anything is allocated for them, and the data against the declaration (a PLY cut
 * off in its face list, a binary STL shorter than its count). Not a mesh reader: assimp reads the mesh. */
#ifndef KL_IO_MESH_CHECK_H
#define KL_IO_MESH_CHECK_H

#include "io/mesh_import.h"

/* Check the open regular file fd of size bytes (read with pread: the file offset is not used), a mesh
 * in format fmt ('s' STL, 'o' OBJ, 'p' PLY). KELVIN_OK, or KELVIN_ERR_ARG with msg "PATH:LINE: ..."
 * (or "PATH: ..." where no line applies) naming the limit or the declaration the data contradicts;
 * KELVIN_ERR_IO on a read error. */
kelvin_status kl_mesh_check(int fd, long long size, const char *path, char fmt, char *msg, int cap);

#endif
