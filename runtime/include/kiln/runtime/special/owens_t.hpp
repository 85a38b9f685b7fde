// kiln runtime, special functions: Owen's T function
// T(h, a) = (1 / 2 pi) int_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2) dx (scipy.special.owens_t).
//
// T is even in h and odd in a. For 0 < a <= 1 the integral is taken by 20-point Gauss-Legendre
// quadrature of exp(-h^2 x^2 / 2) / (1 + x^2) on panels no wider than 2/h (the integrand is
// entire but for the poles at +-i, one unit away: each panel's rule is exact to ~1e-25), with
// exp(-h^2 / 2) factored out exactly; the part beyond x = 9/h is below e^-40 of the rest and
// is dropped. For a > 1, Owen's identity T(h, a) = (Phi(h) Q(ah) + Phi(ah) Q(h)) / 2 -
// T(ah, 1/a) (h >= 0) maps back to a < 1, losing at most a factor of two to cancellation.
#pragma once

#include <algorithm>
#include <cmath>
#include <initializer_list>

#include "kiln/runtime/special/common.hpp"

namespace kiln_special {

namespace owens_detail {

constexpr double kNodes[10] = {0.076526521133497333755, 0.22778585114164507808, 0.37370608871541956067,
                               0.510867001950827098,    0.63605368072651502545, 0.74633190646015079261,
                               0.83911697182221882339,  0.91223442825132590587, 0.96397192727791379127,
                               0.99312859918509492479};
constexpr double kWeights[10] = {0.1527533871307258507,  0.14917298647260374679, 0.14209610931838205133,
                                 0.1316886384491766269,  0.11819453196151841731, 0.10193011981724043504,
                                 0.083276741576704748725, 0.06267204833410906357, 0.040601429800386941331,
                                 0.017614007139152118312};

/// T(h, a) for h >= 0 and 0 < a <= 1.
inline double small_a(double h, double a) {
  const double upper = h * a > 9 ? 9 / h : a;  // beyond 9/h the integrand is below e^-40.5
  const int panels = std::max(1, int(std::ceil(upper * h / 2)));
  const double width = upper / panels;
  double sum = 0;
  for (int p = 0; p < panels; ++p) {
    const double center = (p + 0.5) * width, half = 0.5 * width;
    for (int i = 0; i < 10; ++i) {
      for (const double x : {center - half * kNodes[i], center + half * kNodes[i]})
        sum += kWeights[i] * exp_neg_half_square(h * x) / (1 + x * x);
    }
  }
  return exp_neg_half_square(h) * sum * (0.5 * width) / (2 * kPi);
}

}  // namespace owens_detail

/// Owen's T function T(h, a): even in h, odd in a; T(h, inf) = Q(|h|) / 2, T(0, a) =
/// atan(a) / (2 pi), T(inf, a) = 0.
inline double owens_t(double h, double a) {
  if (h != h || a != a) return kNaN;
  const double sign = a < 0 ? -1.0 : 1.0;
  h = std::fabs(h);
  a = std::fabs(a);
  if (a == 0 || h == kInf) return sign * 0.0;
  if (a == kInf) return sign * 0.5 * normal_upper_tail(h);
  if (h == 0) return sign * std::atan(a) / (2 * kPi);
  if (a <= 1) return sign * owens_detail::small_a(h, a);
  const double ah = a * h;
  const double q_h = normal_upper_tail(h), q_ah = normal_upper_tail(ah);
  const double both = 0.5 * ((1 - q_h) * q_ah + (1 - q_ah) * q_h);
  return sign * (both - (ah == kInf ? 0.0 : owens_detail::small_a(ah, 1 / a)));
}
inline float owens_t(float h, float a) { return static_cast<float>(owens_t(double(h), double(a))); }

}  // namespace kiln_special
