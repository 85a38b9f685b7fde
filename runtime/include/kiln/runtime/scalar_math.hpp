// kiln runtime: the scalar functions whose exact semantics kiln defines itself — integer
// wrap-around, NumPy's floor division and modulo, saturating float->int conversion, and the
// special functions C++'s <cmath> lacks (erfcx, erfinv, psi, trigamma, log1mexp, sigmoid, softplus).
//
// The reference evaluator and the generated code both use THIS file (the code generator embeds
// its text into every generated source), so both backends agree bit for bit on these
// definitions. Self-contained C++17, header-only, no kiln dependency.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kiln/runtime/half.hpp"

namespace kiln_scalar {



template <typename T>
using Unsigned = std::make_unsigned_t<T>;

/// Element conversion with defined results everywhere: to bool is `!= 0` (NaN is true);
/// float -> integer truncates toward zero and saturates at the type's range, NaN -> 0.
template <typename To, typename From>
inline To convert(From x) {
  if constexpr (std::is_same_v<From, half>) {
    return convert<To>(static_cast<float>(x));
  } else if constexpr (!std::is_arithmetic_v<From> && (std::is_arithmetic_v<To> || std::is_same_v<To, half>)) {
    return convert<To>(x.real());  // a complex value: its real part, as NumPy's astype
  } else if constexpr (std::is_same_v<To, bool>) {
    return x != From(0);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if (x != x) return To(0);
    if (x <= static_cast<From>(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
    if (x >= static_cast<From>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(x);
  } else {
    return static_cast<To>(x);
  }
}

// Integer add/sub/mul/neg wrap modulo 2^bits (computed in uint64 so nothing is undefined).
template <typename T>
inline T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return static_cast<T>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
  else if constexpr (std::is_same_v<T, bool>)
    return a || b;
  else
    return a + b;
}
template <typename T>
inline T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return static_cast<T>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
  else if constexpr (std::is_same_v<T, bool>)
    return a != b;
  else
    return a - b;
}
template <typename T>
inline T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return static_cast<T>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
  else if constexpr (std::is_same_v<T, bool>)
    return a && b;
  else
    return a * b;
}
template <typename T>
inline T wrap_neg(T a) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return static_cast<T>(std::uint64_t(0) - static_cast<std::uint64_t>(a));
  else
    return -a;
}

template <typename T>
inline T abs(T a) {
  if constexpr (std::is_same_v<T, bool> || std::is_unsigned_v<T>)
    return a;
  else if constexpr (std::is_integral_v<T>)
    return a < 0 ? wrap_neg(a) : a;
  else
    return std::fabs(a);
}

/// -1, 0 or 1 (NaN stays NaN for floats, as NumPy's sign).
template <typename T>
inline T sgn(T a) {
  if constexpr (std::is_same_v<T, bool>)
    return a;
  else if constexpr (std::is_floating_point_v<T>)
    return a > 0 ? T(1) : a < 0 ? T(-1) : a == 0 ? T(0) : a;
  else if constexpr (std::is_unsigned_v<T>)
    return a > 0 ? T(1) : T(0);
  else
    return a > 0 ? T(1) : a < 0 ? T(-1) : T(0);
}

/// NumPy's divmod for floats (the quotient is floored, the remainder has the divisor's sign).
template <typename T>
inline void float_divmod(T a, T b, T& floordiv, T& mod) {
  mod = std::fmod(a, b);
  if (b == T(0)) {
    floordiv = a / b;
    return;
  }
  T div = (a - mod) / b;
  if (mod != T(0)) {
    if ((b < 0) != (mod < 0)) {
      mod += b;
      div -= T(1);
    }
  } else {
    mod = std::copysign(T(0), b);
  }
  if (div != T(0)) {
    floordiv = std::floor(div);
    if (div - floordiv > T(0.5)) floordiv += T(1);
  } else {
    floordiv = std::copysign(T(0), a / b);
  }
}

