/* core/clock.h: wall-clock seconds for the stages' timings (internal to kelvin, not installed). */
#ifndef KL_CORE_CLOCK_H
#define KL_CORE_CLOCK_H

/* seconds on the monotonic clock, from an arbitrary origin: only differences mean anything */
double kl_now(void);

#endif
