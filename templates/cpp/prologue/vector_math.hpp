// Vectorised libm calls in generated code without -ffast-math (issues 7 and 20).
//
// GCC vectorises a loop that calls a math function only when the function is declared with
// a SIMD variant (`simd("notinbranch")`, OpenMP's `declare simd`); glibc declares its libmvec
// variants only under -ffast-math. Here the functions below are redeclared with that attribute,
// so the vectoriser calls their x86 vector-ABI variants (_ZGVbN2v_exp for SSE2, _ZGVcN4v_exp
// AVX, _ZGVdN4v_exp AVX2, _ZGVeN8v_exp AVX-512, _ZGVdN8v_expf, ...). Each variant comes from
// kiln's own kernels (float32 exp, log, sin, cos; below) or one of two libraries, per function
// and precision:
//  - glibc's libmvec (KILN_LIBMVEC: glibc >= 2.35 on x86-64): the functions -ffast-math uses,
//    here without -ffast-math's other assumptions. The names are libmvec's own; nothing is defined.
//  - SLEEF's libsleef (KILN_SLEEF): defined right here, hidden and weak, as jumps to SLEEF's
//    function for each instruction set (Sleef_expd4_u10avx2, ...). They are not taken from
//    libsleefgnuabi, which exports the _ZGV names itself and would clash with libmvec's.
// Which one (the KILN_VM_* lines below name the default per precision):
//  - default: libmvec, except where its error exceeds the bound of issue 20: at least as
//    accurate as NumPy's own SIMD functions. On x86-64 with AVX2 NumPy 1.24 vectorises float32
//    exp (2.3 ULP), log (2.8), sin and cos (1.5) and tanh (1.4) itself; libmvec's float32 exp
//    (2.6), log (3.9), sin (2.1) and cos (2.0) are worse, so those four are kiln's own kernels
//    (kiln_vm_f32 below: every float32 input checked, see there) at libmvec's speed, for the
//    SSE, AVX and AVX2 variants of targets with FMA; SLEEF's 1-ULP ones for AVX-512 (not measured
//    here) and targets without FMA (-march older than Haswell).
//    Everywhere else the bound is NumPy's SIMD functions on AVX-512 machines, SVML's 4 ULP;
//    libmvec measures 1.0-3.6 ULP (tests/unit/test_vector_accuracy.cpp holds every function
//    to its bound). libmvec's variants compute NaN, ±inf, ±0, subnormal and out-of-range lanes
//    with glibc's scalar functions, so those results are C99's exactly (tested).
//  - KILN_VM_1ULP (`kiln compile --math-1ulp`): SLEEF's 1-ULP functions everywhere, as
//    before issue 20: at most 1.0 ULP on AVX2 and AVX-512 (erfc 1.5; the SSE/AVX variants of
//    float erf/erfc 1.8, atan2 1.5 on subnormal results), about half libmvec's speed.
//  - with only one of the two libraries, that one for everything but kiln's own kernels
//    (kiln --version says so). With neither, nothing is vectorised, kiln's kernels included
//    (they would need SIMD declarations of exp, log, sin and cos alone: not done yet).
// Scalar calls (a loop's last elements, and all of a short vector's) are glibc's.
//
// Generated code keeps only the KILN_VM_1/KILN_VM_2 lines of the functions it calls (see
// codegen/cpp/vector_math_select.cpp): each line defines up to eight wrappers, and compile time
// adds up. kiln's own kernels (the KILN_VM_KERNELS block) are kept only where one of the
// functions on its first line is called.
//
// Placed outside the generated file's anonymous namespace: declarations inside one would not
// attach the attribute to libm's functions. Active only with GCC on x86-64 (the vector ABI names
// are x86's; clang ignores the attribute on declarations) producing ELF (for hidden, weak and the
// alias below), and not under -ffast-math, where glibc's own declarations and libmvec take over.
// Otherwise the calls are plain scalar libm calls: slower, equally correct.
//
// Left out, as SLEEF is wrong or inexact on part of their domain and libmvec's are not yet
// measured here: pow in double, sinh and cosh, asinh and acosh, tgamma and lgamma, fmod.
// SLEEF's log1p is wrong above 1e307: its wrappers below scale such inputs first.
#pragma once

#include <cmath>
#include <cstdint>