/// Floor division (Python's //). Integer division by zero gives 0 (NumPy's result); the
/// overflowing INT_MIN // -1 wraps to INT_MIN.
template <typename T>
inline T int_div(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    T q, r;
    float_divmod(a, b, q, r);
    return q;
  } else if constexpr (std::is_same_v<T, bool>) {
    return b ? a : false;
  } else if constexpr (std::is_unsigned_v<T>) {
    return b == 0 ? T(0) : static_cast<T>(a / b);
  } else {
    if (b == 0) return T(0);
    if (b == T(-1)) return wrap_neg(a);
    T q = static_cast<T>(a / b);
    if ((a % b != 0) && ((a < 0) != (b < 0))) q = static_cast<T>(q - 1);
    return q;
  }
}

/// Python's %: the result has the divisor's sign. Integer modulo by zero gives 0.
template <typename T>
inline T mod(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (b == T(0)) return std::fmod(a, b);
    T q, r;
    float_divmod(a, b, q, r);
    return r;
  } else if constexpr (std::is_same_v<T, bool>) {
    return false;
  } else if constexpr (std::is_unsigned_v<T>) {
    return b == 0 ? T(0) : static_cast<T>(a % b);
  } else {
    if (b == 0 || b == T(-1)) return T(0);
    T r = static_cast<T>(a % b);
    if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
    return r;
  }
}

/// Power. Integers: exact with wrap-around; a negative exponent gives the truncated result
/// (1 for base 1, +-1 for base -1, 0 otherwise; NumPy refuses it).
template <typename T>
inline T pow(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::pow(a, b);
  } else if constexpr (std::is_same_v<T, bool>) {
    return a || !b;
  } else {
    if constexpr (std::is_signed_v<T>) {
      if (b < 0) {
        if (a == 1) return T(1);
        if (a == -1) return (b & 1) ? T(-1) : T(1);
        return T(0);
      }
    }
    T result = 1;
    Unsigned<T> e = static_cast<Unsigned<T>>(b);
    T base = a;
    while (e) {
      if (e & 1u) result = wrap_mul(result, base);
      e = static_cast<Unsigned<T>>(e >> 1);
      if (e) base = wrap_mul(base, base);
    }
    return result;
  }
}

/// NumPy's maximum / minimum: a NaN in either input gives NaN.
template <typename T>
inline T maximum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return (a >= b || a != a) ? a : b;
  else
    return a >= b ? a : b;
}
template <typename T>
inline T minimum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return (a <= b || a != a) ? a : b;
  else
    return a <= b ? a : b;
}

