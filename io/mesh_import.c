/* io/mesh_import.c: triangle meshes from files through assimp's C API (STL/OBJ/PLY and whatever else
 * it reads), never a hand parser; see mesh_import.h. */
#include "io/mesh_import.h"
#include "io/mesh_check.h"
#include "io/slurp.h"

#include <assimp/cfileio.h>
#include <assimp/cimport.h>
#include <assimp/mesh.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static kelvin_status load(const char *path, double scale, kl_mesh **out, char *msg, int cap);

/* assimp's file system: the mesh file through the descriptor that was checked (pread, so any number of
 * opens share it), any other file it opens checked by kl_io_open (regular, within the size limit) */
typedef struct io_sys {
  const char *path;
  int fd;
  long long size;
} io_sys;

typedef struct io_file {
  struct aiFile f;
  int fd, own;
  long long size, pos;
} io_file;

static size_t io_read(struct aiFile *f, char *buf, size_t size, size_t count)
{
  io_file *h = (io_file *)f->UserData;
  if (!size || !count || count > SIZE_MAX / size || h->pos >= h->size) return 0;
  size_t want = size * count, got = 0;
  if ((long long)want > h->size - h->pos) want = (size_t)(h->size - h->pos);
  while (got < want) {
    const ssize_t n = pread(h->fd, buf + got, want - got, (off_t)(h->pos + (long long)got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += (size_t)n;
  }
  h->pos += (long long)got;
  return got / size;
}

static size_t io_write(struct aiFile *f, const char *buf, size_t size, size_t count)
{
  (void)f, (void)buf, (void)size, (void)count;
  return 0;
}

static size_t io_tell(struct aiFile *f) { return (size_t)((io_file *)f->UserData)->pos; }
static size_t io_size(struct aiFile *f) { return (size_t)((io_file *)f->UserData)->size; }
static void io_flush(struct aiFile *f) { (void)f; }

static enum aiReturn io_seek(struct aiFile *f, size_t off, enum aiOrigin how)
{
  io_file *h = (io_file *)f->UserData;
  const long long base = how == aiOrigin_SET ? 0 : how == aiOrigin_CUR ? h->pos : h->size;
  if (off > (size_t)LLONG_MAX) return aiReturn_FAILURE;
  const long long to = base + (long long)off;
  if (to < 0 || to > h->size) return aiReturn_FAILURE;
  h->pos = to;
  return aiReturn_SUCCESS;
}

static struct aiFile *io_open(struct aiFileIO *fs, const char *name, const char *mode)
{
  const io_sys *sys = (const io_sys *)fs->UserData;
  if (!name || !mode || strchr(mode, 'w') || strchr(mode, 'a') || strchr(mode, '+')) return NULL;
  io_file *h = calloc(1, sizeof *h);
  if (!h) return NULL;
  if (strcmp(name, sys->path) == 0) {
    h->fd = sys->fd, h->size = sys->size;
  } else {
    char why[256];
    if (kl_io_open(name, KL_MESH_MAX_BYTES, &h->fd, &h->size, why, sizeof why) != KELVIN_OK) {
      free(h);
      return NULL;
    }
    h->own = 1;
  }
  h->f = (struct aiFile){io_read, io_write, io_tell, io_size, io_seek, io_flush, (aiUserData)h};
  return &h->f;
}

static void io_close(struct aiFileIO *fs, struct aiFile *f)
{
  (void)fs;
  if (!f) return;
  io_file *h = (io_file *)f->UserData;
  if (h->own) close(h->fd);
  free(h);
}

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
  /* the formats kelvin documents, by the file name (assimp would otherwise try every importer it has) */
  const char *dot = strrchr(path, '.');
  const char *slash = strrchr(path, '/');
  char ext[8] = "";
  if (dot && (!slash || dot > slash) && strlen(dot) < sizeof ext)
    for (size_t i = 0; dot[i]; ++i) ext[i] = (char)(dot[i] >= 'A' && dot[i] <= 'Z' ? dot[i] + 32 : dot[i]);
  if (strcmp(ext, ".stl") != 0 && strcmp(ext, ".obj") != 0 && strcmp(ext, ".ply") != 0) {
    if (msg && cap > 0) snprintf(msg, (size_t)cap, "%s: unknown mesh format (the file name must end in .stl, .obj or .ply)", path);
    return KELVIN_ERR_ARG;
  }
  /* a regular file (checked before it is opened: a FIFO would block), at most KL_MESH_MAX_BYTES */
  io_sys sys = {path, -1, 0};
  char why[256];
  kelvin_status st = kl_io_open(path, KL_MESH_MAX_BYTES, &sys.fd, &sys.size, why, sizeof why);
  if (st != KELVIN_OK) {
    if (msg && cap > 0) snprintf(msg, (size_t)cap, "%s: %s", path, why);
    return st == KELVIN_ERR_IO ? st : KELVIN_ERR_ARG;
  }
  if (sys.size == 0) {
    close(sys.fd);
    if (msg && cap > 0) snprintf(msg, (size_t)cap, "%s: mesh is empty (the file has no data)", path);
    return KELVIN_ERR_ARG;
  }
  /* the counts the file declares against the limits, and its data against its declarations, before assimp
   * allocates anything for them (io/mesh_check.h) */
  st = kl_mesh_check(sys.fd, sys.size, path, ext[1], msg, cap);
  if (st != KELVIN_OK) {
    close(sys.fd);
    return st;
  }
  /* weld identical vertices (STL stores each triangle's corners separately); node transforms are baked
   * in; the structure is validated first (indices in range). Polygons are fanned into triangles below:
   * assimp's own triangulation step asserts (abort()) on some malformed PLY files, found by fuzzing. No
   * step that silently drops triangles: validation here names what is wrong. assimp reads through io_open:
   * the file checked above (the same descriptor, its size then), and any file it names (an OBJ's .mtl)
   * checked the same way. */
  struct aiFileIO fio = {io_open, io_close, (aiUserData)&sys};
  const struct aiScene *sc =
    aiImportFileEx(path, aiProcess_ValidateDataStructure | aiProcess_JoinIdenticalVertices | aiProcess_PreTransformVertices, &fio);
  close(sys.fd);
  if (!sc) {
    const char *aw = aiGetErrorString();
    if (msg && cap > 0) {
      if (strstr(aw, "No output meshes") || strstr(aw, "too small"))
        snprintf(msg, (size_t)cap, "%s: mesh is empty (no triangles)", path);
      else
        snprintf(msg, (size_t)cap, "%s: cannot read mesh: %s", path, aw);
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
  if (nv > KL_MESH_MAX_VERTICES || nt > KL_MESH_MAX_TRIANGLES) {
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
  st = kl_mesh_from_arrays(v, (int)nv, t, (int)nt, out, sub, sizeof sub);
  free(v);
  free(t);
  if (st != KELVIN_OK && msg && cap > 0) snprintf(msg, (size_t)cap, "%s: %s", path, sub);
  return st;
}

