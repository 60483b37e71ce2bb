/* kernels/kl_removal.h: the material removal law, written once for the device model's deposit
 * (optimiser/removal.c) and the 3-D engine's (optimiser/verify3d.c) (docs/design.md section 9.1).
 *
 * Preston's law (F. W. Preston, "The theory and design of plate glass polishing machines", J. Soc. Glass
 * Technol. 11, 214-256, 1927): the depth removed per unit time is k_p p v_rel, p the contact pressure and
 * v_rel the abrasive's speed over the part. The pressure is Hertz's over the contact patch (K. L. Johnson,
 * Contact Mechanics, Cambridge University Press 1985):
 *   a ball of radius R on a flat (Johnson, chapter 4, Hertz's theory): contact radius a = (3 F R / (4 E*))^(1/3),
 *     p = p0 sqrt(1 - r^2 / a^2), p0 = 3 F / (2 pi a^2);
 *   a disc of radius R and width L across the path, a line contact (Johnson, chapter 4, two-dimensional contact
 *   of cylinders):
 *     half-width b = sqrt(4 F R / (pi L E*)), p = p0 sqrt(1 - x^2 / b^2), p0 = 2 F / (pi b L).
 * The rigid tool touching the surface and lowered by a^2 / (2 R) (b^2 / (2 R)) overlaps it by
 * (a^2 - r^2) / (2 R): the square root of that overlap has Hertz's shape, which is how the deposit spreads
 * the pressure on a surface that is no longer flat (kl_removal_approach).
 *
 * Common subset of C17 and OpenCL C 1.2 (kl_common.h), like the other closed-form headers. */
#ifndef KL_REMOVAL_H
#define KL_REMOVAL_H
#include "kl_common.h"

/* Hertz contact radius of a ball of radius R pressed on a flat by F [N] (E* the effective modulus [Pa]):
 * a = cbrt(3 F R / (4 E*)) [m]; 0 for F <= 0. */
KL_FN kl_real kl_removal_hertz_a(kl_real F, kl_real R, kl_real Es)
{
  if (!(F > 0.0)) return 0.0;
  return cbrt(3.0 * F * R / (4.0 * Es));
}

/* Peak pressure of the ball's patch of radius a carrying F: p0 = 3 F / (2 pi a^2) [Pa]. */
KL_FN kl_real kl_removal_hertz_p0(kl_real F, kl_real a) { return 3.0 * F / (2.0 * KL_PI * a * a); }

/* Half-width of the line contact of a disc (radius R, width L) pressed by F: b = sqrt(4 F R / (pi L E*))
 * [m]; 0 for F <= 0. */
KL_FN kl_real kl_removal_line_b(kl_real F, kl_real R, kl_real L, kl_real Es)
{
  if (!(F > 0.0)) return 0.0;
  return sqrt(4.0 * F * R / (KL_PI * L * Es));
}

/* Peak pressure of the line contact of half-width b and length L carrying F: p0 = 2 F / (pi b L) [Pa]. */
KL_FN kl_real kl_removal_line_p0(kl_real F, kl_real b, kl_real L) { return 2.0 * F / (KL_PI * b * L); }

/* The contact's half-size at F: the ball's a (L = 0) or the disc's b (L > 0). */
KL_FN kl_real kl_removal_patch(kl_real F, kl_real R, kl_real L, kl_real Es)
{
  return L > 0.0 ? kl_removal_line_b(F, R, L, Es) : kl_removal_hertz_a(F, R, Es);
}

/* The depth the rigid tool is lowered from its first touch so that its overlap with a flat,
 * (a^2 - r^2) / (2 R), vanishes on the patch's edge: a^2 / (2 R) [m] (the disc: b^2 / (2 R)). */
KL_FN kl_real kl_removal_approach(kl_real a, kl_real R) { return a * a / (2.0 * R); }

/* The tool's radius at the contact about the spindle axis [m]: a ball-end spinning about its own axis,
 * tilted by the lead angle lead [rad] from the part's normal, touches at R |sin(lead)| from the axis (0 at
 * lead 0: the tip does not cut); a disc spinning about its axis across the path touches at its rim, R. */
KL_FN kl_real kl_removal_rc(int disc, kl_real R, kl_real lead)
{
  return disc ? R : R * fabs(sin(lead));
}

/* The abrasive's speed over the part: v_rel = omega rc + v_feed [m/s] (the spindle's surface speed and the
 * feed added as magnitudes: the cutting speed dominates, v_s >> v_f, in grinding). */
KL_FN kl_real kl_removal_vrel(kl_real omega, kl_real rc, kl_real vfeed) { return omega * rc + vfeed; }

/* Preston's rate: the depth removed per unit time k_p p v_rel [m/s] (k_p [m^2/N], p [Pa], v_rel [m/s]). */
KL_FN kl_real kl_removal_rate(kl_real kp, kl_real p, kl_real vrel) { return kp * p * vrel; }

#endif