/// PyTensor's Clip (its impl and C code): lo where x < lo, else hi where x > hi, else x. It
/// differs from NumPy's minimum(maximum(x, lo), hi) when lo > hi (x < lo gives lo) and when a
/// bound is NaN (comparisons with NaN are false: x is kept); a NaN x stays NaN in both.
template <typename T>
inline T clip(T x, T lo, T hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

template <typename T>
inline T sqr(T a) {
  return wrap_mul(a, a);
}

template <typename T>
inline T invert(T a) {
  if constexpr (std::is_same_v<T, bool>)
    return !a;
  else
    return static_cast<T>(~a);
}

// sigmoid and softplus are written without branches (one exp of -|x|, a select) so that a
// loop over them vectorises with the vector exp/log1p of generated code; both are accurate to
// about an ulp over the whole range, NaN in -> NaN out, and never overflow.

/// c ? a : b on the bits, without a branch. GCC 12 cannot if-convert a loop in which a branch
/// sits beside calls of vector math functions: written as `?:`, the selects below left W4's
/// training-step loop (sigmoid and softplus of the same z) scalar.
template <typename T>
inline T select_bits(bool c, T a, T b) {
  using U = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  if constexpr (sizeof(T) != sizeof(U) || !std::is_floating_point_v<T>) return c ? a : b;
  U ua, ub;
  __builtin_memcpy(&ua, &a, sizeof a);
  __builtin_memcpy(&ub, &b, sizeof b);
  const U mask = U(0) - U(c);
  const U r = (ua & mask) | (ub & ~mask);
  T out;
  __builtin_memcpy(&out, &r, sizeof out);
  return out;
}

/// 1 / (1 + exp(-x)), as e / (1 + e) with e = exp(x) for negative x.
template <typename T>
inline T sigmoid(T x) {
  const T e = std::exp(-std::fabs(x));
  const T r = T(1) / (T(1) + e);
  return select_bits(x >= T(0), T(1), e) * r;
}

/// log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)): exact to rounding where PyTensor's
/// piecewise form switches to exp(x) (x < -37) or to x (x > 33.3).
template <typename T>
inline T softplus(T x) {
  return select_bits(x > T(0), x, T(0)) + std::log1p(std::exp(-std::fabs(x)));
}

/// log(1 - exp(x)) for x <= 0 (NaN above 0), accurate at both ends.
template <typename T>
inline T log1mexp(T x) {
  if (x < T(-0.6931471805599453)) return std::log1p(-std::exp(x));
  return std::log(-std::expm1(x));
}

template <typename T>
inline T round_half_to_even(T x) {
  return std::nearbyint(x);
}
template <typename T>
inline T round_half_away_from_zero(T x) {
  return std::round(x);
}

/// exp(x^2) * erfc(x), the scaled complementary error function.
inline double erfcx(double x) {
  if (x != x) return x;
  if (x < 0) {
    if (x < -26.7) return std::numeric_limits<double>::infinity();
    double hi = x * x, lo = std::fma(x, x, -hi);
    return 2.0 * std::exp(hi) * (1.0 + lo) - erfcx(-x);
  }
  if (x < 26.0) {
    // exp(x^2) with x^2 split exactly into hi + lo, so the product keeps full precision.
    double hi = x * x, lo = std::fma(x, x, -hi);
    return std::exp(hi) * (1.0 + lo) * std::erfc(x);
  }
  // Asymptotic series: 1/(x sqrt(pi)) * sum (-1)^n (2n-1)!! / (2x^2)^n.
  const double inv_sqrt_pi = 0.5641895835477563;
  double t = 1.0 / (2.0 * x * x), term = 1.0, sum = 1.0;
  for (int n = 1; n < 12; ++n) {
    term *= -(2.0 * n - 1.0) * t;
    sum += term;
  }
  return inv_sqrt_pi / x * sum;
}
inline float erfcx(float x) { return static_cast<float>(erfcx(static_cast<double>(x))); }

/// Inverse error function: Giles' approximation refined by two Newton steps (on erf for
/// |x| <= 0.5, on erfc in the tails).
inline double erfinv(double x) {
  if (x != x || x < -1.0 || x > 1.0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 1.0) return std::numeric_limits<double>::infinity();
  if (x == -1.0) return -std::numeric_limits<double>::infinity();
  if (x == 0.0) return x;
  double w = -std::log((1.0 - x) * (1.0 + x)), p;
  if (w < 6.25) {
    w -= 3.125;
    p = -3.6444120640178196996e-21;
    p = -1.685059138182016589e-19 + p * w;
    p = 1.2858480715256400167e-18 + p * w;
    p = 1.115787767802518096e-17 + p * w;
    p = -1.333171662854620906e-16 + p * w;
    p = 2.0972767875968561637e-17 + p * w;
    p = 6.6376381343583238325e-15 + p * w;
    p = -4.0545662729752068639e-14 + p * w;
    p = -8.1519341976054721522e-14 + p * w;
    p = 2.6335093153082322977e-12 + p * w;
    p = -1.2975133253453532498e-11 + p * w;
    p = -5.4154120542946279317e-11 + p * w;
    p = 1.051212273321532285e-09 + p * w;
    p = -4.1126339803469836976e-09 + p * w;
    p = -2.9070369957882005086e-08 + p * w;
    p = 4.2347877827932403518e-07 + p * w;
    p = -1.3654692000834678645e-06 + p * w;
    p = -1.3882523362786468719e-05 + p * w;
    p = 0.0001867342080340571352 + p * w;
    p = -0.00074070253416626697512 + p * w;
    p = -0.0060336708714301490533 + p * w;
    p = 0.24015818242558961693 + p * w;
    p = 1.6536545626831027356 + p * w;
  } else if (w < 16.0) {
    w = std::sqrt(w) - 3.25;
    p = 2.2137376921775787049e-09;
    p = 9.0756561938885390979e-08 + p * w;
    p = -2.7517406297064545428e-07 + p * w;
    p = 1.8239629214389227755e-08 + p * w;
    p = 1.5027403968909827627e-06 + p * w;
    p = -4.013867526981545969e-06 + p * w;
    p = 2.9234449089955446044e-06 + p * w;
    p = 1.2475304481671778723e-05 + p * w;
    p = -4.7318229009055733981e-05 + p * w;
    p = 6.8284851459573175448e-05 + p * w;
    p = 2.4031110387097893999e-05 + p * w;
    p = -0.0003550375203628474796 + p * w;
    p = 0.00095328937973738049703 + p * w;
    p = -0.0016882755560235047313 + p * w;
    p = 0.0024914420961078508066 + p * w;
    p = -0.0037512085075692412107 + p * w;
    p = 0.005370914553590063617 + p * w;
    p = 1.0052589676941592334 + p * w;
    p = 3.0838856104922207635 + p * w;
  } else {
    w = std::sqrt(w) - 5.0;
    p = -2.7109920616438573243e-11;
    p = -2.5556418169965252055e-10 + p * w;
    p = 1.5076572693500548083e-09 + p * w;
    p = -3.7894654401267369937e-09 + p * w;
    p = 7.6157012080783393804e-09 + p * w;
    p = -1.4960026627149240478e-08 + p * w;
    p = 2.9147953450901080826e-08 + p * w;
    p = -6.7711997758452339498e-08 + p * w;
    p = 2.2900482228026654717e-07 + p * w;
    p = -9.9298272942317002539e-07 + p * w;
    p = 4.5260625972231537039e-06 + p * w;
    p = -1.9681778105531670567e-05 + p * w;
    p = 7.5995277030017761139e-05 + p * w;
    p = -0.00021503011930044477347 + p * w;
    p = -0.00013871931833623122026 + p * w;
    p = 1.0103004648645343977 + p * w;
    p = 4.8499064014085844221 + p * w;
  }
  // Two Newton steps. Near +-1, erf(y) rounds to within an ulp of 1 and erf(y) - x is noise,
  // so the tails solve erfc(|y|) = 1 - |x| instead (1 - |x| is exact for |x| >= 0.5).
  const double two_over_sqrt_pi = 1.1283791670955126;
  const double ax = std::fabs(x);
  double y = std::fabs(p * x);
  for (int i = 0; i < 2; ++i) {
    const double slope = two_over_sqrt_pi * std::exp(-y * y);  // erf'(y) = -erfc'(y)
    if (ax <= 0.5)
      y -= (std::erf(y) - ax) / slope;
    else
      y += (std::erfc(y) - (1.0 - ax)) / slope;
  }
  return std::copysign(y, x);
}
inline float erfinv(float x) { return static_cast<float>(erfinv(static_cast<double>(x))); }

/// Digamma, with scipy's special values: psi(+0) = -inf, psi(-0) = +inf, NaN at negative
/// integers and -inf, psi(+inf) = +inf.
inline double psi(double x) {
  const double inf = std::numeric_limits<double>::infinity();
  if (x != x || x == inf) return x;
  if (x == 0) return std::signbit(x) ? inf : -inf;
  const double pi = 3.141592653589793;
  double result = 0.0;
  if (x < 0) {
    // Reflection: psi(x) = psi(1 - x) - pi / tan(pi x). tan(pi x) has period 1, so it is taken
    // of x's distance to the nearest integer (exact, within [-1/2, 1/2]), which keeps pi * x
    // from losing the digits that matter next to an integer.
    const double near = x - std::round(x);
    if (near == 0) return std::numeric_limits<double>::quiet_NaN();
    result = -pi / std::tan(pi * near);
    x = 1.0 - x;
  }
  // Recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, where the asymptotic series below,
  // truncated after x^-14, is accurate to ~1e-17 (at x >= 6 it would only be ~2e-13).
  while (x < 10.0) {
    result -= 1.0 / x;
    x += 1.0;
  }
  const double f = 1.0 / (x * x);
  const double series =
      f * (-1.0 / 12 +
           f * (1.0 / 120 +
                f * (-1.0 / 252 +
                     f * (1.0 / 240 + f * (-1.0 / 132 + f * (691.0 / 32760 + f * (-1.0 / 12)))))));
  return result + std::log(x) - 0.5 / x + series;
}
inline float psi(float x) { return static_cast<float>(psi(static_cast<double>(x))); }

/// Trigamma psi'(x) = sum over k >= 0 of 1/(x + k)^2 (psi's derivative), with scipy's
/// polygamma(1, x) special values: +inf at 0 and the negative integers (poles of order two),
/// NaN at -inf and NaN, 0 at +inf.
inline double trigamma(double x) {
  const double inf = std::numeric_limits<double>::infinity();
  if (x != x || x == -inf) return std::numeric_limits<double>::quiet_NaN();
  if (x == inf) return 0.0;
  const double pi = 3.141592653589793;
  double reflected = 0.0, sign = 1.0;
  if (x <= 0) {
    // Reflection: psi'(x) = pi^2 / sin^2(pi x) - psi'(1 - x), sin^2 (period 1) taken of x's
    // distance to the nearest integer, as psi does.
    const double near = x - std::round(x);
    if (near == 0) return inf;
    const double s = std::sin(pi * near);
    reflected = (pi / s) * (pi / s);
    sign = -1.0;
    x = 1.0 - x;
  }
  // Recurrence psi'(x) = psi'(x + n) + sum of 1/(x + i)^2 for i < n, up to x + n >= 16, where
  // the asymptotic series 1/x + 1/(2x^2) + sum B_2k / x^(2k+1), truncated after x^-15, is
  // accurate to ~4e-19 relative. The recurrence terms are added smallest first.
  const int n = x < 16.0 ? static_cast<int>(16.0 - x) + 1 : 0;
  const double y = x + n;
  const double r = 1.0 / y, f = r * r;
  double sum = r + f * (0.5 + r * (1.0 / 6 + f * (-1.0 / 30 + f * (1.0 / 42 + f * (-1.0 / 30 +
                 f * (5.0 / 66 + f * (-691.0 / 2730 + f * (7.0 / 6))))))));
  for (int i = n - 1; i >= 0; --i) {
    const double xi = x + i;
    sum += 1.0 / (xi * xi);
  }
  return reflected + sign * sum;
}
inline float trigamma(float x) { return static_cast<float>(trigamma(static_cast<double>(x))); }

/// log|gamma(x)| without touching the global `signgam` (safe to call from several threads).
inline double gammaln(double x) {
#if defined(__GLIBC__)
  int sign;
  return ::lgamma_r(x, &sign);
#else
  return std::lgamma(x);
#endif
}
inline float gammaln(float x) {
#if defined(__GLIBC__)
  int sign;
  return ::lgammaf_r(x, &sign);
#else
  return std::lgamma(x);
#endif
}

}  // namespace kiln_scalar
