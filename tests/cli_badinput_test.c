/* tests/cli_badinput_test.c: bad input of every kind through every command, as a careless or hostile
 * user would give it. Each case must end with exit 2 (bad input) or 1 (runtime failure), exactly one line
 * on stderr that names the file, line and field or the limit, no sanitizer report (the suite runs under
 * ASan/UBSan too), and leave the output folder of an earlier run exactly as it was: nothing half-written,
 * no temporary, no staging folder. Then: write errors (a file-size limit standing in for a full disk),
 * an interrupted run, and JSON that stays valid with a quote in a path. */
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <cmocka.h>
#include <cjson/cJSON.h>

#include "tests/cli_util.h"

static char tmp[256];

/* a config that builds a small problem quickly */
#define SMALL "path: {samples: 41, start: -0.02, end: 0.02}\nworkpiece: {extent: [0.06, 0.02], resolution: 1e-3}\n" \
              "offset: {control_points: 6}\nspeed: {control_points: 4}\noptimiser: {screening: 16, keep: 1, maxeval: 1}\n" \
              "verify: {count: 1}\n"
#define PART "workpiece: {surface: mesh, mesh: plate.stl, mesh_scale: 1e-3}\npath: {csv: path.csv, samples: 41}\n" \
             "offset: {control_points: 6}\nspeed: {control_points: 4}\n"
#define PATHOK "x_m,y_m,z_m,nx,ny,nz\n-0.02,0,0,0,0,1\n0,0,0,0,0,1\n0.02,0,0,0,0,1\n"
#define PASSOK "s_m,offset_m,speed_m_s\n0,0.0006,0.015\n0.05,0.0006,0.015\n"
#define SCENE "duration: 0.01\nbodies:\n  - name: ground\n    type: static\n    shapes: [{type: plane}]\n" \
              "  - name: ball\n    position: [0, 0, 0.2]\n    shapes:\n"
#define ROBOT "robot:\n  convention: dh\n  joints:\n    - {a: 0, alpha_deg: 90, d: 0.4, limits_deg: [-170, 170], " \
              "speed_deg_s: 200, mass: 10, com: [0, 0, 0], inertia: [0.1, 0.1, 0.1, 0, 0, 0]}\n"

typedef struct bad {
  const char *files[3][2]; /* name, content ("@DEEP", "@MANY", "@BIG", "@DIR", "@PLATE": made by the test) */
  const char *args;        /* kelvin arguments, run in the case's folder */
  int rc;                  /* expected exit status */
  const char *must;        /* in the one line on stderr */
} bad;

