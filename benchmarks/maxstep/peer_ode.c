/* benchmarks/maxstep/peer_ode.c: the ball in ODE (C API), dWorldStep (the Dantzig LCP "big matrix"
 * stepper), one sphere-plane contact joint per step, frictionless (mu = 0).
 *   MX_ODE_ERPCFM  the same linear spring-damper through the contact's soft ERP and CFM, recomputed
 *                  from K and D for the step h (ODE manual): ERP = h K / (h K + D), CFM = 1 / (h K + D).
 *   MX_ODE_BOUNCE  ODE's restitution: dContactBounce with bounce = cr and bounce_vel = 0 (every impact
 *                  restitutes; ODE's demos use 0.1 m/s, below which an impact is plastic), the world's
 *                  default ERP (0.2) and CFM.
 * The contact force read at an output is the contact joint's feedback (force on the ball) of the step
 * that ends there: an LCP contact delivers an impulse per step, so this is impulse / h. */
#include <stdio.h>

#include <ode/ode.h>

#include "benchmarks/maxstep/mx.h"

/* ODE's version (from pkg-config) and precision */
const char *mx_ode_version(void)
{
#ifdef MX_ODE_VERSION
  return dCheckConfiguration("ODE_double_precision") ? "ODE " MX_ODE_VERSION " (double precision)"
                                                     : "ODE " MX_ODE_VERSION " (single precision)";
#else
  return dCheckConfiguration("ODE_double_precision") ? "ODE (double precision)" : "ODE (single precision)";
#endif
}

/* drop the ball in ODE at time step h, one sample per step (mx.h) */
int mx_ode_run(const mx_case *c, int v, double h, mx_trace *tr)
{
  if (!dInitODE2(0)) {
    snprintf(tr->err, sizeof tr->err, "ode: dInitODE2 failed");
    return -1;
  }
  dWorldID w = dWorldCreate();
  dWorldSetGravity(w, 0, 0, -c->g);
  dSpaceID space = dSimpleSpaceCreate(0);
  dGeomID plane = dCreatePlane(space, 0, 0, 1, 0);
  dBodyID b = dBodyCreate(w);
  dMass mass;
  dMassSetParameters(&mass, c->m, 0, 0, 0, c->I, c->I, c->I, 0, 0, 0);
  dBodySetMass(b, &mass);
  dBodySetPosition(b, 0, 0, c->z0 + c->R);
  dGeomID sphere = dCreateSphere(space, c->R);
  dGeomSetBody(sphere, b);
  dJointGroupID group = dJointGroupCreate(0);

  dContact ct;
  ct.surface.mode = 0;
  ct.surface.mu = 0;
  if (v == MX_ODE_ERPCFM) {
    ct.surface.mode = dContactSoftERP | dContactSoftCFM;
    ct.surface.soft_erp = h * c->K / (h * c->K + c->D);
    ct.surface.soft_cfm = 1.0 / (h * c->K + c->D);
  } else {
    ct.surface.mode = dContactBounce;
    ct.surface.bounce = c->cr;
    ct.surface.bounce_vel = 0.0;
  }
  const long nout = mx_nout(c, h);
  const dReal *p = dBodyGetPosition(b), *vel = dBodyGetLinearVel(b);
  mx_trace_push(tr, 0.0, p[2] - c->R, vel[2], 0.0);
  mx_trace_begin(tr);
  for (long k = 1; k <= nout; ++k) {
    dJointGroupEmpty(group);
    dJointFeedback fb = {{0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}};
    int ncon = dCollide(sphere, plane, 1, &ct.geom, (int)sizeof(dContact));
    if (ncon > 0) {
      dJointID j = dJointCreateContact(w, group, &ct);
      dJointAttach(j, b, 0);
      dJointSetFeedback(j, &fb);
    }
    dWorldStep(w, h);
    p = dBodyGetPosition(b);
    vel = dBodyGetLinearVel(b);
    tr->work = k;
    if (mx_trace_push(tr, (double)k * h, p[2] - c->R, vel[2], ncon > 0 ? fb.f1[2] : 0.0)) break;
  }
  mx_trace_end(tr);
  tr->nstep = tr->n - 1;
  tr->nfev = -1;
  dJointGroupDestroy(group);
  dSpaceDestroy(space);
  dWorldDestroy(w);
  dCloseODE();
  return 0;
}
