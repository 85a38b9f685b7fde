// kiln runtime, special functions: the Bessel function of the first kind of real order,
// jv(v, x) (scipy.special's).
//
// For order nu >= 0 and x > 0: the large-argument (Hankel) expansion for x >= max(20, nu^2/4),
// the cosine and sine of x - (nu/2 + 1/4) pi taken from cos x and sin x (accurately reduced by
// libm) and exact cospi/sinpi of the phase; otherwise Barnett's method as in Temme and Steed —
// J'/J at order nu by its continued fraction, J recurred downward to an order mu, Y_mu and
// Y_(mu+1) by Temme's series (x < 2, |mu| <= 1/2) or Steed's complex continued fraction
// (x >= 2), and the Wronskian J Y' - J' Y = 2 / (pi x) to normalise. Y is kept for negative
// orders: J_-nu = cos(nu pi) J_nu - sin(nu pi) Y_nu. Near the zeros of J the result has small
// absolute but not relative error, as any double-precision evaluation.
#pragma once

#include <algorithm>
#include <cmath>

#include "kiln/runtime/special/bessel_common.hpp"

namespace kiln_special {

namespace bessel_detail {

struct JY {
  double j, y;
};

/// The large-argument expansions (DLMF 10.17.3-4) for x >= max(20, nu^2 / 4): their terms
/// grow at most by e^(nu^2 / 2x) <= e^2 before they fall, and stop at e^-2x.
inline JY jy_large_x(double nu, double x) {
  double p = 0, q = 0;
  large_argument_terms(nu, x, 200, [&](int k, double t) {
    const double signed_t = ((k / 2) % 2 ? -t : t);
    (k % 2 ? q : p) += signed_t;
    return std::fabs(t) > 1e-17 * (std::fabs(p) + std::fabs(q));
  });
  // chi = x - phi with phi = (nu/2 + 1/4) pi.
  const double cos_phi = cospi(0.5 * nu + 0.25), sin_phi = sinpi(0.5 * nu + 0.25);
  const double cos_x = std::cos(x), sin_x = std::sin(x);
  const double cos_chi = cos_x * cos_phi + sin_x * sin_phi, sin_chi = sin_x * cos_phi - cos_x * sin_phi;
  const double amplitude = std::sqrt(2.0 / (kPi * x));
  return {amplitude * (p * cos_chi - q * sin_chi), amplitude * (p * sin_chi + q * cos_chi)};
}

/// Y_mu and Y_(mu+1) for |mu| <= 1/2 and x < 2: Temme's series.
inline void y_temme(double mu, double x, double& y_mu, double& y_mu1) {
  const TemmeGammas g = temme_gammas(mu);
  const double half = 0.5 * x, pi_mu = kPi * mu, log_2x = -std::log(half), sigma = mu * log_2x;
  const double f_pi = std::fabs(pi_mu) < 1e-15 ? 1.0 : pi_mu / std::sin(pi_mu);
  const double f_sinh = std::fabs(sigma) < 1e-15 ? 1.0 : std::sinh(sigma) / sigma;
  const double half_pi_mu = 0.5 * pi_mu;
  const double f_half = std::fabs(half_pi_mu) < 1e-15 ? 1.0 : std::sin(half_pi_mu) / half_pi_mu;
  const double r = kPi * half_pi_mu * f_half * f_half;
  double f = 2.0 / kPi * f_pi * (g.gamma1 * std::cosh(sigma) + g.gamma2 * f_sinh * log_2x);
  const double e = std::exp(sigma);  // (2/x)^mu
  double p = e / (g.plus * kPi), q = 1.0 / (e * kPi * g.minus), c = 1.0;
  const double d = -half * half;
  double sum = f + r * q, sum1 = p;
  for (int k = 1; k < 500; ++k) {
    f = (k * f + p + q) / (k * double(k) - mu * mu);
    c *= d / k;
    p /= (k - mu);
    q /= (k + mu);
    const double add = c * (f + r * q);
    sum += add;
    sum1 += c * p - k * add;
    if (std::fabs(add) < (1.0 + std::fabs(sum)) * 0.5 * kEps) break;
  }
  y_mu = -sum;
  y_mu1 = -sum1 * 2.0 / x;
}

/// J_nu(x) by its power series (x/2)^nu / Gamma(nu + 1) sum (-x^2/4)^k / (k! (nu+1)_k), for
/// x^2 <= nu + 1, where the alternating terms cancel by less than a factor of two.
inline double j_series(double nu, double x) {
  const double half = 0.5 * x, q_hi = half * half, q_lo = std::fma(half, half, -q_hi);
  double term = 1.0, sum = 1.0;
  for (int k = 1; k < 1000; ++k) {
    term = -(term * q_hi + term * q_lo) / (k * (nu + k));
    sum += term;
    if (std::fabs(term) < 1e-17 * std::fabs(sum)) break;
  }
  if (nu == 0) return sum;
  const double lead = std::pow(half, nu) / std::tgamma(nu + 1);
  if (lead > 1e-300 && lead < 1e300) return lead * sum;
  return std::exp(nu * std::log(half) - kiln_scalar::gammaln(nu + 1)) * sum;
}

/// J_nu and Y_nu for nu >= 0 and x > 0 finite.
inline JY jy(double nu, double x) {
  if (x >= 20 && x >= 0.25 * nu * nu) return jy_large_x(nu, x);
  const double tiny = 1e-300, inv_x = 1.0 / x, two_x = 2.0 / x, wronskian = two_x / kPi;
  // The order mu the downward recurrence stops at: |mu| <= 1/2 for Temme's series; for Steed's
  // fraction, mu >= x - 3/2 where the recurrence of J is still stable.
  const int n = x < 2 ? int(nu + 0.5) : std::max(0, int(nu - x + 1.5));
  const double mu = nu - n;
  // f = J'_nu / J_nu = nu/x - J_(nu+1) / J_nu by the continued fraction of the ratio,
  // J_(nu+1) / J_nu = 1 / (2(nu+1)/x - 1 / (2(nu+2)/x - ...)). A forward (Lentz) pass finds the
  // depth and the sign of J_nu (`sign` flips with every negative denominator); the value is
  // summed backward (Miller's direction, stable for J), which over thousands of terms keeps
  // the accuracy the forward product loses.
  double sign = 1, b = two_x * nu, d = 0, c = std::max(nu * inv_x, tiny);
  int depth = 1;
  for (; depth < 10000000; ++depth) {
    b += two_x;
    d = b - d;
    if (std::fabs(d) < tiny) d = tiny;
    c = b - 1.0 / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    if (d < 0) sign = -sign;
    if (std::fabs(c * d - 1.0) <= 0.5 * kEps) break;
  }
  depth += 4 + depth / 8;
  double ratio = 0;
  for (int k = depth; k >= 0; --k) ratio = 1.0 / (2 * (nu + k + 1) * inv_x - ratio);
  const double h = nu * inv_x - ratio;
  // Downward from nu to mu, unnormalised, rescaled before it can overflow.
  double jl = sign, jpl = h * jl, j_top = jl, jp_top = jpl, factor = nu * inv_x;
  for (int l = n; l >= 1; --l) {
    const double next = factor * jl + jpl;  // J_(l-1) = (l/x) J_l + J'_l
    factor -= inv_x;
    jpl = factor * next - jl;                // J'_(l-1) = ((l-1)/x) J_(l-1) - J_l
    jl = next;
    if (std::fabs(jl) > 1e250) {
      jl *= 1e-250;
      jpl *= 1e-250;
      j_top *= 1e-250;
      jp_top *= 1e-250;
    }
  }
  if (jl == 0) jl = kEps;
  const double f = jpl / jl;  // J'_mu / J_mu
  double j_mu, y_mu, y_mu1;
  if (x < 2) {
    y_temme(mu, x, y_mu, y_mu1);
    const double y_mu_prime = mu * inv_x * y_mu - y_mu1;
    j_mu = wronskian / (y_mu_prime - f * y_mu);
  } else {
    // Steed's complex continued fraction p + iq = (J'_mu + i Y'_mu) / (J_mu + i Y_mu).
    double a = 0.25 - mu * mu, p = -0.5 * inv_x, q = 1.0, br = 2 * x, bi = 2.0;
    double fact = a * inv_x / (p * p + q * q), cr = br + q * fact, ci = bi + p * fact;
    double den = br * br + bi * bi, dr = br / den, di = -bi / den;
    double dlr = cr * dr - ci * di, dli = cr * di + ci * dr;
    double temp = p * dlr - q * dli;
    q = p * dli + q * dlr;
    p = temp;
    for (int i = 2; i < 100000; ++i) {
      a += 2 * (i - 1);
      bi += 2.0;
      dr = a * dr + br;
      di = a * di + bi;
      if (std::fabs(dr) + std::fabs(di) < tiny) dr = tiny;
      fact = a / (cr * cr + ci * ci);
      cr = br + cr * fact;
      ci = bi - ci * fact;
      if (std::fabs(cr) + std::fabs(ci) < tiny) cr = tiny;
      den = dr * dr + di * di;
      dr /= den;
      di /= -den;
      dlr = cr * dr - ci * di;
      dli = cr * di + ci * dr;
      temp = p * dlr - q * dli;
      q = p * dli + q * dlr;
      p = temp;
      if (std::fabs(dlr - 1.0) + std::fabs(dli) <= kEps) break;
    }
    const double gam = (p - f) / q;
    j_mu = std::copysign(std::sqrt(wronskian / ((p - f) * gam + q)), jl);
    y_mu = j_mu * gam;
    const double y_mu_prime = y_mu * (p + q / gam);
    y_mu1 = mu * inv_x * y_mu - y_mu_prime;
  }
  const double j = j_top * (j_mu / jl);
  for (int i = 1; i <= n; ++i) {  // Y upward from mu, stable
    const double next = (mu + i) * two_x * y_mu1 - y_mu;
    y_mu = y_mu1;
    y_mu1 = next;
  }
  (void)jp_top;
  // Where x^2 <= nu + 1 the power series is better for J: the Wronskian above cancels when
  // mu < 0 and x is small (Y_mu ~ cot(mu pi) J_mu there).
  return {x * x <= nu + 1 ? j_series(nu, x) : j, y_mu};
}

/// log of the bound |J_nu(x)| <= (x/2)^nu / Gamma(nu + 1) (nu >= 0, x >= 0).
inline double log_j_bound(double nu, double x) {
  return nu * std::log(0.5 * x) - kiln_scalar::gammaln(nu + 1);
}

}  // namespace bessel_detail

/// The Bessel function of the first kind J_v(x), real order v (scipy.special.jv). Negative x
/// needs an integer order (NaN otherwise); NaN at infinite x and 0 at infinite order, as scipy.
inline double jv(double v, double x) {
  using namespace bessel_detail;
  if (v != v || x != x || std::isinf(x)) return kNaN;
  if (std::isinf(v)) return 0.0;
  const bool integer = std::floor(v) == v;
  if (x < 0) {
    if (!integer) return kNaN;
    const double r = jv(v, -x);
    return std::fmod(std::fabs(v), 2.0) == 1.0 ? -r : r;
  }
  const double nu = std::fabs(v);
  const bool odd = integer && std::fmod(nu, 2.0) == 1.0;
  if (x == 0) {
    if (v == 0) return 1.0;
    if (v > 0) return 0.0;
    if (integer) return odd ? -0.0 : 0.0;
    return std::copysign(kInf, std::tgamma(1 + v));  // (x/2)^v / Gamma(1 + v), v < 0
  }
  if (v >= 0 || integer) {
    // J_-n = (-1)^n J_n. Far below the turning point J underflows: skip the recurrences.
    const double j = log_j_bound(nu, x) < -746 ? 0.0 : jy(nu, x).j;
    return (v < 0 && odd) ? -j : j;
  }
  if (log_j_bound(nu, x) < -746) {  // Y_nu overflows there: J_-nu = -sin(nu pi) Y_nu ~ +-inf
    return std::copysign(kInf, sinpi(nu));
  }
  const JY r = jy(nu, x);
  return cospi(nu) * r.j - sinpi(nu) * r.y;
}
inline float jv(float v, float x) { return static_cast<float>(jv(double(v), double(x))); }

}  // namespace kiln_special
