// kiln runtime, special functions: the Gauss hypergeometric function 2F1(a, b; c; z) for real
// arguments (scipy.special.hyp2f1).
//
// Special cases as scipy's: 1 at z = 0 and for a or b = 0; (1 - z)^-b when c = a; a polynomial
// when a or b is a nonpositive integer (infinite if c reaches a pole first); +inf for c a
// nonpositive integer otherwise, for z > 1 and at z = 1 when c - a - b <= 0 (Gauss's sum
// otherwise). Elsewhere: the power series for 0 <= z <= 0.9; Pfaff's transformation
// 2F1(a, b; c; z) = (1 - z)^-a 2F1(a, c - b; c; z / (z - 1)) for z < 0, whose argument lies in
// (0, 1); and the transformation to 1 - z (DLMF 15.8.4) when that argument or z itself is above
// 0.9 — with its logarithmic limit form (Abramowitz and Stegun 15.3.10-11) when c - a - b is an
// integer. The series terms are summed with compensation. The 1 - z form cancels when
// c - a - b is close to (not at) an integer, losing about log10(1 / distance) digits, and the
// series cancels when large parameters of mixed sign make its terms grow before they fall.
#pragma once

#include <cmath>

#include "kiln/runtime/special/common.hpp"

namespace kiln_special {

namespace hyp2f1_detail {

inline bool is_nonpositive_integer(double v) { return v <= 0 && std::floor(v) == v; }

/// Neumaier's compensated sum.
struct Sum {
  double sum = 0, compensation = 0;
  void add(double v) {
    const double t = sum + v;
    compensation += std::fabs(sum) >= std::fabs(v) ? (sum - t) + v : (v - t) + sum;
    sum = t;
  }
  double value() const { return sum + compensation; }
};

/// The power series sum (a)_k (b)_k / ((c)_k k!) z^k for |z| < 1 (or a terminating one).
inline double series(double a, double b, double c, double z) {
  Sum s;
  s.add(1.0);
  double term = 1.0;
  for (int k = 0; k < 2000000; ++k) {
    // A terminating series ends before (c)_k's zero when b = c (or a = c) is a nonpositive
    // integer: (b + k) (c + k) would give 0/0.
    if (a + k == 0 || b + k == 0) break;
    const double ratio = (a + k) * (b + k) / ((c + k) * (k + 1.0)) * z;
    term *= ratio;
    if (term == 0) break;
    s.add(term);
    if (std::fabs(term) <= 0.25 * kEps * std::fabs(s.value()) && std::fabs(ratio) < 1) break;
  }
  return s.value();
}

/// Gamma(x) with its sign, as log|Gamma(x)| and sign (x not a pole).
inline double log_abs_gamma(double x, double& sign) {
  sign = (x > 0 || std::fmod(std::floor(x), 2.0) == 0) ? 1.0 : -1.0;
  return kiln_scalar::gammaln(x);
}

/// Gamma(n1) Gamma(n2) / (Gamma(d1) Gamma(d2)); 0 when a denominator argument is a pole.
inline double gamma_ratio(double n1, double n2, double d1, double d2) {
  if (is_nonpositive_integer(d1) || is_nonpositive_integer(d2)) return 0.0;
  const double direct = std::tgamma(n1) * std::tgamma(n2) / (std::tgamma(d1) * std::tgamma(d2));
  if (std::isfinite(direct) && direct != 0) return direct;
  double s1, s2, s3, s4;
  const double l = log_abs_gamma(n1, s1) + log_abs_gamma(n2, s2) - log_abs_gamma(d1, s3) - log_abs_gamma(d2, s4);
  return s1 * s2 * s3 * s4 * std::exp(l);
}

/// 2F1 by the transformation to w = 1 - z (DLMF 15.8.4), for 0 < w < 1/10 (non-polynomial, c
/// not a pole; w passed separately, exact): Gamma(c) Gamma(m) / (Gamma(c-a) Gamma(c-b))
/// 2F1(a, b; 1-m; w) + w^m Gamma(c) Gamma(-m) / (Gamma(a) Gamma(b)) 2F1(c-a, c-b; 1+m; w),
/// m = c - a - b. For an integer m — or one within rounding of an integer, as when c was
/// computed as a + b + k — its limit (Abramowitz and Stegun 15.3.10-11, m < 0 through Euler's
/// 2F1(a, b; c; z) = (1-z)^m 2F1(c-a, c-b; c; z)).
inline double one_minus_z(double a, double b, double c, double z, double w) {
  double m = c - a - b;
  const double nearest = std::round(m);
  if (std::fabs(m - nearest) <= 8 * kEps * std::fmax(1.0, std::fmax(std::fabs(c), std::fabs(a) + std::fabs(b))))
    m = nearest;
  // c - a or c - b a nonpositive integer: Euler's transformation terminates.
  if (is_nonpositive_integer(c - a) || is_nonpositive_integer(c - b)) return std::pow(w, m) * series(c - a, c - b, c, z);
  if (m != nearest) {
    const double first = gamma_ratio(c, m, c - a, c - b);
    const double second = gamma_ratio(c, -m, a, b);
    return (first == 0 ? 0.0 : first * series(a, b, 1 - m, w)) +
           (second == 0 ? 0.0 : second * std::pow(w, m) * series(c - a, c - b, 1 + m, w));
  }
  if (m < 0) return std::pow(w, m) * one_minus_z(c - a, c - b, c, z, w);
  // m = 0, 1, 2, ...: Gamma(m) Gamma(c) / (Gamma(a+m) Gamma(b+m)) sum_(n<m) (a)_n (b)_n /
  // (n! (1-m)_n) w^n - (-w)^m Gamma(c) / (Gamma(a) Gamma(b)) sum_n (a+m)_n (b+m)_n / (n! (n+m)!) w^n
  // (log w - psi(n+1) - psi(n+m+1) + psi(a+n+m) + psi(b+n+m)).
  const int mi = int(m);
  Sum finite;
  if (mi > 0) {
    double term = 1.0;
    for (int n = 0; n < mi; ++n) {
      finite.add(term);
      term *= (a + n) * (b + n) / ((n + 1.0) * (1.0 - m + n)) * w;
    }
  }
  const double front = mi > 0 ? gamma_ratio(m, c, a + m, b + m) : 0.0;
  double psi_n1 = -kEulerGamma, psi_nm1 = kiln_scalar::psi(m + 1);
  double psi_a = kiln_scalar::psi(a + m), psi_b = kiln_scalar::psi(b + m);
  double term = 1.0 / std::tgamma(m + 1);  // (a+m)_n (b+m)_n w^n / (n! (n+m)!)
  const double log_w = std::log(w);
  Sum infinite;
  for (int n = 0; n < 1000000; ++n) {
    const double add = term * (log_w - psi_n1 - psi_nm1 + psi_a + psi_b);
    infinite.add(add);
    if (n > 2 && std::fabs(add) <= 0.25 * kEps * std::fabs(infinite.value())) break;
    term *= (a + m + n) * (b + m + n) / ((n + 1.0) * (n + m + 1.0)) * w;
    psi_n1 += 1.0 / (n + 1);
    psi_nm1 += 1.0 / (n + m + 1);
    psi_a += 1.0 / (a + m + n);
    psi_b += 1.0 / (b + m + n);
  }
  const double back = gamma_ratio(c, 1.0, a, b);
  return front * finite.value() - (mi % 2 ? -1.0 : 1.0) * std::pow(w, m) * back * infinite.value();
}

/// 2F1 for z < 1 once the special cases are out of the way.
inline double general(double a, double b, double c, double z) {
  if (z >= 0) return z <= 0.9 ? series(a, b, c, z) : one_minus_z(a, b, c, z, 1 - z);
  // Pfaff: (1 - z)^-a 2F1(a, c - b; c; w) or (1 - z)^-b 2F1(b, c - a; c; w), w = z / (z - 1),
  // the one with the smaller power (as scipy).
  const double w = z / (z - 1), one_minus_w = 1 / (1 - z);
  const bool use_a = std::fabs(a) < std::fabs(b);
  const double p = use_a ? a : b, q = use_a ? c - b : c - a;
  const double inner = is_nonpositive_integer(q) || w <= 0.9 ? series(p, q, c, w) : one_minus_z(p, q, c, w, one_minus_w);
  return std::pow(1 - z, -p) * inner;
}

}  // namespace hyp2f1_detail

/// The Gauss hypergeometric function 2F1(a, b; c; z).
inline double hyp2f1(double a, double b, double c, double z) {
  using namespace hyp2f1_detail;
  if (a != a || b != b || c != c || z != z) return kNaN;
  if (z == 0) return 1.0;
  if ((a == 0 || b == 0) && c != 0) return 1.0;
  if (c == a) return std::pow(1 - z, -b);
  if (std::isinf(c) && std::isfinite(a) && std::isfinite(b)) return 1.0;
  if (std::isinf(a) || std::isinf(b) || std::isinf(c)) return z > 0 && z < 1 ? kInf : kNaN;
  const bool poly_a = is_nonpositive_integer(a), poly_b = is_nonpositive_integer(b);
  if (is_nonpositive_integer(c) && !((poly_a && a >= c) || (poly_b && b >= c))) return kInf;
  if (poly_a || poly_b) return std::isinf(z) ? kNaN : series(a, b, c, z);  // terminates
  if (c == b) return std::pow(1 - z, -a);
  if (std::isinf(z)) return kNaN;
  if (z > 1) return kInf;
  if (z == 1) return c - a - b > 0 ? gamma_ratio(c, c - a - b, c - a, c - b) : kInf;
  return general(a, b, c, z);
}
inline float hyp2f1(float a, float b, float c, float z) {
  return static_cast<float>(hyp2f1(double(a), double(b), double(c), double(z)));
}

}  // namespace kiln_special
