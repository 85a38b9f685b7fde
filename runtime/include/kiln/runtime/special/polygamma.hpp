// kiln runtime, special functions: the polygamma function psi^(n)(x), the (n+1)-th derivative
// of log Gamma (scipy.special.polygamma): psi for n = 0 (accurate also next to its positive root), trigamma for n = 1, and
// (-1)^(n+1) n! zeta(n + 1, x) above, the Hurwitz zeta summed directly up to x + N >=
// max(10, n + 1) and by Euler and Maclaurin's formula beyond. Negative non-integer x are
// summed directly too (the series converges for every x off the poles). The terms are scaled
// by the largest one, so n! and x^-(n+1) may overflow and underflow on their own.
#pragma once

#include <cmath>
#include <cstdint>

#include "kiln/runtime/special/common.hpp"

namespace kiln_special {

namespace polygamma_detail {

/// B_2j / (2j)!, j = 1..13.
constexpr double kBernoulliOverFactorial[13] = {
    0.083333333333333329,    -0.0013888888888888889,   3.3068783068783071e-05,  -8.2671957671957675e-07,
    2.08767569878681e-08,    -5.2841901386874932e-10, 1.3382536530684679e-11,  -3.3896802963225827e-13,
    8.5860620562778452e-15,  -2.1748686985580619e-16, 5.5090028283602295e-18,  -1.3954464685812522e-19,
    3.5347070396294673e-21};

/// zeta(s, x) / |base|^-s for integer s >= 2 and x off the poles, where base is the term of the
/// series sum (x + k)^-s nearest zero; `base` receives it.
inline double scaled_hurwitz_zeta(double s, double x, double& base) {
  const double y_min = std::fmax(10.0, s + 1);
  // The direct terms: k = 0 .. N-1 with x + N >= y_min.
  const int terms = x >= y_min ? 0 : int(std::ceil(y_min - x));
  base = x < 0 ? x + std::round(-x) : x;  // the term nearest the pole x + k = 0
  const double scale = std::fabs(base);
  // Neumaier's compensated sum: for negative x the terms change sign.
  double sum = 0, compensation = 0;
  auto add = [&](double v) {
    const double t = sum + v;
    compensation += std::fabs(sum) >= std::fabs(v) ? (sum - t) + v : (v - t) + sum;
    sum = t;
  };
  for (int k = terms - 1; k >= 0; --k) add(std::pow(scale / (x + k), s));
  // Euler-Maclaurin at y: y^(1-s) / (s-1) + y^-s / 2 + sum_j B_2j / (2j)! (s)_(2j-1) y^(1-s-2j).
  const double y = x + terms, ratio = std::pow(scale / y, s);
  if (ratio > 0) {
    double tail = y / (s - 1) + 0.5, rising = s, inverse = 1.0 / y;  // rising: (s)_(2j-1)
    for (int j = 0; j < 13; ++j) {
      const double t = kBernoulliOverFactorial[j] * rising * inverse;
      tail += t;
      if (std::fabs(t) < 1e-17 * tail) break;
      rising *= (s + 2 * j + 1) * (s + 2 * j + 2);
      inverse /= y * y;
    }
    add(ratio * tail);
  }
  return sum + compensation;
}

/// psi(x), with Taylor's series sum psi^(k)(x0) / k! (x - x0)^k next to psi's positive root x0,
/// where kiln_scalar::psi's recurrence cancels to a few correct digits (x - x0 formed with x0 in
/// two parts); kiln_scalar::psi elsewhere.
inline double digamma(double x) {
  if (!(x > 1.2 && x < 1.75)) return kiln_scalar::psi(x);
  constexpr double x0_hi = 1.4616321449683622, x0_lo = 9.549995429965697e-17;
  constexpr double c[24] = {
      0.9676722454476212,     -0.44276316898359208,    0.25849976095565103,    -0.16394270544240652,
      0.10782405069126237,    -0.072199561256454714,   0.04880428816414311,    -0.033161126474847362,
      0.022597648232218104,   -0.01542476590494896,    0.010538791616612175,   -0.0072045343863568687,
      0.0049267813957298533,  -0.0033698016554393282,  0.002305126326734928,   -0.0015769367714301972,
      0.0010788252019162967,  -0.00073807093899600515, 0.00050495326583460199, -0.00034546802510630769,
      0.00023635601564027053, -0.00016170622091974803, 0.0001106337276874741,  -7.5691795821950661e-05};
  const double d = (x - x0_hi) - x0_lo;
  double sum = 0.0;
  for (int k = 23; k >= 0; --k) sum = sum * d + c[k];
  return sum * d;
}

}  // namespace polygamma_detail

/// psi^(n)(x) for an integer order n >= 0 (NaN for n < 0, as scipy's). For n >= 1:
/// (-1)^(n+1) inf at x = -inf, 0 and the negative integers, (-1)^(n+1) 0 at x = +inf.
inline double polygamma(std::int64_t n, double x) {
  if (x != x || n < 0) return kNaN;
  if (n == 0) return polygamma_detail::digamma(x);
  const double sign = n % 2 == 1 ? 1.0 : -1.0;  // (-1)^(n+1)
  if (x == kInf) return sign * 0.0;
  if (x == -kInf || (x <= 0 && std::floor(x) == x)) return sign * kInf;
  if (n == 1) return kiln_scalar::trigamma(x);
  const double s = double(n) + 1;
  double base;
  const double scaled = polygamma_detail::scaled_hurwitz_zeta(s, x, base);
  // n! |base|^-s scaled, directly where nothing overflows or underflows, else by logarithms.
  const double factorial = n <= 170 ? std::tgamma(s) : kInf, power = std::pow(std::fabs(base), -s);
  const double direct = factorial * power * scaled;
  if (std::isfinite(direct) && power > 1e-290 && std::fabs(direct) > 1e-290) return sign * direct;
  const double log_magnitude = kiln_scalar::gammaln(s) - s * std::log(std::fabs(base)) + std::log(std::fabs(scaled));
  return sign * std::copysign(std::exp(log_magnitude), scaled);
}
inline float polygamma(std::int64_t n, float x) { return static_cast<float>(polygamma(n, double(x))); }

}  // namespace kiln_special
