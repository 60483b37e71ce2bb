/* io/robot_yaml.h: robot files for the CLI and the optimiser: a YAML description by DH or
 * modified-DH parameters (read here, with libyaml) or a URDF (engine/robot.h reads it). The format is
 * documented in examples/robot_er10.yaml. Nothing here prints; messages name file, line and field. */
#ifndef KL_IO_ROBOT_YAML_H
#define KL_IO_ROBOT_YAML_H

#include <stddef.h>

#include "engine/robot.h"

/* Load a robot from a .yaml/.yml (DH or modified DH, this module) or .urdf (kl_robot_load_urdf) file.
 * On failure *out = NULL and msg (capacity cap) says why, e.g. "robot.yaml:23: robot.joints[2].mass:
 * must be > 0 kg, got -3": KELVIN_ERR_IO (cannot read), KELVIN_ERR_CONFIG (bad content, unknown key,
 * unknown file type) or KELVIN_ERR_NOMEM. Free the robot with kl_robot_free. It lives here, not in
 * engine/, because the engine does not depend on the YAML layer. */
kelvin_status kl_robot_load(const char *path, kl_robot **out, char *msg, int cap);

/* Load a URDF file (libxml2): the serial chain from the root link to the single leaf link, whose
 * frame is the TCP; fixed joints are merged, masses of fixed links added to their moving parent.
 * Revolute and continuous joints only. On failure *out = NULL and msg names the file, line and field:
 * KELVIN_ERR_IO (cannot read) or KELVIN_ERR_CONFIG. */
kelvin_status kl_robot_load_urdf(const char *path, kl_robot **out, char *msg, int cap);

/* The YAML reader alone. */
kelvin_status kl_robot_load_yaml(const char *path, kl_robot **out, char *msg, int cap);

/* The YAML reader on text in memory; name stands for the file in messages (fuzzing, tests). */
kelvin_status kl_robot_load_yaml_mem(const char *name, const char *text, size_t len, kl_robot **out, char *msg, int cap);

#endif
