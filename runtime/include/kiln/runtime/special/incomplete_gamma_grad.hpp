// kiln runtime, special functions: d/da of the regularized incomplete gamma function P(a, x),
// the parameter gradient of gammainc and (negated) of gammaincc. PyTensor sums series in
// ScalarLoops for it (gammainc_grad, gammaincc_grad); kiln runs the value's own algorithm on
// Duals (special/dual.hpp), so the derivative is as accurate as the value in every region.
#pragma once

#include "kiln/runtime/special/dual.hpp"
#include "kiln/runtime/special/incomplete_gamma.hpp"

namespace kiln_special {

/// d/da P(a, x) (= -d/da Q(a, x)). NaN where P is; 0 at x = 0, x = inf and a = inf, where P is
/// constant; NaN at a = 0, where P jumps.
inline double gammainc_grad_k(double a, double x) {
  double p;
  if (igam_detail::incomplete_gamma_special(a, x, p)) return p != p || a == 0 ? kNaN : 0.0;
  return igam_detail::incomplete_gamma(Dual(a, 1.0), x).p.d;
}
inline float gammainc_grad_k(float a, float x) {
  return static_cast<float>(gammainc_grad_k(double(a), double(x)));
}

}  // namespace kiln_special
