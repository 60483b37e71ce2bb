/* io/mesh_import.c: triangle meshes from files through assimp's C API (STL/OBJ/PLY and whatever else
 * it reads), never a hand parser; see mesh_import.h. */
#include "io/mesh_import.h"
#include "io/slurp.h"

#include <assimp/cimport.h>
#include <assimp/mesh.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static kelvin_status load(const char *path, double scale, kl_mesh **out, char *msg, int cap);

kelvin_status kl_mesh_load(const char *path, double scale, kl_mesh **out, char *msg, int cap)
{
  const kelvin_status st = load(path, scale, out, msg, cap);
  if (msg && cap > 0) kl_msg_oneline(msg);
  return st;
}

static kelvin_status load(const char *path, double scale, kl_mesh **out, char *msg, int cap)
{
  *out = NULL;
  if (msg && cap > 0) msg[0] = '\0';
  if (!path) {
    if (msg && cap > 0) snprintf(msg, (size_t)cap, "mesh path is NULL");
    return KELVIN_ERR_ARG;
  }
  if (!(isfinite(scale) && scale > 0)) {
    if (msg && cap > 0) snprintf(msg, (size_t)cap, "%s: scale must be > 0, got %g", path, scale);
    return KELVIN_ERR_ARG;
  }
  FILE *f = fopen(path, "rb");
  if (!f) {
    if (msg && cap > 0) snprintf(msg, (size_t)cap, "%s: cannot read: %s", path, strerror(errno));
    return KELVIN_ERR_IO;
  }
  struct stat sb;
  if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
    fclose(f);
    if (msg && cap > 0) snprintf(msg, (size_t)cap, "%s: not a regular file", path);
    return KELVIN_ERR_ARG;
  }
  if (sb.st_size > KL_MESH_MAX_BYTES) {
    fclose(f);
    if (msg && cap > 0)
      snprintf(msg, (size_t)cap, "%s: the file is %lld bytes, more than the limit of %ld", path, (long long)sb.st_size,
               (long)KL_MESH_MAX_BYTES);
    return KELVIN_ERR_ARG;
  }
  if (sb.st_size == 0) {
    fclose(f);
    if (msg && cap > 0) snprintf(msg, (size_t)cap, "%s: mesh is empty (the file has no data)", path);
    return KELVIN_ERR_ARG;
  }
  /* the formats kelvin documents, by the file name (assimp would otherwise try every importer it has) */
  const char *dot = strrchr(path, '.');
  const char *slash = strrchr(path, '/');
  char ext[8] = "";
  if (dot && (!slash || dot > slash) && strlen(dot) < sizeof ext)
    for (size_t i = 0; dot[i]; ++i) ext[i] = (char)(dot[i] >= 'A' && dot[i] <= 'Z' ? dot[i] + 32 : dot[i]);
  if (strcmp(ext, ".stl") != 0 && strcmp(ext, ".obj") != 0 && strcmp(ext, ".ply") != 0) {
    fclose(f);
    if (msg && cap > 0) snprintf(msg, (size_t)cap, "%s: unknown mesh format (the file name must end in .stl, .obj or .ply)", path);
    return KELVIN_ERR_ARG;
  }
  /* a PLY header must be complete ("end_header" within the first 64 KB, every line a header keyword):
   * assimp's PLY reader does not return on a header without its end */
  if (strcmp(ext, ".ply") == 0) {
    char hdr[65536];
    const size_t nh = fread(hdr, 1, sizeof hdr - 1, f);
    hdr[nh] = '\0';
    int ok = nh >= 4 && strncmp(hdr, "ply", 3) == 0 && (hdr[3] == '\n' || hdr[3] == '\r'), ended = 0;
    for (char *l = hdr; ok && !ended && *l;) {
      char *e = strchr(l, '\n');
      if (!e) {
        ok = 0;
        break;
      }
      *e = '\0';
      if (e > l && e[-1] == '\r') e[-1] = '\0';
      static const char *const kw[] = {"ply", "format ", "element ", "property ", "comment", "obj_info", "end_header", NULL};
      int known = 0;
      for (int k = 0; kw[k] && !known; ++k) known = strncmp(l, kw[k], strlen(kw[k])) == 0;
      ok = known;
      ended = strcmp(l, "end_header") == 0;
      l = e + 1;
    }
    if (!ok || !ended) {
      fclose(f);
      if (msg && cap > 0) snprintf(msg, (size_t)cap, "%s: malformed PLY header (expected 'ply', format, element and property lines, then 'end_header')", path);
      return KELVIN_ERR_ARG;
    }
    rewind(f);
  }
  /* an ASCII STL ("solid" and text) must end with "endsolid": a truncated one would load as a partial mesh */
  char head[512], tail[1024];
  const size_t nh = fread(head, 1, sizeof head, f);
  int ascii = nh >= 6 && strncmp(head, "solid", 5) == 0;
  for (size_t i = 0; i < nh && ascii; ++i)
    ascii = head[i] == '\n' || head[i] == '\r' || head[i] == '\t' || (head[i] >= 0x20 && head[i] < 0x7f);
  if (ascii) {
    const long off = sb.st_size > (long)sizeof tail ? (long)(sb.st_size - (long)sizeof tail) : 0;
    size_t nt = 0;
    if (fseek(f, off, SEEK_SET) == 0) nt = fread(tail, 1, sizeof tail - 1, f);
    tail[nt] = '\0';
    if (!strstr(tail, "endsolid")) {
      fclose(f);
      if (msg && cap > 0) snprintf(msg, (size_t)cap, "%s: ASCII STL without 'endsolid' at its end: the file is truncated", path);
      return KELVIN_ERR_ARG;
    }
  }
  fclose(f);
  /* weld identical vertices (STL stores each triangle's corners separately); node transforms are baked
   * in; the structure is validated first (indices in range). Polygons are fanned into triangles below:
   * assimp's own triangulation step asserts (abort()) on some malformed PLY files, found by fuzzing. No
   * step that silently drops triangles: validation here names what is wrong. */
  const struct aiScene *sc =
    aiImportFile(path, aiProcess_ValidateDataStructure | aiProcess_JoinIdenticalVertices | aiProcess_PreTransformVertices);
  if (!sc) {
    const char *why = aiGetErrorString();
    if (msg && cap > 0) {
      if (strstr(why, "No output meshes") || strstr(why, "too small"))
        snprintf(msg, (size_t)cap, "%s: mesh is empty (no triangles)", path);
      else
        snprintf(msg, (size_t)cap, "%s: cannot read mesh: %s", path, why);
    }
    return KELVIN_ERR_ARG;
  }
  long nv = 0, nt = 0;
  for (unsigned i = 0; i < sc->mNumMeshes; ++i) {
    const struct aiMesh *am = sc->mMeshes[i];
    nv += am->mNumVertices;
    for (unsigned k = 0; k < am->mNumFaces; ++k)
      if (am->mFaces[k].mNumIndices >= 3) nt += am->mFaces[k].mNumIndices - 2; /* a fan */
  }
  if (nt == 0 || nv == 0) {
    aiReleaseImport(sc);
    if (msg && cap > 0) snprintf(msg, (size_t)cap, "%s: mesh is empty (no triangles)", path);
    return KELVIN_ERR_ARG;
  }
  if (nv > KL_MESH_MAX_TRIANGLES * 3 || nt > KL_MESH_MAX_TRIANGLES) {
    aiReleaseImport(sc);
    if (msg && cap > 0)
      snprintf(msg, (size_t)cap, "%s: mesh too large (%ld triangles, %ld vertices; the limit is %ld triangles)", path, nt,
               nv, (long)KL_MESH_MAX_TRIANGLES);
    return KELVIN_ERR_ARG;
  }
  double *v = malloc((size_t)nv * 3 * sizeof *v);
  int *t = malloc((size_t)nt * 3 * sizeof *t);
  if (!v || !t) {
    free(v);
    free(t);
    aiReleaseImport(sc);
    if (msg && cap > 0) snprintf(msg, (size_t)cap, "%s: out of memory", path);
    return KELVIN_ERR_NOMEM;
  }
  long iv = 0, it = 0;
  for (unsigned i = 0; i < sc->mNumMeshes; ++i) {
    const struct aiMesh *am = sc->mMeshes[i];
    const long base = iv;
    for (unsigned k = 0; k < am->mNumVertices; ++k, ++iv) {
      v[3 * iv] = scale * (double)am->mVertices[k].x;
      v[3 * iv + 1] = scale * (double)am->mVertices[k].y;
      v[3 * iv + 2] = scale * (double)am->mVertices[k].z;
    }
    for (unsigned k = 0; k < am->mNumFaces; ++k) {
      const struct aiFace *fc = &am->mFaces[k];
      if (fc->mNumIndices < 3) continue; /* points and lines carry no surface */
      for (unsigned j = 1; j + 1 < fc->mNumIndices; ++j) { /* the fan (0, j, j + 1) */
        const unsigned c3[3] = {fc->mIndices[0], fc->mIndices[j], fc->mIndices[j + 1]};
        for (int c = 0; c < 3; ++c) {
          if (c3[c] >= am->mNumVertices) { /* ValidateDataStructure refuses this already; kept as a guard */
            free(v);
            free(t);
            aiReleaseImport(sc);
            if (msg && cap > 0) snprintf(msg, (size_t)cap, "%s: a face refers to vertex %u of %u", path, c3[c], am->mNumVertices);
            return KELVIN_ERR_ARG;
          }
          t[3 * it + c] = (int)(base + (long)c3[c]);
        }
        ++it;
      }
    }
  }
  aiReleaseImport(sc);
  char sub[512];
  const kelvin_status st = kl_mesh_from_arrays(v, (int)nv, t, (int)nt, out, sub, sizeof sub);
  free(v);
  free(t);
  if (st != KELVIN_OK && msg && cap > 0) snprintf(msg, (size_t)cap, "%s: %s", path, sub);
  return st;
}

