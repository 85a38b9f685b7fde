// kiln runtime, random numbers: NumPy Generator's continuous distributions, one draw per call,
// with NumPy's algorithms, branch thresholds and order of draws (so equal bit for bit). The
// parameters are those of NumPy's C samplers; validating them is the caller's job.
#pragma once

#include <cmath>
#include <limits>

#include "kiln/runtime/random/pcg64.hpp"
#include "kiln/runtime/random/ziggurat.hpp"

namespace kiln_random {

/// `uniform(low, high)` as NumPy draws it: low + (high - low) * U, the range computed first.
inline double uniform(Pcg64& g, double low, double range) { return low + range * g.next_double(); }

/// `normal(loc, scale)`.
inline double normal(Pcg64& g, double loc, double scale) { return loc + scale * standard_normal(g); }

/// `exponential(scale)`.
inline double exponential(Pcg64& g, double scale) { return scale * standard_exponential(g); }

/// `standard_gamma(shape)`: Marsaglia & Tsang's squeeze method for shape >= 1; for shape < 1
/// NumPy's rejection from a power/exponential mixture (Ahrens & Dieter's GS form).
inline double standard_gamma(Pcg64& g, double shape) {
  if (shape == 1.0) return standard_exponential(g);
  if (shape == 0.0) return 0.0;
  if (shape < 1.0) {
    for (;;) {
      const double u = g.next_double();
      const double v = standard_exponential(g);
      if (u <= 1.0 - shape) {
        const double x = std::pow(u, 1.0 / shape);
        if (x <= v) return x;
      } else {
        const double y = -std::log((1 - u) / shape);
        const double x = std::pow(1.0 - shape + shape * y, 1.0 / shape);
        if (x <= v + y) return x;
      }
    }
  }
  const double b = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9 * b);
  for (;;) {
    double x, v;
    do {
      x = standard_normal(g);
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = g.next_double();
    if (u < 1.0 - 0.0331 * (x * x) * (x * x)) return b * v;
    if (std::log(u) < 0.5 * x * x + b * (1.0 - v + std::log(v))) return b * v;
  }
}

/// `gamma(shape, scale)`.
inline double gamma(Pcg64& g, double shape, double scale) { return scale * standard_gamma(g, shape); }

/// `beta(a, b)`: Johnk's algorithm when both are <= 1 (with NumPy's log-space fallback when a
/// power underflows, and its shortcut for a, b < 3e-103), else a ratio of gammas. a, b != 0.
inline double beta(Pcg64& g, double a, double b) {
  if (a <= 1.0 && b <= 1.0) {
    if (a < 3e-103 && b < 3e-103) return (a + b) * g.next_double() < a ? 1.0 : 0.0;
    for (;;) {
      const double u = g.next_double();
      const double v = g.next_double();
      const double x = std::pow(u, 1.0 / a);
      const double y = std::pow(v, 1.0 / b);
      const double xpy = x + y;
      if (xpy <= 1.0 && u + v > 0.0) {
        if (x > 0 && y > 0) return x / xpy;
        const double log_x = std::log(u) / a;
        const double log_y = std::log(v) / b;
        const double delta = log_x - log_y;
        if (delta > 0) return std::exp(-std::log1p(std::exp(-delta)));
        return std::exp(delta - std::log1p(std::exp(delta)));
      }
    }
  }
  const double ga = standard_gamma(g, a);
  const double gb = standard_gamma(g, b);
  return ga / (ga + gb);
}

/// `chisquare(df)`.
inline double chisquare(Pcg64& g, double df) { return 2.0 * standard_gamma(g, df / 2.0); }

/// `standard_cauchy()`: a ratio of two normals.
inline double standard_cauchy(Pcg64& g) {
  const double num = standard_normal(g);
  const double den = standard_normal(g);
  return num / den;
}

/// `standard_t(df)`.
inline double standard_t(Pcg64& g, double df) {
  const double num = standard_normal(g);
  const double den = standard_gamma(g, df / 2);
  return std::sqrt(df / 2) * num / std::sqrt(den);
}

/// `lognormal(mean, sigma)`.
inline double lognormal(Pcg64& g, double mean, double sigma) { return std::exp(normal(g, mean, sigma)); }

/// `pareto(a)` (NumPy's Lomax form): expm1(E / a).
inline double pareto(Pcg64& g, double a) { return std::expm1(standard_exponential(g) / a); }

/// `weibull(a)`.
inline double weibull(Pcg64& g, double a) {
  if (a == 0.0) return 0.0;
  return std::pow(standard_exponential(g), 1. / a);
}

/// `power(a)`.
inline double power(Pcg64& g, double a) { return std::pow(-std::expm1(-standard_exponential(g)), 1. / a); }

/// `laplace(loc, scale)`: inversion, redrawing U == 0.
inline double laplace(Pcg64& g, double loc, double scale) {
  for (;;) {
    const double u = g.next_double();
    if (u >= 0.5) return loc - scale * std::log(2.0 - u - u);
    if (u > 0.0) return loc + scale * std::log(u + u);
  }
}

/// `gumbel(loc, scale)`: inversion of 1 - U, redrawing 1 - U == 1.
inline double gumbel(Pcg64& g, double loc, double scale) {
  for (;;) {
    const double u = 1.0 - g.next_double();
    if (u < 1.0) return loc - scale * std::log(-std::log(u));
  }
}

/// `logistic(loc, scale)`: inversion, redrawing U == 0.
inline double logistic(Pcg64& g, double loc, double scale) {
  for (;;) {
    const double u = g.next_double();
    if (u > 0.0) return loc + scale * std::log(u / (1.0 - u));
  }
}

/// `rayleigh(scale)`.
inline double rayleigh(Pcg64& g, double mode) { return mode * std::sqrt(2.0 * standard_exponential(g)); }

/// `wald(mean, scale)`: Michael, Schucany & Haas's transformation, in NumPy 2.4's
/// cancellation-free form.
inline double wald(Pcg64& g, double mean, double scale) {
  double y = standard_normal(g);
  y = mean * y * y;
  const double d = 1 + std::sqrt(1 + 4 * scale / y);
  const double x = mean * (1 - 2 / d);
  const double u = g.next_double();
  if (u <= mean / (mean + x)) return x;
  return mean * mean / x;
}

/// `vonmises(mu, kappa)`: Best & Fisher's rejection method, a uniform angle for kappa < 1e-8
/// and a wrapped normal for kappa > 1e6, as NumPy.
inline double vonmises(Pcg64& g, double mu, double kappa) {
  constexpr double kPi = 3.14159265358979323846;
  if (std::isnan(kappa)) return std::numeric_limits<double>::quiet_NaN();
  if (kappa < 1e-8) return kPi * (2 * g.next_double() - 1);
  double s;
  if (kappa < 1e-5) {
    s = 1. / kappa + kappa;
  } else if (kappa <= 1e6) {
    const double r = 1 + std::sqrt(1 + 4 * kappa * kappa);
    const double rho = (r - std::sqrt(2 * r)) / (2 * kappa);
    s = (1 + rho * rho) / (2 * rho);
  } else {
    double result = mu + std::sqrt(1. / kappa) * standard_normal(g);
    if (result < -kPi) result += 2 * kPi;
    if (result > kPi) result -= 2 * kPi;
    return result;
  }
  double w;
  for (;;) {
    const double u = g.next_double();
    const double z = std::cos(kPi * u);
    w = (1 + s * z) / (s + z);
    const double y = kappa * (s - w);
    const double v = g.next_double();
    if (y * (2 - y) - v >= 0 || std::log(y / v) + 1 - y >= 0) break;
  }
  const double u = g.next_double();
  double result = std::acos(w);
  if (u < 0.5) result = -result;
  result += mu;
  const bool negative = result < 0;
  double mod = std::fabs(result);
  mod = std::fmod(mod + kPi, 2 * kPi) - kPi;
  if (negative) mod *= -1;
  return mod;
}

/// `triangular(left, mode, right)`: inversion.
inline double triangular(Pcg64& g, double left, double mode, double right) {
  const double base = right - left;
  const double left_base = mode - left;
  const double ratio = left_base / base;
  const double left_prod = left_base * base;
  const double right_prod = (right - mode) * base;
  const double u = g.next_double();
  if (u <= ratio) return left + std::sqrt(u * left_prod);
  return right - std::sqrt((1.0 - u) * right_prod);
}

}  // namespace kiln_random
