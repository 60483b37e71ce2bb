/* kelvin/check.h: validate any kelvin input file without running anything (like MuJoCo's compile), and
 * say in brief what was read: a grinding config (with the files it names and the problem prepared from
 * them, as kelvin_grind_prepare does), a sweep config, a scene, a robot (YAML or URDF), a mesh, or a CSV
 * input (path, target force profile, pass, or sweep scenarios, told apart by their header). `kelvin
 * check FILE` is this call and a print.
 *
 *   kelvin_check_create -> kelvin_check_file -> kelvin_check_kind, kelvin_check_summary -> kelvin_check_free */
#ifndef KELVIN_CHECK_H
#define KELVIN_CHECK_H

#include <kelvin/kelvin.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kelvin_input_kind {
  KELVIN_INPUT_UNKNOWN = 0, /* not read, or not a kelvin input */
  KELVIN_INPUT_GRIND,       /* a kelvin optimise / evaluate config */
  KELVIN_INPUT_SWEEP,       /* a kelvin sweep config */
  KELVIN_INPUT_SCENE,       /* a kelvin simulate scene */
  KELVIN_INPUT_ROBOT,       /* a robot, YAML or URDF */
  KELVIN_INPUT_MESH,        /* a triangle mesh (.stl, .obj, .ply) */
  KELVIN_INPUT_PATH,        /* a path CSV (x_m, y_m, z_m, nx, ny, nz) */
  KELVIN_INPUT_TARGET,      /* a target force profile CSV (s_m, target_N) */
  KELVIN_INPUT_PASS,        /* a pass CSV (s_m, offset_m, speed_m_s) */
  KELVIN_INPUT_SCENARIOS    /* sweep scenarios CSV (m_kg, K, cr, v0_m_s, model, ...) */
} kelvin_input_kind;

typedef struct kelvin_check kelvin_check;

/* KELVIN_ERR_NOMEM (*out = NULL) is the only failure. */
KELVIN_API kelvin_status kelvin_check_create(kelvin_check **out);

/* NULL is a no-op. */
KELVIN_API void kelvin_check_free(kelvin_check *c);

/* Read and validate path (its kind from the extension: .urdf, .stl/.obj/.ply, .csv by its header, else
 * YAML by its top-level keys). KELVIN_OK: the file is good, the summary says what was read;
 * KELVIN_ERR_CONFIG or KELVIN_ERR_IO with the one-line message the run that reads it would give
 * ("FILE:LINE: field: ..."); KELVIN_ERR_NOMEM. The kind is known after a failure too, where the file got
 * that far. */
KELVIN_API kelvin_status kelvin_check_file(kelvin_check *c, const char *path);

/* The kind of the last file checked (KELVIN_INPUT_UNKNOWN before one). */
KELVIN_API kelvin_input_kind kelvin_check_kind(const kelvin_check *c);

/* What the last good file holds, for a person: a first line "FILE: a ..." and indented detail lines, each
 * ending in a newline; "" after a failure or before a check. Valid until the next check. */
KELVIN_API const char *kelvin_check_summary(const kelvin_check *c);

/* The last error message; "" if none; never NULL (also for c = NULL). */
KELVIN_API const char *kelvin_check_errmsg(const kelvin_check *c);

#ifdef __cplusplus
}
#endif
#endif