#if (defined(KILN_SLEEF) || defined(KILN_LIBMVEC)) && defined(__GNUC__) && !defined(__clang__) && \
    defined(__x86_64__) && defined(__ELF__) && !defined(__FAST_MATH__)
#define KILN_VECTOR_MATH 1
// GCC vectors, passed in xmm/ymm/zmm registers like __m128d/__m256d/__m512d.
typedef double kiln_vm_d2 __attribute__((vector_size(16)));
typedef double kiln_vm_d4 __attribute__((vector_size(32)));
typedef double kiln_vm_d8 __attribute__((vector_size(64)));
typedef float kiln_vm_f4 __attribute__((vector_size(16)));
typedef float kiln_vm_f8 __attribute__((vector_size(32)));
typedef float kiln_vm_f16 __attribute__((vector_size(64)));
#if defined(__FMA__) && !defined(KILN_VM_1ULP)  // KILN_VM_KERNELS(exp, log, sin, cos)
// kiln's own float32 exp, log, sin and cos (issue 20): the default for targets with FMA, in
// place of SLEEF's 1-ULP functions (about twice libmvec's time on AVX2) and libmvec's own
// (less accurate than NumPy's). Written once over GCC vector types, instantiated per variant
// below; coefficients fitted for kiln (near-minimax, mpmath's chebyfit). Largest error over
// every float32 input, measured as tests/unit/test_vector_accuracy.cpp does (against glibc's
// double functions; sin and cos over every |x| < 2^17, beyond which lanes are glibc's sinf and
// cosf): exp 1.10 ULP, log 0.95, sin 1.49, cos 1.49 (NumPy's AVX2 loops: 2.3, 2.8, 1.5, 1.5).
// Time per 8-lane call on AVX2 (EPYC, best of 30): exp as libmvec's, log 1.13x, sin 1.2x,
// cos 1.13x; SLEEF's 1-ULP ones 1.6-3x. Lanes outside a kernel's range (NaN, ±inf; log's
// zero, negative and subnormal inputs; exp's |x| > 87.3, where results may be subnormal or
// overflow; sin and cos's |x| > 2^16) take glibc's scalar function: their results are glibc's.
#define KILN_VM_OWN_F32 1
namespace kiln_vm_f32 {
namespace {
#define KILN_VM_INLINE inline __attribute__((always_inline))
template <class V> using ints = decltype(V{} < V{});
template <class V> constexpr V splat(float c) { return V{} + c; }
template <class V> constexpr V splat_bits(int c) { return (V)(ints<V>{} + c); }
template <class V> KILN_VM_INLINE ints<V> bits(V x) { return (ints<V>)x; }
// The instructions the kernels need beyond GCC's vector operators: fused multiply-add, the
// unordered a > b (true where either is NaN), the sign bit, and blendv (b where m's sign is set).
KILN_VM_INLINE kiln_vm_f4 fma(kiln_vm_f4 a, kiln_vm_f4 b, kiln_vm_f4 c) { return __builtin_ia32_vfmaddps(a, b, c); }
KILN_VM_INLINE kiln_vm_f8 fma(kiln_vm_f8 a, kiln_vm_f8 b, kiln_vm_f8 c) { return __builtin_ia32_vfmaddps256(a, b, c); }
KILN_VM_INLINE kiln_vm_f4 not_le(kiln_vm_f4 a, kiln_vm_f4 b) { return (kiln_vm_f4)__builtin_ia32_cmpnleps(a, b); }
KILN_VM_INLINE kiln_vm_f8 not_le(kiln_vm_f8 a, kiln_vm_f8 b) { return __builtin_ia32_cmpps256(a, b, 6); }
KILN_VM_INLINE int signs(kiln_vm_f4 m) { return __builtin_ia32_movmskps(m); }
KILN_VM_INLINE int signs(kiln_vm_f8 m) { return __builtin_ia32_movmskps256(m); }
KILN_VM_INLINE kiln_vm_f4 blendv(kiln_vm_f4 a, kiln_vm_f4 b, kiln_vm_f4 m) { return __builtin_ia32_blendvps(a, b, m); }
KILN_VM_INLINE kiln_vm_f8 blendv(kiln_vm_f8 a, kiln_vm_f8 b, kiln_vm_f8 m) { return __builtin_ia32_blendvps256(a, b, m); }
// A kernel's constants as whole vectors in memory, read through an opaque pointer: GCC then
// folds each into the instruction that uses it, as a memory operand, where it would otherwise
// spend an instruction per constant and call broadcasting it.
template <class V> KILN_VM_INLINE const V* opaque(const V* k) { __asm__("" : "+r"(k)); return k; }

// glibc's scalar function for the lanes whose sign is set in `out` (special values, and
// inputs outside a kernel's range), y elsewhere.
template <class V, float (*F)(float)>
__attribute__((noinline, cold)) V lanes(V x, V y, V out) {
  for (unsigned i = 0; i < sizeof(V) / sizeof(float); ++i)
    if (bits(out)[i] < 0) y[i] = F(x[i]);
  return y;
}

// exp(x) for |x| <= 87.3 (normal results): x = n ln2 + r, |r| <= ln2/2 (two-part ln2),
// exp(r) = 1 + r + r^2 q(r), q of degree 4; n added to the exponent.
template <class V> struct ExpK {
  static constexpr V k[] = {splat<V>(0x1.715476p0f), splat<V>(0x1.8p23f), splat<V>(-0x1.62e43p-1f),
                            splat<V>(0x1.05c61p-29f), splat<V>(1.39261761e-3f), splat<V>(8.36317307e-3f),
                            splat<V>(4.16665547e-2f), splat<V>(1.66665770e-1f), splat<V>(0.5f), splat<V>(1.0f),
                            splat_bits<V>(0x7fffffff), splat<V>(87.3f)};
};
template <class V>
KILN_VM_INLINE V exp(V x) {
  const V* k = opaque(ExpK<V>::k);
  const V t = fma(x, k[0], k[1]), n = t - k[1];  // n = round(x / ln2), also in t's low bits
  const V r = fma(n, k[3], fma(n, k[2], x));
  const V r2 = r * r;
  const V q = fma(fma(k[4], r2, fma(k[5], r, k[6])), r2, fma(k[7], r, k[8]));
  const V y = (V)(bits(fma(r2, q, r) + k[9]) + (bits(t) << 23));
  const V out = not_le((V)(bits(x) & bits(k[10])), k[11]);
  return signs(out) ? lanes<V, ::expf>(x, y, out) : y;
}

// log(x) for normal x: e ln2 + log(1 + f), 1 + f in [sqrt(1/2), sqrt(2)); log(1 + f) = f + f^2 Q(f),
// Q of degree 9.
template <class V> struct LogK {
  static constexpr V k[] = {splat_bits<V>(0x3f3504f3), splat_bits<V>(0x7fffff), splat<V>(1.0f),
                            splat<V>(3.33333228e-1f), splat<V>(-4.99999999e-1f), splat<V>(2.00014467e-1f),
                            splat<V>(-2.50000109e-1f), splat<V>(1.42323179e-1f), splat<V>(-1.66675368e-1f),
                            splat<V>(1.18121361e-1f), splat<V>(-1.24208145e-1f), splat<V>(6.76902411e-2f),
                            splat<V>(-1.15572879e-1f), splat<V>(0x1.62e43p-1f), splat<V>(-0x1.05c61p-29f),
                            splat<V>(0x1p-126f), splat<V>(0x1.fffffep127f)};
};
template <class V>
KILN_VM_INLINE V log(V x) {
  const V* k = opaque(LogK<V>::k);
  const auto ix = bits(x) - bits(k[0]);
  const V e = __builtin_convertvector(ix >> 23, V);
  const V f = (V)((ix & bits(k[1])) + bits(k[0])) - k[2];
  const V f2 = f * f, f4 = f2 * f2;
  const V q = fma(fma(fma(k[11], f, k[12]), f4, fma(fma(k[9], f, k[10]), f2, fma(k[7], f, k[8]))), f4,
                  fma(fma(k[5], f, k[6]), f2, fma(k[3], f, k[4])));
  const V y = fma(e, k[13], fma(e, k[14], fma(f2, q, f)));
  const V out = (V)(bits(not_le(k[15], x)) | bits(not_le(x, k[16])));
  return signs(out) ? lanes<V, ::logf>(x, y, out) : y;
}

// sin(x), cos(x) for |x| <= 2^16: x = n pi/2 + r, |r| <= pi/4 (three-part pi/2), sin(r) and
// cos(r) by polynomials in r^2, chosen and signed by n mod 4.
template <class V> struct SinCosK {
  static constexpr V k[] = {splat<V>(0x1.45f306p-1f), splat<V>(0x1.8p23f), splat<V>(-0x1.921fb6p0f),
                            splat<V>(0x1.777a5cp-25f), splat<V>(0x1.ee59dap-50f), splat<V>(2.72499258e-6f),
                            splat<V>(-1.98400867e-4f), splat<V>(8.33333187e-3f), splat<V>(-1.66666666e-1f),
                            splat<V>(2.45479421e-5f), splat<V>(-1.38883030e-3f), splat<V>(4.16666647e-2f),
                            splat<V>(-0.5f), splat<V>(1.0f), splat_bits<V>(0x7fffffff), splat<V>(0x1p16f)};
};
template <bool Cos, class V>
KILN_VM_INLINE V sincos(V x) {
  const V* k = opaque(SinCosK<V>::k);
  const V t = fma(x, k[0], k[1]), n = t - k[1];
  const V r = fma(n, k[4], fma(n, k[3], fma(n, k[2], x)));  // the first step exact
  const V z = r * r;
  const V s = fma(r * z, fma(fma(fma(k[5], z, k[6]), z, k[7]), z, k[8]), r);
  const V c = fma(fma(fma(fma(k[9], z, k[10]), z, k[11]), z, k[12]), z, k[13]);
  const auto q = bits(t) + (Cos ? 1 : 0);  // n mod 4 (+ 1 for cos) in the low bits
  V y = (V)(bits(blendv(s, c, (V)(q << 31))) ^ ((q >> 1) << 31));
  if (!Cos) y = x == 0.0f ? x : y;  // sin(-0) = -0
  const V out = not_le((V)(bits(x) & bits(k[14])), k[15]);
  return signs(out) ? lanes<V, Cos ? ::cosf : ::sinf>(x, y, out) : y;
}
template <class V> KILN_VM_INLINE V sin(V x) { return sincos<false>(x); }
template <class V> KILN_VM_INLINE V cos(V x) { return sincos<true>(x); }
#undef KILN_VM_INLINE
}  // namespace
}  // namespace kiln_vm_f32
#endif  // KILN_VM_KERNELS
// One vector-ABI variant `name` forwarding to `callee` (one or two operands of type V).
#define KILN_VM_WRAP1(name, callee, V, isa)                                                       \
  extern "C" __attribute__((target(isa))) V callee(V);                                            \
  extern "C" __attribute__((weak, visibility("hidden"), target(isa))) V name(V a) { return callee(a); }
