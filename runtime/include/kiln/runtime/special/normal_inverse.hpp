// kiln runtime, special functions: the inverse complementary error function erfcinv and the
// normal quantile of a log-probability ndtri_exp (scipy.special's), and ndtri for the initial
// guesses of the incomplete gamma and beta inverses.
//
// Both reduce to one tail problem: t >= 0 with log(erfc(t)) = log_y. It is solved by Newton's
// method on log(erfcx(t)) - t^2 - log_y (erfc(t) = erfcx(t) exp(-t^2), t^2 split exactly), which
// never forms exp(-t^2): it works for log_y down to -1.8e308, where erfc(t) itself underflows.
#pragma once

#include <cmath>

#include "kiln/runtime/special/common.hpp"

namespace kiln_special {

namespace ninv_detail {

/// t >= 0 with log(erfc(t)) = log_y, for log_y <= log(1/2) (t >= 0.477).
inline double erfc_tail_inverse(double log_y) {
  double t;
  if (log_y > -34.5) {
    t = kiln_scalar::erfinv(1.0 - std::exp(log_y));  // within ~1e-9 relative
  } else {
    // erfc(t) ~ exp(-t^2) / (t sqrt(pi)): t^2 = L - log(t) with L = -log_y - log(sqrt(pi)).
    const double big = -log_y - 0.5723649429247001;
    t = std::sqrt(big);
    t = std::sqrt(big - std::log(t));
  }
  for (int i = 0; i < 8; ++i) {
    const double hi = t * t, lo = std::fma(t, t, -hi);
    const double e = kiln_scalar::erfcx(t);
    const double f = (std::log(e) - (hi + log_y)) - lo;  // hi + log_y: nearly cancelling, exact
    const double step = f * 0.5 * kSqrtPi * e;            // -f / f', f' = -2 / (sqrt(pi) erfcx(t))
    t += step;
    if (std::fabs(step) <= 1e-16 * t) break;
  }
  return t;
}

}  // namespace ninv_detail

/// The inverse complementary error function: erfc(erfcinv(y)) = y for 0 <= y <= 2; +inf at 0,
/// -inf at 2, NaN outside.
inline double erfcinv(double y) {
  if (!(y >= 0 && y <= 2)) return kNaN;
  if (y == 0) return kInf;
  if (y > 1) return -erfcinv(2.0 - y);                    // exact for y in [1, 2]
  if (y >= 0.5) return kiln_scalar::erfinv(1.0 - y);      // exact for y in [1/2, 1]
  return ninv_detail::erfc_tail_inverse(std::log(y));
}
inline float erfcinv(float y) { return static_cast<float>(erfcinv(double(y))); }

/// The standard normal quantile: Phi(ndtri(p)) = p for 0 <= p <= 1.
inline double ndtri(double p) {
  if (!(p >= 0 && p <= 1)) return kNaN;
  if (p <= 0.5) return -kSqrt2 * erfcinv(2.0 * p);
  return kSqrt2 * erfcinv(2.0 * (1.0 - p));  // 1 - p exact for p >= 1/2
}

/// The normal quantile of exp(y): ndtri(exp(y)) for y <= 0, accurate also where exp(y)
/// underflows or rounds to 1 (scipy.special.ndtri_exp). +inf at 0, -inf at -inf, NaN above 0.
inline double ndtri_exp(double y) {
  if (!(y <= 0)) return kNaN;
  if (y == 0) return kInf;
  if (y == -kInf) return -kInf;
  constexpr double ln2_hi = 0.6931471805599453, ln2_lo = 2.3190468138462996e-17;  // hi + lo = log 2
  if (y < -2 * kLn2) return -kSqrt2 * ninv_detail::erfc_tail_inverse(y + kLn2);  // p < 1/4
  if (y <= -0.28768207245178093) {  // p <= 3/4: 2p - 1 = expm1(y + log 2), y + ln2_hi exact
    return kSqrt2 * kiln_scalar::erfinv(std::expm1((y + ln2_hi) + ln2_lo));
  }
  return kSqrt2 * erfcinv(-2.0 * std::expm1(y));  // erfcinv(2 (1 - p))
}
inline float ndtri_exp(float y) { return static_cast<float>(ndtri_exp(double(y))); }

}  // namespace kiln_special
