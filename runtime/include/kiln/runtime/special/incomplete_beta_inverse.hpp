// kiln runtime, special functions: the inverse of the regularized incomplete beta function,
// betaincinv(a, b, y) = x with I_x(a, b) = y (scipy.special's).
//
// Whichever of I_x(a, b) = y and 1 - I_x(a, b) = 1 - y has the smaller right-hand side is
// solved (the target is then exact), by Newton's method on log I (or log(1 - I)) as a function
// of log x (or log(1 - x), for a root near 1), safeguarded by a bracket. The initial guess is
// the normal approximation of Abramowitz and Stegun 26.5.22 for a, b >= 1, the leading power
// of I at the nearer end of [0, 1] otherwise.
#pragma once

#include <cmath>

#include "kiln/runtime/special/incomplete_beta.hpp"

namespace kiln_special {

namespace ibeta_detail {

/// A starting point for I_x(a, b) = y.
inline double inverse_guess(double a, double b, double y) {
  if (a >= 1 && b >= 1) {
    const double pp = y < 0.5 ? y : 1.0 - y;
    const double t = std::sqrt(-2.0 * std::log(pp));
    double z = (2.30753 + t * 0.27061) / (1.0 + t * (0.99229 + t * 0.04481)) - t;
    if (y < 0.5) z = -z;
    const double al = (z * z - 3.0) / 6.0;
    const double h = 2.0 / (1.0 / (2 * a - 1) + 1.0 / (2 * b - 1));
    const double w = z * std::sqrt(al + h) / h - (1.0 / (2 * b - 1) - 1.0 / (2 * a - 1)) * (al + 5.0 / 6 - 2.0 / (3 * h));
    return a / (a + b * std::exp(2 * w));
  }
  // I ~ x^a / (a B) near 0 and 1 - I ~ y^b / (b B) near 1; t and u are their values at the mean.
  const double lna = std::log(a / (a + b)), lnb = std::log(b / (a + b));
  const double t = std::exp(a * lna) / a, u = std::exp(b * lnb) / b, w = t + u;
  if (y < t / w) return std::pow(a * w * y, 1.0 / a);
  return 1.0 - std::pow(b * w * (1.0 - y), 1.0 / b);
}

/// The root found in log space, e = x (or 1 - x near one), has the relative precision of its
/// logarithm, |log e| ulps: up to two Newton steps on e itself restore full precision.
inline double polish(double a, double b, double target, bool lower, bool near_one, double e) {
  for (int i = 0; i < 2 && e > 0 && e < 1; ++i) {
    const double x = near_one ? 1.0 - e : e, y = near_one ? e : 1.0 - e;
    const PQ<double> r = incomplete_beta(a, b, x, y);
    const double f = (lower ? r.p : r.q) - target;
    // dF/de = +-x^(a-1) y^(b-1) / B: + for the lower tail in x, the sign flips with each swap.
    const double slope = (lower != near_one ? 1.0 : -1.0) * prefix(a, b, x, y, true) / (x * y);
    const double next = e - f / slope;
    if (!(next > 0.5 * e && next < 2 * e)) break;  // not a polishing step: keep what we have
    e = next;
  }
  return near_one ? 1.0 - e : e;
}

/// x with I_x(a, b) = target (lower) or 1 - I_x(a, b) = target, for finite a, b > 0 and
/// 0 < target <= 1/2.
inline double incomplete_beta_inverse(double a, double b, double target, bool lower) {
  const double guess = inverse_guess(a, b, lower ? target : 1.0 - target);
  // Newton in u = log x for a root in the lower half, u = log(1 - x) in the upper half.
  const bool near_one = guess > 0.5;
  const double log_target = std::log(target);
  double lo = -kInf, hi = 0.0;  // bracket on u: h(lo) < 0 < h(hi)
  double u = near_one ? std::log1p(-guess) : std::log(guess);
  if (!(u < 0)) u = -kLn2;
  if (u < -745) u = -745;
  for (int iter = 0; iter < 300; ++iter) {
    const double e = std::exp(u), x = near_one ? 1.0 - e : e, y = near_one ? e : 1.0 - e;
    if (x == 0 || y == 0) return x;
    const PQ<double> r = incomplete_beta(a, b, x, y);
    const double f = lower ? r.p : r.q;
    // h rises with u: F(u) - target rises with x for the lower tail (u = log x), ...
    const double sign = (lower != near_one) ? 1.0 : -1.0;
    const double h = sign * (std::log(f) - log_target);
    if (h == 0) break;  // to the polishing: log f is coarser than f
    (h < 0 ? lo : hi) = u;
    // d log F / du = (dF/dx) (dx/du) / F with dF/dx = +-x^(a-1) y^(b-1) / B and dx/du = x or -y.
    const double slope = prefix(a, b, x, y, true) / ((near_one ? x : y) * f);
    double next = u - h / slope;
    if (!(next > lo && next < hi)) {  // Newton left the bracket (or h is infinite): bisect
      next = std::isfinite(lo) ? 0.5 * (lo + hi) : (h < 0 ? 0.5 * u : 2 * u - 1);
    }
    if (std::fabs(next - u) <= 1e-16 * std::fmax(1.0, std::fabs(u)) || next == u) {
      u = next;
      break;
    }
    u = next;
  }
  return polish(a, b, target, lower, near_one, std::exp(u));
}

}  // namespace ibeta_detail

/// x with I_x(a, b) = y (scipy.special.betaincinv). NaN for NaN, negative or zero a or b,
/// a = b = inf and y outside [0, 1]; 0 at y = 0 and b = inf, 1 at y = 1 and a = inf.
inline double betaincinv(double a, double b, double y) {
  if (a != a || b != b || y != y || !(a > 0) || !(b > 0) || y < 0 || y > 1 || (a == kInf && b == kInf))
    return kNaN;
  if (y == 0 || b == kInf) return 0.0;
  if (y == 1 || a == kInf) return 1.0;
  if (y <= 0.5) return ibeta_detail::incomplete_beta_inverse(a, b, y, true);
  return ibeta_detail::incomplete_beta_inverse(a, b, 1.0 - y, false);  // 1 - y exact
}
inline float betaincinv(float a, float b, float y) {
  return static_cast<float>(betaincinv(double(a), double(b), double(y)));
}

}  // namespace kiln_special
