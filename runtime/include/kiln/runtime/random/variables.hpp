// kiln runtime, random numbers: PyTensor's scalar RandomVariables (pytensor.tensor.random.basic)
// one draw at a time — the parameter checks NumPy's Generator methods make (with NumPy's
// messages) and the draw PyTensor's `rng_fn` asks for. The reference evaluator and generated
// code both call these, so they check and draw alike; each walks the broadcast parameters in
// C order, as NumPy does, and calls `<name>_check` on every parameter tuple before
// `<name>_draw` on every output element.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>  // the first pass of a two-pass draw (generated code)

#include "kiln/runtime/random/continuous.hpp"
#include "kiln/runtime/random/discrete.hpp"
#include "kiln/runtime/random/integers.hpp"

namespace kiln_random {
namespace rv {

/// The parameters of one draw, by position: real parameters (which NumPy converts to double)
/// in `x`, integer ones (int64) in `k`; `single[i]` says real parameter i is a float32 value
/// (InvGammaRV's formula computes 1 / scale in the parameter's own precision).
struct Args {
  double x[3] = {0, 0, 0};
  std::int64_t k[3] = {0, 0, 0};
  bool single[3] = {false, false, false};
  /// A distribution drawn in two passes (BetaBinomialRV: every beta, then every binomial):
  /// this element's first-pass draw.
  double first = 0;
};

/// NumPy's CONS_NON_NEGATIVE: the sign bit set on a non-NaN (so -0.0 is refused too).
inline bool negative(double v) { return !std::isnan(v) && std::signbit(v); }
/// NumPy's CONS_POSITIVE: v <= 0 (NaN passes).
inline bool not_positive(double v) { return v <= 0; }
/// NumPy's CONS_BOUNDED_0_1: outside [0, 1] or NaN.
inline bool outside_0_1(double v) { return !(v >= 0 && v <= 1); }

// Each distribution: `<name>_check(a)` returns NumPy's message for parameters it refuses (null
// when they are valid); `<name>_draw(g, a)` draws one value as the NumPy method does.

inline const char* uniform_check(const Args& a) {
  const double range = a.x[1] - a.x[0];
  if (!std::isfinite(range)) return "Range exceeds valid bounds";
  if (negative(range)) return "high - low < 0";
  return nullptr;
}
inline double uniform_draw(Pcg64& g, const Args& a) { return uniform(g, a.x[0], a.x[1] - a.x[0]); }

inline const char* triangular_check(const Args& a) {
  if (a.x[0] > a.x[1]) return "left > mode";
  if (a.x[1] > a.x[2]) return "mode > right";
  if (a.x[0] == a.x[2]) return "left == right";
  return nullptr;
}
inline double triangular_draw(Pcg64& g, const Args& a) { return triangular(g, a.x[0], a.x[1], a.x[2]); }

inline const char* beta_check(const Args& a) {
  if (not_positive(a.x[0])) return "a <= 0";
  if (not_positive(a.x[1])) return "b <= 0";
  return nullptr;
}
inline double beta_draw(Pcg64& g, const Args& a) { return beta(g, a.x[0], a.x[1]); }

inline const char* normal_check(const Args& a) { return negative(a.x[1]) ? "scale < 0" : nullptr; }
inline double normal_draw(Pcg64& g, const Args& a) { return normal(g, a.x[0], a.x[1]); }

inline const char* lognormal_check(const Args& a) { return negative(a.x[1]) ? "sigma < 0" : nullptr; }
inline double lognormal_draw(Pcg64& g, const Args& a) { return lognormal(g, a.x[0], a.x[1]); }

inline const char* gamma_check(const Args& a) {
  if (negative(a.x[0])) return "shape < 0";
  if (negative(a.x[1])) return "scale < 0";
  return nullptr;
}
inline double gamma_draw(Pcg64& g, const Args& a) { return gamma(g, a.x[0], a.x[1]); }

inline const char* exponential_check(const Args& a) { return negative(a.x[0]) ? "scale < 0" : nullptr; }
inline double exponential_draw(Pcg64& g, const Args& a) { return exponential(g, a.x[0]); }

inline const char* weibull_check(const Args& a) { return negative(a.x[0]) ? "a < 0" : nullptr; }
inline double weibull_draw(Pcg64& g, const Args& a) { return weibull(g, a.x[0]); }

inline const char* logistic_check(const Args& a) { return negative(a.x[1]) ? "scale < 0" : nullptr; }
inline double logistic_draw(Pcg64& g, const Args& a) { return logistic(g, a.x[0], a.x[1]); }

inline const char* vonmises_check(const Args& a) { return negative(a.x[1]) ? "kappa < 0" : nullptr; }
inline double vonmises_draw(Pcg64& g, const Args& a) { return vonmises(g, a.x[0], a.x[1]); }

inline const char* laplace_check(const Args& a) { return negative(a.x[1]) ? "scale < 0" : nullptr; }
inline double laplace_draw(Pcg64& g, const Args& a) { return laplace(g, a.x[0], a.x[1]); }

inline const char* wald_check(const Args& a) {
  if (not_positive(a.x[0])) return "mean <= 0";
  if (not_positive(a.x[1])) return "scale <= 0";
  return nullptr;
}
inline double wald_draw(Pcg64& g, const Args& a) { return wald(g, a.x[0], a.x[1]); }

/// PyTensor's InvGammaRV: 1 / rng.gamma(shape, 1 / scale), 1 / scale in the scale's precision.
inline double invgamma_rate(const Args& a) {
  return a.single[1] ? static_cast<double>(1.0f / static_cast<float>(a.x[1])) : 1.0 / a.x[1];
}
inline const char* invgamma_check(const Args& a) {
  if (negative(a.x[0])) return "shape < 0";
  if (negative(invgamma_rate(a))) return "scale < 0";
  return nullptr;
}
inline double invgamma_draw(Pcg64& g, const Args& a) { return 1.0 / gamma(g, a.x[0], invgamma_rate(a)); }

/// NumPy's POISSON_LAM_MAX: INT64_MAX - 10 sqrt(INT64_MAX), in double.
inline constexpr double kPoissonLamMax = 9.223372006484771e+18;
inline const char* poisson_check(const Args& a) {
  if (!(a.x[0] <= kPoissonLamMax)) return "lam value too large";
  if (!(a.x[0] >= 0)) return "lam < 0 or lam contains NaNs";
  return nullptr;
}
inline std::int64_t poisson_draw(Pcg64& g, const Args& a) { return poisson(g, a.x[0]); }

inline const char* geometric_check(const Args& a) {
  return !(a.x[0] > 0 && a.x[0] <= 1) ? "p <= 0, p > 1 or p contains NaNs" : nullptr;
}
inline std::int64_t geometric_draw(Pcg64& g, const Args& a) { return geometric(g, a.x[0]); }

inline const char* binomial_check(const Args& a) {
  if (a.k[0] < 0) return "n < 0";
  if (outside_0_1(a.x[1])) return "p < 0, p > 1 or p contains NaNs";
  return nullptr;
}
inline std::int64_t binomial_draw(Pcg64& g, const Args& a) { return binomial(g, a.k[0], a.x[1]); }

inline const char* hypergeometric_check(const Args& a) {
  if (a.k[0] < 0) return "ngood < 0";
  if (a.k[2] < 0) return "nsample < 0";
  if (a.k[0] + a.k[1] < a.k[2]) return "ngood + nbad < nsample";  // NumPy's order of checks
  if (a.k[1] < 0) return "nbad < 0";
  if (a.k[0] >= 1000000000 || a.k[1] >= 1000000000) return "both ngood and nbad must be less than 1000000000";
  return nullptr;
}
inline std::int64_t hypergeometric_draw(Pcg64& g, const Args& a) { return hypergeometric(g, a.k[0], a.k[1], a.k[2]); }

inline const char* integers_check(const Args& a) { return a.k[0] >= a.k[1] ? "low >= high" : nullptr; }
inline std::int64_t integers_draw(Pcg64& g, const Args& a) { return integers_int64(g, a.k[0], a.k[1]); }

// PyTensor's ScipyRandomVariables whose SciPy `rvs` is NumPy draws and arithmetic:
// `_argcheck(*args) & (scale >= 0)` over the parameters ("Domain error in arguments", NaN
// refused), then `_rvs(...) * scale + loc`. SciPy draws nothing and returns `loc` when `scale`
// is 0 everywhere: the caller handles that (RvDistribution::zero_scale_param).
inline constexpr const char* kScipyDomainError =
    "Domain error in arguments. The `scale` parameter must be positive for all distributions, and many "
    "distributions have restrictions on shape parameters";

/// scipy.stats.halfnorm(loc, scale): |standard normal| * scale + loc.
inline const char* halfnormal_check(const Args& a) { return !(a.x[1] >= 0) ? kScipyDomainError : nullptr; }
inline double halfnormal_draw(Pcg64& g, const Args& a) { return std::fabs(standard_normal(g)) * a.x[1] + a.x[0]; }

/// scipy.stats.t(df, loc, scale): NumPy's standard_t(df) * scale + loc.
inline const char* t_check(const Args& a) { return !(a.x[0] > 0) || !(a.x[2] >= 0) ? kScipyDomainError : nullptr; }
inline double t_draw(Pcg64& g, const Args& a) { return standard_t(g, a.x[0]) * a.x[2] + a.x[1]; }

/// scipy.stats.bernoulli(p): NumPy's binomial(1, p).
inline const char* bernoulli_check(const Args& a) { return !(a.x[0] >= 0 && a.x[0] <= 1) ? kScipyDomainError : nullptr; }
inline std::int64_t bernoulli_draw(Pcg64& g, const Args& a) { return binomial(g, 1, a.x[0]); }

/// scipy.stats.nbinom(n, p): NumPy's negative_binomial(n, p), with NumPy's own bound on the
/// Poisson rate it would need.
inline const char* negative_binomial_check(const Args& a) {
  const double n = a.x[0], p = a.x[1];
  if (!(n > 0) || !(p > 0) || !(p <= 1)) return kScipyDomainError;
  if ((1 - p) / p * (n + 10 * std::sqrt(n)) > kPoissonLamMax)
    return "n too large or p too small, see Generator.negative_binomial Notes";
  return nullptr;
}
inline std::int64_t negative_binomial_draw(Pcg64& g, const Args& a) { return negative_binomial(g, a.x[0], a.x[1]); }

// ScipyRandomVariables SciPy samples by inversion: `_ppf(U)` with NumPy's uniform U, then
// * scale + loc; the `_ppf` formulas are SciPy's, in NumPy's ufunc order (a float32 shape
// parameter keeps its own precision through the ufuncs that see it alone).

/// scipy.stats.gumbel_r(loc, scale): -log(-log(U)) * scale + loc.
inline const char* gumbel_check(const Args& a) { return !(a.x[1] >= 0) ? kScipyDomainError : nullptr; }
inline double gumbel_draw(Pcg64& g, const Args& a) {
  return -std::log(-std::log(g.next_double())) * a.x[1] + a.x[0];
}

/// scipy.stats.halfcauchy(loc, scale): tan(pi / 2 * U) * scale + loc.
inline const char* halfcauchy_check(const Args& a) { return !(a.x[1] >= 0) ? kScipyDomainError : nullptr; }
inline double halfcauchy_draw(Pcg64& g, const Args& a) {
  constexpr double kHalfPi = 3.141592653589793 / 2;
  return std::tan(kHalfPi * g.next_double()) * a.x[1] + a.x[0];
}

/// scipy.stats.pareto(b, scale=scale): pow(1 - U, -1.0 / b) * scale.
inline const char* pareto_check(const Args& a) { return !(a.x[0] > 0) || !(a.x[1] >= 0) ? kScipyDomainError : nullptr; }
inline double pareto_draw(Pcg64& g, const Args& a) {
  const double e = a.single[0] ? static_cast<double>(-1.0f / static_cast<float>(a.x[0])) : -1.0 / a.x[0];
  return std::pow(1 - g.next_double(), e) * a.x[1] + 0.0;
}

/// scipy.stats.truncexpon(b, loc, scale): -log1p(U * expm1(-b)) * scale + loc.
inline const char* truncexpon_check(const Args& a) { return !(a.x[0] > 0) || !(a.x[2] >= 0) ? kScipyDomainError : nullptr; }
inline double truncexpon_draw(Pcg64& g, const Args& a) {
  const double m = a.single[0] ? static_cast<double>(std::expm1(-static_cast<float>(a.x[0]))) : std::expm1(-a.x[0]);
  return -std::log1p(g.next_double() * m) * a.x[2] + a.x[1];
}

/// scipy.stats.cauchy(loc, scale): SciPy's `_ppf` is Boost's Cauchy quantile, which reduces U
/// to P in (-0.5, 0.5] and returns -1 / tan(pi P) (0 at P = 0.5). NumPy's U = 0 (probability
/// 2^-53) makes Boost raise an overflow error in SciPy; kiln gives -inf there.
inline const char* cauchy_check(const Args& a) { return !(a.x[1] >= 0) ? kScipyDomainError : nullptr; }
inline double cauchy_draw(Pcg64& g, const Args& a) {
  constexpr double kPi = 3.141592653589793;
  const double u = g.next_double();
  const double p = u > 0.5 ? u - 1 : u;
  const double ppf = p == 0.5 ? 0.0 : 0.0 + -1.0 / std::tan(kPi * p);
  return ppf * a.x[1] + a.x[0];
}

/// PyTensor's GenGammaRV(alpha, p, lambd) is scipy.stats.gengamma(alpha / p, p, scale=lambd):
/// `_argcheck(a, c)` is a > 0 and c != 0, `_rvs` is NumPy's standard_gamma(a) ** (1 / c). The
/// quotients keep float32 where NumPy's ufuncs see float32 alone.
inline double gengamma_shape(const Args& a) {
  return a.single[0] && a.single[1] ? static_cast<double>(static_cast<float>(a.x[0]) / static_cast<float>(a.x[1]))
                                    : a.x[0] / a.x[1];
}
inline double gengamma_power(const Args& a) {
  return a.single[1] ? static_cast<double>(1.0f / static_cast<float>(a.x[1])) : 1.0 / a.x[1];
}
inline const char* gengamma_check(const Args& a) {
  return !(gengamma_shape(a) > 0) || !(a.x[1] != 0) || !(a.x[2] >= 0) ? kScipyDomainError : nullptr;
}
inline double gengamma_draw(Pcg64& g, const Args& a) {
  return std::pow(standard_gamma(g, gengamma_shape(a)), gengamma_power(a)) * a.x[2] + 0.0;
}

/// scipy.stats.betabinom(n, a, b): `_argcheck` n >= 0 (an integer: NumPy's binomial refuses a
/// float n), a > 0, b > 0; `_rvs` draws beta(a, b) for every element first (the first pass),
/// then binomial(n, that beta) for every element.
inline const char* beta_binomial_check(const Args& a) {
  return a.k[0] < 0 || !(a.x[1] > 0) || !(a.x[2] > 0) ? kScipyDomainError : nullptr;
}
inline double beta_binomial_first(Pcg64& g, const Args& a) { return beta(g, a.x[1], a.x[2]); }
inline std::int64_t beta_binomial_draw(Pcg64& g, const Args& a) { return binomial(g, a.k[0], a.first); }

}  // namespace rv
}  // namespace kiln_random
