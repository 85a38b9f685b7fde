// kiln runtime, special functions: the inverses of the regularized incomplete gamma functions,
// gammaincinv(a, p) (x with P(a, x) = p) and gammainccinv(a, q) (x with Q(a, x) = q),
// scipy.special's.
//
// Whichever of P = p and Q = 1 - p has the smaller right-hand side is solved (so the target is
// exact), by Newton's method on log P or log Q as a function of log x — nearly linear at both
// ends, where P ~ x^a / Gamma(a + 1) and Q ~ x^(a-1) e^-x / Gamma(a) — kept inside a bracket
// that every evaluation narrows. Initial guesses: Wilson and Hilferty's cube-root normal
// approximation for a >= 1, the leading terms of P or Q below that.
#pragma once

#include <cmath>

#include "kiln/runtime/special/incomplete_gamma.hpp"
#include "kiln/runtime/special/normal_inverse.hpp"

namespace kiln_special {

namespace igam_detail {

/// A starting point for P(a, x) = target (lower) or Q(a, x) = target, target <= 1/2.
inline double inverse_guess(double a, double target, bool lower) {
  if (a >= 1) {
    const double s = lower ? ndtri(target) : -ndtri(target);
    const double c = 1.0 - 1.0 / (9 * a) + s / (3 * std::sqrt(a));
    if (c > 0.1) return a * c * c * c;
  }
  if (lower) return std::exp((std::log(target) + lgamma1p(a)) / a);  // P ~ x^a / Gamma(a + 1)
  // Q ~ x^(a-1) e^-x / Gamma(a): x = -log(target Gamma(a)) + (a - 1) log x, iterated.
  const double base = -(std::log(target) + kiln_scalar::gammaln(a));
  double x = base > 1 ? base : 1.0;
  for (int i = 0; i < 4; ++i) x = std::fmax(base + (a - 1) * std::log(x), 0.5);
  return x;
}

/// x >= 0 with P(a, x) = target (lower) or Q(a, x) = target, for finite a > 0 and
/// 0 < target <= 1/2.
inline double incomplete_gamma_inverse(double a, double target, bool lower) {
  const double log_target = std::log(target);
  double lo = -kInf, hi = kInf;  // bracket on t = log x: h(lo) < 0 < h(hi)
  // Whether the root lies at or below the smallest double (a tiny): P(a, x_min) >= p already
  // (Q(a, x_min) <= q).
  const double x_min = 4.9406564584124654e-324;
  const auto below_x_min = [&] {
    const double f = lower ? incomplete_gamma(a, x_min).p : incomplete_gamma(a, x_min).q;
    return lower ? f >= target : f <= target;
  };
  double t = std::log(inverse_guess(a, target, lower));
  if (t < -745) {  // the guess underflows
    if (below_x_min()) return 0.0;
    t = std::log(x_min);
  }
  for (int iter = 0; iter < 200; ++iter) {
    const double x = std::exp(t);
    const PQ<double> r = incomplete_gamma(a, x);
    const double f = lower ? r.p : r.q;
    // h increases with t: log P - log p, or log q - log Q.
    const double h = lower ? std::log(f) - log_target : log_target - std::log(f);
    if (h == 0) break;  // to the polishing: log f is coarser than f
    (h < 0 ? lo : hi) = t;
    const double slope = gamma_prefix(a, x) / f;  // d log P / d log x = x P'(x) / P
    double next = t - h / slope;
    if (!(next > lo && next < hi)) {  // Newton left the bracket (or h is infinite): bisect
      if (std::isfinite(lo) && std::isfinite(hi)) {
        next = 0.5 * (lo + hi);
      } else {
        next = t + (h < 0 ? 1.0 : -1.0) * std::fmax(1.0, std::fabs(t));
      }
    }
    if (std::fabs(next - t) <= 1e-16 * std::fmax(1.0, std::fabs(t)) || next == t) {
      t = next;
      break;
    }
    t = next;
    if (hi - lo <= 4e-16 * std::fmax(1.0, std::fabs(t))) break;
  }
  // The iteration can walk into the underflow from a guess that did not.
  if (t < -744 && below_x_min()) return 0.0;
  // x = e^t has the relative precision of t, |t| ulps: up to two Newton steps on x itself
  // restore full precision.
  double x = std::exp(t);
  for (int i = 0; i < 2 && x > 0 && std::isfinite(x); ++i) {
    const PQ<double> r = incomplete_gamma(a, x);
    const double f = (lower ? r.p : r.q) - target;
    const double slope = (lower ? 1.0 : -1.0) * gamma_prefix(a, x) / x;  // dP/dx = x^(a-1) e^-x / Gamma(a)
    const double next = x - f / slope;
    if (!(next > 0.5 * x && next < 2 * x)) break;
    x = next;
  }
  return x;
}

/// The common special values, or false for an ordinary point (a > 0 finite, 0 < y < 1):
/// NaN for NaN, a < 0, a = inf, y outside [0, 1], and for a = 0 inside (0, 1); the ends of
/// [0, 1] map to 0 and inf.
inline bool inverse_special(double a, double y, bool lower, double& x) {
  if (a != a || y != y || a < 0 || a == kInf || y < 0 || y > 1) {
    x = kNaN;
    return true;
  }
  if (y == 0 || y == 1) {
    x = (y == 0) == lower ? 0.0 : kInf;
    return true;
  }
  if (a == 0) {
    x = kNaN;
    return true;
  }
  return false;
}

}  // namespace igam_detail

/// x with P(a, x) = p (scipy.special.gammaincinv).
inline double gammaincinv(double a, double p) {
  double x;
  if (igam_detail::inverse_special(a, p, true, x)) return x;
  if (p <= 0.5) return igam_detail::incomplete_gamma_inverse(a, p, true);
  return igam_detail::incomplete_gamma_inverse(a, 1.0 - p, false);  // 1 - p exact
}
inline float gammaincinv(float a, float p) { return static_cast<float>(gammaincinv(double(a), double(p))); }

/// x with Q(a, x) = q (scipy.special.gammainccinv).
inline double gammainccinv(double a, double q) {
  double x;
  if (igam_detail::inverse_special(a, q, false, x)) return x;
  if (q <= 0.5) return igam_detail::incomplete_gamma_inverse(a, q, false);
  return igam_detail::incomplete_gamma_inverse(a, 1.0 - q, true);
}
inline float gammainccinv(float a, float q) { return static_cast<float>(gammainccinv(double(a), double(q))); }

}  // namespace kiln_special
