/* io/batch_out_test.c: the CSV writer's number formatter (kl_fmt_double) against printf's "%.17g", byte
 * for byte, and every number it writes read back exactly by strtod: random bit patterns (every exponent,
 * subnormals, both signs), the magnitudes a sweep has, integers, neighbours of powers of ten and the
 * extremes; and the status text. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "io/batch_out.h"

static uint64_t rng = 0x2545f4914f6cdd1dULL;
static uint64_t next(void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* 1 if x is written as printf writes it and reads back to the same bits */
static int check(double x)
{
  char a[64], b[64];
  const int n = kl_fmt_double(a, x);
  snprintf(b, sizeof b, "%.17g", x);
  if (strcmp(a, b) != 0 || n != (int)strlen(a)) {
    printf("%a: kl_fmt_double '%s' (%d), printf '%s'\n", x, a, n, b);
    return 0;
  }
  const double y = strtod(a, NULL);
  if (memcmp(&x, &y, sizeof x) != 0) {
    printf("%a: '%s' reads back as %a\n", x, a, y);
    return 0;
  }
  return 1;
}

static void test_extremes(void **state)
{
  (void)state;
  const double xs[] = {0.0,
                       -0.0,
                       1.0,
                       -1.0,
                       0.1,
                       1.0 / 3.0,
                       DBL_MIN,
                       -DBL_MIN,
                       DBL_TRUE_MIN,
                       -DBL_TRUE_MIN,
                       4.9406564584124654e-324 * 12345,
                       DBL_MAX,
                       -DBL_MAX,
                       DBL_EPSILON,
                       1e16,
                       1e17,
                       99999999999999999.0,
                       9999999999999998.0,
                       1e-4,
                       9.99999999999999999e-5,
                       123456789012345678.0,
                       1e22,
                       1e23,
                       5e-324,
                       1e300,
                       -1e-300,
                       0.5,
                       2.5,
                       1e-5,
                       HUGE_VAL,
                       -HUGE_VAL};
  int ok = 1;
  for (size_t i = 0; i < sizeof xs / sizeof xs[0]; ++i) ok &= check(xs[i]);
  assert_true(ok);
  char buf[64];
  kl_fmt_double(buf, -0.0);
  assert_string_equal(buf, "-0");
  kl_fmt_double(buf, 1e-5);
  assert_string_equal(buf, "1.0000000000000001e-05");
  kl_fmt_double(buf, 1e16);
  assert_string_equal(buf, "10000000000000000");
  kl_fmt_double(buf, 1e17);
  assert_string_equal(buf, "1e+17");
}

/* a million numbers of five kinds */
static void test_random(void **state)
{
  (void)state;
  long bad = 0, n = 0;
  for (long i = 0; i < 1000000 && bad < 10; ++i) {
    const uint64_t u = next();
    double x;
    switch (i % 5) {
    case 0: /* any bit pattern but NaN: every exponent, subnormals, both signs */
      memcpy(&x, &u, sizeof x);
      if (isnan(x)) continue;
      break;
    case 1: /* subnormals */
    {
      const uint64_t v = (u & 0x000fffffffffffffULL) | (u & 0x8000000000000000ULL);
      memcpy(&x, &v, sizeof x);
      break;
    }
    case 2: /* a sweep's magnitudes, 1e-30 .. 1e30 */
      x = pow(10.0, (double)(u % 600000) / 10000.0 - 30.0) * ((u >> 40) & 1 ? -1.0 : 1.0);
      break;
    case 3: /* integers and binary fractions */
      x = (double)(int64_t)(u >> 8) / (double)(1ULL << (u % 40));
      break;
    default: /* the neighbours of powers of ten */
      x = nextafter(pow(10.0, (double)((int)(u % 80) - 40)), (u >> 50) & 1 ? 0.0 : INFINITY);
      break;
    }
    ++n;
    bad += !check(x);
  }
  printf("%ld numbers, %ld differ\n", n, bad);
  assert_int_equal(bad, 0);
}

static void test_status_text(void **state)
{
  (void)state;
  char buf[KL_STATUS_TEXT_MAX];
  assert_string_equal(kl_status_text(0, buf), "ok");
  assert_string_equal(kl_status_text(4 | 64, buf), "bad_cr|no_converge");
  assert_string_equal(kl_status_text(256, buf), "no_separation");
  assert_string_equal(kl_status_text(512 | 1, buf), "bad_mass|unsupported");
  assert_string_equal(kl_status_text(1024, buf), "bits_0x400");
  assert_true(strlen(kl_status_text(1023, buf)) < KL_STATUS_TEXT_MAX);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_extremes),
    cmocka_unit_test(test_random),
    cmocka_unit_test(test_status_text),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