static const bad cases[] = {
  /* optimise / evaluate configs: the YAML layer */
  {{{"c.yaml", "tool: {radius: [1, 2}\n"}}, "optimise c.yaml --out prev", 2, "c.yaml:1: malformed YAML"},
  {{{"c.yaml", "tool:\n  radius: 6e-3\n  colour: red\n"}}, "optimise c.yaml --out prev", 2, "c.yaml:3: tool.colour: unknown key"},
  {{{"c.yaml", "tool:\n  radius: 6e-3\ntool:\n  mass: 2\n"}}, "optimise c.yaml --out prev", 2, "c.yaml:3: tool: duplicate key (first given on line 1)"},
  {{{"c.yaml", "workpiece:\n  bead: {height: 1e-4, height: 2e-4}\n"}}, "optimise c.yaml --out prev", 2, "c.yaml:2: workpiece.bead.height: duplicate key (first given on line 2)"},
  {{{"c.yaml", "a: &x {radius: 1}\ntool: *x\n"}}, "optimise c.yaml --out prev", 2, "c.yaml:1: document: YAML anchors and aliases are not supported"},
  {{{"c.yaml", "@DEEP"}}, "optimise c.yaml --out prev", 2, "nested deeper than 32 levels (the limit)"},
  {{{"c.yaml", "@MANY"}}, "optimise c.yaml --out prev", 2, "more than 10000 entries (the limit)"},
  {{{"c.yaml", "@BIG"}}, "optimise c.yaml --out prev", 2, "more than the limit of 4194304"},
  {{{"c.yaml", "tool: {radius: 6e-3}\n---\ntool: {radius: 5e-3}\n"}}, "optimise c.yaml --out prev", 2, "c.yaml:2: document: more than one YAML document"},
  {{{"c.yaml", "tool:\n  radius: 6e-3x\n"}}, "optimise c.yaml --out prev", 2, "c.yaml:2: tool.radius: must be a finite number, got '6e-3x'"},
  {{{"c.yaml", "holder:\n  stiffness: -1\n"}}, "optimise c.yaml --out prev", 2, "c.yaml:2: holder.stiffness: must be in [1, 1e9] N/m, got -1"},
  {{{"c.yaml", "optimiser:\n  fd_step: 1e-11\n"}}, "optimise c.yaml --out prev", 2, "c.yaml:2: optimiser.fd_step: must be in [1e-10, 0.1], got 1e-11"},
  {{{"c.yaml", "tool:\n  radius: .nan\n"}}, "optimise c.yaml --out prev", 2, "c.yaml:2: tool.radius: must be a finite number, got '.nan'"},
  {{{"c.yaml", ""}}, "optimise c.yaml --out prev", 2, "c.yaml: the file is empty"},
  {{{"c.yaml", "- 1\n- 2\n"}}, "optimise c.yaml --out prev", 2, "c.yaml:1: document: the top level must be a mapping"},
  {{{"c.yaml", "@DIR"}}, "optimise c.yaml --out prev", 2, "c.yaml: not a regular file"},
  {{{NULL}}, "optimise nothing.yaml --out prev", 2, "nothing.yaml: cannot read"},
  {{{"c.yaml", "path: {samples: 8}\noffset: {control_points: 20}\noptimiser: {method: nlopt}\n"}}, "optimise c.yaml --out prev", 2, "c.yaml:1: path.samples (8) must be at least offset.control_points (20)"},
  /* checks made after loading name the line of the setting they are about (kl_settings_line): the
   * first one named, else another the file holds (one left at its default), else its section */
  {{{"c.yaml", "tool: {radius: 6e-3}\nspeed:\n  min: 0.05\n  max: 0.01\n"}}, "optimise c.yaml --out prev", 2, "c.yaml:3: speed.min (0.05) must be < speed.max (0.01)"},
  {{{"c.yaml", "tool: {radius: 6e-3}\nspeed:\n  initial: 0.01\n  max: 0.001\n"}}, "check c.yaml", 2, "c.yaml:4: speed.min (0.005) must be < speed.max (0.001)"},
  {{{"c.yaml", "tool: {radius: 6e-3}\nworkpiece:\n  surface: mesh\n"}}, "check c.yaml", 2, "c.yaml:2: workpiece.mesh: needed with surface: mesh"},
  {{{"c.yaml", "workpiece: {surface: cylinder, radius: 0.01}\ntool: {radius: 6e-3}\npath:\n  y: 0.005\n"}}, "optimise c.yaml --out prev", 2, "c.yaml:3: path: the path leaves the cylinder of radius 0.01 m"},
  {{{"c.yaml", "workpiece: {surface: mesh, mesh: none.stl}\n"}}, "optimise c.yaml --out prev", 2, "none.stl: cannot read"},
  {{{"c.yaml", "robot: {model: none.urdf}\n"}}, "optimise c.yaml --out prev", 2, "robot.model: none.urdf: cannot read"},
  {{{"c.yaml", "optimiser: {algorithm: [1]}\n"}}, "optimise c.yaml --out prev", 2, "c.yaml:1: optimiser.algorithm"},
  {{{"c.yaml", "path: {samples: 64}\noptimiser:\n  method: nlopt\n  algorithm: LD_FOO\n"}}, "optimise c.yaml --cpu --out prev", 2, "c.yaml:4: optimiser.algorithm: unknown NLopt algorithm 'LD_FOO'"},
  {{{"c.yaml", SMALL}}, "optimise c.yaml --algorithm LD_FOO --cpu --out prev", 2, "optimise: --algorithm: unknown NLopt algorithm 'LD_FOO'"},
  /* the files a config names: meshes, path and target CSV, unit mistakes */
  {{{"c.yaml", "workpiece: {surface: mesh, mesh: plate.stl}\npath: {csv: path.csv}\n"}, {"plate.stl", "@PLATE"}, {"path.csv", PATHOK}},
   "optimise c.yaml --out prev", 2, "the mesh is 124 m across (mesh_scale 1); is it in millimetres? set workpiece.mesh_scale"},
  {{{"c.yaml", PART}, {"plate.stl", "solid p\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\n"}, {"path.csv", PATHOK}},
   "optimise c.yaml --out prev", 2, "plate.stl: ASCII STL without 'endsolid' at its end: the file is truncated"},
  {{{"c.yaml", PART}, {"plate.stl", "@PLATE"}, {"path.csv", "x_m,y_m,z_m,nx,ny,nz\n-0.02,0,0,0,0,-1\n-0.01,0,0,0,0,-1\n0,0,0,0,0,-1\n0.01,0,0,0,0,-1\n0.02,0,0,0,0,-1\n"}},
   "optimise c.yaml --out prev", 2, "kelvin: c.yaml: path.csv:2: the path normals point into the part"}, /* (no config line: the message names a file, called like its key) */
  {{{"c.yaml", PART}, {"plate.stl", "@PLATE"}, {"path.csv", "x_m,y_m,z_m,nx,ny,nz\n-20,0,0,0,0,1\n20,0,0,0,0,1\n"}},
   "optimise c.yaml --out prev", 2, "path.csv:2: the path point (-20, 0, 0) m is"},
  {{{"c.yaml", SMALL "target: {csv: t.csv}\n"}, {"t.csv", "s_m,target_N\n0,3\n40,7\n"}}, "optimise c.yaml --out prev", 2, "t.csv: s runs to 40 m but the path is only 0.04 m long; is s in millimetres?"},
  {{{"c.yaml", SMALL "target: {csv: t.csv}\n"}, {"t.csv", "s_m,target_N\n0,3\n0.0004abc,7\n"}}, "optimise c.yaml --out prev", 2, "t.csv:3: column 's_m': must be a finite number, got '0.0004abc'"},
  {{{"c.yaml", SMALL "target: {csv: t.csv}\n"}, {"t.csv", "s_m,target_N\n0,3\n,7\n"}}, "optimise c.yaml --out prev", 2, "t.csv:3: column 's_m': empty field"},
  {{{"c.yaml", SMALL "target: {csv: t.csv}\n"}, {"t.csv", "s_m,target_N\n0.01,3\n0,7\n"}}, "optimise c.yaml --out prev", 2, "t.csv:3: column 's_m': must increase"},
  {{{"c.yaml", SMALL "target: {csv: t.csv}\n"}, {"t.csv", "s,force\n0,3\n0.01,-7\n"}}, "optimise c.yaml --out prev", 2, "t.csv:3: column 'force': must be > 0 N, got -7"},
  {{{"c.yaml", SMALL "target: {csv: t.csv}\n"}, {"t.csv", "s_m,target_N\n0,3\n0.01,inf\n"}}, "optimise c.yaml --out prev", 2, "t.csv:3: column 'target_N': must be a finite number, got 'inf'"},
  {{{"c.yaml", SMALL "target: {csv: t.csv}\n"}, {"t.csv", ""}}, "optimise c.yaml --out prev", 2, "t.csv: no header row"},
  {{{"c.yaml", PART}, {"plate.stl", "@PLATE"}, {"path.csv", "x,y,z,nx,ny,nz\n0,0,0,0,0,1\n0.01,0,0,0,1\n"}}, "optimise c.yaml --out prev", 2, "path.csv:3: 5 fields, but the header has 6"},
  {{{"c.yaml", PART}, {"plate.stl", "@PLATE"}, {"path.csv", "x,y,z,nx,ny,nz\n0,0,0,0,0,\"1\n"}}, "optimise c.yaml --out prev", 2, "path.csv:2: column 6: a quote opened here is never closed"},
  {{{"c.yaml", PART}, {"plate.stl", "@PLATE"}, {"path.csv", "x,y,z,nx,ny\n0,0,0,0,0\n"}}, "optimise c.yaml --out prev", 2, "path.csv:1: header: missing column 'nz'"},
  {{{"c.yaml", PART}, {"plate.stl", "@PLATE"}, {"path.csv", "x,y,z,nx,ny,nz\n0,0,0,0,0,1\n0.01,0,0,0,0,1\"x\"\n"}}, "optimise c.yaml --out prev", 2, "path.csv:3: column 'nz': a quote inside an unquoted field"},
  {{{"c.yaml", PART}, {"plate.stl", "@PLATE"}, {"path.csv", "x,y,z,nx,ny,nz\n0,0,0,0,0,1\n0.01,nan,0,0,0,1\n"}}, "optimise c.yaml --out prev", 2, "path.csv:3: column 'y': must be a finite number, got 'nan'"},
  {{{"c.yaml", PART}, {"plate.stl", "@PLATE"}, {"path.csv", "x,y,z,nx,ny,nz\n0,0,0,0,0,1\n0.01,0,0,0,0.5,1\n"}}, "optimise c.yaml --out prev", 2, "path.csv:3: columns nx,ny,nz: the normal must be unit length"},
  {{{"c.yaml", PART}, {"plate.stl", "@PLATE"}, {"path.csv", "x,y,z,nx,ny,nz\r\n0,0,0,0,0,1\r0.01,0,0,0,0,1\n"}}, "optimise c.yaml --out prev", 2, "path.csv:2: a carriage return not followed by a line feed"},
  {{{"c.yaml", PART}, {"plate.stl", "@PLATE"}, {"path.csv", "x,x_m,y,z,nx,ny,nz\n0,0,0,0,0,0,1\n"}}, "optimise c.yaml --out prev", 2, "path.csv:1: header: column 'x_m' or 'x' given twice"},
  /* evaluate --pass */
  {{{"c.yaml", SMALL}, {"p.csv", "s_m,offset_m,speed_m_s\n0,0.0004abc,0.015\n0.05,0.0006,0.015\n"}}, "evaluate c.yaml --pass p.csv --cpu --out prev", 2, "p.csv:2: column 'offset_m': must be a finite number, got '0.0004abc'"},
  {{{"c.yaml", SMALL}, {"p.csv", "s_m,offset_m,speed_m_s\n0,1e300,0.015\n0.05,0.0006,0.015\n"}}, "evaluate c.yaml --pass p.csv --cpu --out prev", 2, "p.csv:2: column 'offset_m': 1e+300 m is outside the configured bounds"},
  {{{"c.yaml", SMALL}, {"p.csv", "s_m,offset_m,speed_m_s\n0,0.6,15\n50,0.6,15\n"}}, "evaluate c.yaml --pass p.csv --cpu --out prev", 2, "is it in millimetres?"},
  {{{"c.yaml", SMALL}, {"p.csv", "s_m,offset_m,speed_m_s\n0,0.0006,15\n0.05,0.0006,15\n"}}, "evaluate c.yaml --pass p.csv --cpu --out prev", 2, "p.csv:2: column 'speed_m_s': 15 m/s is outside the configured bounds [speed.min, speed.max] = [0.005, 0.03] m/s; is it in mm/s?"},
  {{{"c.yaml", SMALL}, {"p.csv", "s_m,offset_m,speed_m_s\n0,0.0006,0.015\n0.01,0.0006,0.015\n"}}, "evaluate c.yaml --pass p.csv --cpu --out prev", 2, "p.csv:3: column 's_m': s covers [0, 0.01] m but the path runs over"},
  {{{"c.yaml", SMALL}, {"p.csv", "s_m,offset_m,speed_m_s\n0,0.0006,0.015\n40,0.0006,0.015\n"}}, "evaluate c.yaml --pass p.csv --cpu --out prev", 2, "p.csv:3: column 's_m': s runs to 40 m but the path is only 0.04"},
  {{{"c.yaml", SMALL}, {"p.csv", "s_m,offset_m,speed_m_s\n0,0.0006,0.015\n40,0.0006,0.015\n"}}, "evaluate c.yaml --pass p.csv --cpu --out prev", 2, "m long; is s in millimetres? the file is read in metres"},
  {{{"c.yaml", SMALL}, {"p.csv", "s,offset\n0,0.0006\n"}}, "evaluate c.yaml --pass p.csv --cpu --out prev", 2, "p.csv:1: header: missing column 'speed_m_s' or 'speed'"},
  {{{"c.yaml", SMALL}, {"p.csv", "s_m,offset_m,speed_m_s\n0,0.0006,0.015\n"}}, "evaluate c.yaml --pass p.csv --cpu --out prev", 2, "p.csv: need at least 2 rows"},
  {{{"c.yaml", SMALL}, {"p.csv", "s_m,offset_m,speed_m_s\n0,0.0006,0.015,9\n0.05,0.0006,0.015\n"}}, "evaluate c.yaml --pass p.csv --cpu --out prev", 2, "p.csv:2: 4 fields, but the header has 3"},
  {{{"c.yaml", SMALL}, {"p.csv", "s_m,offset_m,speed_m_s\n0,0.0006,0\n0.05,0.0006,0.015\n"}}, "evaluate c.yaml --pass p.csv --cpu --out prev", 2, "p.csv:2: column 'speed_m_s': must be > 0 m/s, got 0"},
  {{{"c.yaml", SMALL}}, "evaluate c.yaml --cpu --out prev", 2, "evaluate: --pass FILE is required"},
  {{{"c.yaml", SMALL}, {"p.csv", PASSOK}}, "evaluate c.yaml --pass p.csv --seed 3 --out prev", 2, "evaluate: option '--seed' is not one of this command's"},
  {{{"c.yaml", SMALL}, {"p.csv", PASSOK}}, "evaluate c.yaml --pass p.csv --algorithm LD_MMA --out prev", 2, "evaluate: option '--algorithm' is not one of this command's"},
  {{{"c.yaml", SMALL}}, "optimise c.yaml --pass p.csv --out prev", 2, "optimise: option '--pass' is not one of this command's"},
  /* sweep: config and scenario CSV */
  {{{"s.yaml", "sweep:\n  speed: 1\n"}}, "sweep s.yaml --cpu --out prev", 2, "s.yaml:2: sweep.speed: unknown key"},
  {{{"s.yaml", "sweep:\n  cr: 0\n"}}, "sweep s.yaml --cpu --out prev", 2, "s.yaml:2: sweep.cr: must be > 0, got 0"},
  {{{"s.yaml", "sweep:\n  m: {min: 1, max: 2, n: 1000000}\n  K: {min: 1, max: 2, n: 1000}\n"}}, "sweep s.yaml --cpu --out prev", 2, "more than 50000000 scenarios"},
  {{{"s.yaml", "sweep:\n  cr: &c 0.5\n  m: *c\n"}}, "sweep s.yaml --cpu --out prev", 2, "s.yaml:2: document: YAML anchors and aliases"},
  {{{"s.yaml", "sweep:\n  scenarios: r.csv\n"}, {"r.csv", "m,K,cr,v0,model\n1,1e8,0.5,1,xx\n"}}, "sweep s.yaml --cpu --out prev", 2, "r.csv:2: column 'model': must be one of kv, hc, ef, general, got 'xx'"},
  {{{"s.yaml", "sweep:\n  scenarios: r.csv\n"}, {"r.csv", "m,K,cr,v0,model\n1,,0.5,1,kv\n"}}, "sweep s.yaml --cpu --out prev", 2, "r.csv:2: column 'K': empty field"},
  {{{"s.yaml", "sweep:\n  scenarios: r.csv\n"}, {"r.csv", "m,K,cr,v0,model\n1,1e8,0.5,1x,kv\n"}}, "sweep s.yaml --cpu --out prev", 2, "r.csv:2: column 'v0': must be a finite number, got '1x'"},
  {{{"s.yaml", "sweep:\n  scenarios: r.csv\n"}, {"r.csv", "m,K,cr,model\n1,1e8,0.5,kv\n"}}, "sweep s.yaml --cpu --out prev", 2, "r.csv:1: header: missing column 'v0_m_s' or 'v0'"},
  {{{"s.yaml", "sweep:\n  scenarios: r.csv\n"}, {"r.csv", "@DIR"}}, "sweep s.yaml --cpu --out prev", 2, "r.csv: not a regular file"},
  {{{"s.yaml", "sweep:\n  scenarios: r.csv\n"}, {"r.csv", "m_kg,K,cr,v0_m_s,model\n1,1e8,1.5,1,kv\n"}}, "sweep s.yaml --cpu --out prev", 2, "r.csv:2: column 'cr': must be <= 1, got 1.5"},
  {{{"s.yaml", "sweep:\n  scenarios: r.csv\n"}, {"r.csv", "m_kg,K,cr,v0_m_s,model,rule\n1,1e8,0.5,1,kv,\"pen\netration\"\n"}}, "sweep s.yaml --cpu --out prev", 2, "r.csv:2: column 'rule': must be one of penetration, force or -, got 'pen etration'"}, /* (found by fuzz_scenarios: a quoted value's line break) */
  /* simulate: scenes */
  {{{"sc.yaml", SCENE "      - {type: sphere, radius: 0.1, colour: red}\n"}}, "simulate sc.yaml --out prev", 2, "sc.yaml:9: bodies[1].shapes[0].colour: unknown key"},
  {{{"sc.yaml", SCENE "      - {type: sphere, radius: 0.1}\n    mass: -1\n"}}, "simulate sc.yaml --out prev", 2, "bodies[1].mass: must be > 0 kg, got -1"},
  {{{"sc.yaml", SCENE "      - {type: hull, vertices: [[0,0,0],[1,0,0],[0,1,0],[0,0,1]], file: x.stl}\n"}}, "simulate sc.yaml --out prev", 2, "bodies[1].shapes[0].file: only a mesh has a file and a scale"},
  {{{"sc.yaml", "duration: 0.01\nbodies:\n  - name: g\n    type: static\n    shapes: [{type: mesh, file: m.stl}]\n"}}, "simulate sc.yaml --out prev", 2, "sc.yaml:5: bodies[0].shapes[0].file: m.stl: cannot read"},
  {{{"sc.yaml", "duration: 0.01\nbodies:\n  - name: g\n    type: static\n    shapes: [{type: mesh, file: m.stl}]\n"}, {"m.stl", "solid m\nfacet normal 0 0 1\n outer loop\n"}}, "simulate sc.yaml --out prev", 2, "m.stl: ASCII STL without 'endsolid'"},
  {{{"sc.yaml", "duration: 0.01\nbodies:\n  - name: g\n    type: static\n    shapes: [{type: mesh, file: m.off}]\n"}, {"m.off", "OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n"}}, "simulate sc.yaml --out prev", 2, "m.off: unknown mesh format"},
  {{{"sc.yaml", "duration: 0.01\nbodies:\n  - &b {name: a, shapes: [{type: sphere, radius: 0.1}]}\n  - *b\n"}}, "simulate sc.yaml --out prev", 2, "sc.yaml:3: document: YAML anchors and aliases"},
  {{{"sc.yaml", "@DEEP"}}, "simulate sc.yaml --out prev", 2, "nested deeper than 32 levels"},
  {{{"sc.yaml", "duration: 1\nduration: 2\n"}}, "simulate sc.yaml --out prev", 2, "sc.yaml:2: duration: duplicate key"},
  {{{"sc.yaml", "duration: 1\nbodies:\n  - name: a\n    name: b\n"}}, "simulate sc.yaml --out prev", 2, "sc.yaml:4: bodies[0].name: duplicate key"},
  {{{"sc.yaml", "duration: 1000\noutput_step: 1e-5\nbodies: []\n"}}, "simulate sc.yaml --out prev", 2, "sc.yaml:2: output_step: 1e-05 s over 1000 s would write 1e+08 rows"},
  {{{"sc.yaml", SCENE "      - {type: sphere, radius: 0.1}\n    velocity: [0, 0, 1e999]\n"}}, "simulate sc.yaml --out prev", 2, "bodies[1].velocity[2]: must be a finite number, got '1e999'"},
  /* robot: YAML, URDF, path CSV */
  {{{"r.yaml", "robot:\n  convention: dh\n  colour: red\n"}}, "robot r.yaml --out prev", 2, "r.yaml:3: robot.colour: unknown key"},
  {{{"r.yaml", "robot: [\n"}}, "robot r.yaml --out prev", 2, "r.yaml:2: malformed YAML"},
  {{{"r.urdf", "<robot name='x'><link name='a'></robot>"}}, "robot r.urdf --out prev", 2, "r.urdf:1: not well-formed XML"},
  {{{"r.urdf", "<?xml version='1.0'?>\n<!DOCTYPE robot [<!ENTITY a 'aaaa'>]>\n<robot name='x'/>\n"}}, "robot r.urdf --out prev", 2, "a DOCTYPE (and its entities) is not supported"},
  {{{"r.txt", "robot:\n"}}, "robot r.txt --out prev", 2, "r.txt: unknown robot file type"},
  {{{"p.csv", "x,y,z,nx,ny,nz\n0.5,0,0.2,0,0,1\n0.51,0,0.2x,0,0,1\n"}}, "robot --path p.csv --out prev", 2, "p.csv:3: column 'z': must be a finite number, got '0.2x'"},
  {{{"p.csv", "x,y,z,nx,ny,nz\n0.5,0,0.2,0,0,1\n0.51,0,,0,0,1\n"}}, "robot --path p.csv --out prev", 2, "p.csv:3: column 'z': empty field"},
  {{{"r.yaml", ROBOT "  home_deg: [1, 2]\n"}}, "robot r.yaml --out prev", 2, "r.yaml:5: robot.home_deg: must have one angle per joint (1), got 2"},
  /* bounce: inputs that would not finish */
  {{{NULL}}, "bounce --model hc --radius 1e-300 --out prev", 2, "the ball would sink"},
  {{{NULL}}, "bounce --mass 1e-30 --out prev", 2, "below the time resolution of double precision"},
  {{{NULL}}, "bounce --cr 2 --out prev", 2, "--cr: each value must be in (0, 1], got 2"},
  {{{NULL}}, "bounce --mass 1abc --out prev", 2, "--mass: must be a finite number, got '1abc'"},
  /* check */
  {{{"c.yaml", "tool:\n  radius: 6e-3x\n"}}, "check c.yaml", 2, "c.yaml:2: tool.radius: must be a finite number"},
  {{{"x.csv", "a,b\n1,2\n"}}, "check x.csv", 2, "x.csv: the header names no kelvin input"},
  {{{"m.stl", "solid m\nfacet normal 0 0 1\n"}}, "check m.stl", 2, "m.stl: ASCII STL without 'endsolid'"},
  {{{"x.ply", "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\npr0 0\n1 0 0\n"}}, "check x.ply", 2, "x.ply:5: malformed PLY header"},
  /* found by fuzz_mesh: assimp's triangulation asserted (abort) on this PLY; now refused before assimp, at
   * its property line with four words */
  {{{"x.ply", "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float zfloat x\nproperty float y\nproperty float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n"}}, "check x.ply", 2, "x.ply:6: malformed PLY header"},
  /* limits before allocation and models that are what the file says (issue 31): a 200-byte PLY claiming 2e8
   * faces (once 3 GB and 12 s), a PLY cut in its face list, names given twice */
  {{{"x.ply", "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nelement face 200000000\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n"}}, "check x.ply", 2, "x.ply:7: PLY header 'element face 200000000': more than the limit of 10000000 faces"},
  {{{"x.ply", "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\nelement face 2\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n3 0 1 2\n"}}, "check x.ply", 2, "x.ply:7: the file ends after 1 of the 2 'face' elements this header line declares: it is truncated"},
  {{{"sc.yaml", SCENE "      - {type: sphere, radius: 0.1}\n  - name: ball\n    shapes: [{type: sphere, radius: 0.1}]\n"}}, "simulate sc.yaml --out prev", 2, "sc.yaml:10: bodies[2].name: duplicate body name: 'ball' is used by bodies[1] (line 6) already"},
  {{{"r.yaml", ROBOT "    - {name: j1, a: 0, alpha_deg: 0, d: 0.1, limits_deg: [-90, 90], speed_deg_s: 200, mass: 1, com: [0, 0, 0], inertia: [0.1, 0.1, 0.1, 0, 0, 0]}\n"}}, "robot r.yaml --out prev", 2, "r.yaml:5: robot.joints[1].name: duplicate joint name 'j1' (robot.joints[0], line 4, has it already)"},
  {{{"r.urdf", "<robot name='x'>\n<link name='a'/>\n<joint name='j' type='revolute'><parent link='a'/><child link='b'/><limit lower='-1' upper='1' velocity='1'/></joint>\n<link name='b'><inertial><mass value='1'/><inertia ixx='0.1' iyy='0.1' izz='0.1' ixy='0' ixz='0' iyz='0'/></inertial></link>\n<link name='b'><inertial><mass value='100'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial></link>\n</robot>\n"}}, "robot r.urdf --out prev", 2, "r.urdf:5: duplicate <link> name 'b' (first defined at line 4)"},
  {{{"r.urdf", "<robot name='x'>\n<link name='a'/>\n<joint name='j' type='revolute'><parent link='a'/><child link='b'/><limit lower='-1' upper='1' velocity='1'/></joint>\n<link name='b'><inertial><mass value='1'/><inertia ixx='0.1' iyy='0.1' izz='0.1' ixy='0' ixz='0' iyz='0'/></inertial></link>\n<joint name='j' type='revolute'><parent link='b'/><child link='c'/><limit lower='-1' upper='1' velocity='1'/></joint>\n<link name='c'/>\n</robot>\n"}}, "check r.urdf", 2, "r.urdf:5: duplicate <joint> name 'j' (first defined at line 3)"},
  /* assimp 5.2 wrote past its vertex array on a second, larger vertex element (JVN#42386607): refused first */
  {{{"x.ply", "ply\nformat ascii 1.0\nelement vertex 2\nproperty int x\nproperty int nx\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n8 8\n8 8\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n"}}, "check x.ply", 2, "x.ply:6: PLY element 'vertex' after element 'vertex' (line 3): an element given twice"},
  /* not regular files, refused before they are opened (a FIFO would block the reader: an alarm guards) */
  {{{"c.yaml", "@FIFO"}}, "check c.yaml", 2, "c.yaml: not a regular file (a FIFO)"},
  {{{"c.yaml", "@FIFO"}}, "optimise c.yaml --out prev", 2, "c.yaml: not a regular file (a FIFO)"},
  {{{"c.yaml", PART}, {"plate.stl", "@FIFO"}, {"path.csv", PATHOK}}, "optimise c.yaml --out prev", 2, "plate.stl: not a regular file (a FIFO)"},
  {{{"c.yaml", PART}, {"plate.stl", "@PLATE"}, {"path.csv", "@FIFO"}}, "optimise c.yaml --out prev", 2, "path.csv: not a regular file (a FIFO)"},
  {{{"sc.yaml", "duration: 0.01\nbodies:\n  - name: g\n    type: static\n    shapes: [{type: mesh, file: m.ply}]\n"}, {"m.ply", "@FIFO"}}, "simulate sc.yaml --out prev", 2, "sc.yaml:5: bodies[0].shapes[0].file: m.ply: not a regular file (a FIFO)"},
  {{{"r.urdf", "@FIFO"}}, "robot r.urdf --out prev", 2, "r.urdf: not a regular file (a FIFO)"},
  {{{"c.yaml", "workpiece: {surface: mesh, mesh: m.obj}\n"}, {"m.obj", "@DIR"}}, "check c.yaml", 2, "m.obj: not a regular file (a folder)"},
  /* runtime failures: exit 1 */
  {{{"prevfile", "x"}}, "bounce --duration 0.1 --out prevfile/sub", 1, "cannot create folder 'prevfile/sub'"},
  /* wrong magnitudes, refused by the library before any long work with the likely unit (docs/design.md section 8) */
  {{{"c.yaml", "holder:\n  stiffness: 5\n"}}, "optimise c.yaml --cpu --out prev", 2, "c.yaml:2: holder.stiffness: 5 N/m gives a static offset of 0.605 m at the target's 5 N (holder 0.605 m, contact 8.95e-07 m), more than 0.02 m; is it in N/mm? the key takes N/m (5 N/mm = 5000 N/m)"},
  {{{"c.yaml", "target:\n  force: 5000\n"}}, "optimise c.yaml --cpu --out prev", 2, "c.yaml:2: target.force: 5000 N is above target.max_force (10 N), where the over-force penalty would fight the target; is target.force in mN? both keys take N"},
  {{{"c.yaml", "target:\n  max_force: 10000\n  force: 5000\n"}}, "check c.yaml", 2, "c.yaml:3: target.force: 5000 N on holder.stiffness 5000 N/m gives a static offset of 1 m"},
  {{{"c.yaml", SMALL "target: {csv: t.csv}\n"}, {"t.csv", "s_m,target_N\n0,3\n0.04,12\n"}}, "optimise c.yaml --cpu --out prev", 2, "c.yaml:7: target.max_force: 10 N is below the target profile's largest force, 12 N (sample 1)"},
  {{{"c.yaml", "speed:\n  min: 5\n  max: 30\n  initial: 15\n"}}, "optimise c.yaml --cpu --out prev", 2, "c.yaml:3: speed.max: 30 m/s is above 2 m/s, faster than a robot feeds a grinding tool; is it in mm/s? the key takes m/s (30 mm/s = 0.03 m/s)"},
  {{{"c.yaml", "contact:\n  stiffness: 5000\n"}}, "check c.yaml", 2, "c.yaml:2: contact.stiffness: 5000 N/m^1.5 gives a static depth of 0.01 m at the target's 5 N, more than a quarter of tool.radius (0.0015 m); is it in N/mm^1.5?"},
  {{{"c.yaml", "workpiece: {surface: mesh, mesh: plate.stl, mesh_scale: 1000}\npath: {csv: path.csv}\n"}, {"plate.stl", "@PLATE"}, {"path.csv", PATHOK}},
   "optimise c.yaml --cpu --out prev", 2, "the mesh is 1.24e+05 m across (mesh_scale 1000); is it in millimetres? set workpiece.mesh_scale: 0.001"},
  {{{"c.yaml", "path:\n  csv: path.csv\n"}, {"path.csv", "x_m,y_m,z_m,nx,ny,nz\n-50,0,0,0,0,1\n50,0,0,0,0,1\n"}}, "optimise c.yaml --cpu --out prev", 2, "c.yaml:1: path: the path is 100 m long (a 6667 s pass at speed.initial 0.015 m/s), more than 10 m; the path is taken in metres"},
};

