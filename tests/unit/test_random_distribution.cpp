// Distribution tests of kiln's random samplers: 10^5 draws per variable against the analytic
// CDF (Kolmogorov–Smirnov) or PMF (chi-square), with kiln's own CDFs written from their
// textbook definitions. Fixed seeds, so each check is deterministic; the bounds correspond to
// p-values around 1e-3 (KS: sqrt(n) D < 1.95) and 1e-6 (chi-square). About a second in all.
#include <algorithm>
#include <array>
#include <tuple>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "kiln/runtime/random/core_variables.hpp"
#include "kiln/runtime/random/multivariate.hpp"
#include "kiln/runtime/random/variables.hpp"
#include "ops/random_core.h"

namespace {

namespace kr = kiln_random;
constexpr int kDraws = 100000;
constexpr double kPi = 3.14159265358979323846;

kr::Pcg64 seeded(std::uint64_t seed) {
  const std::uint64_t w[6] = {seed * 0x9E3779B97F4A7C15ULL, ~seed, 0xDA3E39CB94B95BDBULL, 2 * seed + 1, 0, 0};
  kr::Pcg64 g = kr::Pcg64::from_words(w);
  for (int i = 0; i < 4; ++i) g.next_uint64();
  return g;
}

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

/// Regularized lower incomplete gamma P(a, x): series below a + 1, Lentz's continued fraction
/// for Q above (Abramowitz & Stegun 6.5.29 and 6.5.31).
double gamma_p(double a, double x) {
  if (x <= 0) return 0;
  const double log_front = a * std::log(x) - x - std::lgamma(a);
  if (x < a + 1) {
    double term = 1 / a, sum = term;
    for (int n = 1; n < 100000 && std::fabs(term) > 1e-17 * std::fabs(sum); ++n) sum += (term *= x / (a + n));
    return sum * std::exp(log_front);
  }
  double b = x + 1 - a, c = 1e300, d = 1 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    d = std::fabs(d) < 1e-300 ? 1e-300 : d;
    c = b + an / c;
    c = std::fabs(c) < 1e-300 ? 1e-300 : c;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1) < 1e-16) break;
  }
  return 1 - std::exp(log_front) * h;
}

/// Regularized incomplete beta I_x(a, b) by its continued fraction (A&S 26.5.8), with the
/// symmetry I_x(a, b) = 1 - I_{1-x}(b, a) where that converges faster.
double beta_i(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  if (x > (a + 1) / (a + b + 2)) return 1 - beta_i(b, a, 1 - x);
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x)) / a;
  double f = 1, c = 1, d = 0;
  for (int i = 0; i <= 100000; ++i) {
    const int m = i / 2;
    double num;
    if (i == 0) num = 1;
    else if (i % 2 == 0) num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
    else num = -((a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1));
    d = 1 + num * d;
    d = std::fabs(d) < 1e-300 ? 1e-300 : d;
    d = 1 / d;
    c = 1 + num / c;
    c = std::fabs(c) < 1e-300 ? 1e-300 : c;
    const double cd = c * d;
    f *= cd;
    if (std::fabs(1 - cd) < 1e-15) break;
  }
  return front * (f - 1);
}

double ks_statistic(std::vector<double> x, const std::function<double(double)>& cdf) {
  std::sort(x.begin(), x.end());
  const double n = double(x.size());
  double d = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double f = cdf(x[i]);
    d = std::max({d, f - i / n, (i + 1) / n - f});
  }
  return d;
}

void check_ks(const std::string& name, std::uint64_t seed, const std::function<double(kr::Pcg64&)>& draw,
              const std::function<double(double)>& cdf) {
  kr::Pcg64 g = seeded(seed);
  std::vector<double> x(kDraws);
  for (auto& v : x) v = draw(g);
  const double scaled = ks_statistic(std::move(x), cdf) * std::sqrt(double(kDraws));
  CAPTURE(name);
  CAPTURE(scaled);
  CHECK(scaled < 1.95);
}

