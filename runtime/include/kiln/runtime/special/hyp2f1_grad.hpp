// kiln runtime, special functions: the parameter derivatives of 2F1(a, b; c; z) — d/da
// (d/db by symmetry: 2F1 is symmetric in a and b) and d/dc, the gradients of hyp2f1.
//
// PyTensor sums the derivative of the power series in a ScalarLoop for |z| < 1 (NaN outside,
// except for polynomials). kiln differentiates the series on Duals (special/dual.hpp): the
// power series itself for 0 <= z < 1, Pfaff's transformation (1 - z)^-a 2F1(a, c - b; c;
// z / (z - 1)) for z < 0 — which also covers z <= -1, where PyTensor gives NaN — and Gauss's
// closed form at z = 1. Like PyTensor's loop the series stops after 10^6 terms, so very close
// to z = 1 the result is a partial sum. Where a or b is a nonpositive integer the value is a
// polynomial but its derivative is not: kiln returns the true derivative (PyTensor's loop
// stops where the value's series ends).
#pragma once

#include <cmath>

#include "kiln/runtime/special/dual.hpp"
#include "kiln/runtime/special/hyp2f1.hpp"

namespace kiln_special {

namespace hyp2f1_detail {

/// The power series on Duals, for |z| < 1: the derivative part is the term-by-term derivative.
inline Dual dual_series(Dual a, Dual b, Dual c, double z) {
  Dual term = 1.0, sum = 1.0;
  for (int k = 0; k < 1000000; ++k) {
    const Dual ratio = (a + double(k)) * (b + double(k)) / ((c + double(k)) * double(k + 1)) * z;
    term = term * ratio;
    sum = sum + term;
    if (term.v == 0 && term.d == 0) break;
    if (k > 10 && std::fabs(ratio.v) < 1 && converged(term, sum, 0.25 * kEps)) break;
  }
  return sum;
}

/// d/da (wrt_a) or d/dc of 2F1(a, b; c; z).
inline double parameter_grad(double a, double b, double c, double z, bool wrt_a) {
  if (a != a || b != b || c != c || z != z || std::isinf(a) || std::isinf(b) || std::isinf(c) ||
      std::isinf(z) || z > 1 || is_nonpositive_integer(c))
    return kNaN;
  if (z == 0) return 0.0;
  const Dual da(a, wrt_a ? 1.0 : 0.0), db(b, 0.0), dc(c, wrt_a ? 0.0 : 1.0);
  if (z == 1) {
    // Gauss: Gamma(c) Gamma(c-a-b) / (Gamma(c-a) Gamma(c-b)), differentiated through digamma.
    const double m = c - a - b;
    if (!(m > 0)) return kNaN;
    const double f = hyp2f1(a, b, c, z);
    using kiln_scalar::psi;
    return wrt_a ? f * (psi(c - a) - psi(m)) : f * (psi(c) + psi(m) - psi(c - a) - psi(c - b));
  }
  if (z > 0) return dual_series(da, db, dc, z).d;
  // Pfaff: (1 - z)^-a 2F1(a, c - b; c; z / (z - 1)).
  const double w = z / (z - 1);
  return (pow(1 - z, -da) * dual_series(da, dc - db, dc, w)).d;
}

}  // namespace hyp2f1_detail

/// d/da 2F1(a, b; c; z) (d/db is hyp2f1_grad_a(b, a, c, z)).
inline double hyp2f1_grad_a(double a, double b, double c, double z) {
  return hyp2f1_detail::parameter_grad(a, b, c, z, true);
}
inline float hyp2f1_grad_a(float a, float b, float c, float z) {
  return static_cast<float>(hyp2f1_grad_a(double(a), double(b), double(c), double(z)));
}

/// d/dc 2F1(a, b; c; z).
inline double hyp2f1_grad_c(double a, double b, double c, double z) {
  return hyp2f1_detail::parameter_grad(a, b, c, z, false);
}
inline float hyp2f1_grad_c(float a, float b, float c, float z) {
  return static_cast<float>(hyp2f1_grad_c(double(a), double(b), double(c), double(z)));
}

}  // namespace kiln_special
