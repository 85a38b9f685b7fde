// kiln's random library against NumPy's Generator(PCG64): every case of
// tests/fixtures/random/numpy_streams.json (tests/fixtures/random/gen_random.py) must give the
// same draws bit for bit and leave the same bit-generator state.
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "kiln/runtime/random/multivariate.hpp"

namespace {

using nlohmann::json;
namespace kr = kiln_random;

/// One parameter of a case: its NumPy shape and C-order values.
struct Param {
  std::vector<std::int64_t> shape;
  std::vector<double> f;
  std::vector<std::int64_t> i;
};

/// The element of `p` that NumPy's broadcasting pairs with output index `flat` of `out_shape`.
std::int64_t broadcast_index(const Param& p, const std::vector<std::int64_t>& out_shape, std::int64_t flat) {
  std::int64_t index = 0, stride = 1;
  const std::size_t lead = out_shape.size() - p.shape.size();
  for (std::size_t d = out_shape.size(); d-- > 0;) {
    const std::int64_t coord = flat % out_shape[d];
    flat /= out_shape[d];
    if (d < lead) continue;
    const std::int64_t len = p.shape[d - lead];
    if (len != 1) index += coord * stride;
    stride *= len;
  }
  return index;
}

/// What a case's draws are compared with: doubles bit for bit, integers exactly.
struct Draws {
  std::vector<double> f;
  std::vector<std::int64_t> i;
};

using Scalar1 = std::function<double(kr::Pcg64&, const std::vector<double>&)>;
using Integer1 = std::function<std::int64_t(kr::Pcg64&, const std::vector<Param>&, const std::vector<std::int64_t>&)>;

/// The elementwise methods: NumPy fills the broadcast output in C order, one draw each.
const std::map<std::string, Scalar1>& float_methods() {
  static const std::map<std::string, Scalar1> m = {
      {"random", [](kr::Pcg64& g, const std::vector<double>&) { return g.next_double(); }},
      {"standard_normal", [](kr::Pcg64& g, const std::vector<double>&) { return kr::standard_normal(g); }},
      {"standard_exponential", [](kr::Pcg64& g, const std::vector<double>&) { return kr::standard_exponential(g); }},
      {"standard_cauchy", [](kr::Pcg64& g, const std::vector<double>&) { return kr::standard_cauchy(g); }},
      {"normal", [](kr::Pcg64& g, const std::vector<double>& a) { return kr::normal(g, a[0], a[1]); }},
      {"uniform", [](kr::Pcg64& g, const std::vector<double>& a) { return kr::uniform(g, a[0], a[1] - a[0]); }},
      {"lognormal", [](kr::Pcg64& g, const std::vector<double>& a) { return kr::lognormal(g, a[0], a[1]); }},
      {"laplace", [](kr::Pcg64& g, const std::vector<double>& a) { return kr::laplace(g, a[0], a[1]); }},
      {"logistic", [](kr::Pcg64& g, const std::vector<double>& a) { return kr::logistic(g, a[0], a[1]); }},
      {"gumbel", [](kr::Pcg64& g, const std::vector<double>& a) { return kr::gumbel(g, a[0], a[1]); }},
      {"wald", [](kr::Pcg64& g, const std::vector<double>& a) { return kr::wald(g, a[0], a[1]); }},
      {"vonmises", [](kr::Pcg64& g, const std::vector<double>& a) { return kr::vonmises(g, a[0], a[1]); }},
      {"gamma", [](kr::Pcg64& g, const std::vector<double>& a) { return kr::gamma(g, a[0], a[1]); }},
      {"beta", [](kr::Pcg64& g, const std::vector<double>& a) { return kr::beta(g, a[0], a[1]); }},
      {"triangular", [](kr::Pcg64& g, const std::vector<double>& a) { return kr::triangular(g, a[0], a[1], a[2]); }},
      {"exponential", [](kr::Pcg64& g, const std::vector<double>& a) { return kr::exponential(g, a[0]); }},
      {"standard_gamma", [](kr::Pcg64& g, const std::vector<double>& a) { return kr::standard_gamma(g, a[0]); }},
      {"chisquare", [](kr::Pcg64& g, const std::vector<double>& a) { return kr::chisquare(g, a[0]); }},
      {"standard_t", [](kr::Pcg64& g, const std::vector<double>& a) { return kr::standard_t(g, a[0]); }},
      {"pareto", [](kr::Pcg64& g, const std::vector<double>& a) { return kr::pareto(g, a[0]); }},
      {"weibull", [](kr::Pcg64& g, const std::vector<double>& a) { return kr::weibull(g, a[0]); }},
      {"power", [](kr::Pcg64& g, const std::vector<double>& a) { return kr::power(g, a[0]); }},
      {"rayleigh", [](kr::Pcg64& g, const std::vector<double>& a) { return kr::rayleigh(g, a[0]); }},
  };
  return m;
}

const std::map<std::string, Scalar1>& int_methods() {
  static const std::map<std::string, Scalar1> m = {
      {"poisson", [](kr::Pcg64& g, const std::vector<double>& a) { return double(kr::poisson(g, a[0])); }},
      {"geometric", [](kr::Pcg64& g, const std::vector<double>& a) { return double(kr::geometric(g, a[0])); }},
      {"negative_binomial",
       [](kr::Pcg64& g, const std::vector<double>& a) { return double(kr::negative_binomial(g, a[0], a[1])); }},
  };
  return m;
}

/// Runs one case through kiln's library.
Draws run_case(kr::Pcg64& g, const std::string& method, const std::vector<Param>& params,
               const std::vector<std::int64_t>& shape) {
  Draws d;
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  auto float_args = [&](std::int64_t k) {
    std::vector<double> a;
    for (const auto& p : params) {
      const std::int64_t at = broadcast_index(p, shape, k);
      a.push_back(p.f.empty() ? double(p.i[at]) : p.f[at]);
    }
    return a;
  };
  auto int_arg = [&](std::size_t which, std::int64_t k) { return params[which].i[broadcast_index(params[which], shape, k)]; };
  if (auto it = float_methods().find(method); it != float_methods().end()) {
    for (std::int64_t k = 0; k < n; ++k) d.f.push_back(it->second(g, float_args(k)));
  } else if (auto it2 = int_methods().find(method); it2 != int_methods().end()) {
    for (std::int64_t k = 0; k < n; ++k) d.i.push_back(static_cast<std::int64_t>(it2->second(g, float_args(k))));
  } else if (method == "binomial") {
    for (std::int64_t k = 0; k < n; ++k) d.i.push_back(kr::binomial(g, int_arg(0, k), params[1].f[broadcast_index(params[1], shape, k)]));
  } else if (method == "hypergeometric") {
    for (std::int64_t k = 0; k < n; ++k) d.i.push_back(kr::hypergeometric(g, int_arg(0, k), int_arg(1, k), int_arg(2, k)));
  } else if (method == "integers") {
    for (std::int64_t k = 0; k < n; ++k) d.i.push_back(kr::integers_int64(g, int_arg(0, k), int_arg(1, k)));
  } else if (method == "multinomial" || method == "dirichlet" || method == "categorical") {
    const Param& p = params.back();
    const std::int64_t core = method == "categorical" ? 1 : shape.back();
    const std::int64_t k_len = p.shape.back();
    std::vector<std::int64_t> batch_shape(shape.begin(), shape.end() - (method == "categorical" ? 0 : 1));
    Param batch_p{std::vector<std::int64_t>(p.shape.begin(), p.shape.end() - 1), {}, {}};
    for (std::int64_t b = 0; b < n / core; ++b) {
      const double* pv = p.f.data() + broadcast_index(batch_p, batch_shape, b) * k_len;
      if (method == "multinomial") {
        std::vector<std::int64_t> out(static_cast<std::size_t>(k_len));
        kr::multinomial(g, params[0].i[0], pv, k_len, out.data());
        d.i.insert(d.i.end(), out.begin(), out.end());
      } else if (method == "dirichlet") {
        std::vector<double> out(static_cast<std::size_t>(k_len));
        kr::dirichlet(g, pv, k_len, out.data());
        d.f.insert(d.f.end(), out.begin(), out.end());
      } else {
        d.i.push_back(kr::categorical(g, pv, k_len));
      }
    }
  } else if (method == "permutation") {
    d.i.resize(static_cast<std::size_t>(n));
    kr::permutation_indices(g, n, d.i.data());
  } else if (method == "choice") {
    d.i.resize(static_cast<std::size_t>(n));
    kr::choice_without_replacement(g, params[0].i[0], params[1].i[0], d.i.data());
  } else {
    FAIL("no kiln sampler for NumPy method " << method);
  }
  return d;
}

std::vector<std::uint64_t> words(const json& j) { return j.get<std::vector<std::uint64_t>>(); }

std::uint64_t bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

}  // namespace

