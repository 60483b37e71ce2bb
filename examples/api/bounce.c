/* examples/api/bounce.c: a 3-D bounce with libkelvin's engine. A ball (1 kg, radius 5 cm) is dropped
 * from 1 m onto a static plane; every contact is a Kelvin-Voigt contact (K = 1e6 N/m) whose damping
 * follows from the restitution coefficient (paper eq. 10). The engine advances in closed form and
 * locates every contact's onset and end inside the step, so the 1 ms output period only says where the
 * state is reported. Prints each bounce: impact and exit speed, contact time, maximum penetration and
 * the apex reached after it.
 *
 *   cc bounce.c $(pkg-config --cflags --libs kelvin) -o bounce && ./bounce [cr]
 */
#include <stdio.h>
#include <stdlib.h>

#include <kelvin/engine.h>

int main(int argc, char **argv)
{
  const double cr = argc > 1 ? atof(argv[1]) : 1.0, r = 0.05, h = 1.0, T = 2.5, dt = 1e-3;
  kelvin_world *w = NULL;
  kelvin_world_data *d = NULL;
  int rc = 1;
  if (kelvin_world_create(&w) != KELVIN_OK) {
    fprintf(stderr, "bounce: out of memory\n");
    return 1;
  }

  /* the floor: a static body with a plane (the half-space z < 0) */
  kelvin_body body;
  kelvin_shape shape;
  int floor_id, ball;
  kelvin_body_init(&body);
  body.type = KELVIN_BODY_STATIC;
  body.K = 1e6;
  body.cr = cr;
  kelvin_shape_init(&shape);
  shape.type = KELVIN_SHAPE_PLANE;
  if (kelvin_world_add_body(w, &body, &floor_id) != KELVIN_OK || kelvin_world_add_shape(w, floor_id, &shape, NULL) != KELVIN_OK)
    goto fail;
  /* the ball, its lowest point h above the floor */
  kelvin_body_init(&body);
  body.mass = 1.0;
  body.K = 1e6;
  body.cr = cr;
  body.pos[2] = r + h;
  kelvin_shape_init(&shape);
  shape.size[0] = r;
  if (kelvin_world_add_body(w, &body, &ball) != KELVIN_OK || kelvin_world_add_shape(w, ball, &shape, NULL) != KELVIN_OK ||
      kelvin_world_compile(w) != KELVIN_OK)
    goto fail;
  if (kelvin_world_data_create(w, &d) != KELVIN_OK) goto fail;

  printf("# libkelvin %s: a ball dropped from h = %g m, cr = %g, Kelvin-Voigt contact\n", kelvin_version(), h, cr);
  const double E0 = kelvin_world_energy(d), g = 9.81;
  int reported = 0; /* bounces reported */
  for (int k = 1; k <= (int)(T / dt + 0.5); ++k) {
    if (kelvin_world_advance(d, k * dt) != KELVIN_OK) {
      fprintf(stderr, "bounce: %s\n", kelvin_world_data_errmsg(d));
      goto done;
    }
    double p[3], v[3];
    kelvin_world_body_state(d, ball, p, NULL, v, NULL);
    /* after a contact has ended the ball rises until its vertical speed turns negative: the apex is
     * there (the rest of the way to it, vz^2 / 2g, is below a millimetre at 1 ms samples) */
    if (kelvin_world_nevent(d) > reported && kelvin_world_ncontact(d) == 0 && v[2] <= 0) {
      kelvin_contact_event e;
      kelvin_world_event(d, reported, &e);
      ++reported;
      printf("bounce %d: v_in=%.12g v_out=%.12g t_contact=%.12g dmax=%.12g apex=%.12g\n", reported, e.v_in, e.v_out,
             e.t1 - e.t0, e.dmax, p[2] - r + v[2] * v[2] / (2 * g));
    }
  }
  printf("energy: start %.12g J, end %.12g J\n", E0, kelvin_world_energy(d));
  rc = 0;
  goto done;
fail:
  fprintf(stderr, "bounce: %s\n", kelvin_world_errmsg(w));
done:
  kelvin_world_data_free(d);
  kelvin_world_free(w);
  return rc;
}
