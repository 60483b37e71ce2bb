/* io/settings.h: a grinding problem's files: the YAML config over the defaults (kl_settings, optimiser/
 * problem.h) and the files it names (workpiece mesh, path CSV, target CSV, robot), read into the
 * in-memory inputs kl_problem_build takes. Messages name the file, line and field. */
#ifndef KL_IO_SETTINGS_H
#define KL_IO_SETTINGS_H

#include "optimiser/problem.h"

/* Load settings from a YAML file over the defaults. KELVIN_ERR_CONFIG/IO with "FILE:LINE: field: ..." */
kelvin_status kl_settings_load(kl_settings *s, const char *path, char *msg, int cap);

/* The line in the config file at path of the setting a message is about, for the messages of checks
 * made after loading (kl_inputs_load, kl_problem_build: "speed.min (0.05) must be < speed.max (0.01)",
 * "path: sample 3 ... is off the workpiece"): the message's first word, a key of the settings table
 * or a section of them, if the file holds it; else the first other key the message names that the file
 * holds (a setting left at its default conflicting with one given). 0 when the message does not start
 * with a setting, the file holds none of those named, or it cannot be read. */
int kl_settings_line(const char *path, const char *message);

/* The inputs the settings name, loaded and owned: `in` points into the owned arrays. */
typedef struct kl_inputs {
  kl_problem_inputs in;
  kl_mesh *mesh;
  double *path_p, *path_n, *target_s, *target_F;
  long *path_line; /* the line of each path point in path.csv (messages) */
  kl_robot *robot;
} kl_inputs;

/* Read every file the settings name (workpiece.mesh scaled by mesh_scale, path.csv, target.csv,
 * robot.model: "builtin" or a .yaml/.urdf file) and check them against each other for unit mistakes,
 * each refused with a hint (KELVIN_ERR_CONFIG): a mesh more than 10 m across ("is it in millimetres?
 * set workpiece.mesh_scale: 1e-3") or smaller than the tool; path points off the mesh's bounding box;
 * path normals pointing into the part (compared with the mesh's face normals along the path); a target
 * profile running past the path's end (s in millimetres). KELVIN_ERR_CONFIG or KELVIN_ERR_IO with a
 * message; *out is empty on failure (kl_inputs_free is safe either way). */
kelvin_status kl_inputs_load(const kl_settings *s, kl_inputs *out, char *msg, int cap);

/* Release what kl_inputs_load loaded; safe on a zeroed or failed kl_inputs. */
void kl_inputs_free(kl_inputs *in);

#endif