/// Chi-square goodness of fit over the values with expected count >= 5 plus one bin for the
/// rest; the bound is dof + 7 sqrt(2 dof) (p around 1e-6 for the dof used here).
void check_chi2(const std::string& name, std::uint64_t seed, const std::function<std::int64_t(kr::Pcg64&)>& draw,
                const std::function<double(std::int64_t)>& pmf, std::int64_t lo, std::int64_t hi) {
  kr::Pcg64 g = seeded(seed);
  std::vector<double> counts(static_cast<std::size_t>(hi - lo + 2), 0.0);
  for (int i = 0; i < kDraws; ++i) {
    const std::int64_t k = draw(g);
    counts[k < lo || k > hi ? counts.size() - 1 : static_cast<std::size_t>(k - lo)] += 1;
  }
  double stat = 0, rest_expected = kDraws, rest_count = counts.back();
  int dof = 0;
  for (std::int64_t k = lo; k <= hi; ++k) {
    const double e = kDraws * pmf(k);
    if (e < 5) {
      rest_count += counts[k - lo];
      continue;
    }
    rest_expected -= e;
    stat += (counts[k - lo] - e) * (counts[k - lo] - e) / e;
    ++dof;
  }
  if (rest_expected >= 5) {
    stat += (rest_count - rest_expected) * (rest_count - rest_expected) / rest_expected;
    ++dof;
  } else {
    CHECK(rest_count <= 5 + 5 * std::max(rest_expected, 1.0));
  }
  --dof;
  CAPTURE(name);
  CAPTURE(stat);
  CAPTURE(dof);
  CHECK(dof > 0);
  CHECK(stat < dof + 7 * std::sqrt(2.0 * dof));
}

double log_choose(double n, double k) { return std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1); }

}  // namespace

