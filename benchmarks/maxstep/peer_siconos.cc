/* benchmarks/maxstep/peer_siconos.cc: the ball in Siconos 4.4 (nonsmooth dynamics: the engine of the
 * paper's related-work seed), both of its schemes for impacts, with the Newton impact law (exit normal
 * speed = -e x impact speed, e = cr): a rigid contact, judged against Newton restitution.
 *   MX_SICONOS_MOREAU  event-capturing Moreau-Jean time-stepping: a free 6-DoF NewtonEulerDS (position +
 *                      quaternion, twist), the mechanics module's sphere-plane relation SphereNEDSPlanR,
 *                      NewtonImpactFrictionNSL(e, 0, mu = 0) solved as a FrictionContact(3) problem,
 *                      MoreauJeanOSI theta = 0.5, one step per output. Contact force at an output: the
 *                      step's normal impulse / h (lambda(1) of the interaction).
 *   MX_SICONOS_EVENT   event-driven: the BouncingBallED example's ball (LagrangianLinearTIDS, coordinates
 *                      z, x, rotation; mass m, m, I), LagrangianLinearTIR y = z - R, NewtonImpactNSL(e),
 *                      LsodarOSI between events (its default tolerances), impacts located as events and
 *                      resolved by an impact LCP, an acceleration LCP for persistent contact. The output
 *                      step is the time discretisation (where it reports); force at an output: 0 in
 *                      flight (impacts are instantaneous), the acceleration LCP's lambda(2) in persistent
 *                      contact.
 * Counts: work = time steps (Moreau-Jean) or events processed (event-driven). */
#include <cmath>
#include <cstdio>
#include <memory>

/* the mechanics module first: its MechanicsFwd.hpp adds its classes to the kernel's visitor list */
#include <SphereNEDSPlanR.hpp>
#include <SiconosKernel.hpp>

#include "benchmarks/maxstep/mx.h"

#ifndef MX_SICONOS_VERSION
#define MX_SICONOS_VERSION ""
#endif

/* "Siconos 4.4.0" (its headers have no version macro: the package's version, found at configure time) */
const char *mx_siconos_version(void) { return "Siconos " MX_SICONOS_VERSION; }