/* the content of a special file */
static char *make(const char *spec, size_t *len)
{
  char *s = NULL;
  if (strcmp(spec, "@DEEP") == 0) {
    s = malloc(1000);
    strcpy(s, "a: ");
    for (int i = 0; i < 100; ++i) strcat(s, "[");
    for (int i = 0; i < 100; ++i) strcat(s, "]");
    strcat(s, "\n");
  } else if (strcmp(spec, "@MANY") == 0) {
    s = malloc(20001 * 16);
    strcpy(s, "tool:\n");
    char *p = s + strlen(s);
    for (int i = 0; i < 20000; ++i) p += sprintf(p, "  k%d: 1\n", i);
  } else if (strcmp(spec, "@BIG") == 0) {
    const size_t n = 5u << 20;
    s = malloc(n + 1);
    memset(s, '#', n);
    s[n] = '\0';
  } else if (strcmp(spec, "@PLATE") == 0) {
    char path[1024];
    snprintf(path, sizeof path, "%s/examples/part/plate_weld_mm.stl", KELVIN_SOURCE_DIR);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    s = kl_test_read(NULL, path); /* binary: its length from the file system */
    assert_non_null(s);
    *len = (size_t)sb.st_size;
    return s;
  } else {
    s = strdup(spec);
  }
  assert_non_null(s);
  *len = strlen(s);
  return s;
}

