// kiln runtime, special functions: modified Bessel functions — i0, i1, the exponentially
// scaled ive(v, x) = I_v(x) e^-|x| and kve(v, x) = K_v(x) e^x of real order (scipy.special's).
//
// For order nu >= 0 and x > 0: Debye's uniform expansions from nu = 50 up; the large-argument
// expansions for x >= max(40, nu^2); otherwise K at the order mu = nu - round(nu) (|mu| <= 1/2)
// by Temme's series (x <= 1) or Steed's continued fraction (x > 1), recurred upward to nu, and
// I from the Wronskian I_nu K_(nu+1) + I_(nu+1) K_nu = 1/x with I_(nu+1) / I_nu from its
// continued fraction (summed backward) — or, for x <= 2, I by its power series. Negative orders
// by reflection: K_-nu = K_nu, I_-nu = I_nu + (2/pi) sin(nu pi) K_nu.
#pragma once

#include <cmath>

#include "kiln/runtime/special/bessel_common.hpp"

namespace kiln_special {

namespace bessel_detail {

/// e^-x I_nu(x) and e^x K_nu(x).
struct ScaledIK {
  double i, k;
};

/// Debye's uniform expansions (DLMF 10.41.3-4) for nu >= 50, any x > 0:
/// I_nu(nu z) ~ e^(nu eta) / (sqrt(2 pi nu) (1 + z^2)^(1/4)) sum U_k(p) / nu^k, K likewise with
/// e^(-nu eta) and alternating signs, p = (1 + z^2)^(-1/2), eta - z taken without cancellation.
inline ScaledIK ik_debye(double nu, double x) {
  const double z = x / nu, s = std::hypot(1.0, z);
  // eta - z = sqrt(1 + z^2) - z + log(z / (1 + sqrt(1 + z^2))).
  const double eta_minus_z = z < 1 ? (s - z) + (std::log(z) - std::log1p(s)) : 1.0 / (s + z) - std::asinh(1.0 / z);
  double plus, alternating;
  debye_sums(nu, 1.0 / s, plus, alternating);
  const double root = 1.0 / std::sqrt(s);
  return {std::exp(nu * eta_minus_z) * root * plus / std::sqrt(2 * kPi * nu),
          std::exp(-nu * eta_minus_z) * root * alternating * std::sqrt(kPi / (2 * nu))};
}

/// The large-argument expansions (DLMF 10.40.1-2) for x >= max(40, nu^2).
inline ScaledIK ik_large_x(double nu, double x) {
  double sum_i = 0, sum_k = 0;
  large_argument_terms(nu, x, 200, [&](int k, double t) {
    sum_k += t;
    sum_i += (k % 2 ? -t : t);
    return std::fabs(t) > 1e-17 * std::fabs(sum_k);
  });
  return {sum_i / std::sqrt(2 * kPi * x), sum_k * std::sqrt(kPi / (2 * x))};
}

/// K_mu(x) and K_(mu+1)(x), unscaled, for |mu| <= 1/2 and 0 < x <= 1: Temme's series.
inline void k_temme(double mu, double x, double& k_mu, double& k_mu1) {
  const TemmeGammas g = temme_gammas(mu);
  const double pi_mu = kPi * mu, log_2x = std::log(2.0 / x), sigma = mu * log_2x;
  const double f_pi = std::fabs(pi_mu) < 1e-15 ? 1.0 : pi_mu / std::sin(pi_mu);
  const double f_sinh = std::fabs(sigma) < 1e-15 ? 1.0 : std::sinh(sigma) / sigma;
  double f = f_pi * (g.gamma1 * std::cosh(sigma) + g.gamma2 * f_sinh * log_2x);
  const double e = std::exp(sigma);  // (2/x)^mu
  double p = 0.5 * e / g.plus, q = 0.5 / (e * g.minus), c = 1.0;
  const double quarter_x2 = 0.25 * x * x;
  double sum = f, sum1 = p;
  for (int k = 1; k < 500; ++k) {
    f = (k * f + p + q) / (k * double(k) - mu * mu);
    c *= quarter_x2 / k;
    p /= (k - mu);
    q /= (k + mu);
    const double add = c * f;
    sum += add;
    sum1 += c * (p - k * f);
    if (std::fabs(add) < 1e-17 * std::fabs(sum)) break;
  }
  k_mu = sum;
  k_mu1 = sum1 * 2.0 / x;
}

/// e^x K_mu(x) and e^x K_(mu+1)(x) for |mu| <= 1/2 and x > 1: Steed's algorithm for the
/// continued fraction of K_(mu+1) / K_mu with Temme's normalisation series.
inline void k_steed(double mu, double x, double& k_mu, double& k_mu1) {
  const double a1 = 0.25 - mu * mu;
  double b = 2.0 * (1.0 + x), d = 1.0 / b, h = d, delta_h = d;
  double q1 = 0.0, q2 = 1.0, q = a1, c = a1, a = -a1;
  double s = 1.0 + q * delta_h;
  for (int i = 2; i < 100000; ++i) {
    a -= 2 * (i - 1);
    c = -a * c / i;
    const double q_next = (q1 - b * q2) / a;
    q1 = q2;
    q2 = q_next;
    q += c * q_next;
    b += 2.0;
    d = 1.0 / (b + a * d);
    delta_h = (b * d - 1.0) * delta_h;
    h += delta_h;
    const double delta_s = q * delta_h;
    s += delta_s;
    if (std::fabs(delta_s) < 0.5 * kEps * std::fabs(s)) break;
  }
  h *= a1;
  k_mu = std::sqrt(kPi / (2.0 * x)) / s;
  k_mu1 = k_mu * (mu + x + 0.5 - h) / x;
}

/// I_(nu+1)(x) / I_nu(x) by its continued fraction 1 / (2(nu+1)/x + 1 / (2(nu+2)/x + ...)),
/// summed backward (every term is positive) from a depth found by a forward pass.
inline double i_ratio(double nu, double x) {
  const double tiny = 1e-300;
  double c = 2 * (nu + 1) / x, d = 0;
  int depth = 1;
  for (; depth < 1000000; ++depth) {
    const double b = 2 * (nu + depth + 1) / x;
    d = 1.0 / (b + d);
    c = b + 1.0 / c;
    if (c < tiny) c = tiny;
    const double delta = c * d;  // the forward pass's factor: only its convergence is used
    if (std::fabs(delta - 1.0) <= 0.5 * kEps) break;
  }
  depth += 4 + depth / 8;
  double r = 0;
  for (int k = depth; k >= 0; --k) r = 1.0 / (2 * (nu + k + 1) / x + r);
  return r;
}

/// A double-double number hi + lo (|lo| <= ulp(hi) / 2), for the power series of I.
struct TwoDouble {
  double hi, lo;
};
inline TwoDouble two_sum(double a, double b) {
  const double s = a + b, bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}
inline TwoDouble times(TwoDouble a, TwoDouble b) {
  const double p = a.hi * b.hi;
  return two_sum(p, std::fma(a.hi, b.hi, -p) + (a.hi * b.lo + a.lo * b.hi));
}
inline TwoDouble divided(TwoDouble a, double b) {
  const double q = a.hi / b;
  const double r = (std::fma(-q, b, a.hi) + a.lo) / b;  // the exact remainder, over b
  return two_sum(q, r);
}
inline TwoDouble plus(TwoDouble a, TwoDouble b) {
  const TwoDouble s = two_sum(a.hi, b.hi);
  return two_sum(s.hi, s.lo + a.lo + b.lo);
}

/// I_nu(x) by its power series (x/2)^nu / Gamma(nu + 1) sum (x^2/4)^k / (k! (nu+1)_k), for
/// moderate x and nu < 50. Every term is positive; the terms and their sum are carried in
/// double-double (x^2/4 exactly), so the ~x/2 products before the largest term add no error:
/// the sum is correctly rounded but for the leading factor.
inline double i_series(double nu, double x) {
  const double half = 0.5 * x, q_hi = half * half;
  const TwoDouble q{q_hi, std::fma(half, half, -q_hi)};
  TwoDouble term{1.0, 0.0}, sum{1.0, 0.0};
  for (int k = 1; k < 1000; ++k) {
    term = divided(times(term, q), k * (nu + k));
    sum = plus(sum, term);
    if (term.hi < 1e-17 * sum.hi) break;
  }
  const double total = sum.hi + sum.lo;
  if (nu == 0) return total;
  if (nu == 1) return half * total;  // half is exact
  const double lead = std::pow(half, nu) / std::tgamma(nu + 1);
  if (lead > 1e-300 && lead < 1e300) return lead * total;
  return std::exp(nu * std::log(half) - kiln_scalar::gammaln(nu + 1)) * total;
}

/// K_nu(x) for nu >= 50 and x^2 <= nu + 1: (x/2)^-nu Gamma(nu) / 2 sum_k (-x^2/4)^k /
/// (k! (nu-1) ... (nu-k)) — the leading part of K's ascending series; what it leaves out is
/// (x/2)^(2 nu) / (Gamma(nu) nu!) relative, far below an ulp. Here Debye's exponent nu (eta - z)
/// is large and would cost its rounding.
inline double k_small_x_large_nu(double nu, double x) {
  const double half = 0.5 * x, q = half * half;
  double term = 1.0, sum = 1.0;
  for (int k = 1; k < nu - 1; ++k) {
    term *= -q / (k * (nu - k));
    sum += term;
    if (std::fabs(term) < 1e-17 * std::fabs(sum)) break;
  }
  const double lead = std::pow(half, -nu) * std::tgamma(nu);
  if (lead > 1e-300 && lead < 1e300) return 0.5 * lead * sum;
  return 0.5 * std::exp(kiln_scalar::gammaln(nu) - nu * std::log(half)) * sum;
}

/// e^-x I_nu(x) and e^x K_nu(x) for nu >= 0 and finite x > 0.
inline ScaledIK ik(double nu, double x) {
  if (nu >= 50) {
    // Debye's expansion, except near x = 0 where its exponent nu (eta - z) is large: the power
    // series of I and the leading part of K's are exact to rounding there.
    if (x * x <= nu + 1) return {i_series(nu, x) * std::exp(-x), k_small_x_large_nu(nu, x) * std::exp(x)};
    return ik_debye(nu, x);
  }
  if (x >= 40 && x >= nu * nu) return ik_large_x(nu, x);
  const double n = std::round(nu), mu = nu - n;
  double k_mu, k_mu1;
  if (x <= 1) {  // Temme's series loses a few ulps to cancellation beyond x = 1
    k_temme(mu, x, k_mu, k_mu1);
    const double e = std::exp(x);
    k_mu *= e;
    k_mu1 *= e;
  } else {
    k_steed(mu, x, k_mu, k_mu1);
  }
  for (int i = 1; i <= int(n); ++i) {  // K_(m+1) = (2m/x) K_m + K_(m-1), stable upward
    const double next = 2 * (mu + i) / x * k_mu1 + k_mu;
    k_mu = k_mu1;
    k_mu1 = next;
  }
  if (x <= 2) return {i_series(nu, x) * std::exp(-x), k_mu};
  return {1.0 / (x * (k_mu1 + i_ratio(nu, x) * k_mu)), k_mu};
}

inline bool is_integer(double v) { return std::floor(v) == v; }
inline bool is_odd_integer(double v) { return is_integer(v) && std::fmod(std::fabs(v), 2.0) == 1.0; }

}  // namespace bessel_detail

/// e^-|x| I_v(x), real order v (scipy.special.ive). Negative x needs an integer order (NaN
/// otherwise: the value is complex); infinite arguments give NaN, as scipy's.
inline double ive(double v, double x) {
  using namespace bessel_detail;
  if (v != v || x != x || std::isinf(v) || std::isinf(x)) return kNaN;
  if (x < 0) {
    if (!is_integer(v)) return kNaN;
    const double r = ive(v, -x);
    return is_odd_integer(v) ? -r : r;
  }
  if (x == 0) {
    if (v == 0) return 1.0;
    return v > 0 || is_integer(v) ? 0.0 : kNaN;
  }
  if (v >= 0) return ik(v, x).i;
  const double nu = -v;
  const ScaledIK r = ik(nu, x);
  if (is_integer(nu)) return r.i;
  // I_-nu = I_nu + (2/pi) sin(nu pi) K_nu, scaled: K_nu e^-x = (e^x K_nu) e^-2x.
  return r.i + (2.0 / kPi) * sinpi(nu) * r.k * std::exp(-2 * x);
}
inline float ive(float v, float x) { return static_cast<float>(ive(double(v), double(x))); }

/// e^x K_v(x), real order v (scipy.special.kve): +inf at 0, NaN for negative or infinite x.
inline double kve(double v, double x) {
  if (v != v || x != x || std::isinf(v) || x < 0 || std::isinf(x)) return kNaN;
  if (x == 0) return kInf;
  return bessel_detail::ik(std::fabs(v), x).k;
}
inline float kve(float v, float x) { return static_cast<float>(kve(double(v), double(x))); }

/// I_0 and I_1 (scipy.special.i0, i1; NaN at +-inf, as scipy's): the power series up to
/// |x| = 100 (~130 terms), above it e^|x| times the scaled function, e^|x| in two halves beyond 700 so that
/// the result stays finite up to |x| = 713.98.
inline double i0(double x) {
  if (x != x || std::isinf(x)) return kNaN;
  const double ax = std::fabs(x);
  if (ax <= 100) return bessel_detail::i_series(0, ax);
  if (ax < 700) return bessel_detail::ik(0, ax).i * std::exp(ax);
  const double half = std::exp(0.5 * ax);
  return bessel_detail::ik(0, ax).i * half * half;
}
inline float i0(float x) { return static_cast<float>(i0(double(x))); }

inline double i1(double x) {
  if (x != x || std::isinf(x)) return kNaN;
  const double ax = std::fabs(x);
  double r;
  if (ax <= 100) {
    r = bessel_detail::i_series(1, ax);
  } else if (ax < 700) {
    r = bessel_detail::ik(1, ax).i * std::exp(ax);
  } else {
    const double half = std::exp(0.5 * ax);
    r = bessel_detail::ik(1, ax).i * half * half;
  }
  return x < 0 ? -r : r;
}
inline float i1(float x) { return static_cast<float>(i1(double(x))); }

}  // namespace kiln_special