namespace {

/* Moreau-Jean time-stepping with a free 6-DoF body */
void run_moreau(const mx_case *c, double h, mx_trace *tr)
{
  auto q0 = std::make_shared<SiconosVector>(7);
  auto v0 = std::make_shared<SiconosVector>(6);
  q0->zero();
  v0->zero();
  (*q0)(2) = c->z0 + c->R;
  (*q0)(3) = 1.0; /* identity quaternion */
  auto inertia = std::make_shared<SimpleMatrix>(3, 3);
  inertia->zero();
  for (int i = 0; i < 3; ++i) (*inertia)(i, i) = c->I;
  auto ball = std::make_shared<NewtonEulerDS>(q0, v0, c->m, inertia);
  auto weight = std::make_shared<SiconosVector>(3);
  weight->zero();
  (*weight)(2) = -c->m * c->g;
  ball->setFExtPtr(weight);

  auto law = std::make_shared<NewtonImpactFrictionNSL>(c->cr, 0.0, 0.0, 3);
  auto rel = std::make_shared<SphereNEDSPlanR>(c->R, 0.0, 0.0, 1.0, 0.0); /* the plane z = 0 */
  auto inter = std::make_shared<Interaction>(law, rel);
  auto nsds = std::make_shared<NonSmoothDynamicalSystem>(0.0, c->tend);
  nsds->insertDynamicalSystem(ball);
  nsds->link(inter, ball);
  auto osi = std::make_shared<MoreauJeanOSI>(0.5);
  auto td = std::make_shared<TimeDiscretisation>(0.0, h);
  auto osnspb = std::make_shared<FrictionContact>(3);
  auto s = std::make_shared<TimeStepping>(nsds, td, osi, osnspb);

  SP::SiconosVector q = ball->q(), v = ball->twist();
  const long nout = mx_nout(c, h);
  mx_trace_push(tr, 0.0, (*q)(2) - c->R, (*v)(2), 0.0);
  mx_trace_begin(tr);
  for (long k = 1; k <= nout && s->hasNextEvent(); ++k) {
    s->computeOneStep();
    const double t = s->nextTime();
    SP::SiconosVector lam = inter->lambda(1);
    const double f = lam ? (*lam)(0) / h : 0.0;
    s->nextStep();
    tr->work = k;
    if (!std::isfinite((*q)(2)) || !std::isfinite((*v)(2))) tr->bad = 1;
    if (mx_trace_push(tr, t, (*q)(2) - c->R, (*v)(2), f) || tr->bad) break;
  }
  mx_trace_end(tr);
  tr->nstep = tr->n - 1;
  tr->nfev = -1;
}

/* event-driven with the BouncingBallED ball */
void run_event(const mx_case *c, double h, mx_trace *tr)
{
  const unsigned n = 3;
  auto q0 = std::make_shared<SiconosVector>(n);
  auto v0 = std::make_shared<SiconosVector>(n);
  q0->zero();
  v0->zero();
  (*q0)(0) = c->z0 + c->R;
  auto mass = std::make_shared<SimpleMatrix>(n, n);
  mass->zero();
  (*mass)(0, 0) = c->m;
  (*mass)(1, 1) = c->m;
  (*mass)(2, 2) = c->I;
  auto ball = std::make_shared<LagrangianLinearTIDS>(q0, v0, mass);
  auto weight = std::make_shared<SiconosVector>(n);
  weight->zero();
  (*weight)(0) = -c->m * c->g;
  ball->setFExtPtr(weight);

  auto H = std::make_shared<SimpleMatrix>(1, n);
  H->zero();
  (*H)(0, 0) = 1.0;
  auto b = std::make_shared<SiconosVector>(1);
  (*b)(0) = -c->R; /* y = z - R: the gap of the lowest point */
  auto rel = std::make_shared<LagrangianLinearTIR>(H, b);
  auto law = std::make_shared<NewtonImpactNSL>(c->cr);
  auto inter = std::make_shared<Interaction>(law, rel);
  auto nsds = std::make_shared<NonSmoothDynamicalSystem>(0.0, c->tend);
  nsds->insertDynamicalSystem(ball);
  nsds->link(inter, ball);
  auto osi = std::make_shared<LsodarOSI>();
  auto td = std::make_shared<TimeDiscretisation>(0.0, h);
  auto s = std::make_shared<EventDriven>(nsds, td);
  s->insertIntegrator(osi);
  s->insertNonSmoothProblem(std::make_shared<LCP>(), SICONOS_OSNSP_ED_IMPACT);
  s->insertNonSmoothProblem(std::make_shared<LCP>(), SICONOS_OSNSP_ED_SMOOTH_ACC);
  s->initialize();

  SP::SiconosVector q = ball->q(), v = ball->velocity();
  const long nout = mx_nout(c, h);
  mx_trace_push(tr, 0.0, (*q)(0) - c->R, (*v)(0), 0.0);
  mx_trace_begin(tr);
  long k = 1, events = 0;
  while (s->hasNextEvent() && k <= nout) {
    s->advanceToEvent();
    s->processEvents(); /* the event reached: now the current time (startingTime) */
    ++events;
    tr->work = events;
    /* an output instant is a time-discretisation event; the others are impacts */
    const double t = s->startingTime();
    const bool output = std::fabs(t - (double)k * h) <= 1e-9 * h + 1e-12;
    if (!std::isfinite((*q)(0)) || !std::isfinite((*v)(0))) tr->bad = 1;
    if (output || tr->bad || (tr->work_cap > 0 && tr->work > tr->work_cap)) {
      SP::SiconosVector lam = inter->lambda(2);
      const double f = lam ? (*lam)(0) : 0.0;
      ++k;
      if (mx_trace_push(tr, t, (*q)(0) - c->R, (*v)(0), f) || tr->bad) break;
    }
  }
  mx_trace_end(tr);
  tr->nstep = events;
  tr->nfev = -1;
}

} // namespace

/* drop the ball in Siconos (mx.h) */
int mx_siconos_run(const mx_case *c, int v, double h, mx_trace *tr)
{
  try {
    if (v == MX_SICONOS_MOREAU)
      run_moreau(c, h, tr);
    else
      run_event(c, h, tr);
  } catch (const std::exception &e) {
    std::snprintf(tr->err, sizeof tr->err, "siconos: %.180s", e.what());
    tr->bad = 1;
    mx_trace_end(tr);
  } catch (...) {
    std::snprintf(tr->err, sizeof tr->err, "siconos: an exception (SiconosException) was thrown");
    tr->bad = 1;
    mx_trace_end(tr);
  }
  return 0;
}
