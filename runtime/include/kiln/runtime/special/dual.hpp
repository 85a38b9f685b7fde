// kiln runtime, special functions: forward-mode derivatives. A Dual carries a value and its
// derivative with respect to one parameter; the incomplete gamma and beta algorithms are
// templated on the number type, so running them on Duals gives their parameter derivatives
// (d/da gammainc, d/da and d/db betainc) with the accuracy of the algorithm itself — the
// series, continued fractions and asymptotic expansions are differentiated term by term.
#pragma once

#include <cmath>

#include "kiln/runtime/special/common.hpp"

namespace kiln_special {

/// A value and its derivative with respect to one parameter.
struct Dual {
  double v = 0, d = 0;
  Dual() = default;
  Dual(double value) : v(value) {}  // NOLINT: constants promote implicitly, as in formulas
  Dual(double value, double derivative) : v(value), d(derivative) {}
};

inline double value(const Dual& x) { return x.v; }

inline Dual operator-(const Dual& a) { return {-a.v, -a.d}; }
inline Dual operator+(const Dual& a, const Dual& b) { return {a.v + b.v, a.d + b.d}; }
inline Dual operator-(const Dual& a, const Dual& b) { return {a.v - b.v, a.d - b.d}; }
inline Dual operator*(const Dual& a, const Dual& b) { return {a.v * b.v, a.d * b.v + a.v * b.d}; }
inline Dual operator/(const Dual& a, const Dual& b) {
  const double q = a.v / b.v;
  return {q, (a.d - q * b.d) / b.v};
}
inline Dual operator+(const Dual& a, double b) { return {a.v + b, a.d}; }
inline Dual operator+(double a, const Dual& b) { return {a + b.v, b.d}; }
inline Dual operator-(const Dual& a, double b) { return {a.v - b, a.d}; }
inline Dual operator-(double a, const Dual& b) { return {a - b.v, -b.d}; }
inline Dual operator*(const Dual& a, double b) { return {a.v * b, a.d * b}; }
inline Dual operator*(double a, const Dual& b) { return {a * b.v, a * b.d}; }
inline Dual operator/(const Dual& a, double b) { return {a.v / b, a.d / b}; }
inline Dual operator/(double a, const Dual& b) {
  const double q = a / b.v;
  return {q, -q * b.d / b.v};
}
inline bool operator<(const Dual& a, const Dual& b) { return a.v < b.v; }
inline bool operator>(const Dual& a, const Dual& b) { return a.v > b.v; }

inline Dual exp(const Dual& x) {
  const double e = std::exp(x.v);
  return {e, e * x.d};
}
inline Dual expm1(const Dual& x) { return {std::expm1(x.v), std::exp(x.v) * x.d}; }
inline Dual log(const Dual& x) { return {std::log(x.v), x.d / x.v}; }
inline Dual log1p(const Dual& x) { return {std::log1p(x.v), x.d / (1.0 + x.v)}; }
inline Dual sqrt(const Dual& x) {
  const double s = std::sqrt(x.v);
  return {s, x.d / (2.0 * s)};
}
inline Dual fabs(const Dual& x) { return x.v < 0 ? -x : x; }
/// x^y for a constant base.
inline Dual pow(double x, const Dual& y) {
  const double p = std::pow(x, y.v);
  return {p, p * std::log(x) * y.d};
}
/// x^y, both varying (x > 0).
inline Dual pow(const Dual& x, const Dual& y) {
  const double p = std::pow(x.v, y.v);
  return {p, p * (y.d * std::log(x.v) + y.v * x.d / x.v)};
}
/// x^y for a constant exponent.
inline Dual pow(const Dual& x, double y) {
  const double p = std::pow(x.v, y);
  return {p, y * std::pow(x.v, y - 1.0) * x.d};
}

/// erfcx(x) = exp(x^2) erfc(x); its derivative is 2 x erfcx(x) - 2 / sqrt(pi).
inline Dual erfcx(const Dual& x) {
  const double e = kiln_scalar::erfcx(x.v);
  return {e, (2.0 * x.v * e - 2.0 / kSqrtPi) * x.d};
}

/// Gamma(x) and log Gamma(x) (x > 0): derivatives through digamma.
inline Dual tgamma(const Dual& x) {
  const double g = std::tgamma(x.v);
  return {g, g * kiln_scalar::psi(x.v) * x.d};
}
inline Dual lgamma(const Dual& x) { return {kiln_scalar::gammaln(x.v), kiln_scalar::psi(x.v) * x.d}; }

/// log Gamma(1 + x) for x > -1 (see lgamma1p in common.hpp).
inline Dual lgamma1p(const Dual& x) {
  if (std::fabs(x.v) <= 0.5) return lgamma1p_small(x);
  return {lgamma1p(x.v), kiln_scalar::psi(1.0 + x.v) * x.d};
}

/// Gamma*(a) for a > 0 (see gamma_star in common.hpp); d/da log Gamma*(a) =
/// psi(a) - log(a) + 1 / (2a).
inline Dual gamma_star(const Dual& a) {
  if (a.v >= 10) return exp(log_gamma_star_large(a));
  const double g = gamma_star(a.v);
  return {g, g * (kiln_scalar::psi(a.v) - std::log(a.v) + 0.5 / a.v) * a.d};
}

/// converged() of common.hpp for Duals: value and derivative both settled.
inline bool converged(const Dual& step, const Dual& total, double tol) {
  return std::fabs(step.v) <= tol * std::fabs(total.v) && std::fabs(step.d) <= tol * std::fabs(total.d);
}

}  // namespace kiln_special
