// kiln runtime: complex64 and complex128, NumPy's complex arithmetic.
//
// The element types are std::complex<float> and std::complex<double> (NumPy's layout: the real
// part, then the imaginary part). Their operators are not NumPy's: libstdc++'s product and
// quotient recover infinities as C99's Annex G asks (__muldc3, __divdc3) and may be contracted
// or rescaled, so every product, quotient, reciprocal and power here is spelled as NumPy's
// loops compute it (numpy/core/src/umath/loops.c.src, npy_math_complex.c.src and
// funcs.inc.src). The elementary functions are C99's (std::exp of a complex calls cexp, and so
// on), which is what NumPy's npy_cexp, npy_clog, npy_csqrt, npy_casin, ... call on glibc.
//
// The reference evaluator and generated libraries both use THIS file. Self-contained C++17,
// header-only, no kiln dependency.
#pragma once

#include <cmath>
#include <complex>
#include <type_traits>

namespace kiln_scalar {

/// `v` itself, through an empty asm the compiler cannot see into: a product passed through it
/// is not contracted with the sum it feeds into a fused multiply-add (GCC contracts by default
/// where -march has FMA), which would change the last bits of `ar*br - ai*bi` from NumPy's. (A
/// `#pragma GCC optimize("fp-contract=off")` would do the same but keeps GCC from inlining
/// these functions.)
template <typename F>
inline F rounded(F v) {
#if defined(__x86_64__) || defined(__i386__)
  __asm__("" : "+x"(v));
#elif defined(__aarch64__)
  __asm__("" : "+w"(v));
#else
  volatile F t = v;
  v = t;
#endif
  return v;
}

template <typename T>
struct is_complex : std::false_type {};
template <typename F>
struct is_complex<std::complex<F>> : std::true_type {};
template <typename T>
inline constexpr bool is_complex_v = is_complex<T>::value;

/// The textbook product (NumPy's complex multiply: no recovery of infinities).
template <typename F>
inline std::complex<F> c_mul(std::complex<F> a, std::complex<F> b) {
  return {rounded(a.real() * b.real()) - rounded(a.imag() * b.imag()),
          rounded(a.real() * b.imag()) + rounded(a.imag() * b.real())};
}

/// Smith's quotient, as NumPy's complex divide (a zero divisor gives a complex inf or nan).
template <typename F>
inline std::complex<F> c_div(std::complex<F> a, std::complex<F> b) {
  const F ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
  const F abs_br = std::fabs(br), abs_bi = std::fabs(bi);
  if (abs_br >= abs_bi) {
    if (abs_br == 0 && abs_bi == 0) return {ar / abs_br, ai / abs_bi};
    const F rat = bi / br;
    const F scl = F(1) / (br + rounded(bi * rat));
    return {(ar + rounded(ai * rat)) * scl, (ai - rounded(ar * rat)) * scl};
  }
  const F rat = br / bi;
  const F scl = F(1) / (bi + rounded(br * rat));
  return {(rounded(ar * rat) + ai) * scl, (rounded(ai * rat) - ar) * scl};
}

/// NumPy's np.reciprocal of a complex number (its own form of Smith's algorithm).
template <typename F>
inline std::complex<F> c_reciprocal(std::complex<F> x) {
  const F r = x.real(), i = x.imag();
  if (std::fabs(i) <= std::fabs(r)) {
    const F q = i / r, d = r + rounded(i * q);
    return {F(1) / d, -q / d};
  }
  const F q = r / i, d = rounded(r * q) + i;
  return {q / d, F(-1) / d};
}

/// NumPy's npy_cpow: 1 for a zero exponent, 0 for a zero base raised to a positive real power
/// (nan otherwise), binary powering by products for integer exponents in (-100, 100), else
/// C99's cpow.
template <typename F>
inline std::complex<F> c_pow(std::complex<F> a, std::complex<F> b) {
  const F ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
  if (br == 0 && bi == 0) return {F(1), F(0)};
  if (ar == 0 && ai == 0) {
    if (br > 0 && bi == 0) return {F(0), F(0)};
    return {F(NAN), F(NAN)};
  }
  if (bi == 0 && br > F(-100) && br < F(100) && static_cast<F>(static_cast<long>(br)) == br) {
    long n = static_cast<long>(br);
    if (n == 1) return a;
    if (n == 2) return c_mul(a, a);
    if (n == 3) return c_mul(a, c_mul(a, a));
    if (n < 0) n = -n;
    std::complex<F> acc{F(1), F(0)}, p = a;
    for (long mask = 1;; mask <<= 1) {
      if (n & mask) acc = c_mul(acc, p);
      if (n < (mask << 1)) break;
      p = c_mul(p, p);
    }
    return br < 0 ? c_div(std::complex<F>{F(1), F(0)}, acc) : acc;
  }
  return std::pow(a, b);
}

/// |x| as NumPy's npy_cabs: hypot of the parts. For complex64, glibc's hypotf spelled out (the
/// same bits: float products are exact in double, so its one rounding is sqrt's), which inlines
/// and vectorises where a call to hypotf does not.
template <typename F>
inline F c_abs(std::complex<F> x) {
  if constexpr (std::is_same_v<F, float>) {
    if (std::isinf(x.real()) || std::isinf(x.imag())) return F(INFINITY);
    const double re = x.real(), im = x.imag();
    return static_cast<float>(std::sqrt(re * re + im * im));
  } else {
    return std::hypot(x.real(), x.imag());
  }
}

/// NumPy's np.angle: atan2(imag, real).
template <typename F>
inline F c_angle(std::complex<F> x) { return std::atan2(x.imag(), x.real()); }

// NumPy's complex functions that are not C99's (funcs.inc.src).
template <typename F>
inline std::complex<F> c_log2(std::complex<F> x) {
  const std::complex<F> l = std::log(x);
  const F k = F(1.442695040888963407359924681001892137);  // log2(e)
  return {l.real() * k, l.imag() * k};
}
template <typename F>
inline std::complex<F> c_log10(std::complex<F> x) {
  const std::complex<F> l = std::log(x);
  const F k = F(0.434294481903251827651128918916605082);  // log10(e)
  return {l.real() * k, l.imag() * k};
}
template <typename F>
inline std::complex<F> c_log1p(std::complex<F> x) {
  const F l = std::hypot(x.real() + 1, x.imag());
  return {std::log(l), std::atan2(x.imag(), x.real() + 1)};
}
template <typename F>
inline std::complex<F> c_expm1(std::complex<F> x) {
  const F a = std::sin(x.imag() / 2);
  return {rounded(std::expm1(x.real()) * std::cos(x.imag())) - rounded(2 * a * a), std::exp(x.real()) * std::sin(x.imag())};
}
template <typename F>
inline std::complex<F> c_exp2(std::complex<F> x) {
  const F k = F(0.693147180559945309417232121458176568);  // ln(2)
  return std::exp(std::complex<F>{x.real() * k, x.imag() * k});
}
template <typename F>
inline std::complex<F> c_sqr(std::complex<F> x) { return c_mul(x, x); }

template <typename F>
inline bool c_isnan(std::complex<F> x) { return std::isnan(x.real()) || std::isnan(x.imag()); }
template <typename F>
inline bool c_isinf(std::complex<F> x) { return std::isinf(x.real()) || std::isinf(x.imag()); }

}  // namespace kiln_scalar