TEST_CASE("random: continuous samplers follow their distributions (KS, 10^5 draws)") {
  check_ks("uniform", 1, [](kr::Pcg64& g) { return kr::uniform(g, -1, 3); }, [](double x) { return (x + 1) / 3; });
  check_ks("normal", 2, [](kr::Pcg64& g) { return kr::normal(g, 1, 2); }, [](double x) { return normal_cdf((x - 1) / 2); });
  check_ks("exponential", 3, [](kr::Pcg64& g) { return kr::exponential(g, 2); }, [](double x) { return -std::expm1(-x / 2); });
  for (double shape : {0.3, 1.0, 2.5, 40.0})
    check_ks("gamma " + std::to_string(shape), 4, [=](kr::Pcg64& g) { return kr::gamma(g, shape, 1.5); },
             [=](double x) { return gamma_p(shape, x / 1.5); });
  for (const auto& item : {std::pair{0.4, 0.7}, std::pair{2.0, 5.0}, std::pair{0.5, 3.0}}) {
    const auto& a = std::get<0>(item);
    const auto& b = std::get<1>(item);
    check_ks("beta", 5, [=](kr::Pcg64& g) { return kr::beta(g, a, b); }, [=](double x) { return beta_i(a, b, x); });
  }
  check_ks("chisquare", 6, [](kr::Pcg64& g) { return kr::chisquare(g, 3); }, [](double x) { return gamma_p(1.5, x / 2); });
  for (double df : {1.0, 4.5})
    check_ks("standard_t", 7, [=](kr::Pcg64& g) { return kr::standard_t(g, df); }, [=](double t) {
      const double tail = 0.5 * beta_i(df / 2, 0.5, df / (df + t * t));
      return t > 0 ? 1 - tail : tail;
    });
  check_ks("standard_cauchy", 8, [](kr::Pcg64& g) { return kr::standard_cauchy(g); }, [](double x) { return 0.5 + std::atan(x) / kPi; });
  check_ks("lognormal", 9, [](kr::Pcg64& g) { return kr::lognormal(g, 0.3, 0.8); },
           [](double x) { return normal_cdf((std::log(x) - 0.3) / 0.8); });
  check_ks("laplace", 10, [](kr::Pcg64& g) { return kr::laplace(g, 1, 2); },
           [](double x) { return x < 1 ? 0.5 * std::exp((x - 1) / 2) : 1 - 0.5 * std::exp(-(x - 1) / 2); });
  check_ks("logistic", 11, [](kr::Pcg64& g) { return kr::logistic(g, 1, 2); }, [](double x) { return 1 / (1 + std::exp(-(x - 1) / 2)); });
  check_ks("gumbel", 12, [](kr::Pcg64& g) { return kr::gumbel(g, 1, 2); }, [](double x) { return std::exp(-std::exp(-(x - 1) / 2)); });
  check_ks("weibull", 13, [](kr::Pcg64& g) { return kr::weibull(g, 1.7); }, [](double x) { return -std::expm1(-std::pow(x, 1.7)); });
  check_ks("pareto", 14, [](kr::Pcg64& g) { return kr::pareto(g, 2.5); }, [](double x) { return 1 - std::pow(1 + x, -2.5); });
  check_ks("power", 15, [](kr::Pcg64& g) { return kr::power(g, 3); }, [](double x) { return std::pow(x, 3); });
  check_ks("rayleigh", 16, [](kr::Pcg64& g) { return kr::rayleigh(g, 2); }, [](double x) { return -std::expm1(-x * x / 8); });
  check_ks("triangular", 17, [](kr::Pcg64& g) { return kr::triangular(g, -1, 0.5, 2); },
           [](double x) { return x <= 0.5 ? (x + 1) * (x + 1) / (3 * 1.5) : 1 - (2 - x) * (2 - x) / (3 * 1.5); });
  check_ks("wald", 18, [](kr::Pcg64& g) { return kr::wald(g, 1.5, 2); }, [](double x) {
    const double mu = 1.5, lam = 2, s = std::sqrt(lam / x);
    return normal_cdf(s * (x / mu - 1)) + std::exp(2 * lam / mu) * normal_cdf(-s * (x / mu + 1));
  });
  for (double kappa : {0.5, 4.0}) {
    // The von Mises CDF on [-pi, pi] by Simpson's rule on a fine grid, interpolated.
    const int n = 20000;
    std::vector<double> cdf(n + 1, 0.0);
    const double h = 2 * kPi / n;
    auto pdf = [=](double t) { return std::exp(kappa * std::cos(t - 0.3)); };
    for (int i = 1; i <= n; ++i) {
      const double a = -kPi + (i - 1) * h;
      cdf[i] = cdf[i - 1] + h / 6 * (pdf(a) + 4 * pdf(a + h / 2) + pdf(a + h));
    }
    for (auto& c : cdf) c /= cdf[n];
    check_ks("vonmises", 19, [=](kr::Pcg64& g) { return kr::vonmises(g, 0.3, kappa); }, [&](double x) {
      const double pos = (x + kPi) / h;
      const int i = std::clamp(int(pos), 0, n - 1);
      return cdf[i] + (cdf[i + 1] - cdf[i]) * (pos - i);
    });
  }
}