/* an earlier run's outputs in dir/prev; 1 if they are exactly there (and nothing else, no temporary) */
static void earlier(const char *dir)
{
  char p[1024];
  snprintf(p, sizeof p, "%s/prev", dir);
  mkdir(p, 0777);
  kl_test_write(p, "report.json", "{\"earlier\": true}\n");
  kl_test_write(p, "trajectory.csv", "s_m,offset_m,speed_m_s\n0,0,0.01\n");
}
static int intact(const char *dir)
{
  char p[1024];
  snprintf(p, sizeof p, "%s/prev", dir);
  char *a = kl_test_read(p, "report.json"), *b = kl_test_read(p, "trajectory.csv");
  const int ok = a && b && strcmp(a, "{\"earlier\": true}\n") == 0 && strcmp(b, "s_m,offset_m,speed_m_s\n0,0,0.01\n") == 0 &&
                 kl_test_count_files(p) == 2 && !kl_test_has_tmp(p);
  free(a);
  free(b);
  return ok;
}

/* one line on stderr, "kelvin: ..." with must in it, no sanitizer report */
static int one_line(const char *err, const char *must)
{
  return strncmp(err, "kelvin: ", 8) == 0 && kl_test_lines(err) == 1 && err[strlen(err) - 1] == '\n' &&
         strstr(err, must) && !strstr(err, "Sanitizer") && !strstr(err, "runtime error");
}

