// kiln runtime, special functions: d/da and d/db of the regularized incomplete beta function
// I_x(a, b), the parameter gradients of betainc. PyTensor sums Boik and Robison-Cox's
// derivative of the continued fraction in a ScalarLoop (betainc_grad); kiln runs the value's
// own algorithm on Duals (special/dual.hpp), so the derivatives are as accurate as the value.
#pragma once

#include "kiln/runtime/special/dual.hpp"
#include "kiln/runtime/special/incomplete_beta.hpp"

namespace kiln_special {

namespace ibeta_detail {

/// d/da (wrt_a) or d/db of I_x(a, b): NaN where betainc is NaN and at a = 0 or b = 0, where I
/// jumps; 0 where I is constant (x = 0, x = 1, an infinite parameter).
inline double incomplete_beta_grad(double a, double b, double x, bool wrt_a) {
  double p;
  if (incomplete_beta_special(a, b, x, p)) {
    if (p != p || ((a == 0 || b == 0) && x > 0 && x < 1)) return kNaN;
    return 0.0;
  }
  const Dual da(a, wrt_a ? 1.0 : 0.0), db(b, wrt_a ? 0.0 : 1.0);
  return incomplete_beta(da, db, x, 1.0 - x).p.d;
}

}  // namespace ibeta_detail

/// d/da I_x(a, b).
inline double betainc_grad_a(double a, double b, double x) {
  return ibeta_detail::incomplete_beta_grad(a, b, x, true);
}
inline float betainc_grad_a(float a, float b, float x) {
  return static_cast<float>(betainc_grad_a(double(a), double(b), double(x)));
}

/// d/db I_x(a, b).
inline double betainc_grad_b(double a, double b, double x) {
  return ibeta_detail::incomplete_beta_grad(a, b, x, false);
}
inline float betainc_grad_b(float a, float b, float x) {
  return static_cast<float>(betainc_grad_b(double(a), double(b), double(x)));
}

}  // namespace kiln_special
