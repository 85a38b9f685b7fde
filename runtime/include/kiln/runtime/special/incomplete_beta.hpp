// kiln runtime, special functions: the regularized incomplete beta function
// I_x(a, b) = betainc(a, b, x) (scipy.special's), and the machinery its inverse and its
// parameter gradients share.
//
// With y = 1 - x, I_x(a, b) = 1 - I_y(b, a): the side where the function is small is computed
// directly — by the power series in x when b x <= 1 and x <= 0.95, otherwise by the continued
// fraction of I_x(a, b) for x <= a / (a + b), of I_y(b, a) above. The factor
// x^a y^b / B(a, b) in front goes through Stirling's Gamma* when a and b are large, so that the
// huge, nearly cancelling logarithms never meet. Templates on the number type: on Duals
// (special/dual.hpp) they give d/da and d/db with the value.
#pragma once

#include <cmath>

#include "kiln/runtime/special/common.hpp"

namespace kiln_special {

namespace ibeta_detail {

template <typename T>
struct PQ {
  T p, q;  // I_x(a, b) and 1 - I_x(a, b)
};

/// log x and log y for x + y = 1, from whichever of the two is exact (the smaller one).
inline void log_pair(double x, double y, double& log_x, double& log_y) {
  log_x = x <= 0.5 ? std::log(x) : std::log1p(-y);
  log_y = y <= 0.5 ? std::log(y) : std::log1p(-x);
}

/// log(Gamma(a + b) / Gamma(b)) for b >= 10, by Stirling: (b - 1/2) log1p(a/b) + a log(a + b) - a
/// + log Gamma*(a + b) - log Gamma*(b), with no large cancelling terms.
template <typename T>
T log_gamma_ratio(T a, T b) {
  const T s = a + b;
  return (b - 0.5) * log1p(a / b) + a * log(s) - a + log_gamma_star_large(s) - log_gamma_star_large(b);
}

/// s x - a with one rounding (an fma); for a Dual the derivative part is exact anyway.
inline double mul_sub(double s, double x, double a) { return std::fma(s, x, -a); }
template <typename T>
T mul_sub(const T& s, double x, const T& a) {
  return s * x - a;
}

/// The rounding error of value(a) + value(b), exactly (Knuth's two-sum), as a constant.
template <typename T>
double sum_error(const T& a, const T& b) {
  const double av = value(a), bv = value(b), s = av + bv, bb = s - av;
  return (av - (s - bb)) + (bv - bb);
}

/// log(Gamma(b + a) / Gamma(b)), accurate (relative) also for small a: Stirling's form from
/// b >= 10, shifted there by Gamma(b + 1) = b Gamma(b) below.
template <typename T>
T log_gamma_shift(T a, T b) {
  T shift = 0.0 * a;
  while (value(b) < 10) {
    shift = shift + log1p(a / b);
    b = b + 1.0;
  }
  return log_gamma_ratio(a, b) - shift;
}

/// x^a y^b / B(a, b) (with_y) or x^a / B(a, b), for a, b > 0 and x + y = 1, 0 < x < 1, the
/// smaller of x and y exact.
template <typename T>
T prefix(T a, T b, double x, double y, bool with_y) {
  double log_x, log_y;
  log_pair(x, y, log_x, log_y);
  const double av = value(a), bv = value(b);
  if (av >= 10 && bv >= 10) {
    // sqrt(ab / (2 pi (a+b))) (x (a+b) / a)^a (y (a+b) / b)^b Gamma*(a+b) / (Gamma*(a) Gamma*(b)).
    // With t = b x - a y: x (a+b)/a = 1 + t/a and y (a+b)/b = 1 - t/b, and the first-order
    // terms of a log(1 + t/a) + b log(1 - t/b) cancel: a log1pmx(t/a) + b log1pmx(-t/b). The
    // result is as sensitive to t as to x, so t = (a + b) x - a is formed from the exact one of
    // x and y with one rounding (a + b carried with its rounding error).
    const T s = a + b;
    const double s_err = sum_error(a, b);
    const T t = x <= 0.5 ? mul_sub(s, x, a) + s_err * x : -(mul_sub(s, y, b) + s_err * y);
    const T ua = t / a, ub = -t / b;
    const T ea = value(ua) < -0.9 ? a * log(x * s / a) - t : a * log1pmx(ua);
    const T eb = value(ub) < -0.9 ? b * log(y * s / b) + t : b * log1pmx(ub);
    T exponent = ea + eb;
    if (!with_y) exponent = exponent - b * log_y;
    return sqrt(a * b / (2.0 * kPi * s)) * exp(exponent) *
           exp(log_gamma_star_large(s) - log_gamma_star_large(a) - log_gamma_star_large(b));
  }
  // 1/B(a, b) = Gamma(a+b) / (Gamma(a) Gamma(b)) = exp(log(Gamma(large + small) / Gamma(large))) /
  // Gamma(small): Gamma of the rounded sum a + b would cost psi(a+b) (a+b) / 2 ulps.
  const bool a_small = av <= bv;
  const T small = a_small ? a : b, large = a_small ? b : a;
  const T log_ratio = log_gamma_shift(small, large);
  const T log_y_term = with_y ? b * log_y : 0.0 * b;
  // The powers directly where they are normal numbers (pow of the exact one of x and y keeps
  // full precision), logarithms otherwise.
  const T xa = x <= 0.5 ? pow(x, a) : exp(a * log_x);
  const T yb = !with_y ? 1.0 + 0.0 * b : y <= 0.5 ? pow(y, b) : exp(log_y_term);
  const T r = xa * yb * (exp(log_ratio) / tgamma(small));
  if (value(xa) > 1e-290 && value(yb) > 1e-290 && std::isfinite(value(r)) && value(r) > 1e-290) return r;
  return exp(a * log_x + log_y_term + log_ratio - lgamma(small));
}

/// I_x(a, b) by its power series x^a / B(a, b) [1/a + sum (1 - b)_n x^n / (n! (a + n))], for
/// b x <= 1 and x <= 0.95.
template <typename T>
T power_series(T a, T b, double x, double y) {
  T term = 1.0 + 0.0 * a, sum = 1.0 / a;  // term: (1 - b)_n x^n / n!
  for (int n = 1; n < 10000; ++n) {
    term = term * ((double(n) - b) * (x / n));
    const T add = term / (a + double(n));
    sum = sum + add;
    if (converged(add, sum, 0.5 * kEps)) break;
  }
  return prefix(a, b, x, y, false) * sum;
}

/// 1 - I_x(a, b) where the power series applies (b x <= 1, x <= 0.95) and I_x(a, b) is above
/// 1/2: with K = x^a / (a B(a, b)) and S the series' tail, 1 - K (1 + a S) = -expm1(log K) -
/// K a S, log K = a log x - log Gamma(1 + a) + log(Gamma(a + b) / Gamma(b)) — accurate where K
/// is within an ulp of 1 (small a), where subtracting the series' value would lose it all.
template <typename T>
T power_series_complement(T a, T b, double x) {
  T term = 1.0 + 0.0 * a, sum = 0.0 * a;
  for (int n = 1; n < 10000; ++n) {
    term = term * ((double(n) - b) * (x / n));
    const T add = term / (a + double(n));
    sum = sum + add;
    if (converged(add, sum, 0.5 * kEps)) break;
  }
  const T log_k = a * std::log(x) - lgamma1p(a) + log_gamma_shift(a, b);
  return -expm1(log_k) - exp(log_k) * a * sum;
}

/// The n-th partial numerator of the continued fraction I_x(a, b) = x^a y^b / (a B(a, b)) /
/// (1 + d_1 / (1 + d_2 / (1 + ...))).
template <typename T>
T fraction_term(int n, T a, T b, double x) {
  const int m = n / 2;
  if (n % 2 == 0) return double(m) * (b - double(m)) * x / ((a + double(2 * m - 1)) * (a + double(2 * m)));
  return -((a + double(m)) * (a + b + double(m)) * x) / ((a + double(2 * m)) * (a + double(2 * m + 1)));
}

/// I_x(a, b) by its continued fraction, for x <= (a + 1) / (a + b + 2) where it converges fast.
/// A forward (Lentz) pass in double finds the depth; the fraction is then summed backward,
/// which keeps rounding errors from compounding over many terms.
template <typename T>
T continued_fraction(T a, T b, double x, double y) {
  const double av = value(a), bv = value(b), tiny = 1e-300;
  double c = 1.0, d = 0.0;
  int depth = 1;
  for (; depth < 10000000; ++depth) {
    const double an = fraction_term(depth, av, bv, x);
    d = 1.0 + an * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1.0 + an / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    if (std::fabs(c * d - 1.0) <= 0.5 * kEps) break;
  }
  depth += 4 + depth / 8;  // margin, also for the derivative of a Dual
  T f = 1.0 + 0.0 * a;
  for (int n = depth; n >= 3; --n) f = 1.0 + fraction_term(n, a, b, x) / f;
  // f_1 = 1 + d_1 / f_2 with f_2 = 1 + d_2 / f_3: near x = (a + 1) / (a + b) the leading
  // 1 + d_1 = ((a + 1) - (a + b) x) / (a + 1) nearly cancels, so it is formed from the exact one
  // of x and y with one rounding, and f_1 = ((1 + d_1) + d_2 / f_3) / f_2.
  const T s = a + b, a1 = a + 1.0;
  const double s_err = sum_error(a, b), a1_err = sum_error(a, T(1.0 + 0.0 * a));
  T numerator;
  if (x <= 0.5) {
    numerator = -mul_sub(s, x, a1) + a1_err - s_err * x;  // (a + 1) - (a + b) x
  } else {
    const T one_minus_b = 1.0 - b;
    numerator = mul_sub(s, y, -one_minus_b) + sum_error(T(1.0 + 0.0 * a), -b) + s_err * y;  // 1 - b + s y
  }
  const T tail = fraction_term(2, a, b, x) / f;  // f_2 - 1
  const T f1 = (numerator / a1 + tail) / (1.0 + tail);
  return prefix(a, b, x, y, true) / (a * f1);
}

/// How I_x(a, b) can be computed directly: 1 by the power series (b x <= 1, x <= 0.95), 2 by the
/// continued fraction (x <= (a + 1) / (a + b + 2), where it converges fast), 0 not at all. The
/// fraction's condition holds for exactly one of I_x(a, b) and I_y(b, a) (or both).
inline int direct_method(double a, double b, double x) {
  if (b * x <= 1 && x <= 0.95) return 1;
  return x <= (a + 1) / (a + b + 2) ? 2 : 0;
}

template <typename T>
T direct(int method, T a, T b, double x, double y) {
  return method == 1 ? power_series(a, b, x, y) : continued_fraction(a, b, x, y);
}

/// I_x(a, b) = p and its complement, given p computed by `method` and found above 1/2.
template <typename T>
PQ<T> with_complement(int method, const T& p, int method_q, T a, T b, double x, double y) {
  if (method == 1) return {p, power_series_complement(a, b, x)};
  if (method_q != 0) {
    const T q = direct(method_q, b, a, y, x);
    return {1.0 - q, q};
  }
  return {p, 1.0 - p};
}

/// I_x(a, b) and 1 - I_x(a, b) for finite a, b > 0 and 0 < x < 1 (y = 1 - x, the smaller of the
/// two exact), each accurate relative to itself where it is the smaller.
template <typename T>
PQ<T> incomplete_beta(T a, T b, double x, double y) {
  const double av = value(a), bv = value(b);
  const int method_p = direct_method(av, bv, x), method_q = direct_method(bv, av, y);
  // The side below the mean a / (a + b) is usually the small one; where it is not (a parameter
  // below 1 puts most of the mass at an end), the other side is computed directly too.
  const bool p_first = method_q == 0 || (method_p != 0 && x <= av / (av + bv));
  if (p_first) {
    const T p = direct(method_p, a, b, x, y);
    if (value(p) <= 0.5) return {p, 1.0 - p};
    return with_complement(method_p, p, method_q, a, b, x, y);
  }
  const T q = direct(method_q, b, a, y, x);
  if (value(q) <= 0.5) return {1.0 - q, q};
  const PQ<T> r = with_complement(method_q, q, method_p, b, a, y, x);
  return {r.q, r.p};
}

/// scipy's special values, or false for an ordinary point (a, b > 0 finite, 0 < x < 1): NaN for
/// NaN, negative a or b, x outside [0, 1], a = b = 0 and a = b = inf; 0 at x = 0, at b = 0 and
/// at a = inf; 1 at x = 1, at a = 0 and at b = inf.
inline bool incomplete_beta_special(double a, double b, double x, double& p) {
  if (a != a || b != b || x != x || a < 0 || b < 0 || x < 0 || x > 1 || (a == 0 && b == 0) ||
      (a == kInf && b == kInf)) {
    p = kNaN;
    return true;
  }
  if (x == 0 || x == 1) {
    p = x;
    return true;
  }
  if (a == 0 || b == kInf) {
    p = 1.0;
    return true;
  }
  if (b == 0 || a == kInf) {
    p = 0.0;
    return true;
  }
  return false;
}

}  // namespace ibeta_detail

/// The regularized incomplete beta function I_x(a, b) (scipy.special.betainc).
inline double betainc(double a, double b, double x) {
  double p;
  if (ibeta_detail::incomplete_beta_special(a, b, x, p)) return p;
  return ibeta_detail::incomplete_beta(a, b, x, 1.0 - x).p;
}
inline float betainc(float a, float b, float x) {
  return static_cast<float>(betainc(double(a), double(b), double(x)));
}

}  // namespace kiln_special