static void test_bad_inputs(void **state)
{
  (void)state;
  const int n = (int)(sizeof cases / sizeof cases[0]);
  int failed = 0;
  printf("# %d bad-input cases\n", n);
  for (int i = 0; i < n; ++i) {
    const bad *c = &cases[i];
    char dir[400];
    snprintf(dir, sizeof dir, "%s/case%02d", tmp, i);
    assert_int_equal(mkdir(dir, 0777), 0);
    int fifo = 0;
    for (int f = 0; f < 3 && c->files[f][0]; ++f) {
      if (strcmp(c->files[f][1], "@DIR") == 0) {
        char p[600];
        snprintf(p, sizeof p, "%s/%s", dir, c->files[f][0]);
        assert_int_equal(mkdir(p, 0777), 0);
        continue;
      }
      if (strcmp(c->files[f][1], "@FIFO") == 0) {
        char p[600];
        snprintf(p, sizeof p, "%s/%s", dir, c->files[f][0]);
        assert_int_equal(mkfifo(p, 0600), 0);
        fifo = 1;
        continue;
      }
      size_t len;
      char *t = make(c->files[f][1], &len);
      char p[600];
      snprintf(p, sizeof p, "%s/%s", dir, c->files[f][0]);
      FILE *fp = fopen(p, "wb");
      assert_non_null(fp);
      assert_int_equal(fwrite(t, 1, len, fp), len);
      fclose(fp);
      free(t);
    }
    earlier(dir);
    char err[8192], args[2048];
    /* --quiet: progress notes off, so that stderr holds the error line alone */
    snprintf(args, sizeof args, "%s%s", c->args, strncmp(c->args, "check", 5) == 0 ? "" : " --quiet");
    /* a reader that opened a FIFO would wait for a writer forever: the alarm (default action) ends this
     * test instead of hanging it */
    if (fifo) alarm(30);
    const int rc = kl_test_kelvin(dir, NULL, args, err, sizeof err);
    if (fifo) alarm(0);
    const int ok = rc == c->rc && one_line(err, c->must) && intact(dir);
    if (!ok) {
      ++failed;
      printf("# FAIL case %d: kelvin %s -> %d (want %d, '%s')\n#   stderr: %s", i, c->args, rc, c->rc, c->must, err);
    }
  }
  assert_int_equal(failed, 0);
}

