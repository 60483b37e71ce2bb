/* benchmarks/maxstep/peer_dart.cc: the ball in DART 6 (a second LCP-based peer): a FreeJoint sphere
 * over a WeldJoint box (20 m thick, top face z = 0), the default FCL collision detector and boxed-LCP (Dantzig) constraint
 * solver, semi-implicit Euler, friction 0.
 *   MX_DART_RESTITUTION        restitution coefficients ball cr, plane 1 (DART multiplies them), FCL
 *                              (which meshes the sphere);
 *   MX_DART_RESTITUTION_DARTCD the same with DART's own DARTCollisionDetector (analytic sphere-box).
 * DART has no compliant contact in its rigid-body pipeline (only soft bodies), so it has no
 * spring-damper row. The contact force read at an output is the sum of Contact::force over the last
 * collision result, which DART's contact constraint fills with its impulse / h. */
#include <cstdio>

/* not <dart/dart.hpp>: Debian's libdart-dev lacks dart/external/ikfast/ikfast.h, which it includes */
#include <dart/collision/CollisionObject.hpp>
#include <dart/collision/CollisionResult.hpp>
#include <dart/collision/dart/DARTCollisionDetector.hpp>
#include <dart/constraint/ConstraintSolver.hpp>
#include <dart/config.hpp>
#include <dart/dynamics/BodyNode.hpp>
#include <dart/dynamics/FreeJoint.hpp>
#include <dart/dynamics/BoxShape.hpp>
#include <dart/dynamics/ShapeNode.hpp>
#include <dart/dynamics/Skeleton.hpp>
#include <dart/dynamics/SphereShape.hpp>
#include <dart/dynamics/WeldJoint.hpp>
#include <dart/simulation/World.hpp>

#include "benchmarks/maxstep/mx.h"

/* DART's version from its config header */
const char *mx_dart_version(void) { return "DART " DART_VERSION; }

/* drop the ball in DART at time step h, one sample per step (mx.h) */
int mx_dart_run(const mx_case *c, int v, double h, mx_trace *tr)
{
  using namespace dart::dynamics;
  try {
    auto world = dart::simulation::World::create();
    world->setGravity(Eigen::Vector3d(0, 0, -c->g));
    world->setTimeStep(h);
    if (v == MX_DART_RESTITUTION_DARTCD)
      world->getConstraintSolver()->setCollisionDetector(dart::collision::DARTCollisionDetector::create());

    SkeletonPtr ballSkel = Skeleton::create("ball");
    auto pair = ballSkel->createJointAndBodyNodePair<FreeJoint>();
    BodyNode *body = pair.second;
    body->setInertia(Inertia(c->m, Eigen::Vector3d::Zero(), c->I * Eigen::Matrix3d::Identity()));
    auto sn = body->createShapeNodeWith<CollisionAspect, DynamicsAspect>(std::make_shared<SphereShape>(c->R));
    sn->getDynamicsAspect()->setRestitutionCoeff(c->cr);
    sn->getDynamicsAspect()->setFrictionCoeff(0.0);
    Eigen::Isometry3d tf = Eigen::Isometry3d::Identity();
    tf.translation() = Eigen::Vector3d(0, 0, c->z0 + c->R);
    pair.first->setPositions(FreeJoint::convertToPositions(tf));

    SkeletonPtr groundSkel = Skeleton::create("ground");
    auto gpair = groundSkel->createJointAndBodyNodePair<WeldJoint>();
    /* FCL has no PlaneShape (DART substitutes a zero-thickness box in the wrong plane): a thick box
     * whose top face is the plane z = 0 */
    auto gn = gpair.second->createShapeNodeWith<CollisionAspect, DynamicsAspect>(
        std::make_shared<BoxShape>(Eigen::Vector3d(100.0, 100.0, 20.0)));
    Eigen::Isometry3d gtf = Eigen::Isometry3d::Identity();
    gtf.translation() = Eigen::Vector3d(0, 0, -10.0);
    gpair.first->setTransformFromParentBodyNode(gtf);
    gn->getDynamicsAspect()->setRestitutionCoeff(1.0);
    gn->getDynamicsAspect()->setFrictionCoeff(0.0);

    world->addSkeleton(ballSkel);
    world->addSkeleton(groundSkel);

    const long nout = mx_nout(c, h);
    mx_trace_push(tr, 0.0, body->getWorldTransform().translation().z() - c->R, body->getLinearVelocity().z(), 0.0);
    mx_trace_begin(tr);
    for (long k = 1; k <= nout; ++k) {
      world->step();
      double f = 0;
      const auto &res = world->getLastCollisionResult();
      for (std::size_t i = 0; i < res.getNumContacts(); ++i) {
        const auto &ct = res.getContact(i);
        /* force acts on bodyNode1; the ball's share is + or - of it */
        const bool ballIs1 = ct.collisionObject1->getShapeFrame() == sn;
        f += ballIs1 ? ct.force.z() : -ct.force.z();
      }
      tr->work = k;
      if (mx_trace_push(tr, double(k) * h, body->getWorldTransform().translation().z() - c->R,
                        body->getLinearVelocity().z(), f))
        break;
    }
    mx_trace_end(tr);
    tr->nstep = tr->n - 1;
    tr->nfev = -1;
  } catch (const std::exception &e) {
    std::snprintf(tr->err, sizeof tr->err, "dart: %s", e.what());
    return -1;
  }
  return 0;
}