TEST_CASE("random: discrete samplers follow their distributions (chi-square, 10^5 draws)") {
  for (double lam : {0.7, 6.0, 10.0, 75.0})
    check_chi2("poisson", 21, [=](kr::Pcg64& g) { return kr::poisson(g, lam); },
               [=](std::int64_t k) { return std::exp(k * std::log(lam) - lam - std::lgamma(k + 1.0)); }, 0, 200);
  for (const auto& item : {std::pair{20, 0.3}, std::pair{200, 0.4}, std::pair{500, 0.93}, std::pair{40, 0.99}}) {
    const auto& n = std::get<0>(item);
    const auto& p = std::get<1>(item);
    check_chi2("binomial", 22, [=](kr::Pcg64& g) { return kr::binomial(g, n, p); },
               [=](std::int64_t k) { return std::exp(log_choose(n, k) + k * std::log(p) + (n - k) * std::log1p(-p)); }, 0, n);
  }
  for (double p : {0.6, 0.2, 0.01})
    check_chi2("geometric", 23, [=](kr::Pcg64& g) { return kr::geometric(g, p); },
               [=](std::int64_t k) { return p * std::pow(1 - p, double(k - 1)); }, 1, 3000);
  check_chi2("negative_binomial", 24, [](kr::Pcg64& g) { return kr::negative_binomial(g, 3.5, 0.3); },
             [](std::int64_t k) {
               return std::exp(std::lgamma(k + 3.5) - std::lgamma(3.5) - std::lgamma(k + 1.0) + 3.5 * std::log(0.3) + k * std::log(0.7));
             }, 0, 300);
  for (const auto& item : {std::tuple{30, 20, 7}, std::tuple{300, 500, 100}, std::tuple{20, 70, 85}}) {
    const auto& good = std::get<0>(item);
    const auto& bad = std::get<1>(item);
    const auto& s = std::get<2>(item);
    check_chi2("hypergeometric", 25, [=](kr::Pcg64& g) { return kr::hypergeometric(g, good, bad, s); },
               [=](std::int64_t k) {
                 if (k > good || s - k > bad || k < 0) return 0.0;
                 return std::exp(log_choose(good, k) + log_choose(bad, s - k) - log_choose(good + bad, s));
               }, 0, s);
  }
  check_chi2("integers", 26, [](kr::Pcg64& g) { return kr::integers_int64(g, -3, 17); }, [](std::int64_t) { return 1 / 20.0; }, -3, 16);
  check_chi2("categorical", 27, [](kr::Pcg64& g) {
    const double p[4] = {0.1, 0.4, 0.25, 0.25};
    return kr::categorical(g, p, 4);
  }, [](std::int64_t k) { return std::array<double, 4>{0.1, 0.4, 0.25, 0.25}[k]; }, 0, 3);
}

// The RandomVariables' own formulas (variables.hpp, core_variables.hpp) on top of the samplers.
namespace {

// One core sample of `kind` with unbatched float64 parameters; returns component `j`.
template <typename T>
T core_component(kr::Pcg64& g, kr::core::Kind kind, const std::vector<std::vector<double>>& values,
                 const std::vector<std::vector<std::int64_t>>& shapes, std::size_t j) {
  const kr::core::Spec spec = kr::core::spec_of(kind);
  std::vector<std::vector<std::int64_t>> strides(shapes.size());
  std::vector<kr::core::Param> params;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    std::int64_t st = 1;
    strides[i].assign(shapes[i].size(), 0);
    for (std::size_t d = shapes[i].size(); d-- > 0;) {
      strides[i][d] = st;
      st *= shapes[i][d];
    }
    params.push_back({values[i].data(), kr::core::kF64, static_cast<int>(shapes[i].size()), shapes[i].data(),
                      strides[i].data()});
  }
  std::vector<std::int64_t> batch, shape;
  REQUIRE(kr::core::draws_shape(spec, params.data(), nullptr, 0, batch, shape) == nullptr);
  std::vector<double> real(8);
  std::vector<std::int64_t> ints(8);
  REQUIRE(kr::core::draw(spec, g, params.data(), batch, real.data(), ints.data(), kiln::mvnormal_cholesky) == nullptr);
  if constexpr (std::is_integral_v<T>)
    return ints[j];
  else
    return real[j];
}

}  // namespace

