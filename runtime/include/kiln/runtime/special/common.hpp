// kiln runtime, special functions: what the special-function pieces share — constants,
// exact squares, log(1 + x) - x, log Gamma(1 + x) near 0, Stirling's Gamma*(a), the normal
// tail — written once, templated on the number type where the incomplete gamma and beta
// functions differentiate through them (special/dual.hpp).
//
// Like scalar_math.hpp, every piece of special/ is embedded into generated code, but only into
// libraries whose graphs call one of its functions (codegen/cpp/special_math_select.h), and
// each piece names the pieces it needs by #include. Self-contained C++17, header-only.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "kiln/runtime/scalar_math.hpp"

namespace kiln_special {

constexpr double kPi = 3.14159265358979323846;
constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kSqrtPi = 1.77245385090551602730;
constexpr double kSqrt2Pi = 2.50662827463100050242;
constexpr double kLn2 = 0.69314718055994530942;
constexpr double kEulerGamma = 0.57721566490153286061;
constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The elementary functions the templated algorithms call unqualified: for double they are
// <cmath>'s; special/dual.hpp adds the same names for Dual.
inline double exp(double x) { return std::exp(x); }
inline double expm1(double x) { return std::expm1(x); }
inline double log(double x) { return std::log(x); }
inline double log1p(double x) { return std::log1p(x); }
inline double sqrt(double x) { return std::sqrt(x); }
inline double fabs(double x) { return std::fabs(x); }
inline double pow(double x, double y) { return std::pow(x, y); }
inline double value(double x) { return x; }
inline double erfcx(double x) { return kiln_scalar::erfcx(x); }
inline double tgamma(double x) { return std::tgamma(x); }
inline double lgamma(double x) { return kiln_scalar::gammaln(x); }

/// True when a series or continued fraction has converged: the last change `step` of the
/// accumulated `total` is below tol relative to it (special/dual.hpp: for both parts of a Dual).
inline bool converged(double step, double total, double tol) {
  return std::fabs(step) <= tol * std::fabs(total);
}

/// exp(-x^2 / 2) with x^2 split exactly into hi + lo, so the result keeps full precision
/// however large x^2 is (exp(-x * x / 2) loses x^2 / 2 ulps to the rounding of x * x).
inline double exp_neg_half_square(double x) {
  const double hi = x * x, lo = std::fma(x, x, -hi);
  return std::exp(-0.5 * hi) * (1.0 - 0.5 * lo);
}

/// log(1 + x) - x, accurate also where it is tiny: for |x| <= 1/2 from the series of
/// 2 atanh(s) - x with s = x / (2 + x), whose terms shrink by s^2 <= 1/9.
template <typename T>
T log1pmx(T x) {
  if (fabs(value(x)) > 0.5) return log1p(x) - x;
  const T s = x / (2.0 + x), s2 = s * s;
  T term = s * s2, sum = term / 3.0;
  for (int k = 5; k < 60; k += 2) {
    term = term * s2;
    const T add = term / double(k);
    sum = sum + add;
    if (fabs(value(add)) <= 1e-17 * fabs(value(sum))) break;
  }
  return 2.0 * sum - x * x / (2.0 + x);
}

/// zeta(k) - 1 for k = 2, 3, ..., 31 (for log Gamma(1 + x) near 0).
constexpr double kZetaMinusOne[] = {
    0.64493406684822643647,    0.2020569031595942854,     0.082323233711138191516,
    0.036927755143369926331,   0.017343061984449139715,   0.0083492773819228268398,
    0.0040773561979443393787,  0.0020083928260822144179,  0.00099457512781808533715,
    0.0004941886041194645587,  0.00024608655330804829864, 0.00012271334757848914675,
    6.1248135058704829259e-5,  3.0588236307020493552e-5,  1.5282259408651871733e-5,
    7.6371976378997622736e-6,  3.8172932649998398565e-6,  1.9082127165539389257e-6,
    9.5396203387279611315e-7,  4.7693298678780646312e-7,  2.3845050272773299e-7,
    1.1921992596531107307e-7,  5.9608189051259479612e-8,  2.9803503514652280186e-8,
    1.4901554828365041235e-8,  7.450711789835429492e-9,   3.7253340247884570548e-9,
    1.8626597235130490064e-9,  9.3132743241966818287e-10, 4.656629065033784073e-10};

/// log Gamma(1 + x) for |x| <= 1/2: -gamma x - log1pmx(x) + sum (-1)^k (zeta(k) - 1) x^k / k,
/// whose terms shrink like (x/2)^k — accurate where Gamma(1 + x) is close to 1.
template <typename T>
T lgamma1p_small(T x) {
  T sum = 0.0 * x, power = x;
  for (int k = 2; k <= 31; ++k) {
    power = power * x;
    const T add = (k % 2 == 0 ? 1.0 : -1.0) * kZetaMinusOne[k - 2] / double(k) * power;
    sum = sum + add;
    if (fabs(value(add)) <= 1e-17 * fabs(value(sum))) break;
  }
  return sum - kEulerGamma * x - log1pmx(x);
}

/// log Gamma(1 + x) for x > -1, accurate (relative) also near x = 0 and x = 1 where the
/// result is near 0.
inline double lgamma1p(double x) {
  if (std::fabs(x) <= 0.5) return lgamma1p_small(x);
  if (x > 0.5 && x <= 1.5) return std::log1p(x - 1.0) + lgamma1p_small(x - 1.0);  // x - 1 exact
  return kiln_scalar::gammaln(1.0 + x);
}

/// log Gamma*(a) = log Gamma(a) - (a - 1/2) log a + a - log sqrt(2 pi), Stirling's series for
/// a >= 10 (terms B_2k / (2k (2k - 1) a^(2k-1)), truncated after a^-15: error < 3e-17).
template <typename T>
T log_gamma_star_large(T a) {
  const T r = 1.0 / a, r2 = r * r;
  return r * (1.0 / 12 + r2 * (-1.0 / 360 + r2 * (1.0 / 1260 + r2 * (-1.0 / 1680 + r2 * (1.0 / 1188 +
         r2 * (-691.0 / 360360 + r2 * (1.0 / 156 + r2 * (-3617.0 / 122400))))))));
}

/// Gamma*(a) = Gamma(a) / (sqrt(2 pi) a^(a - 1/2) e^-a) for a > 0: Stirling's series from 10 up,
/// the definition below.
inline double gamma_star(double a) {
  if (a >= 10) return std::exp(log_gamma_star_large(a));
  return std::tgamma(a) * std::exp(a) / (kSqrt2Pi * std::pow(a, a - 0.5));
}

/// sin(pi x), exact at the integers and accurate next to them (x is reduced exactly first).
inline double sinpi(double x) {
  if (!std::isfinite(x)) return kNaN;
  double r = std::fmod(x, 2.0);  // exact
  if (r < 0) r += 2.0;
  if (r > 1.0) return -sinpi(r - 1.0);
  if (r == 0.0 || r == 1.0) return 0.0;
  if (r > 0.5) r = 1.0 - r;  // exact
  return std::sin(kPi * r);
}
/// cos(pi x), exact zeros at the half-integers.
inline double cospi(double x) {
  if (!std::isfinite(x)) return kNaN;
  double r = std::fmod(std::fabs(x), 2.0);
  if (r > 1.0) r = 2.0 - r;  // cos(pi r) for r in [0, 1]
  if (r == 0.5) return 0.0;
  if (r > 0.5) return -std::sin(kPi * (r - 0.5));
  return std::sin(kPi * (0.5 - r));
}

/// The standard normal upper tail Q(h) = P(Z > h) = erfc(h / sqrt 2) / 2, accurate also far in
/// the tail: erfcx carries the slowly varying part and exp(-h^2/2) takes the exact square.
inline double normal_upper_tail(double h) {
  if (h != h) return h;
  if (h < 1.0) return 0.5 * std::erfc(h / kSqrt2);
  return 0.5 * kiln_scalar::erfcx(h / kSqrt2) * exp_neg_half_square(h);
}

}  // namespace kiln_special
