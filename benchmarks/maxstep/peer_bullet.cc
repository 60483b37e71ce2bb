/* benchmarks/maxstep/peer_bullet.cc: the ball in Bullet (double-precision build where the system has
 * one), btDiscreteDynamicsWorld with the sequential-impulse solver, a static plane, friction 0, no
 * deactivation, exactly one internal step of h per output (stepSimulation(h, 0, h)).
 *   MX_BULLET_KD           the same linear spring-damper: contact stiffness and damping
 *                          (setContactStiffnessAndDamping). Bullet combines a pair's stiffnesses in
 *                          series and adds the dampings, so ball and plane each get (2K, D/2); the solver
 *                          then uses ERP = h K / (h K + D), CFM = 1 / (h K + D), as ODE does.
 *   MX_BULLET_RESTITUTION  Bullet's restitution: ball cr, plane 1 (combined by product), the default
 *                          solver settings (ERP, split impulse, restitution velocity threshold 0.2 m/s).
 *   MX_BULLET_RESTITUTION_0  the same with Bullet's two documented knobs for bouncing: the bodies'
 *                          contactProcessingThreshold = 0 (no speculative contacts at a positive
 *                          distance, which slow the ball before it touches and so shrink the speed the
 *                          restitution acts on) and the solver's splitImpulsePenetrationThreshold = 0
 *                          (penetration always corrected by the split impulse, which adds no velocity).
 * The contact force read at an output is the sum of the manifold points' applied impulse / h for the
 * step that ends there. */
#include <cstdio>

#include <btBulletDynamicsCommon.h>

#include "benchmarks/maxstep/mx.h"

/* Bullet's version and btScalar precision */
const char *mx_bullet_version(void)
{
  static char buf[64];
  std::snprintf(buf, sizeof buf, "Bullet %d.%02d (%s precision)", btGetVersion() / 100, btGetVersion() % 100,
                sizeof(btScalar) == 8 ? "double" : "single");
  return buf;
}

/* drop the ball in Bullet at time step h, one sample per step (mx.h) */
int mx_bullet_run(const mx_case *c, int v, double h, mx_trace *tr)
{
  btDefaultCollisionConfiguration config;
  btCollisionDispatcher dispatcher(&config);
  btDbvtBroadphase broadphase;
  btSequentialImpulseConstraintSolver solver;
  btDiscreteDynamicsWorld world(&dispatcher, &broadphase, &solver, &config);
  world.setGravity(btVector3(0, 0, btScalar(-c->g)));

  btStaticPlaneShape planeShape(btVector3(0, 0, 1), 0);
  btRigidBody::btRigidBodyConstructionInfo gi(0, nullptr, &planeShape);
  btRigidBody ground(gi);
  btSphereShape sphereShape(btScalar(c->R));
  btTransform start(btQuaternion::getIdentity(), btVector3(0, 0, btScalar(c->z0 + c->R)));
  btRigidBody::btRigidBodyConstructionInfo bi(btScalar(c->m), nullptr, &sphereShape,
                                              btVector3(btScalar(c->I), btScalar(c->I), btScalar(c->I)));
  bi.m_startWorldTransform = start;
  btRigidBody ball(bi);
  ball.setActivationState(DISABLE_DEACTIVATION);
  ball.setFriction(0);
  ground.setFriction(0);
  if (v == MX_BULLET_KD) {
    ball.setContactStiffnessAndDamping(btScalar(2 * c->K), btScalar(c->D / 2));
    ground.setContactStiffnessAndDamping(btScalar(2 * c->K), btScalar(c->D / 2));
    ball.setRestitution(0);
    ground.setRestitution(0);
  } else {
    ball.setRestitution(btScalar(c->cr));
    ground.setRestitution(1);
  }
  if (v == MX_BULLET_RESTITUTION_0) {
    ball.setContactProcessingThreshold(0);
    ground.setContactProcessingThreshold(0);
    world.getSolverInfo().m_splitImpulsePenetrationThreshold = 0;
  }
  world.addRigidBody(&ground);
  world.addRigidBody(&ball);

  const long nout = mx_nout(c, h);
  mx_trace_push(tr, 0.0, double(ball.getCenterOfMassPosition().z()) - c->R, double(ball.getLinearVelocity().z()),
                0.0);
  mx_trace_begin(tr);
  for (long k = 1; k <= nout; ++k) {
    world.stepSimulation(btScalar(h), 0, btScalar(h));
    double f = 0;
    for (int i = 0; i < dispatcher.getNumManifolds(); ++i) {
      const btPersistentManifold *mf = dispatcher.getManifoldByIndexInternal(i);
      for (int j = 0; j < mf->getNumContacts(); ++j) f += double(mf->getContactPoint(j).getAppliedImpulse()) / h;
    }
    tr->work = k;
    if (mx_trace_push(tr, double(k) * h, double(ball.getCenterOfMassPosition().z()) - c->R,
                      double(ball.getLinearVelocity().z()), f))
      break;
  }
  mx_trace_end(tr);
  tr->nstep = tr->n - 1;
  tr->nfev = -1;
  world.removeRigidBody(&ball);
  world.removeRigidBody(&ground);
  return 0;
}
