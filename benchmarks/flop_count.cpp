// benchmarks/flop_count.cpp: counts the floating-point operations kl_impact (kernels/kl_impact.h)
// executes per scenario, by compiling the very same headers with kl_real (a typedef of double) replaced
// by a counting number type. Every binary + - * / and sqrt counts as one flop; negation, fabs and
// comparisons, floor and bit moves as none; the library's transcendental calls (exp, expm1, log, log1p, pow, atan2,
// sin, cos, tgamma) are counted apart, since their cost depends on the library (kl_log1p and kl_log of
// kernels/kl_math.h are arithmetic and counted as such). The values and so the control flow
// (iterations, branches) are exactly those of the double build. C++ only because C has no operator
// overloading; nothing outside benchmarks/ uses it.
#include <cmath>
#include <cstddef>

namespace {
unsigned long long n_arith = 0, n_transc = 0;
}

struct kl_cd {
  double v;
  kl_cd() : v(0.0) {}
  kl_cd(double x) : v(x) {} // implicit on purpose: literals and ints mix with kl_real in the headers
  explicit operator int() const { return (int)v; }
};
static inline kl_cd operator+(kl_cd a, kl_cd b) { ++n_arith; return kl_cd(a.v + b.v); }
static inline kl_cd operator-(kl_cd a, kl_cd b) { ++n_arith; return kl_cd(a.v - b.v); }
static inline kl_cd operator*(kl_cd a, kl_cd b) { ++n_arith; return kl_cd(a.v * b.v); }
static inline kl_cd operator/(kl_cd a, kl_cd b) { ++n_arith; return kl_cd(a.v / b.v); }
static inline kl_cd operator-(kl_cd a) { return kl_cd(-a.v); }
static inline kl_cd &operator+=(kl_cd &a, kl_cd b) { a = a + b; return a; }
static inline kl_cd &operator-=(kl_cd &a, kl_cd b) { a = a - b; return a; }
static inline kl_cd &operator*=(kl_cd &a, kl_cd b) { a = a * b; return a; }
static inline kl_cd &operator/=(kl_cd &a, kl_cd b) { a = a / b; return a; }
static inline bool operator<(kl_cd a, kl_cd b) { return a.v < b.v; }
static inline bool operator>(kl_cd a, kl_cd b) { return a.v > b.v; }
static inline bool operator<=(kl_cd a, kl_cd b) { return a.v <= b.v; }
static inline bool operator>=(kl_cd a, kl_cd b) { return a.v >= b.v; }
static inline bool operator==(kl_cd a, kl_cd b) { return a.v == b.v; }
static inline bool operator!=(kl_cd a, kl_cd b) { return a.v != b.v; }
static inline kl_cd fabs(kl_cd a) { return kl_cd(std::fabs(a.v)); }
static inline kl_cd sqrt(kl_cd a) { ++n_arith; return kl_cd(std::sqrt(a.v)); }
static inline kl_cd floor(kl_cd a) { return kl_cd(std::floor(a.v)); }
static inline kl_cd copysign(kl_cd a, kl_cd b) { return kl_cd(std::copysign(a.v, b.v)); }
static inline bool isfinite(kl_cd a) { return std::isfinite(a.v); }
static inline bool isnan(kl_cd a) { return std::isnan(a.v); }
static inline bool isinf(kl_cd a) { return std::isinf(a.v); }
#define KL_TRANSC1(f) static inline kl_cd f(kl_cd a) { ++n_transc; return kl_cd(std::f(a.v)); }
KL_TRANSC1(exp)
KL_TRANSC1(expm1)
KL_TRANSC1(log)
KL_TRANSC1(log1p)
KL_TRANSC1(sin)
KL_TRANSC1(cos)
KL_TRANSC1(tgamma)
static inline kl_cd pow(kl_cd a, kl_cd b) { ++n_transc; return kl_cd(std::pow(a.v, b.v)); }
static inline kl_cd atan2(kl_cd a, kl_cd b) { ++n_transc; return kl_cd(std::atan2(a.v, b.v)); }

// Bit moves of kl_log / kl_exp (kernels/kl_common.h) on the counting type.
#include <cstdint>
#include <cstring>
#define KL_HAVE_BITS
typedef int64_t kl_i64;
static inline kl_i64 kl_bits(kl_cd a) { kl_i64 b; std::memcpy(&b, &a.v, sizeof b); return b; }
static inline kl_cd kl_from_bits(kl_i64 b) { double d; std::memcpy(&d, &b, sizeof d); return kl_cd(d); }

// The headers, with their kl_real typedef turned into the counting type (math.h is already in).
#define double kl_cd
#include "kernels/kl_impact.h"
#undef double

extern "C" {
#include "benchmarks/flop_count.h"
}

extern "C" void kl_flop_count(const kl_flop_scenario *s, size_t n, double *arith, double *transc)
{
  n_arith = n_transc = 0;
  for (size_t i = 0; i < n; ++i) {
    kl_impact_in in;
    in.m = s[i].m;
    in.K = s[i].K;
    in.n = s[i].n;
    in.cr = s[i].cr;
    in.v0 = s[i].v0;
    in.fe = s[i].fe;
    in.model = s[i].model;
    in.law = s[i].law;
    in.rule = s[i].rule;
    (void)kl_impact(in);
  }
  *arith = n ? (double)n_arith / (double)n : 0.0;
  *transc = n ? (double)n_transc / (double)n : 0.0;
}
