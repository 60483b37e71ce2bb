/* benchmarks/maxstep/peer_simbody.cc: the ball in Simbody (a variable-step multibody peer): a Free
 * mobilizer, gravity along -Y, the plane y = 0.
 * Contact force:
 *   Kelvin-Voigt case  a Force::Custom with f = max(0, K d + D d') on penetration d = R - y (no tension,
 *                      as the peers' contact solvers), applied at the ball's centre;
 *   Hunt-Crossley case Simbody's own HuntCrossleyForce (GeneralContactSubsystem, Sphere vs HalfSpace):
 *                      f = k d^1.5 (1 + 3/2 c d') with k = (4/3) sqrt(R) E; Simbody combines the two
 *                      surfaces' E as (E1^-2/3 + E2^-2/3)^-3/2, so both get 2^1.5 E* and the pair has
 *                      E*; c = 2 chi / 3 on both, i.e. the Hunt-Crossley law evaluated once, at the
 *                      first impact speed, and held fixed (Simbody has no per-impact damping).
 * Integrators (the v argument):
 *   MX_SIMBODY_RK_FIXED  RungeKuttaMersonIntegrator in fixed-step mode, step = the output step;
 *   MX_SIMBODY_RKM_1E6   RungeKuttaMersonIntegrator with error control at accuracy 1e-6;
 *   MX_SIMBODY_RKM_1E9   the same at 1e-9;
 *   MX_SIMBODY_RKM + k   the same at 10^(-k/2) (the Hunt-Crossley case's accuracy ladder);
 *   MX_SIMBODY_ADAMS + k CPodesIntegrator, Adams-Moulton of variable order with functional iteration,
 *                        at 10^(-k/2): Simbody's cheapest way to apex errors of 1e-8 on
 *                        this case (Adams took 2.5x fewer force evaluations than RKM at the same apex
 *                        error; CPodes BDF/Newton and Runge-Kutta-Feldberg were dearer or hit the cap);
 *                        for all of these the output step is only the reporting interval (Simbody
 *                        interpolates to it).
 * Counts: internal steps taken and realizations (right-hand-side evaluations; the cap counts these).
 * Internal values: the integrator returns after every internal step (setReturnEveryInternalStep), where
 * the force law and the penetration are evaluated at the step's state: the largest of them are the
 * "internal" peak force and penetration (the samples are the states interpolated to the outputs). */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include <Simbody.h>

#include "benchmarks/maxstep/mx.h"

using namespace SimTK;

/* Simbody's version as the library reports it */
const char *mx_simbody_version(void)
{
  static char buf[48];
  int major = 0, minor = 0, build = 0;
  SimTK_version_simbody(&major, &minor, &build);
  std::snprintf(buf, sizeof buf, "Simbody %d.%d", major, minor);
  return buf;
}

namespace {

/* f = max(0, K d + D d') along +y on the ball, d = R - y its penetration of the plane y = 0 */
class KelvinVoigt : public Force::Custom::Implementation {
public:
  KelvinVoigt(const MobilizedBody &ball, double K, double D, double R) : ball_(ball), K_(K), D_(D), R_(R) {}

  /* the spring-damper force as a body force at the ball's centre */
  void calcForce(const State &s, Vector_<SpatialVec> &bodyForces, Vector_<Vec3> &, Vector &) const override
  {
    const double f = force(ball_.getBodyOriginLocation(s)[1], ball_.getBodyOriginVelocity(s)[1]);
    if (f > 0) ball_.applyForceToBodyPoint(s, Vec3(0), Vec3(0, f, 0), bodyForces);
  }

  /* no potential energy is reported (the energy check of the benchmark uses free flight only) */
  Real calcPotentialEnergy(const State &) const override { return 0; }

  /* contact force [N] at centre height y and vertical speed vy */
  double force(double y, double vy) const
  {
    const double d = R_ - y;
    if (!(d > 0)) return 0;
    const double f = K_ * d - D_ * vy;
    return f > 0 ? f : 0;
  }

private:
  const MobilizedBody &ball_;
  double K_, D_, R_;
};

} // namespace

