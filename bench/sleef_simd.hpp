// Declares the libm functions the hand-written baselines call as having SIMD variants, so GCC
// vectorises loops calling them into calls of the x86-64 vector ABI (_ZGVdN4v_exp, ...). Those
// come from SLEEF's GNU-ABI library (link -lsleefgnuabi; Debian's libsleef-dev), whose
// functions keep IEEE semantics for NaN/inf and are accurate to 1 ULP (3.5-ULP variants are
// not used). This is the approach kiln's generated code takes, so the ratios stay honest.
// Include AFTER <cmath>, in a translation unit compiled without -ffast-math.
#pragma once

#include <cmath>

#define KILN_BENCH_SIMD __attribute__((simd("notinbranch")))

extern "C" {
double exp(double) noexcept KILN_BENCH_SIMD;
double log(double) noexcept KILN_BENCH_SIMD;
double log1p(double) noexcept KILN_BENCH_SIMD;
double sin(double) noexcept KILN_BENCH_SIMD;
float expf(float) noexcept KILN_BENCH_SIMD;
float logf(float) noexcept KILN_BENCH_SIMD;
float log1pf(float) noexcept KILN_BENCH_SIMD;
float sinf(float) noexcept KILN_BENCH_SIMD;
}

#undef KILN_BENCH_SIMD