/* a full disk, stood in for by a file-size limit (RLIMIT_FSIZE, inherited by the spawned kelvin):
 * the write error is detected, exit 1, one line, and the earlier outputs untouched */
static void test_write_error(void **state)
{
  (void)state;
  static const char *const runs[] = {"bounce --duration 0.2 --cr 0.5 --out prev", "simulate sc.yaml --out prev",
                                     "sweep --cpu --out prev"};
  for (int i = 0; i < 3; ++i) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s/full%d", tmp, i);
    assert_int_equal(mkdir(dir, 0777), 0);
    kl_test_write(dir, "sc.yaml", "duration: 1\nbodies:\n  - name: ground\n    type: static\n    shapes: [{type: plane}]\n"
                                  "  - name: ball\n    position: [0, 0, 0.2]\n    shapes: [{type: sphere, radius: 0.1}]\n");
    earlier(dir);
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 20000; /* bytes: every run writes more than this into one file; bounce writes a smaller one
                           * (bounce_cr0.50.csv, 18 kB) before the one that fails: it must not appear either */
    setrlimit(RLIMIT_FSIZE, &lim);
    char err[8192];
    char args[512];
    snprintf(args, sizeof args, "%s --quiet", runs[i]);
    const int rc = kl_test_kelvin(dir, NULL, args, err, sizeof err);
    setrlimit(RLIMIT_FSIZE, &old);
    printf("# kelvin %s (file-size limit 20000 B) -> %d: %s", runs[i], rc, err);
    assert_int_equal(rc, 1);
    assert_true(one_line(err, "cannot write"));
    assert_true(intact(dir));
  }
}