/* drop the ball in Simbody, reporting every h (mx.h; integrator by variant) */
int mx_simbody_run(const mx_case *c, int v, double h, mx_trace *tr)
{
  try {
    MultibodySystem system;
    SimbodyMatterSubsystem matter(system);
    GeneralForceSubsystem forces(system);
    Force::Gravity gravity(forces, matter, -YAxis, c->g);
    Body::Rigid body(MassProperties(c->m, Vec3(0), Inertia(c->I)));
    MobilizedBody::Free ball(matter.Ground(), Transform(), body, Transform());

    const KelvinVoigt *kv = nullptr;
    GeneralContactSubsystem contacts(system);
    if (c->model == MX_KV) {
      kv = new KelvinVoigt(ball, c->K, c->D, c->R);
      Force::Custom custom(forces, const_cast<KelvinVoigt *>(kv)); /* the force subsystem owns it */
    } else {
      const ContactSetIndex set = contacts.createContactSet();
      contacts.addBody(set, ball, ContactGeometry::Sphere(c->R), Transform());
      /* HalfSpace occupies x > 0 of its frame: turn -x (its outward normal) to +y */
      contacts.addBody(set, matter.updGround(), ContactGeometry::HalfSpace(),
                       Transform(Rotation(-Pi / 2, ZAxis), Vec3(0)));
      HuntCrossleyForce hc(forces, contacts, set);
      const double E = c->K / (4.0 / 3.0 * std::sqrt(c->R)) * std::pow(2.0, 1.5);
      const double cdiss = 2.0 * c->chi / 3.0;
      hc.setBodyParameters(ContactSurfaceIndex(0), E, cdiss, 0, 0, 0);
      hc.setBodyParameters(ContactSurfaceIndex(1), E, cdiss, 0, 0, 0);
    }
    system.realizeTopology();
    State s = system.getDefaultState();
    ball.setQToFitTranslation(s, Vec3(0, c->z0 + c->R, 0));

    /* integrator and accuracy by variant (MX_SIMBODY_*) */
    std::unique_ptr<Integrator> ip;
    if (v >= MX_SIMBODY_ADAMS)
      ip.reset(new CPodesIntegrator(system, CPodes::Adams, CPodes::Functional));
    else
      ip.reset(new RungeKuttaMersonIntegrator(system));
    Integrator &integ = *ip;
    if (v == MX_SIMBODY_RK_FIXED)
      integ.setFixedStepSize(h);
    else if (v == MX_SIMBODY_RKM_1E6 || v == MX_SIMBODY_RKM_1E9)
      integ.setAccuracy(v == MX_SIMBODY_RKM_1E6 ? 1e-6 : 1e-9);
    else
      integ.setAccuracy(std::pow(10.0, -0.5 * double(v >= MX_SIMBODY_ADAMS ? v - MX_SIMBODY_ADAMS : v - MX_SIMBODY_RKM)));
    integ.initialize(s);

    /* contact force at a reported state: the same law the force element applies */
    auto force = [&](const State &st) {
      system.realize(st, Stage::Velocity);
      const double y = ball.getBodyOriginLocation(st)[1], vy = ball.getBodyOriginVelocity(st)[1];
      if (kv) return kv->force(y, vy);
      const double d = c->R - y;
      if (!(d > 0)) return 0.0;
      const double f = c->K * std::pow(d, 1.5) * (1.0 - c->chi * vy);
      return f > 0 ? f : 0.0;
    };

    const long nout = mx_nout(c, h);
    integ.setReturnEveryInternalStep(true);
    tr->fpeak_int = 0;
    tr->dmax_int = 0;
    mx_trace_push(tr, 0.0, c->z0, 0.0, 0.0);
    mx_trace_begin(tr);
    for (long k = 1; k <= nout; ++k) {
      const double tk = double(k) * h;
      for (;;) {
        const Integrator::SuccessfulStepStatus st = integ.stepTo(tk);
        const State &s1 = integ.getState();
        if (st != Integrator::ReachedReportTime) { /* an internal step */
          tr->fpeak_int = std::max(tr->fpeak_int, force(s1));
          tr->dmax_int = std::max(tr->dmax_int, c->R - ball.getBodyOriginLocation(s1)[1]);
        }
        tr->work = integ.getNumRealizations();
        if (st == Integrator::ReachedReportTime || st == Integrator::EndOfSimulation || tr->work > tr->work_cap) break;
      }
      const State &st = integ.getState();
      const double y = ball.getBodyOriginLocation(st)[1], vy = ball.getBodyOriginVelocity(st)[1];
      if (mx_trace_push(tr, st.getTime(), y - c->R, vy, force(st))) break;
    }
    mx_trace_end(tr);
    tr->nstep = integ.getNumStepsTaken();
    tr->nfev = integ.getNumRealizations();
  } catch (const std::exception &e) {
    /* Simbody throws when a step fails (e.g. the error control cannot meet its accuracy) */
    std::snprintf(tr->err, sizeof tr->err, "simbody: %.180s", e.what());
    tr->bad = 1;
    mx_trace_end(tr);
    return 0;
  }
  return 0;
}
