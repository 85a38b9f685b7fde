// Vectorised libm calls in generated code without -ffast-math (issue 7).
//
// GCC vectorises a loop that calls a math function only when the function is declared with
// a SIMD variant (`simd("notinbranch")`, OpenMP's `declare simd`); glibc declares its libmvec
// variants only under -ffast-math. Here the functions below are redeclared with that attribute,
// so the vectoriser calls their vector-ABI variants (_ZGVbN2v_exp, _ZGVdN4v_exp, _ZGVeN8v_exp,
// _ZGVdN8v_expf, ...), which SLEEF's libsleefgnuabi provides with 1-ULP accuracy (its 3.5-ULP
// variants carry a _u35 suffix and are not used) and C99 results for NaN, ±inf and ±0.
//
// Placed outside the generated file's anonymous namespace: declarations inside one would not
// attach the attribute to libm's functions. Active only when the build defines KILN_SLEEF_GNUABI (kiln's driver does when kiln was built
// with SLEEF, and then links -lsleefgnuabi; kiln_add_graph does the same), with GCC on x86-64
// (the vector ABI names above are x86's; clang ignores the attribute on declarations), and not
// under -ffast-math, where glibc's own declarations and libmvec take over. Otherwise the calls
// are plain scalar libm calls: slower, equally correct.
//
// Measured against long double libm over random and special inputs (SLEEF 3.5.1): at most 1.0
// ULP on the AVX2 and AVX-512 variants; the SSE/AVX variants of float erf/erfc reach 1.8 ULP,
// atan2 1.5 ULP on subnormal results. (glibc's libmvec, for comparison, is 1.5 to 4 ULP.)
// Left out, as SLEEF is wrong or inexact on part of their domain: pow in double (inf for
// results within a few ULP of the largest double; powf is fine), sinh and cosh (overflow early
// near |x| = 709.78), asinh and acosh (wrong beyond 1.3e154), tgamma and lgamma (tens to
// hundreds of ULP), fmod (wrong). log1p is declared, but SLEEF's is wrong above 1e307:
// generated code calls kiln_vm::log1p, which scales such inputs. A call of std::log1p itself
// in a vectorised loop would be wrong there.
#pragma once

#include <cmath>

#if defined(KILN_SLEEF_GNUABI) && defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    !defined(__FAST_MATH__)
#define KILN_VECTOR_MATH 1
// Both precisions of a libm function: fn(double) and fn##f(float), with SIMD variants.
#define KILN_VM_SIMD_1(fn)                                                               \
  extern "C" __attribute__((simd("notinbranch"))) double fn(double) noexcept;            \
  extern "C" __attribute__((simd("notinbranch"))) float fn##f(float) noexcept;
#define KILN_VM_SIMD_2(fn)                                                               \
  extern "C" __attribute__((simd("notinbranch"))) double fn(double, double) noexcept;    \
  extern "C" __attribute__((simd("notinbranch"))) float fn##f(float, float) noexcept;
KILN_VM_SIMD_1(exp)
KILN_VM_SIMD_1(exp2)
KILN_VM_SIMD_1(expm1)
KILN_VM_SIMD_1(log)
KILN_VM_SIMD_1(log2)
KILN_VM_SIMD_1(log10)
KILN_VM_SIMD_1(log1p)
KILN_VM_SIMD_1(sin)
KILN_VM_SIMD_1(cos)
KILN_VM_SIMD_1(tan)
KILN_VM_SIMD_1(asin)
KILN_VM_SIMD_1(acos)
KILN_VM_SIMD_1(atan)
KILN_VM_SIMD_1(tanh)
KILN_VM_SIMD_1(atanh)
KILN_VM_SIMD_1(erf)
KILN_VM_SIMD_1(erfc)
KILN_VM_SIMD_2(pow)
KILN_VM_SIMD_2(atan2)
#undef KILN_VM_SIMD_1
#undef KILN_VM_SIMD_2
#else
#define KILN_VECTOR_MATH 0
#endif

namespace kiln_vm {
namespace {  // internal linkage: libraries from other kiln versions may link into one program

/// log(1 + x). SLEEF's vector log1p returns inf above 1e307 (3.4e38 in float): there the
/// input is scaled by 2^-64 (2^-32), where log1p(x) = log(x) to working precision, and the
/// logarithm of the scale added back (at most 1.5 ULP). Branch-free, so the loop vectorises.
template <class T>
inline T log1p(T x) {
#if KILN_VECTOR_MATH
  T threshold, scale, log_of_scale;  // log_of_scale = -log(scale)
  if constexpr (sizeof(T) == 4) {
    threshold = 1e37f, scale = 0x1p-32f, log_of_scale = 22.18070977791824990137f;  // 32·ln2
  } else {
    threshold = 1e300, scale = 0x1p-64, log_of_scale = 44.36141955583649980275;  // 64·ln2
  }
  const bool big = x > threshold;
  const T y = std::log1p(big ? x * scale : x);
  return big ? y + log_of_scale : y;
#else
  return std::log1p(x);
#endif
}

}  // namespace
}  // namespace kiln_vm