#define KILN_VM_WRAP2(name, callee, V, isa)                                                       \
  extern "C" __attribute__((target(isa))) V callee(V, V);                                         \
  extern "C" __attribute__((weak, visibility("hidden"), target(isa))) V name(V a, V b) { return callee(a, b); }
// fn(double) / fn##f(float) variants from SLEEF, for each x86 ISA letter; u: SLEEF's accuracy
// suffix (u10: 1.0 ULP, u15: 1.5 ULP); wrap: the macro defining one variant.
#define KILN_VM_DOUBLE_SLEEF(fn, u, wrap, v)                                                      \
  wrap(_ZGVbN2##v##_##fn, Sleef_##fn##d2_##u##sse2, kiln_vm_d2, "sse2")                           \
  wrap(_ZGVcN4##v##_##fn, Sleef_##fn##d4_##u##avx, kiln_vm_d4, "avx")                             \
  wrap(_ZGVdN4##v##_##fn, Sleef_##fn##d4_##u##avx2, kiln_vm_d4, "avx2,fma")                       \
  wrap(_ZGVeN8##v##_##fn, Sleef_##fn##d8_##u##avx512f, kiln_vm_d8, "avx512f")
// name: the scalar function whose variants these are (fn##f, or kiln's own kiln_vm_log1pf).
#define KILN_VM_FLOAT_SLEEF_AS(name, fn, u, wrap, v)                                              \
  wrap(_ZGVbN4##v##_##name, Sleef_##fn##f4_##u##sse2, kiln_vm_f4, "sse2")                         \
  wrap(_ZGVcN8##v##_##name, Sleef_##fn##f8_##u##avx, kiln_vm_f8, "avx")                           \
  wrap(_ZGVdN8##v##_##name, Sleef_##fn##f8_##u##avx2, kiln_vm_f8, "avx2,fma")                     \
  wrap(_ZGVeN16##v##_##name, Sleef_##fn##f16_##u##avx512f, kiln_vm_f16, "avx512f")
#define KILN_VM_FLOAT_SLEEF(fn, u, wrap, v) KILN_VM_FLOAT_SLEEF_AS(fn##f, fn, u, wrap, v)
// libmvec's fn##f variants under another scalar function's name (kiln_vm_log1pf).
#define KILN_VM_FLOAT_MVEC_AS(name, fn, v)                                                        \
  KILN_VM_WRAP1(_ZGVbN4##v##_##name, _ZGVbN4##v##_##fn##f, kiln_vm_f4, "sse2")                    \
  KILN_VM_WRAP1(_ZGVcN8##v##_##name, _ZGVcN8##v##_##fn##f, kiln_vm_f8, "avx")                     \
  KILN_VM_WRAP1(_ZGVdN8##v##_##name, _ZGVdN8##v##_##fn##f, kiln_vm_f8, "avx2,fma")                \
  KILN_VM_WRAP1(_ZGVeN16##v##_##name, _ZGVeN16##v##_##fn##f, kiln_vm_f16, "avx512f")
// KILN_VM_DOUBLE_<src> / KILN_VM_FLOAT_<src>: the variants of a function whose default source
// is src (MVEC or SLEEF), as this build resolves it. libmvec's need no definition.
#if defined(KILN_VM_1ULP) || !defined(KILN_LIBMVEC)
#define KILN_VM_DOUBLE_MVEC KILN_VM_DOUBLE_SLEEF
#define KILN_VM_FLOAT_MVEC KILN_VM_FLOAT_SLEEF
#define KILN_VM_LOG1PF_MVEC(fn, u, v) KILN_VM_FLOAT_SLEEF_AS(kiln_vm_log1pf, fn, u, KILN_VM_LOG1P_F, v)
#else
#define KILN_VM_DOUBLE_MVEC(fn, u, wrap, v)
#define KILN_VM_FLOAT_MVEC(fn, u, wrap, v)
#define KILN_VM_LOG1PF_MVEC(fn, u, v) KILN_VM_FLOAT_MVEC_AS(kiln_vm_log1pf, fn, v)
#endif
#if !defined(KILN_SLEEF)
#undef KILN_VM_DOUBLE_SLEEF
#undef KILN_VM_FLOAT_SLEEF
#define KILN_VM_DOUBLE_SLEEF(fn, u, wrap, v)
#define KILN_VM_FLOAT_SLEEF(fn, u, wrap, v)
#endif
// KILN_VM_FLOAT_KILN: kiln's kernel kiln_vm_f32::fn for the SSE, AVX and AVX2 variants; the
// AVX-512 one from SLEEF (libmvec's without SLEEF). Without kiln's kernels: SLEEF's everywhere.
#if defined(KILN_VM_OWN_F32)
#define KILN_VM_OWN(name, fn, V, isa) \
  extern "C" __attribute__((weak, visibility("hidden"), target(isa))) V name(V x) { return kiln_vm_f32::fn(x); }
#if defined(KILN_SLEEF)
#define KILN_VM_FLOAT_KILN_E(fn, u) KILN_VM_WRAP1(_ZGVeN16v_##fn##f, Sleef_##fn##f16_##u##avx512f, kiln_vm_f16, "avx512f")
#else
#define KILN_VM_FLOAT_KILN_E(fn, u)
#endif
// Where the target has AVX2 the vectoriser takes the AVX2 variant over the AVX one, which then
// jumps to it rather than compiling the kernel a third time.
#if defined(__AVX2__)
#define KILN_VM_FLOAT_KILN_C(fn) KILN_VM_WRAP1(_ZGVcN8v_##fn##f, _ZGVdN8v_##fn##f, kiln_vm_f8, "avx2,fma")
#else
#define KILN_VM_FLOAT_KILN_C(fn) KILN_VM_OWN(_ZGVcN8v_##fn##f, fn, kiln_vm_f8, "avx")
#endif
#define KILN_VM_FLOAT_KILN(fn, u, wrap, v)                                                        \
  KILN_VM_OWN(_ZGVbN4v_##fn##f, fn, kiln_vm_f4, "sse2")                                           \
  KILN_VM_OWN(_ZGVdN8v_##fn##f, fn, kiln_vm_f8, "avx2,fma")                                       \
  KILN_VM_FLOAT_KILN_C(fn)                                                                        \
  KILN_VM_FLOAT_KILN_E(fn, u)
#else
#define KILN_VM_FLOAT_KILN KILN_VM_FLOAT_SLEEF
#endif
// fn (double) from dsrc, fn##f (float) from fsrc.
#define KILN_VM_1(fn, u, dsrc, fsrc)                                                              \
  extern "C" __attribute__((simd("notinbranch"))) double fn(double) noexcept;                     \
  extern "C" __attribute__((simd("notinbranch"))) float fn##f(float) noexcept;                    \
  KILN_VM_DOUBLE_##dsrc(fn, u, KILN_VM_WRAP1, v)                                                  \
  KILN_VM_FLOAT_##fsrc(fn, u, KILN_VM_WRAP1, v)
KILN_VM_1(exp, u10, MVEC, KILN)
KILN_VM_1(exp2, u10, MVEC, MVEC)
KILN_VM_1(expm1, u10, MVEC, MVEC)
KILN_VM_1(log, u10, MVEC, KILN)
KILN_VM_1(log2, u10, MVEC, MVEC)
KILN_VM_1(log10, u10, MVEC, MVEC)
KILN_VM_1(sin, u10, MVEC, KILN)
KILN_VM_1(cos, u10, MVEC, KILN)
KILN_VM_1(tan, u10, MVEC, MVEC)
KILN_VM_1(asin, u10, MVEC, MVEC)
KILN_VM_1(acos, u10, MVEC, MVEC)
KILN_VM_1(atan, u10, MVEC, MVEC)
KILN_VM_1(tanh, u10, MVEC, MVEC)
KILN_VM_1(atanh, u10, MVEC, MVEC)
KILN_VM_1(erf, u10, MVEC, MVEC)
KILN_VM_1(erfc, u15, MVEC, MVEC)
// log1p: SLEEF's returns inf above 1e307 (3.4e38 in float). Its vector variants here scale such
// inputs by 2^-64 (2^-32) first, where log1p(x) = log(x) to working precision, and add the
// logarithm of the scale back (at most 1.5 ULP); NaN, ±inf and ±0 pass through unchanged.
// libmvec's log1p is right up to the largest double and needs no such care.
// Scalar calls (a loop's last elements, and all of a short vector's) are glibc's log1p in double.
// In float, generated code calls kiln_vm_log1pf instead of log1pf (see kiln_vm::log1p below): its
// vector variants are the same, and its scalar body is log(1 + x) in double, where 1 + x is
// exact for a float x with |x| >= 2^-29 (x - x²/2 below that): correctly rounded for all but 7
// of the 2^32 floats (an exhaustive check against log1pl), where glibc's log1pf is off by up to
// 0.84 ULP, and a quarter faster than that fdlibm port with a division (W6 in bench/). The scalar
// body is bound to the name kiln_vm_log1pf by an assembler alias: defined in C++ under that
// name, GCC would make its own SIMD clones of it, clashing with the wrappers.
#define KILN_VM_WRAP_LOG1P(name, sleef, V, isa, big, scale, log_of_scale)                         \
  extern "C" __attribute__((target(isa))) V sleef(V);                                             \
  extern "C" __attribute__((weak, visibility("hidden"), target(isa))) V name(V x) {               \
    const auto is_big = x > big;                                                                  \
    const V y = sleef(is_big ? x * scale : x);                                                    \
    return is_big ? y + log_of_scale : y;                                                         \
  }
#define KILN_VM_LOG1P_D(name, sleef, V, isa) \
  KILN_VM_WRAP_LOG1P(name, sleef, V, isa, 1e300, 0x1p-64, 44.36141955583649980275)  /* 64·ln2 */
#define KILN_VM_LOG1P_F(name, sleef, V, isa) \
  KILN_VM_WRAP_LOG1P(name, sleef, V, isa, 1e37f, 0x1p-32f, 22.18070977791824990137f)  /* 32·ln2 */
#define KILN_VM_1_LOG1P(fn, u, dsrc, fsrc)                                                        \
  extern "C" __attribute__((simd("notinbranch"))) double fn(double) noexcept;                     \
  extern "C" __attribute__((simd("notinbranch"))) float fn##f(float) noexcept;                    \
  KILN_VM_DOUBLE_##dsrc(fn, u, KILN_VM_LOG1P_D, v)                                                \
  KILN_VM_FLOAT_##fsrc(fn, u, KILN_VM_LOG1P_F, v)                                                 \
  extern "C" __attribute__((simd("notinbranch"), const)) float kiln_vm_log1pf(float) noexcept;    \
  KILN_VM_LOG1PF_##fsrc(fn, u, v)                                                                 \
  extern "C" __attribute__((weak, visibility("hidden"), used)) float kiln_vm_log1pf_scalar(float x) noexcept { \
    const double d = x;                                                                           \
    return __builtin_fabs(d) < 0x1p-29 ? float(d - 0.5 * d * d) : float(::log(1.0 + d));          \
  }                                                                                               \
  __asm__(".weak kiln_vm_log1pf\n\t.hidden kiln_vm_log1pf\n\t.set kiln_vm_log1pf, kiln_vm_log1pf_scalar");
#if defined(KILN_SLEEF)
#define KILN_VM_LOG1PF_SLEEF(fn, u, v) KILN_VM_FLOAT_SLEEF_AS(kiln_vm_log1pf, fn, u, KILN_VM_LOG1P_F, v)
#else
#define KILN_VM_LOG1PF_SLEEF(fn, u, v) KILN_VM_FLOAT_MVEC_AS(kiln_vm_log1pf, fn, v)
#endif
KILN_VM_1_LOG1P(log1p, u10, MVEC, MVEC)
#define KILN_VM_2(fn, u, dsrc, fsrc)                                                              \
  extern "C" __attribute__((simd("notinbranch"))) double fn(double, double) noexcept;             \
  extern "C" __attribute__((simd("notinbranch"))) float fn##f(float, float) noexcept;             \
  KILN_VM_DOUBLE_##dsrc(fn, u, KILN_VM_WRAP2, vv)                                                 \
  KILN_VM_FLOAT_##fsrc(fn, u, KILN_VM_WRAP2, vv)
#define KILN_VM_2_FLOAT_ONLY(fn, u, fsrc)                                                         \
  extern "C" __attribute__((simd("notinbranch"))) float fn##f(float, float) noexcept;             \
  KILN_VM_FLOAT_##fsrc(fn, u, KILN_VM_WRAP2, vv)
// Two operands: SLEEF's only (libmvec's are not yet measured here).
KILN_VM_2(atan2, u10, SLEEF, SLEEF)
// Float only: SLEEF's pow(double) returns inf for results within a few ULP of the largest double.
KILN_VM_2_FLOAT_ONLY(pow, u10, SLEEF)
#undef KILN_VM_1
#undef KILN_VM_1_LOG1P
#undef KILN_VM_LOG1P_D
#undef KILN_VM_LOG1P_F
#undef KILN_VM_LOG1PF_MVEC
#undef KILN_VM_LOG1PF_SLEEF
#undef KILN_VM_WRAP_LOG1P
#undef KILN_VM_2
#undef KILN_VM_2_FLOAT_ONLY
#undef KILN_VM_DOUBLE_MVEC
#undef KILN_VM_FLOAT_MVEC
#undef KILN_VM_DOUBLE_SLEEF
#undef KILN_VM_FLOAT_SLEEF
#undef KILN_VM_FLOAT_SLEEF_AS
#undef KILN_VM_FLOAT_KILN
#undef KILN_VM_FLOAT_KILN_E
#undef KILN_VM_FLOAT_KILN_C
#undef KILN_VM_OWN
#undef KILN_VM_FLOAT_MVEC_AS
#undef KILN_VM_WRAP1
#undef KILN_VM_WRAP2
#else
#define KILN_VECTOR_MATH 0
#endif

namespace kiln_vm {
namespace {  // internal linkage: libraries from other kiln versions may link into one program

/// log(1 + x) as generated code calls it: in float with vector math, kiln_vm_log1pf (above).
/// A template, so that the name is looked up only where float log1p is used: the selection
/// drops KILN_VM_1_LOG1P, which declares it, from code that does not call log1p.
template <class T>
inline T log1p(T x) {
#if KILN_VECTOR_MATH
  if constexpr (sizeof(T) == sizeof(float)) return kiln_vm_log1pf(x);
#endif
  return std::log1p(x);
}

}  // namespace
}  // namespace kiln_vm
