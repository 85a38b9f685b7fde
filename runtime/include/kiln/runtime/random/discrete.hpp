// kiln runtime, random numbers: NumPy Generator's discrete distributions (Poisson, binomial,
// geometric, negative binomial, hypergeometric), one draw per call, with NumPy's algorithms,
// thresholds, integer/double conversions and order of draws. Parameters are those of NumPy's
// C samplers; validating them is the caller's job.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kiln/runtime/random/continuous.hpp"
#include "kiln/runtime/random/integers.hpp"
#include "kiln/runtime/random/pcg64.hpp"
#include "kiln/runtime/random/tables.hpp"

namespace kiln_random {

/// log(k!): the table below 126, Stirling's series (to the 1/k^3 term) above, as NumPy.
inline double log_factorial(std::int64_t k) {
  if (k < 126) return tables::log_factorial[k];
  const double half_ln_2pi = 0.9189385332046728;
  return (k + 0.5) * std::log(static_cast<double>(k)) - k + (half_ln_2pi + (1.0 / k) * (1 / 12.0 - 1 / (360.0 * k * k)));
}

/// log(Gamma(x)) for x > 0 by NumPy's series (Zhang & Jin's SPECFUN), used by PTRS.
inline double log_gamma(double x) {
  static constexpr double a[10] = {8.333333333333333e-02, -2.777777777777778e-03, 7.936507936507937e-04,
                                   -5.952380952380952e-04, 8.417508417508418e-04, -1.917526917526918e-03,
                                   6.410256410256410e-03,  -2.955065359477124e-02, 1.796443723688307e-01,
                                   -1.39243221690590e+00};
  if (x == 1.0 || x == 2.0) return 0.0;
  const std::int64_t n = x < 7.0 ? static_cast<std::int64_t>(7 - x) : 0;
  double x0 = x + n;
  const double x2 = (1.0 / x0) * (1.0 / x0);
  const double lg2pi = 1.8378770664093453e+00;
  double gl0 = a[9];
  for (int k = 8; k >= 0; --k) {
    gl0 *= x2;
    gl0 += a[k];
  }
  double gl = gl0 / x0 + 0.5 * lg2pi + (x0 - 0.5) * std::log(x0) - x0;
  if (x < 7.0) {
    for (std::int64_t k = 1; k <= n; ++k) {
      gl -= std::log(x0 - 1.0);
      x0 -= 1.0;
    }
  }
  return gl;
}

/// `poisson(lam)`: multiplication of uniforms below lam = 10, Hörmann's PTRS (transformed
/// rejection with squeeze) from 10 on.
inline std::int64_t poisson(Pcg64& g, double lam) {
  if (lam == 0) return 0;
  if (lam < 10) {
    const double enlam = std::exp(-lam);
    std::int64_t x = 0;
    double prod = 1.0;
    for (;;) {
      prod *= g.next_double();
      if (prod > enlam) {
        x += 1;
      } else {
        return x;
      }
    }
  }
  const double slam = std::sqrt(lam);
  const double loglam = std::log(lam);
  const double b = 0.931 + 2.53 * slam;
  const double a = -0.059 + 0.02483 * b;
  const double invalpha = 1.1239 + 1.1328 / (b - 3.4);
  const double vr = 0.9277 - 3.6224 / (b - 2);
  for (;;) {
    const double u = g.next_double() - 0.5;
    const double v = g.next_double();
    const double us = 0.5 - std::fabs(u);
    const std::int64_t k = static_cast<std::int64_t>(std::floor((2 * a / us + b) * u + lam + 0.43));
    if (us >= 0.07 && v <= vr) return k;
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (std::log(v) + std::log(invalpha) - std::log(a / (us * us) + b) <=
        -lam + static_cast<double>(k) * loglam - log_gamma(static_cast<double>(k) + 1))
      return k;
  }
}

/// Binomial by inversion (NumPy's choice while n * min(p, 1 - p) <= 30), p <= 0.5.
inline std::int64_t binomial_inversion(Pcg64& g, std::int64_t n, double p) {
  const double q = 1.0 - p;
  const double qn = std::exp(n * std::log1p(-p));
  const double np = n * p;
  const double cap = np + 10.0 * std::sqrt(np * q + 1);
  const std::int64_t bound = static_cast<std::int64_t>(n < cap ? static_cast<double>(n) : cap);
  std::int64_t x = 0;
  double px = qn;
  double u = g.next_double();
  while (u > px) {
    x++;
    if (x > bound) {
      x = 0;
      px = qn;
      u = g.next_double();
    } else {
      u -= px;
      px = ((n - x + 1) * p * px) / (x * q);
    }
  }
  return x;
}

/// Binomial by Kachitvichyanukul & Schmeiser's BTPE (triangle, parallelogram, exponential
/// tails), p <= 0.5, as NumPy 2.4 writes it.
inline std::int64_t binomial_btpe(Pcg64& g, std::int64_t n, double p) {
  const double r = std::min(p, 1.0 - p);
  const double q = 1.0 - r;
  const double fm = n * r + r;
  const std::int64_t m = static_cast<std::int64_t>(std::floor(fm));
  const double p1 = std::floor(2.195 * std::sqrt(n * r * q) - 4.6 * q) + 0.5;
  const double xm = m + 0.5;
  const double xl = xm - p1;
  const double xr = xm + p1;
  const double c = 0.134 + 20.5 / (15.3 + m);
  double a = (fm - xl) / (fm - xl * r);
  const double laml = a * (1.0 + a / 2.0);
  a = (xr - fm) / (xr * q);
  const double lamr = a * (1.0 + a / 2.0);
  const double p2 = p1 * (1.0 + 2.0 * c);
  const double p3 = p2 + c / laml;
  const double p4 = p3 + c / lamr;
  std::int64_t y;
  for (;;) {  // Step 10: one trial
    const double nrq = n * r * q;
    const double u = g.next_double() * p4;
    double v = g.next_double();
    if (u <= p1) {  // triangle: accept at once
      y = static_cast<std::int64_t>(std::floor(xm - p1 * v + u));
      break;
    }
    if (u <= p2) {  // parallelogram
      const double x = xl + (u - p1) / c;
      v = v * c + 1.0 - std::fabs(m - x + 0.5) / p1;
      if (v > 1.0) continue;
      y = static_cast<std::int64_t>(std::floor(x));
    } else if (u <= p3) {  // left exponential tail
      y = static_cast<std::int64_t>(std::floor(xl + std::log(v) / laml));
      if (y < 0 || v == 0.0) continue;
      v = v * (u - p2) * laml;
    } else {  // right exponential tail
      y = static_cast<std::int64_t>(std::floor(xr - std::log(v) / lamr));
      if (y > n || v == 0.0) continue;
      v = v * (u - p3) * lamr;
    }
    // Step 50: the acceptance test, explicit near the mode, squeezed far from it.
    const std::int64_t k = y > m ? y - m : m - y;
    if (!(k > 20 && k < nrq / 2.0 - 1)) {
      const double s = r / q;
      const double aa = s * (n + 1);
      double f = 1.0;
      if (m < y) {
        for (std::int64_t i = m + 1; i <= y; i++) f *= (aa / i - s);
      } else if (m > y) {
        for (std::int64_t i = y + 1; i <= m; i++) f /= (aa / i - s);
      }
      if (v > f) continue;
      break;
    }
    const double rho = (k / nrq) * ((k * (k / 3.0 + 0.625) + 0.16666666666666666) / nrq + 0.5);
    const double t = -k * k / (2 * nrq);
    const double lv = std::log(v);
    if (lv < t - rho) break;
    if (lv > t + rho) continue;
    const double x1 = static_cast<double>(y) + 1;
    const double f1 = static_cast<double>(m) + 1;
    const double z = static_cast<double>(n) + 1 - static_cast<double>(m);
    const double w = static_cast<double>(n) - static_cast<double>(y) + 1;
    const double x2 = x1 * x1, f2 = f1 * f1, z2 = z * z, w2 = w * w;
    const double bound = xm * std::log(f1 / x1) + (n - m + 0.5) * std::log(z / w) + (y - m) * std::log(w * r / (x1 * q)) +
                         (13680. - (462. - (132. - (99. - 140. / f2) / f2) / f2) / f2) / f1 / 166320. +
                         (13680. - (462. - (132. - (99. - 140. / z2) / z2) / z2) / z2) / z / 166320. +
                         (13680. - (462. - (132. - (99. - 140. / x2) / x2) / x2) / x2) / x1 / 166320. +
                         (13680. - (462. - (132. - (99. - 140. / w2) / w2) / w2) / w2) / w / 166320.;
    if (lv > bound) continue;
    break;
  }
  if (p > 0.5) y = n - y;
  return y;
}

/// `binomial(n, p)`: inversion or BTPE on min(p, 1 - p), by NumPy's threshold n p <= 30.
inline std::int64_t binomial(Pcg64& g, std::int64_t n, double p) {
  if (n == 0 || p == 0.0) return 0;
  if (p <= 0.5) return p * n <= 30.0 ? binomial_inversion(g, n, p) : binomial_btpe(g, n, p);
  const double q = 1.0 - p;
  return n - (q * n <= 30.0 ? binomial_inversion(g, n, q) : binomial_btpe(g, n, q));
}

/// `geometric(p)` (trials to the first success, >= 1): sequential search for p >= 1/3,
/// inversion of an exponential below, saturating at INT64_MAX.
inline std::int64_t geometric(Pcg64& g, double p) {
  if (p >= 0.333333333333333333333333) {
    std::int64_t x = 1;
    double sum = p, prod = p;
    const double q = 1.0 - p;
    const double u = g.next_double();
    while (u > sum) {
      prod *= q;
      sum += prod;
      x++;
    }
    return x;
  }
  const double z = std::ceil(-standard_exponential(g) / std::log1p(-p));
  if (z >= 9.223372036854776e+18) return INT64_MAX;
  return static_cast<std::int64_t>(z);
}

/// `negative_binomial(n, p)`: a Poisson draw with a gamma(n, (1 - p) / p) rate.
inline std::int64_t negative_binomial(Pcg64& g, double n, double p) {
  const double y = gamma(g, n, (1 - p) / p);
  return poisson(g, y);
}

/// Hypergeometric by drawing the sample one item at a time (NumPy's small-sample path).
inline std::int64_t hypergeometric_sample(Pcg64& g, std::int64_t good, std::int64_t bad, std::int64_t sample) {
  const std::int64_t total = good + bad;
  const bool complement = sample > total / 2;
  std::int64_t computed_sample = complement ? total - sample : sample;
  std::int64_t remaining_total = total, remaining_good = good;
  while (computed_sample > 0 && remaining_good > 0 && remaining_total > remaining_good) {
    --remaining_total;
    if (static_cast<std::int64_t>(random_interval(g, static_cast<std::uint64_t>(remaining_total))) < remaining_good)
      --remaining_good;
    --computed_sample;
  }
  if (remaining_total == remaining_good) remaining_good -= computed_sample;
  return complement ? remaining_good : good - remaining_good;
}

/// Hypergeometric by Stadlober's ratio of uniforms (HRUA), NumPy's path for
/// 10 <= sample <= good + bad - 10.
inline std::int64_t hypergeometric_hrua(Pcg64& g, std::int64_t good, std::int64_t bad, std::int64_t sample) {
  const double d1 = 1.7155277699214135;  // 2 sqrt(2/e)
  const double d2 = 0.8989161620588988;  // 3 - 2 sqrt(3/e)
  const std::int64_t popsize = good + bad;
  const std::int64_t computed_sample = std::min(sample, popsize - sample);
  const std::int64_t mingoodbad = std::min(good, bad);
  const std::int64_t maxgoodbad = std::max(good, bad);
  const double p = static_cast<double>(mingoodbad) / popsize;
  const double q = static_cast<double>(maxgoodbad) / popsize;
  const double mu = computed_sample * p;
  const double a = mu + 0.5;
  const double var = static_cast<double>(popsize - computed_sample) * computed_sample * p * q / (popsize - 1);
  const double c = std::sqrt(var + 0.5);
  const double h = d1 * c + d2;
  const std::int64_t m =
      static_cast<std::int64_t>(std::floor(static_cast<double>(computed_sample + 1) * (mingoodbad + 1) / (popsize + 2)));
  const double gm = log_factorial(m) + log_factorial(mingoodbad - m) + log_factorial(computed_sample - m) +
                    log_factorial(maxgoodbad - computed_sample + m);
  const double lo_cap = static_cast<double>(std::min(computed_sample, mingoodbad) + 1);
  const double hi_cap = std::floor(a + 16 * c);
  const double b = lo_cap < hi_cap ? lo_cap : hi_cap;
  std::int64_t k;
  for (;;) {
    const double u = g.next_double();
    const double v = g.next_double();
    const double x = a + h * (v - 0.5) / u;
    if (x < 0.0 || x >= b) continue;
    k = static_cast<std::int64_t>(std::floor(x));
    const double gp = log_factorial(k) + log_factorial(mingoodbad - k) + log_factorial(computed_sample - k) +
                      log_factorial(maxgoodbad - computed_sample + k);
    const double t = gm - gp;
    if (u * (4.0 - u) - 3.0 <= t) break;
    if (u * (u - t) >= 1) continue;
    if (2.0 * std::log(u) <= t) break;
  }
  if (good > bad) k = computed_sample - k;
  if (computed_sample < sample) k = good - k;
  return k;
}

/// `hypergeometric(ngood, nbad, nsample)`.
inline std::int64_t hypergeometric(Pcg64& g, std::int64_t good, std::int64_t bad, std::int64_t sample) {
  if (sample >= 10 && sample <= good + bad - 10) return hypergeometric_hrua(g, good, bad, sample);
  return hypergeometric_sample(g, good, bad, sample);
}

}  // namespace kiln_random
