/* io/scene_yaml.h: `kelvin simulate` scenes from YAML (libyaml document API) into an engine
 * world model (engine/world.h). Every message names the file, the line and the field:
 *   "scene.yaml:12: bodies[1].mass: must be > 0 kg, got 0"; unknown keys are errors.
 * The format is documented by `kelvin simulate --help` and shown in examples/{ball_plane,ball_mesh,
 * box_mesh,grind_pass}.yaml. */
#ifndef KL_SCENE_YAML_H
#define KL_SCENE_YAML_H

#include <stddef.h>

#include "engine/mesh.h"
#include "engine/world.h"
#include "kelvin/kelvin.h"

#define KL_SCENE_MAX_MESHES 256 /* mesh files loaded by one scene (each up to KL_MESH_MAX_BYTES) */

typedef struct kl_scene {
  kl_world_model *model; /* compiled */
  double duration;       /* [s] */
  double output_step;    /* output period [s] */
  int nbody;
  char **body_name;      /* (nbody) */
  int nmesh;
  kl_mesh **mesh;        /* (nmesh) owned: the model's mesh shapes point here */
} kl_scene;

/* Load and compile a scene. On failure the scene is empty (kl_scene_free is still safe) and msg holds
 * one line: KELVIN_ERR_IO (cannot read the file), KELVIN_ERR_CONFIG (anything wrong in it, meshes
 * included), KELVIN_ERR_NOMEM. */
kelvin_status kl_scene_load(const char *path, kl_scene *out, char *msg, int cap);

/* The same from text in memory; name stands for the file (messages, relative mesh paths). */
kelvin_status kl_scene_load_mem(const char *name, const char *text, size_t len, kl_scene *out, char *msg, int cap);

void kl_scene_free(kl_scene *s); /* safe on a zeroed or failed scene */

#endif