TEST_CASE("random: kiln's samplers reproduce NumPy's Generator(PCG64) streams bit for bit") {
  std::ifstream in(std::string(KILN_FIXTURES_DIR) + "/random/numpy_streams.json");
  REQUIRE(in.good());
  const json fixture = json::parse(in);
  MESSAGE("fixtures from NumPy " << fixture.at("numpy_version").get<std::string>());
  std::map<std::string, int> checked;
  for (const json& c : fixture.at("cases")) {
    const std::string method = c.at("method");
    std::vector<Param> params;
    for (const json& p : c.at("params")) {
      Param q{p.at("shape").get<std::vector<std::int64_t>>(), {}, {}};
      for (const json& v : p.at("data")) {
        if (v.is_number_float()) q.f.push_back(v.get<double>());
        else q.i.push_back(v.get<std::int64_t>());
      }
      if (!q.f.empty() && !q.i.empty()) {  // a float array that holds integral values
        for (auto x : q.i) q.f.push_back(double(x));
        q.i.clear();
      }
      params.push_back(std::move(q));
    }
    const auto shape = c.at("shape").get<std::vector<std::int64_t>>();
    const auto before = words(c.at("state"));
    kr::Pcg64 g = kr::Pcg64::from_words(before.data());
    const Draws got = run_case(g, method, params, shape);
    CAPTURE(method);
    CAPTURE(c.at("params").dump().substr(0, 200));
    const json& want = c.at("out");
    if (!got.f.empty() || (got.i.empty() && want.empty())) {
      REQUIRE(got.f.size() == want.size());
      for (std::size_t k = 0; k < want.size(); ++k) {
        CAPTURE(k);
        REQUIRE(bits(got.f[k]) == bits(want[k].get<double>()));
      }
    } else {
      REQUIRE(got.i.size() == want.size());
      for (std::size_t k = 0; k < want.size(); ++k) {
        CAPTURE(k);
        REQUIRE(got.i[k] == want[k].get<std::int64_t>());
      }
    }
    std::uint64_t after[kr::kStateWords];
    g.to_words(after);
    CHECK(std::vector<std::uint64_t>(after, after + kr::kStateWords) == words(c.at("state_after")));
    checked[method] += 1;
  }
  CHECK(checked.size() == 34);
}

TEST_CASE("random: the six-word state layout round-trips") {
  const std::uint64_t w[6] = {0x0123456789abcdefULL, 0xfedcba9876543210ULL, 0x1ULL, 0x3ULL, 1, 0xdeadbeef};
  kr::Pcg64 g = kr::Pcg64::from_words(w);
  std::uint64_t back[6];
  g.to_words(back);
  CHECK(std::memcmp(w, back, sizeof w) == 0);
  CHECK(g.next_uint32() == 0xdeadbeefu);  // the buffered half-word comes first
  CHECK_FALSE(g.has_uint32);
}