TEST_CASE("random: RandomVariable formulas follow their distributions (KS / chi-square, 10^5 draws)") {
  namespace rv = kr::rv;
  check_ks("CauchyRV", 31, [](kr::Pcg64& g) {
    rv::Args a;
    a.x[0] = 1, a.x[1] = 2;
    return rv::cauchy_draw(g, a);
  }, [](double x) { return 0.5 + std::atan((x - 1) / 2) / kPi; });
  // gengamma(alpha=3, p=1.5, lambd=2): (x / lambd)^p ~ Gamma(alpha / p).
  check_ks("GenGammaRV", 32, [](kr::Pcg64& g) {
    rv::Args a;
    a.x[0] = 3, a.x[1] = 1.5, a.x[2] = 2;
    return rv::gengamma_draw(g, a);
  }, [](double x) { return gamma_p(2.0, std::pow(x / 2, 1.5)); });
  check_chi2("BetaBinomialRV", 33, [](kr::Pcg64& g) {
    rv::Args a;
    a.k[0] = 12, a.x[1] = 2, a.x[2] = 3;
    a.first = rv::beta_binomial_first(g, a);
    return rv::beta_binomial_draw(g, a);
  }, [](std::int64_t k) {
    auto log_beta = [](double x, double y) { return std::lgamma(x) + std::lgamma(y) - std::lgamma(x + y); };
    return std::exp(log_choose(12, k) + log_beta(k + 2.0, 12 - k + 3.0) - log_beta(2, 3));
  }, 0, 12);
  using K = kr::core::Kind;
  // Dirichlet's components are Beta(alpha_j, sum - alpha_j): the gamma path and the beta path.
  check_ks("DirichletRV", 34, [](kr::Pcg64& g) { return core_component<double>(g, K::Dirichlet, {{0.5, 2.0, 3.5}}, {{3}}, 0); },
           [](double x) { return beta_i(0.5, 5.5, x); });
  // (Alphas not much below 0.1: smaller ones pile a visible mass at exactly 1.0 in double.)
  check_ks("DirichletRV small", 35,
           [](kr::Pcg64& g) { return core_component<double>(g, K::Dirichlet, {{0.09, 0.08, 0.07}}, {{3}}, 0); },
           [](double x) { return beta_i(0.09, 0.15, x); });
  check_chi2("MultinomialRV", 36, [](kr::Pcg64& g) {
    return core_component<std::int64_t>(g, K::Multinomial, {{20.0}, {0.2, 0.5, 0.3}}, {{}, {3}}, 2);
  }, [](std::int64_t k) { return std::exp(log_choose(20, k) + k * std::log(0.3) + (20 - k) * std::log(0.7)); }, 0, 20);
  check_chi2("CategoricalRV", 37, [](kr::Pcg64& g) {
    return core_component<std::int64_t>(g, K::Categorical, {{0.1, 0.4, 0.25, 0.25}}, {{4}}, 0);
  }, [](std::int64_t k) { return std::array<double, 4>{0.1, 0.4, 0.25, 0.25}[k]; }, 0, 3);
  // MvNormal(mean (1, -2), cov [[4, 1.2], [1.2, 1]]): x1 ~ N(-2, 1), x0 - x1 ~ N(3, 2.6).
  const std::vector<std::vector<double>> mvn = {{1.0, -2.0}, {4.0, 1.2, 1.2, 1.0}};
  check_ks("MvNormalRV x1", 38, [&](kr::Pcg64& g) { return core_component<double>(g, K::MvNormal, mvn, {{2}, {2, 2}}, 1); },
           [](double x) { return normal_cdf(x + 2); });
  check_ks("MvNormalRV x0 - x1", 39, [&](kr::Pcg64& g) {
    kr::Pcg64 h = g;
    const double x0 = core_component<double>(h, K::MvNormal, mvn, {{2}, {2, 2}}, 0);
    const double x1 = core_component<double>(g, K::MvNormal, mvn, {{2}, {2, 2}}, 1);
    return x0 - x1;
  }, [](double x) { return normal_cdf((x - 3) / std::sqrt(2.6)); });
}
