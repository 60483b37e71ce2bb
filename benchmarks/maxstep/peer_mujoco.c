/* benchmarks/maxstep/peer_mujoco.c: the ball in MuJoCo (C API), model from an XML string through a
 * virtual file system, so no model file exists anywhere.
 *   MX_MUJOCO_KD      the same linear spring-damper: negative solref = (-K/m, -D/m) gives stiffness and
 *                     damping directly (MuJoCo's reference acceleration is per unit mass; the contact's
 *                     effective mass is m), solimp with dmin = dmax = 0.9999 (mjMAXIMP) so the impedance
 *                     is constant and a = (1 - d) a0 + d aref leaves (1 - d) g = 1e-4 g of gravity
 *                     unresisted; condim = 1 (frictionless: only the normal spring-damper).
 *   MX_MUJOCO_DEFAULT MuJoCo's defaults: solref = (0.02, 1), solimp = (0.9, 0.95, 0.001, 0.5, 2),
 *                     condim = 3, friction 1.
 * MX_MUJOCO_KD with three integrators: semi-implicit Euler (the default), RK4 and implicit (2.2.2 has no
 * implicitfast, which came with 3.0); MX_MUJOCO_DEFAULT with Euler; all with the Newton solver. MuJoCo
 * takes one step per output, so its samples are its steps. The contact force read at an output is
 * mj_contactForce's normal component for the step that ends there (the force of the soft constraint
 * the solver applied over that step; with RK4, that of its last stage). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mujoco.h>

#include "benchmarks/maxstep/mx.h"

/* "MuJoCo 2.2.2" from mj_version() */
const char *mx_mujoco_version(void)
{
  static char buf[32];
  snprintf(buf, sizeof buf, "MuJoCo %d.%d.%d", mj_version() / 100, (mj_version() / 10) % 10, mj_version() % 10);
  return buf;
}

/* MuJoCo's default warning handler prints and appends to MUJOCO_LOG.TXT in the working directory;
 * the runner reads the warning counters of mjData instead */
static void quiet_warning(const char *msg) { (void)msg; }

/* the MJCF text of the ball for case c, variant v, time step h, in buf */
static void model_xml(const mx_case *c, int v, double h, char *buf, size_t cap)
{
  char contact[256] = "";
  const char *integrator = v == MX_MUJOCO_KD_RK4 ? "RK4" : v == MX_MUJOCO_KD_IMPLICIT ? "implicit" : "Euler";
  if (v != MX_MUJOCO_DEFAULT)
    snprintf(contact, sizeof contact, "condim='1' solref='%.17g %.17g' solimp='0.9999 0.9999 0.001 0.5 2'",
             -c->K / c->m, -c->D / c->m);
  snprintf(buf, cap,
           "<mujoco model='ball'>"
           " <option timestep='%.17g' gravity='0 0 %.17g' integrator='%s'/>"
           " <default><geom %s/></default>"
           " <worldbody>"
           "  <geom name='floor' type='plane' size='0 0 1'/>"
           "  <body name='ball' pos='0 0 %.17g'>"
           "   <freejoint/>"
           "   <inertial pos='0 0 0' mass='%.17g' diaginertia='%.17g %.17g %.17g'/>"
           "   <geom name='ball' type='sphere' size='%.17g'/>"
           "  </body>"
           " </worldbody>"
           "</mujoco>",
           h, -c->g, integrator, contact, c->z0 + c->R, c->m, c->I, c->I, c->I, c->R);
}

/* drop the ball in MuJoCo at time step h, one sample per step (mx.h) */
int mx_mujoco_run(const mx_case *c, int v, double h, mx_trace *tr)
{
  char xml[2048], err[1000] = "";
  mju_user_warning = quiet_warning;
  model_xml(c, v, h, xml, sizeof xml);
  mjVFS *vfs = malloc(sizeof *vfs); /* ~2 MB of file-name table */
  if (!vfs) {
    snprintf(tr->err, sizeof tr->err, "mujoco: out of memory for the VFS");
    return -1;
  }
  mj_defaultVFS(vfs);
  const int len = (int)strlen(xml);
  mjModel *m = NULL;
  if (mj_makeEmptyFileVFS(vfs, "ball.xml", len) == 0) {
    memcpy(vfs->filedata[vfs->nfile - 1], xml, (size_t)len);
    m = mj_loadXML("ball.xml", vfs, err, (int)sizeof err);
  } else {
    snprintf(err, sizeof err, "mj_makeEmptyFileVFS failed");
  }
  mj_deleteVFS(vfs);
  free(vfs);
  if (!m) {
    snprintf(tr->err, sizeof tr->err, "mujoco: %s", err);
    return -1;
  }
  mjData *d = mj_makeData(m);
  const long nout = mx_nout(c, h);
  mx_trace_push(tr, 0.0, d->qpos[2] - c->R, d->qvel[2], 0.0);
  mx_trace_begin(tr);
  for (long k = 1; k <= nout; ++k) {
    mj_step(m, d);
    double f = 0.0;
    for (int i = 0; i < d->ncon; ++i) {
      mjtNum cf[6];
      mj_contactForce(m, d, i, cf);
      f += cf[0];
    }
    /* MuJoCo resets the state itself after a non-finite acceleration, position or velocity:
     * that is a failure here, not a fresh start */
    if (d->warning[mjWARN_BADQACC].number || d->warning[mjWARN_BADQPOS].number ||
        d->warning[mjWARN_BADQVEL].number)
      tr->bad = 1;
    tr->work = k;
    if (mx_trace_push(tr, d->time, d->qpos[2] - c->R, d->qvel[2], f) || tr->bad) break;
  }
  mx_trace_end(tr);
  tr->nstep = tr->n - 1;
  tr->nfev = -1;
  mj_deleteData(d);
  mj_deleteModel(m);
  return 0;
}