/* SIGINT in the middle of a long simulate: the temporaries go, one line says so, the earlier outputs stay */
static void test_interrupt(void **state)
{
  (void)state;
  char dir[512];
  snprintf(dir, sizeof dir, "%s/interrupt", tmp);
  assert_int_equal(mkdir(dir, 0777), 0);
  kl_test_write(dir, "sc.yaml", "duration: 1000\noutput_step: 1e-4\nbodies:\n  - name: ground\n    type: static\n"
                                "    shapes: [{type: plane}]\n  - name: ball\n    position: [0, 0, 0.2]\n"
                                "    shapes: [{type: sphere, radius: 0.1}]\n");
  earlier(dir);
  int fd[2];
  assert_int_equal(pipe(fd), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fd[1], 2);
  posix_spawn_file_actions_addclose(&fa, fd[0]);
  posix_spawn_file_actions_addchdir_np(&fa, dir);
  char exe[1024];
  snprintf(exe, sizeof exe, "%s/kelvin", KELVIN_BINARY_DIR);
  /* (1.3e7 sub-steps estimated, over the default work limit: raised, the run is meant to be long) */
  char *argv[] = {exe, (char *)"simulate", (char *)"sc.yaml", (char *)"--quiet", (char *)"--max-substeps",
                  (char *)"1e8", (char *)"--out", (char *)"prev", NULL};
  extern char **environ;
  pid_t pid;
  assert_int_equal(posix_spawn(&pid, exe, &fa, NULL, argv, environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  close(fd[1]);
  /* wait until the run is writing (its staging folder has files), then interrupt it */
  char stage[700];
  snprintf(stage, sizeof stage, "%s/prev/.kelvin.tmp.%ld", dir, (long)pid);
  for (int k = 0; k < 200 && kl_test_count_files(stage) <= 0; ++k) {
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL);
  }
  assert_true(kl_test_count_files(stage) > 0);
  struct timespec ts = {0, 300000000};
  nanosleep(&ts, NULL);
  kill(pid, SIGINT);
  char err[4096];
  ssize_t got = 0, r;
  while ((r = read(fd[0], err + got, sizeof err - 1 - (size_t)got)) > 0) got += r;
  err[got] = '\0';
  close(fd[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  printf("# interrupted simulate: %s", err);
  assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT);
  assert_true(one_line(err, "interrupted"));
  assert_true(intact(dir));
}

/* a quote, a backslash and a line break in the output path: every JSON report still parses */
static void test_json_quotes(void **state)
{
  (void)state;
  char args[1024], err[8192];
  snprintf(args, sizeof args, "bounce --duration 0.2 --cr 0.5 --quiet --out 'q\"u\\o\te'");
  assert_int_equal(kl_test_kelvin(tmp, NULL, args, err, sizeof err), 0);
  char *t = kl_test_read(tmp, "q\"u\\o\te/summary.json");
  assert_non_null(t);
  cJSON *j = cJSON_Parse(t);
  assert_non_null(j);
  const cJSON *cl = cJSON_GetObjectItem(j, "command_line");
  assert_non_null(cl);
  assert_non_null(strstr(cl->valuestring, "q\"u\\o\te"));
  cJSON_Delete(j);
  free(t);
}

/* kelvin check on good files: exit 0 and the model in brief; the contact's share of the compliance of
 * examples/optimise.yaml against Hertz written out here: K = 4/3 E* sqrt(R), 1/E* = (1 - nu1^2)/E1 +
 * (1 - nu2^2)/E2 (tool 200 GPa, 0.22; part 70 GPa, 0.33; R = 6 mm), d(delta)/dF = 1/(1.5 K^(2/3) F^(1/3))
 * at F = 5 N against the holder's 1/(5000 N/m) */
static void test_check_good(void **state)
{
  (void)state;
  static const char *const files[][2] = {{"examples/optimise.yaml", "a grinding config"},
                                         {"examples/optimise_part.yaml", "28800 triangles"},
                                         {"examples/sweep.yaml", "a sweep config"},
                                         {"examples/ball_mesh.yaml", "a scene"},
                                         {"examples/robot_er10.yaml", "6 revolute joints"},
                                         {"examples/robot_er10.urdf", "6 revolute joints"},
                                         {"examples/target_ramp.csv", "a target force profile"},
                                         {"examples/part/path.csv", "a path: 101 points"},
                                         {"examples/meshes/plane_2tri.stl", "2 triangles"}};
  char out[16384];
  for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i) {
    char exe[1024], file[1024];
    snprintf(exe, sizeof exe, "%s/kelvin", KELVIN_BINARY_DIR);
    snprintf(file, sizeof file, "%s/%s", KELVIN_SOURCE_DIR, files[i][0]);
    char *argv[] = {exe, (char *)"check", file, NULL};
    const int rc = kl_test_run(NULL, NULL, argv, 1, out, sizeof out);
    printf("# check %s -> %d: %.*s", files[i][0], rc, (int)strcspn(out, "\n") + 1, out);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, files[i][1]));
    if (i == 0) {
      const double Es = 1.0 / ((1 - 0.22 * 0.22) / 200e9 + (1 - 0.33 * 0.33) / 70e9);
      const double K = 4.0 / 3.0 * Es * sqrt(6e-3), c = 1.0 / (1.5 * pow(K, 2.0 / 3.0) * pow(5.0, 1.0 / 3.0));
      const double share = 100.0 * c / (c + 1.0 / 5000.0);
      const char *p = strstr(out, "the contact's share is ");
      assert_non_null(p);
      const double got = strtod(p + strlen("the contact's share is "), NULL);
      printf("# share: printed %.4g %%, Hertz written out here %.4g %%\n", got, share);
      assert_true(fabs(got - share) <= 1e-3 * share); /* printed to 3 digits: 5e-4 relative at most */
    }
  }
}

int main(void)
{
  snprintf(tmp, sizeof tmp, "/tmp/kelvin-cli-bad-XXXXXX");
  if (!mkdtemp(tmp)) return 1;
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_bad_inputs), cmocka_unit_test(test_write_error),
                                     cmocka_unit_test(test_interrupt), cmocka_unit_test(test_json_quotes), cmocka_unit_test(test_check_good)};
  const int rc = cmocka_run_group_tests(tests, NULL, NULL);
  kl_test_rmtree(tmp);
  return rc;
}
