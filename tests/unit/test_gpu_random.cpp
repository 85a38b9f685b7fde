// RandomVariables on the GPU backends (templates/gpu/random_math.h, codegen/gpu/emit_random.cpp;
// docs/random.md, "On the GPU"): Philox4x64-10 streams, one per output element.
//
// - The kernel text compiled as C++ here: its Philox4x64-10 blocks, the key of an rng value and
//   next_rng against known answers NumPy's own Philox computed (scripts/gen_philox_known_answers.py).
// - Through the opencl backend (PoCL), one bundle: UniformRV(0, 1) draws bit for bit NumPy's
//   Philox words (the whole path: key, counters, 53-bit doubles), next_rng, determinism (the same
//   rng draws the same values, next_rng fed back or chained in a graph draws others), every
//   distribution the GPU draws against the reference evaluator's PCG64 draws of the same
//   distribution by a two-sample Kolmogorov-Smirnov statistic under a fixed bound (fixed seeds:
//   the statistics are deterministic), per parameter tuple (broadcast parameters, `size`,
//   float32/int32 dtypes) and, for draws with core dimensions, per category, component or
//   place; their properties (multinomial counts sum to n, a permutation's rows are x's, a
//   choice without replacement repeats nothing, MvNormal's sample covariance is cov); 0-d and
//   zero-length draws, and parameter errors with the C++ backend's messages.
// - Through the cuda backend: the same graphs built by nvcc (no device here).
#include <doctest/doctest.h>

#include <math.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <set>
#include <sstream>

#include "codegen/gpu/backend.h"
#include "compiled.h"
#include "device_call.h"
#include "driver/build.h"
#include "driver/nvcc.h"
#include "eval/evaluator.h"
#include "fixtures.h"
#include "ir/error.h"
#include "ir/fgraph.h"
#include "ir/node.h"
#include "ops/array_util.h"
#include "ops/constant.h"
#include "ops/random.h"
#include "ops/random_choice.h"
#include "ops/random_core.h"
#include "ops/random_permutation.h"

#ifdef KILN_TEST_OPENCL
#include "kiln/opencl.hpp"
#endif

// The kernel text as C++: the dialect's macros spelled for the host.
namespace kiln_gpu_text {
#define KILN_FN static inline
#define KILN_INF INFINITY
static inline uint64_t kiln_test_mulhi64(uint64_t a, uint64_t b) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(a) * b) >> 64);
}
#define KILN_MULHI64 kiln_test_mulhi64
#include "../../templates/gpu/random_math.h"
#undef KILN_FN
#undef KILN_INF
#undef KILN_MULHI64
}  // namespace kiln_gpu_text

using namespace kiln;
using namespace kiln::testing;

namespace {

// scripts/gen_philox_known_answers.py (NumPy 1.24.2): {counter[4], key[2], block[4]}.
struct PhiloxAnswer {
  uint64_t counter[4], key[2], block[4];
};
const PhiloxAnswer kPhilox[] = {
    {{0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL}, {0x0000000000000000ULL, 0x0000000000000000ULL}, {0x16554d9eca36314cULL, 0xdb20fe9d672d0fdcULL, 0xd7e772cee186176bULL, 0x7e68b68aec7ba23bULL}},
    {{0x0000000000000001ULL, 0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL}, {0x0000000000000000ULL, 0x0000000000000000ULL}, {0x02f4ba6408e4d89bULL, 0x3dd62b0b9ca8c5b2ULL, 0x1c8667a55d902e79ULL, 0x907d7a052fd5b4dcULL}},
    {{0x0000000000000000ULL, 0x0000000000000007ULL, 0x0000000000000000ULL, 0x0000000000000000ULL}, {0x000000000000007bULL, 0x00000000000001c8ULL}, {0xdfef567000ae965fULL, 0xc25f2a6568e192b6ULL, 0x9b8850f38800d429ULL, 0xf96d8d16bd14f182ULL}},
    {{0xffffffffffffffffULL, 0xffffffffffffffffULL, 0xffffffffffffffffULL, 0xffffffffffffffffULL}, {0xffffffffffffffffULL, 0xffffffffffffffffULL}, {0x87b092c3013fe90bULL, 0x438c3c67be8d0224ULL, 0x9cc7d7c69cd777b6ULL, 0xa09caebf594f0ba0ULL}},
    {{0x0000000000000003ULL, 0x0000010000000000ULL, 0x0000000000000005ULL, 0x0000000000000009ULL}, {0x243f6a8885a308d3ULL, 0x13198a2e03707344ULL}, {0xa0bac263a7d903ccULL, 0xd881def27da5b4a8ULL, 0xf0a516476051ef3bULL, 0xe0385a66ef8b09a3ULL}},
};

// An rng value (NumPy's PCG64(seed) in kiln's six words), its Philox key, next_rng, and the
// first uniform of output elements 0..5.
struct StreamAnswer {
  uint64_t words[6], key[2], next[6];
  double uniforms[6];
};
const StreamAnswer kStreams[] = {
    // seed 19
    {{0x38b480e5c3fee5ebULL, 0x5cc07ecf48923a08ULL, 0x08ec6de1cfef1833ULL, 0x16b47d7b07061ce7ULL, 0x0000000000000000ULL, 0x0000000000000000ULL}, {0x96aada3673496b96ULL, 0x41dc6fb3dd9f6103ULL}, {0x04bdc7707d05db63ULL, 0xd38624c75093710fULL, 0x08ec6de1cfef1833ULL, 0x16b47d7b07061ce7ULL, 0x0000000000000000ULL, 0x0000000000000000ULL},
     {0.17181158124346552, 0.42868731870890087, 0.21111664322373913, 0.00480374747822454, 0.6266020238977175, 0.879322412212086}},
    // seed 2024
    {{0x30854d7e4a72efbfULL, 0x6956825c3204f31eULL, 0xc67e5ec6f768fa51ULL, 0xdf440b34fffb7769ULL, 0x0000000000000000ULL, 0x0000000000000000ULL}, {0x885f6242d76e92cbULL, 0xa5b207d0381e48e7ULL}, {0xb914e58848c25d0aULL, 0x8baecec89ad7d27fULL, 0xc67e5ec6f768fa51ULL, 0xdf440b34fffb7769ULL, 0x0000000000000000ULL, 0x0000000000000000ULL},
     {0.4816347923323946, 0.6103931577693507, 0.6121986291818066, 0.34513104421935004, 0.8924525044116386, 0.3831182639881031}},
};

Array rng_array(const uint64_t* words) {
  Array a = Array::empty(DType::UInt64, {kRngStateWords});
  std::copy(words, words + kRngStateWords, a.data<uint64_t>());
  return a;
}

// A parameter array of `dt` holding `values` in `shape`.
Array param(DType dt, const Shape& shape, const std::vector<double>& values) {
  Array a = Array::zeros(DType::Float64, shape);
  REQUIRE(static_cast<std::size_t>(a.size()) == values.size());
  std::copy(values.begin(), values.end(), a.data<double>());
  return astype(a, dt);
}
Array real(const std::vector<double>& v) { return param(DType::Float64, v.size() == 1 ? Shape{} : Shape{static_cast<int64_t>(v.size())}, v); }
Array integer(const std::vector<double>& v) { return param(DType::Int64, v.size() == 1 ? Shape{} : Shape{static_cast<int64_t>(v.size())}, v); }

// One draw: a graph (rng, *params) -> (next_rng, draws) of `op` with `size` (none when empty
// and `no_size`), and the inputs to call it with.
struct DrawCase {
  std::string name;
  std::unique_ptr<FunctionGraph> graph;
  std::vector<Array> inputs;
  int64_t group = 1;  // draws whose flat index agrees modulo `group` share their parameters
  double floor = 0;   // the laws are compared above this value (values below it count as it)
  std::string error;  // a refusal's words (empty: the call succeeds)
  int64_t calls = 1;  // draws from this many rng values (each call's draws follow the last's)
  // A property every GPU draw must have (draws, the call's inputs), beyond the law.
  std::function<void(const Array&, const std::vector<Array>&)> property;
};

DrawCase draw_case(const std::string& name, const std::string& op, const std::vector<Array>& params,
                   std::optional<std::vector<int64_t>> size, std::optional<DType> dtype = std::nullopt,
                   const uint64_t* words = kStreams[0].words) {
  DrawCase c;
  c.name = name;
  VarList inputs = {make_input(rng_type(), "rng")};
  VarList ps;
  for (std::size_t i = 0; i < params.size(); ++i) {
    inputs.push_back(make_input(TensorType(params[i].dtype(), Shape(params[i].ndim(), kUnknownLength)), "p" + std::to_string(i)));
    ps.push_back(inputs.back());
  }
  const Var sz = size ? int64_vector_constant(*size) : nullptr;
  auto [next, draws] = random_variable(op, inputs[0], sz, ps, dtype);
  c.graph = std::make_unique<FunctionGraph>(inputs, VarList{next, draws}, name);
  c.inputs.push_back(rng_array(words));
  for (const Array& p : params) c.inputs.push_back(p);
  return c;
}

// A NormalRV whose `size` is an input (read to the host at run time): (rng, size, loc, scale).
DrawCase dynamic_size_case(const std::string& name, const std::vector<int64_t>& size) {
  DrawCase c;
  c.name = name;
  const Var rng = make_input(rng_type(), "rng");
  const Var sz = make_input(TensorType(DType::Int64, {static_cast<int64_t>(size.size())}), "size");
  const Var loc = make_input(TensorType(DType::Float64, {kUnknownLength}), "loc");
  auto [next, draws] = random_variable("NormalRV", rng, sz, {loc, scalar_constant(DType::Float64, 2.0)});
  c.graph = std::make_unique<FunctionGraph>(VarList{rng, sz, loc}, VarList{next, draws}, name);
  c.inputs.push_back(rng_array(kStreams[0].words));
  Array s = Array::empty(DType::Int64, {static_cast<int64_t>(size.size())});
  std::copy(size.begin(), size.end(), s.data<int64_t>());
  c.inputs.push_back(s);
  c.inputs.push_back(real({1.0, 2.0, 3.0}));
  return c;
}

// A draw by an op that random_variable does not build (PermutationRV, ChoiceWithoutReplacement):
// (rng, *params) -> (next_rng, draws), `size` and `consts` (after the parameters) constants.
DrawCase op_case(const std::string& name, const OpPtr& op, const std::vector<Array>& params, const Var& size,
                 const VarList& consts = {}) {
  DrawCase c;
  c.name = name;
  VarList inputs = {make_input(rng_type(), "rng")};
  VarList args = {inputs[0], size ? size : make_constant(Array::empty(DType::Bool, {0}), {}, TypeKind::None)};
  for (std::size_t i = 0; i < params.size(); ++i) {
    inputs.push_back(make_input(TensorType(params[i].dtype(), Shape(params[i].ndim(), kUnknownLength)), "p" + std::to_string(i)));
    args.push_back(inputs.back());
  }
  args.insert(args.end(), consts.begin(), consts.end());
  const auto node = make_node(op, args);
  c.graph = std::make_unique<FunctionGraph>(inputs, VarList{node->output(0), node->output(1)}, name);
  c.inputs.push_back(rng_array(kStreams[0].words));
  for (const Array& p : params) c.inputs.push_back(p);
  return c;
}

// The rng of call i of a case: the case's rng moved i steps of the golden ratio.
std::vector<Array> call_inputs(const DrawCase& c, int64_t i) {
  std::vector<Array> in = c.inputs;
  in[0] = in[0].copy();
  in[0].data<uint64_t>()[1] += static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ULL;
  return in;
}

// Properties of the draws with core dimensions: each block of `k` counts sums to n (a 1-d n of
// the blocks' period, or one n); each block of n rows of rowlen values is a permutation of
// x's rows; no index repeats within a draw; the sample covariance of k-vectors is cov.
std::function<void(const Array&, const std::vector<Array>&)> counts_sum_to(int64_t k) {
  return [k](const Array& draws, const std::vector<Array>& in) {
    const Array x = astype(draws, DType::Int64), n = astype(in[1], DType::Int64);
    int64_t bad = 0;
    for (int64_t b = 0; b * k < x.size(); ++b) {
      int64_t sum = 0;
      for (int64_t j = 0; j < k; ++j) sum += x.data<int64_t>()[b * k + j];
      bad += sum != n.data<int64_t>()[b % n.size()];
    }
    CHECK_MESSAGE(bad == 0, bad << " multinomial draws whose counts do not sum to n");
  };
}
std::function<void(const Array&, const std::vector<Array>&)> rows_permuted(int64_t n, int64_t rowlen) {
  return [n, rowlen](const Array& draws, const std::vector<Array>& in) {
    const Array x = astype(in.size() > 1 ? in[1] : draws, DType::Float64), y = astype(draws, DType::Float64);
    const auto rows_of = [&](const Array& a, int64_t block) {
      std::multiset<std::vector<double>> rows;
      for (int64_t i = 0; i < n; ++i) {
        const double* r = a.data<double>() + (block * n + i) * rowlen;
        rows.insert(std::vector<double>(r, r + rowlen));
      }
      return rows;
    };
    std::multiset<std::vector<double>> want;
    if (in.size() > 1) {
      want = rows_of(x, 0);  // x's one batch element, broadcast
    } else {
      for (int64_t i = 0; i < n; ++i) want.insert(std::vector<double>(1, static_cast<double>(i)));  // arange(n)
    }
    int64_t bad = 0;
    for (int64_t b = 0; b * n * rowlen < y.size(); ++b) bad += rows_of(y, b) != want;
    CHECK_MESSAGE(bad == 0, bad << " shuffles that are not permutations of x's rows");
  };
}
std::function<void(const Array&, const std::vector<Array>&)> no_repeats() {
  return [](const Array& draws, const std::vector<Array>&) {
    const Array y = astype(draws, DType::Float64);
    const std::set<double> seen(y.data<double>(), y.data<double>() + y.size());
    CHECK_MESSAGE(static_cast<int64_t>(seen.size()) == y.size(), "a choice without replacement repeats an element");
  };
}
std::function<void(const Array&, const std::vector<Array>&)> distinct_rows_of_a(int64_t rowlen) {
  return [rowlen](const Array& draws, const std::vector<Array>& in) {
    const Array a = astype(in[1], DType::Float64), y = astype(draws, DType::Float64);
    std::set<std::vector<double>> rows, seen;
    for (int64_t i = 0; i * rowlen < a.size(); ++i)
      rows.insert(std::vector<double>(a.data<double>() + i * rowlen, a.data<double>() + (i + 1) * rowlen));
    int64_t bad = 0;
    for (int64_t i = 0; i * rowlen < y.size(); ++i) {
      const std::vector<double> r(y.data<double>() + i * rowlen, y.data<double>() + (i + 1) * rowlen);
      bad += !rows.count(r) || !seen.insert(r).second;
    }
    CHECK_MESSAGE(bad == 0, bad << " drawn rows that are not distinct rows of a");
  };
}
std::function<void(const Array&, const std::vector<Array>&)> covariance_near(int64_t k,
                                                                              std::vector<std::vector<double>> covs,
                                                                              double tol) {
  // Block b of k values draws from covs[b % covs.size()] (a batch of covariances, last axis).
  return [k, covs, tol](const Array& draws, const std::vector<Array>&) {
    const Array y = astype(draws, DType::Float64);
    const int64_t nc = static_cast<int64_t>(covs.size()), m = y.size() / k / nc;
    const auto at = [&](int64_t b, int64_t c, int64_t i) { return y.data<double>()[(b * nc + c) * k + i]; };
    for (int64_t c = 0; c < nc; ++c) {
      std::vector<double> mean(static_cast<std::size_t>(k));
      for (int64_t b = 0; b < m; ++b)
        for (int64_t i = 0; i < k; ++i) mean[static_cast<std::size_t>(i)] += at(b, c, i) / static_cast<double>(m);
      for (int64_t i = 0; i < k; ++i)
        for (int64_t j = 0; j < k; ++j) {
          double acc = 0;
          for (int64_t b = 0; b < m; ++b)
            acc += (at(b, c, i) - mean[static_cast<std::size_t>(i)]) * (at(b, c, j) - mean[static_cast<std::size_t>(j)]);
          const double got = acc / static_cast<double>(m - 1), want = covs[static_cast<std::size_t>(c)][static_cast<std::size_t>(i * k + j)];
          CHECK_MESSAGE(std::fabs(got - want) < tol, "sample covariance " << c << " (" << i << ", " << j << ") " << got
                                                                          << " against " << want);
        }
    }
  };
}

// The two-sample Kolmogorov-Smirnov statistic sqrt(n m / (n + m)) D (ties: both empirical CDFs
// are compared after every distinct value).
double ks_statistic(std::vector<double> a, std::vector<double> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  const double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
  std::size_t i = 0, j = 0;
  double d = 0;
  while (i < a.size() && j < b.size()) {
    const double v = std::min(a[i], b[j]);
    while (i < a.size() && a[i] <= v) ++i;
    while (j < b.size() && b[j] <= v) ++j;
    d = std::max(d, std::fabs(static_cast<double>(i) / na - static_cast<double>(j) / nb));
  }
  return std::sqrt(na * nb / (na + nb)) * d;
}

// The values of `a` (any real or integer dtype) at flat positions agreeing with `r` modulo `m`.
std::vector<double> residue(const Array& a, int64_t r, int64_t m) {
  const Array d = astype(a, DType::Float64);
  std::vector<double> out;
  for (int64_t e = r; e < d.size(); e += m) out.push_back(d.data<double>()[e]);
  return out;
}

// The bound on sqrt(n m / (n + m)) D. Kolmogorov's distribution exceeds 2.5 with probability
// 7.5e-6 (2 exp(-2 x^2)), so the 158 statistics of this test together exceed it with
// probability 1.1e-3 when the laws agree (a bound of 1.95, a 0.001 test for one statistic, would
// fail a correct sampler set about once in 7 draws of seeds); with 2·10^4 to 2·10^5 draws per
// tuple it detects a difference of 0.025 to 0.008 between the CDFs (0.065 for the 3000 draws
// of the one-draw-per-call permutations and choices). The seeds are fixed, so
// each statistic is one deterministic number (printed): the test is not flaky.
constexpr double kKsBound = 2.5;

// MvNormalRV with `method` 0 cholesky, 1 svd, 2 eigh; a covariance of three components.
OpPtr mvnormal_op(int method) {
  return std::make_shared<CoreRandomVariable>(*find_rv_core_distribution("MvNormalRV"), DType::Float64, method);
}
const std::vector<double> kCov3 = {2.0, 0.3, 0.1, 0.3, 1.0, -0.2, 0.1, -0.2, 0.5};

// Every distribution the GPU draws, several parameter tuples each (broadcast against each other
// and `size`), float32/int32 dtypes among them.
std::vector<DrawCase> distribution_cases() {
  std::vector<DrawCase> out;
  const auto add = [&](DrawCase c, int64_t group) {
    c.group = group;
    // Each case its own rng (seed 19's PCG64 state moved, the increment kept): cases whose
    // samplers transform one uniform each then do not all compare the same uniforms.
    c.inputs[0].data<uint64_t>()[1] += static_cast<uint64_t>(out.size() + 1) * 0x9E3779B97F4A7C15ULL;
    out.push_back(std::move(c));
  };
  const DType f32 = DType::Float32;
  add(draw_case("uniform", "UniformRV", {real({-2.0, 3.0}), real({5.0})}, std::vector<int64_t>{120000, 2}), 2);
  add(draw_case("uniform_f32", "UniformRV", {real({0.0}), real({1.0})}, std::vector<int64_t>{200000}, f32), 1);
  // loc (3,) against scale (2, 1): six tuples.
  add(draw_case("normal", "NormalRV", {real({0.0, -1.0, 100.0}), param(DType::Float64, {2, 1}, {1.0, 0.25})},
                std::vector<int64_t>{40000, 2, 3}),
      6);
  {
    // A transposed parameter (strides (1, 3) over a (2, 3) buffer read as its (3, 2)
    // transpose): the kernel reads it in place.
    const Array base = param(DType::Float64, {2, 3}, {0.5, 1.0, 2.0, 4.0, 8.0, 16.0});
    const Array scale = base.view({3, 2}, {1, 3});
    add(draw_case("normal_transposed_scale", "NormalRV", {real({-1.0, 1.0}), scale}, std::vector<int64_t>{20000, 3, 2}), 6);
  }
  add(draw_case("normal_f32", "NormalRV", {param(f32, {}, {3.0}), param(f32, {}, {2.0})}, std::vector<int64_t>{160000}, f32), 1);
  add(draw_case("lognormal", "LogNormalRV", {real({0.5}), real({0.25, 1.0})}, std::vector<int64_t>{100000, 2}), 2);
  add(draw_case("gamma", "GammaRV", {real({0.3, 1.0, 4.5}), real({2.0})}, std::vector<int64_t>{80000, 3}), 3);
  add(draw_case("exponential", "ExponentialRV", {real({0.5, 3.0})}, std::vector<int64_t>{100000, 2}), 2);
  add(draw_case("weibull", "WeibullRV", {real({0.7, 2.0})}, std::vector<int64_t>{100000, 2}), 2);
  add(draw_case("logistic", "LogisticRV", {real({1.0}), real({0.5, 2.0})}, std::vector<int64_t>{100000, 2}), 2);
  add(draw_case("laplace", "LaplaceRV", {real({1.0, -3.0}), real({0.5})}, std::vector<int64_t>{100000, 2}), 2);
  add(draw_case("gumbel", "GumbelRV", {real({1.0}), real({0.5, 2.0})}, std::vector<int64_t>{100000, 2}), 2);
  add(draw_case("cauchy", "CauchyRV", {real({1.0}), real({0.5, 2.0})}, std::vector<int64_t>{100000, 2}), 2);
  add(draw_case("halfcauchy", "HalfCauchyRV", {real({1.0}), real({0.5, 2.0})}, std::vector<int64_t>{100000, 2}), 2);
  add(draw_case("halfnormal", "HalfNormalRV", {real({0.0, 2.0}), real({1.5})}, std::vector<int64_t>{100000, 2}), 2);
  add(draw_case("vonmises", "VonMisesRV", {real({0.5}), real({0.5, 4.0, 1e-9})}, std::vector<int64_t>{60000, 3}), 3);
  add(draw_case("invgamma", "InvGammaRV", {real({2.5, 0.8}), real({1.5})}, std::vector<int64_t>{100000, 2}), 2);
  add(draw_case("wald", "WaldRV", {real({1.0, 3.0}), real({2.0})}, std::vector<int64_t>{100000, 2}), 2);
  add(draw_case("triangular", "TriangularRV", {real({0.0}), real({0.3, 1.0}), real({1.0})}, std::vector<int64_t>{100000, 2}), 2);
  add(draw_case("beta", "BetaRV", {real({0.5, 2.0, 0.1}), real({0.5, 3.0, 0.2})}, std::vector<int64_t>{80000, 3}), 3);
  add(draw_case("t", "StudentTRV", {real({1.5, 10.0}), real({0.0}), real({1.0})}, std::vector<int64_t>{100000, 2}), 2);
  add(draw_case("pareto_f32", "ParetoRV", {param(f32, {2}, {1.5, 3.0}), real({2.0})}, std::vector<int64_t>{100000, 2}), 2);
  add(draw_case("truncexpon", "TruncExponentialRV", {real({0.5, 4.0}), real({0.0}), real({1.0})}, std::vector<int64_t>{100000, 2}), 2);
  add(draw_case("gengamma", "GenGammaRV", {real({2.0, 0.5}), real({1.5, 2.0}), real({1.0})}, std::vector<int64_t>{100000, 2}), 2);
  add(draw_case("poisson", "PoissonRV", {real({0.5, 4.0, 30.0, 1e4})}, std::vector<int64_t>{60000, 4}), 4);
  add(draw_case("geometric", "GeometricRV", {real({0.05, 0.5, 1.0})}, std::vector<int64_t>{80000, 3}), 3);
  // Inversion (n p <= 30, also mirrored for p > 1/2) and BTRS (n p > 30, mirrored).
  add(draw_case("binomial", "BinomialRV", {integer({10, 1000, 100000, 50}), real({0.3, 0.7, 0.01, 0.5})},
                std::vector<int64_t>{60000, 4}),
      4);
  // Chop-down inversion from the mode: small, medium and large populations (sd about 300).
  add(draw_case("hypergeometric", "HyperGeometricRV", {integer({10, 500, 1000000}), integer({20, 300, 2000000}),
                                                       integer({5, 400, 500000})},
                std::vector<int64_t>{60000, 3}),
      3);
  add(draw_case("integers_i32", "IntegersRV", {integer({-5, 0}), integer({5, 1e12})}, std::vector<int64_t>{100000, 2},
                DType::Int32),
      2);
  add(draw_case("integers", "IntegersRV", {integer({-5, 0}), integer({5, 1e12})}, std::vector<int64_t>{100000, 2}), 2);
  add(draw_case("bernoulli", "BernoulliRV", {real({0.2, 0.9})}, std::vector<int64_t>{100000, 2}), 2);
  add(draw_case("negative_binomial", "NegBinomialRV", {real({3.5, 0.8}), real({0.4, 0.9})}, std::vector<int64_t>{100000, 2}), 2);
  add(draw_case("beta_binomial", "BetaBinomialRV", {integer({20, 500}), real({0.6, 2.0}), real({1.5, 0.8})},
                std::vector<int64_t>{100000, 2}),
      2);
  // Draws with a core dimension: Dirichlet's components (the second row's small alphas take
  // NumPy's stick-breaking on the CPU, logarithms of gammas on the GPU), categorical indices
  // (float64 and float32 p, without size).
  // NumPy's stick-breaking rounds components below about 1e-16 to exactly 0 (1 - v rounds to
  // 0: 39% of the last component here), where the GPU's logarithms keep their tiny values: the
  // laws are compared above 1e-12.
  add(draw_case("dirichlet", "DirichletRV", {param(DType::Float64, {2, 3}, {0.5, 1.0, 2.0, 0.05, 0.08, 0.02})},
                std::vector<int64_t>{30000, 2}),
      6);
  out.back().floor = 1e-12;
  add(draw_case("categorical", "CategoricalRV", {param(DType::Float64, {2, 4}, {0.1, 0.2, 0.3, 0.4, 0.7, 0.1, 0.1, 0.1})},
                std::vector<int64_t>{50000, 2}),
      2);
  add(draw_case("categorical_f32_no_size", "CategoricalRV",
                {param(DType::Float32, {50000, 3}, [] {
                   std::vector<double> v;
                   for (int i = 0; i < 50000; ++i) v.insert(v.end(), {0.25, 0.25, 0.5});
                   return v;
                 }())},
                std::nullopt),
      1);
  // Multinomial: per (n, p) tuple and category, the counts' law (inversion and BTRS binomials:
  // n p above and below 30); the counts sum to n.
  add(draw_case("multinomial", "MultinomialRV", {integer({20, 500}), param(DType::Float64, {2, 3}, {0.2, 0.3, 0.5, 0.6, 0.1, 0.3})},
                std::vector<int64_t>{20000, 2}),
      6);
  out.back().property = counts_sum_to(3);
  add(draw_case("multinomial_f32_no_size", "MultinomialRV",
                {integer({40}), param(DType::Float32, {20000, 4}, [] {
                   std::vector<double> v;
                   for (int i = 0; i < 20000; ++i) v.insert(v.end(), {0.1, 0.2, 0.3, 0.4});
                   return v;
                 }())},
                std::nullopt),
      4);
  out.back().property = counts_sum_to(4);
  // MvNormal: per component (a mean per batch row, one covariance broadcast), and the sample
  // covariance (standard error about 0.01 here: bound 0.05).
  add(draw_case("mvnormal", "MvNormalRV", {real({1.0, -2.0}), param(DType::Float64, {2, 2}, {2.0, 0.6, 0.6, 1.0})},
                std::vector<int64_t>{60000}),
      2);
  out.back().property = covariance_near(2, {{2.0, 0.6, 0.6, 1.0}}, 0.05);
  add(draw_case("mvnormal_batched_f32", "MvNormalRV",
                {param(DType::Float32, {2, 3}, {0.0, 1.0, 2.0, -5.0, 0.0, 5.0}),
                 param(DType::Float32, {3, 3}, {1.0, 0.5, 0.2, 0.5, 2.0, -0.3, 0.2, -0.3, 0.5})},
                std::vector<int64_t>{20000, 2}, DType::Float32),
      6);
  // MvNormal's other factors (the C++ backend's gesdd's U sqrt(S), syevd's V sqrt(w); Jacobi on
  // the GPU): the same law. Eigh with a batch of two covariances.
  add(op_case("mvnormal_svd", mvnormal_op(1), {real({0.5, 1.0, -1.0}), param(DType::Float64, {3, 3}, kCov3)},
              int64_vector_constant({40000})),
      3);
  out.back().property = covariance_near(3, {kCov3}, 0.05);
  add(op_case("mvnormal_eigh_batched_cov", mvnormal_op(2),
              {real({0.0, 3.0}), param(DType::Float64, {2, 2, 2}, {1.0, -0.4, -0.4, 0.5, 1.0, 0.3, 0.3, 0.25})},
              int64_vector_constant({20000, 2})),
      4);
  out.back().property = covariance_near(2, {{1.0, -0.4, -0.4, 0.5}, {1.0, 0.3, 0.3, 0.25}}, 0.05);
  // Permutation: per position the law of the values there (each of x's rows equally likely);
  // every draw a permutation of x's rows. Rows of one value, and rows of 2 x 2 values.
  add(op_case("permutation", std::make_shared<PermutationRandomVariable>(1, "(x0)->(x0)", DType::Float64),
              {param(DType::Float64, {1, 5}, {3.0, -1.0, 7.5, 0.0, 2.0})}, int64_vector_constant({20000})),
      5);
  out.back().property = rows_permuted(5, 1);
  add(op_case("permutation_rows", std::make_shared<PermutationRandomVariable>(3, "(x0,x1,x2)->(x0,x1,x2)", DType::Int32),
              {param(DType::Int32, {4, 2, 2}, {0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23, 30, 31, 32, 33})}, nullptr),
      16);
  out.back().calls = 3000;
  out.back().property = rows_permuted(4, 4);
  out.push_back(op_case("permutation_arange", std::make_shared<PermutationRandomVariable>(0, "()->(x)", DType::Int64), {},
                        nullptr, {int64_constant(7)}));
  out.back().group = 7;
  out.back().calls = 3000;
  out.back().property = rows_permuted(7, 1);
  // ChoiceWithoutReplacement: one draw per call, 3000 calls; per place the law of what lands
  // there, no repeats. Uniform from arange(a), p-weighted rows of a.
  out.push_back(op_case("choice", std::make_shared<ChoiceWithoutReplacement>("(),(1)->(s0)", 0, false, 1, DType::Int64),
                        {integer({9})}, nullptr, {int64_vector_constant({4})}));
  out.back().group = 4;
  out.back().calls = 3000;
  out.back().property = no_repeats();
  out.push_back(op_case("choice_p_rows",
                        std::make_shared<ChoiceWithoutReplacement>("(a0,a1),(a0),(2)->(s0,s1,a1)", 2, true, 2, DType::Float64),
                        {param(DType::Float64, {5, 1}, {0.0, 1.0, 2.0, 3.0, 4.0}), real({0.1, 0.4, 0.05, 0.3, 0.15})},
                        nullptr, {int64_vector_constant({1, 3})}));
  out.back().group = 3;
  out.back().calls = 3000;
  out.back().property = no_repeats();
  // Rows of a matrix a (a transposed view: strided rows) without p.
  {
    const Array base = param(DType::Int16, {3, 4}, {0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23});
    out.push_back(op_case("choice_rows", std::make_shared<ChoiceWithoutReplacement>("(a0,a1),(1)->(s0,a1)", 2, false, 1, DType::Int16),
                          {base.view({4, 3}, {1, 4})}, nullptr, {int64_vector_constant({2})}));
  }
  out.back().group = 6;
  out.back().calls = 3000;
  out.back().property = distinct_rows_of_a(3);
  // Without size: the parameters' broadcast shape (200 x 150 tuples of one value each would
  // not test the law; here one tuple broadcast over a (150, 200) parameter).
  add(draw_case("normal_no_size", "NormalRV", {param(DType::Float64, {150, 200}, std::vector<double>(30000, 2.0)), real({3.0})},
                std::nullopt),
      1);
  return out;
}

// Shapes and values that are not about the law: 0-d, zero-length, SciPy's zero scale.
std::vector<DrawCase> shape_cases() {
  std::vector<DrawCase> out;
  out.push_back(draw_case("zero_d", "NormalRV", {real({1.0}), real({2.0})}, std::nullopt));
  out.push_back(draw_case("zero_length", "NormalRV", {real({1.0, 2.0, 3.0}), real({2.0})}, std::vector<int64_t>{0, 3}));
  out.push_back(draw_case("zero_length_1d", "PoissonRV", {real({3.0})}, std::vector<int64_t>{0}));
  out.push_back(draw_case("zero_scale", "HalfNormalRV", {real({4.0}), real({0.0})}, std::vector<int64_t>{5}));
  out.push_back(dynamic_size_case("dynamic_size", {7, 3}));
  // No parameter tuple at all (nothing checked, no status word armed).
  out.push_back(draw_case("zero_length_params", "NormalRV", {param(DType::Float64, {0}, {}), real({1.0})}, std::nullopt));
  out.push_back(draw_case("zero_length_multinomial", "MultinomialRV", {integer({5}), real({0.5, 0.5})}, std::vector<int64_t>{0, 2}));
  out.push_back(draw_case("zero_length_mvnormal", "MvNormalRV", {param(DType::Float64, {0}, {}), param(DType::Float64, {0, 0}, {})},
                          std::vector<int64_t>{3}));
  // An indefinite covariance factored by eigh: NaN draws, as on the CPU (sqrt of a negative
  // eigenvalue).
  out.push_back(op_case("mvnormal_eigh_indefinite", mvnormal_op(2), {real({0.0, 0.0}), param(DType::Float64, {2, 2}, {1.0, 2.0, 2.0, 1.0})},
                        int64_vector_constant({4})));
  out.push_back(op_case("zero_length_permutation", std::make_shared<PermutationRandomVariable>(1, "(x0)->(x0)", DType::Float64),
                        {param(DType::Float64, {2, 0}, {})}, nullptr));
  out.push_back(op_case("zero_length_choice", std::make_shared<ChoiceWithoutReplacement>("(),(1)->(s0)", 0, false, 1, DType::Int64),
                        {integer({0})}, nullptr, {int64_vector_constant({0})}));
  out.push_back(op_case("zero_d_choice", std::make_shared<ChoiceWithoutReplacement>("(),(0)->()", 0, false, 0, DType::Int64),
                        {integer({3})}, nullptr, {int64_vector_constant({})}));
  return out;
}

// Parameters NumPy refuses: the C++ backend's status words, found by the device.
std::vector<DrawCase> error_cases() {
  std::vector<DrawCase> out;
  const auto add = [&](DrawCase c, const std::string& error) {
    c.error = error;
    out.push_back(std::move(c));
  };
  add(draw_case("e_normal", "NormalRV", {real({0.0}), real({1.0, -1.0, 2.0})}, std::vector<int64_t>{3}), "scale < 0");
  add(draw_case("e_uniform", "UniformRV", {real({2.0}), real({1.0})}, std::vector<int64_t>{4}), "high - low < 0");
  add(draw_case("e_uniform_range", "UniformRV", {real({-1e308}), real({1e308})}, std::nullopt), "Range exceeds valid bounds");
  add(draw_case("e_poisson", "PoissonRV", {real({1.0, -1.0})}, std::nullopt), "lam < 0 or lam contains NaNs");
  add(draw_case("e_gamma_scale", "GammaRV", {real({1.0}), real({-2.0})}, std::vector<int64_t>{2}), "scale < 0");
  add(draw_case("e_binomial", "BinomialRV", {integer({-3}), real({0.5})}, std::nullopt), "n < 0");
  add(draw_case("e_halfnormal", "HalfNormalRV", {real({0.0}), real({-1.0})}, std::vector<int64_t>{2}),
      "Domain error in arguments");
  add(draw_case("e_hypergeometric", "HyperGeometricRV", {integer({5, 2}), integer({3}), integer({4, 9})}, std::nullopt),
      "ngood + nbad < nsample");
  add(draw_case("e_dirichlet", "DirichletRV", {param(DType::Float64, {2, 2}, {1.0, 2.0, 0.5, -1.0})}, std::nullopt),
      "alpha < 0");
  add(draw_case("e_categorical_size", "CategoricalRV", {param(DType::Float64, {3, 2}, {0.5, 0.5, 0.5, 0.5, 0.5, 0.5})},
                std::vector<int64_t>{5, 2}),
      "shape mismatch");
  add(draw_case("e_multinomial_p", "MultinomialRV", {integer({5}), param(DType::Float64, {2, 2}, {0.5, 0.5, -0.1, 1.1})}, std::nullopt),
      "pvals < 0, pvals > 1 or pvals contains NaNs");
  add(draw_case("e_multinomial_sum", "MultinomialRV", {integer({5}), real({0.7, 0.6, 0.0})}, std::nullopt), "sum(pvals[:-1]) > 1.0");
  add(draw_case("e_multinomial_n", "MultinomialRV", {integer({3, -1}), real({0.5, 0.5})}, std::nullopt), "n < 0");
  add(draw_case("e_multinomial_empty_p", "MultinomialRV", {integer({3}), param(DType::Float64, {0}, {})}, std::vector<int64_t>{2}),
      "pvals must have at least 1 dimension");
  add(draw_case("e_mvnormal", "MvNormalRV", {real({0.0, 0.0}), param(DType::Float64, {2, 2}, {1.0, 2.0, 2.0, 1.0})}, std::nullopt),
      "Matrix is not positive definite");
  add(draw_case("e_mvnormal_shape", "MvNormalRV", {real({0.0, 0.0}), param(DType::Float64, {3, 3}, std::vector<double>(9, 1.0))},
                std::nullopt),
      "cov must be a square matrix of mean's length");
  add(op_case("e_mvnormal_svd_nan", mvnormal_op(1), {real({0.0, 0.0}), param(DType::Float64, {2, 2}, {1.0, 0.0, NAN, 1.0})},
              nullptr),
      "SVD did not converge");
  add(op_case("e_permutation_size", std::make_shared<PermutationRandomVariable>(1, "(x0)->(x0)", DType::Float64),
              {param(DType::Float64, {3, 2}, {1, 2, 3, 4, 5, 6})}, int64_vector_constant({4})),
      "does not broadcast to size");
  add(op_case("e_choice_too_many", std::make_shared<ChoiceWithoutReplacement>("(),(1)->(s0)", 0, false, 1, DType::Int64),
              {integer({3})}, nullptr, {int64_vector_constant({4})}),
      "Cannot take a larger sample than population when replace is False");
  add(op_case("e_choice_p_sum", std::make_shared<ChoiceWithoutReplacement>("(a0),(a0),(1)->(s0)", 1, true, 1, DType::Float64),
              {real({1.0, 2.0, 3.0}), real({0.5, 0.2, 0.2})}, nullptr, {int64_vector_constant({2})}),
      "Probabilities do not sum to 1");
  // p's values are checked before the sample's size (NumPy's order).
  add(op_case("e_choice_p_negative", std::make_shared<ChoiceWithoutReplacement>("(a0),(a0),(1)->(s0)", 1, true, 1, DType::Float64),
              {real({1.0, 2.0, 3.0}), real({1.2, -0.2, 0.0})}, nullptr, {int64_vector_constant({5})}),
      "Probabilities are not non-negative");
  add(op_case("e_choice_p_zeros", std::make_shared<ChoiceWithoutReplacement>("(a0),(a0),(1)->(s0)", 1, true, 1, DType::Float64),
              {real({1.0, 2.0, 3.0}), real({1.0, 0.0, 0.0})}, nullptr, {int64_vector_constant({2})}),
      "Fewer non-zero entries in p than size");
  add(op_case("e_choice_empty", std::make_shared<ChoiceWithoutReplacement>("(),(1)->(s0)", 0, false, 1, DType::Int64),
              {integer({0})}, nullptr, {int64_vector_constant({1})}),
      "a must be a positive integer unless no samples are taken");
  add(draw_case("e_integers", "IntegersRV", {integer({5}), integer({5})}, std::vector<int64_t>{2}), "low >= high");
  add(dynamic_size_case("e_dynamic_size", {-2, 3}), "negative dimensions are not allowed");
  add(dynamic_size_case("e_dynamic_size_mismatch", {4, 2}), "shape mismatch");
  add(draw_case("e_size", "NormalRV", {real({0.0, 1.0, 2.0}), real({1.0})}, std::vector<int64_t>{4, 2}), "shape mismatch");
  // No draws, and still the parameters are checked (the C++ backend's order).
  add(draw_case("e_empty", "NormalRV", {real({0.0}), param(DType::Float64, {1}, {-1.0})}, std::vector<int64_t>{0, 1}),
      "scale < 0");
  return out;
}

}  // namespace

TEST_CASE("gpu random: the kernel text's Philox4x64-10, rng key and next_rng are NumPy's Philox and PCG64") {
  using namespace kiln_gpu_text;
  for (const PhiloxAnswer& a : kPhilox) {
    const kiln_philox4 c{a.counter[0], a.counter[1], a.counter[2], a.counter[3]};
    const kiln_philox4 got = kiln_philox4x64_10(c, a.key[0], a.key[1]);
    CHECK(got.v0 == a.block[0]);
    CHECK(got.v1 == a.block[1]);
    CHECK(got.v2 == a.block[2]);
    CHECK(got.v3 == a.block[3]);
  }
  for (const StreamAnswer& a : kStreams) {
    const uint64_t* w = a.words;
    const kiln_philox4 key = kiln_philox_key(w[0], w[1], w[2], w[3], w[4], w[5]);
    CHECK(key.v0 == a.key[0]);
    CHECK(key.v1 == a.key[1]);
    uint64_t hi = 0, lo = 0;
    kiln_rv_next_state(w[0], w[1], w[2], w[3], &hi, &lo);
    CHECK(hi == a.next[0]);
    CHECK(lo == a.next[1]);
    for (int e = 0; e < 6; ++e) {
      kiln_philox s = kiln_philox_stream(key.v0, key.v1, static_cast<uint64_t>(e));
      CHECK(kiln_rv_uniform(&s, 0.0, 1.0) == a.uniforms[e]);
    }
    // A stream's words are its blocks' words in order: the fifth word is block 1's first.
    kiln_philox s = kiln_philox_stream(key.v0, key.v1, 3);
    for (int i = 0; i < 4; ++i) kiln_philox_next(&s);
    const kiln_philox4 block1 = kiln_philox4x64_10(kiln_philox4{1, 3, 0, 0}, key.v0, key.v1);
    CHECK(kiln_philox_next(&s) == block1.v0);
  }
}

#ifdef KILN_TEST_OPENCL
namespace {

bool have_opencl() {
  cl_uint n = 0;
  return clGetPlatformIDs(0, nullptr, &n) == CL_SUCCESS && n > 0;
}

// Calls graph `name` of an opencl library on host arrays (device_call.h).
CallResult call_gpu(const Library& so, const std::string& name, const std::vector<Array>& inputs, bool into) {
  return call_opencl(so, name, inputs, into);
}

CompileOptions gpu_options(const std::string& backend) {
  CompileOptions o = test_compile_options();
  o.backend = backend;
  o.build.opt_level = "-O1";
  return o;
}

std::vector<uint64_t> words_of(const Array& a) {
  const Array w = astype(a, DType::UInt64);
  return std::vector<uint64_t>(w.data<uint64_t>(), w.data<uint64_t>() + w.size());
}

}  // namespace
#endif

TEST_CASE("opencl: random variables draw from Philox streams (NumPy's words, determinism, laws, errors)") {
#ifndef KILN_TEST_OPENCL
  MESSAGE("skipped: no OpenCL platform (kiln_tests was built without OpenCL headers and loader)");
#else
  if (!have_opencl()) {
    MESSAGE("skipped: no OpenCL platform (install pocl-opencl-icd)");
    return;
  }
  std::vector<DrawCase> laws = distribution_cases(), shapes = shape_cases(), errors = error_cases();
  // Known answers: UniformRV(0, 1) over 6 elements from each rng, and a chain of two draws.
  std::vector<DrawCase> known;
  known.push_back(draw_case("known_uniform", "UniformRV", {real({0.0}), real({1.0})}, std::vector<int64_t>{6}));
  {
    DrawCase c;
    c.name = "chained";
    const Var rng = make_input(rng_type(), "rng");
    const Var sz = int64_vector_constant({6});
    auto [next1, a] = random_variable("UniformRV", rng, sz, {scalar_constant(DType::Float64, 0), scalar_constant(DType::Float64, 1)});
    auto [next2, b] = random_variable("UniformRV", next1, sz, {scalar_constant(DType::Float64, 0), scalar_constant(DType::Float64, 1)});
    c.graph = std::make_unique<FunctionGraph>(VarList{rng}, VarList{next2, a, b}, "chained");
    c.inputs.push_back(rng_array(kStreams[0].words));
    known.push_back(std::move(c));
  }
  NamedGraphs graphs;
  for (auto* list : {&laws, &shapes, &errors, &known})
    for (const DrawCase& c : *list) graphs.emplace_back(c.graph.get(), c.name);
  const auto start = std::chrono::steady_clock::now();
  const BuildResult built = compile_bundle(graphs, "gpu_random_opencl", gpu_options("opencl"));
  Library so(built.library_path);

  // NumPy's words: element e's first uniform is NumPy's Philox block (0, e, 0, 0) under the rng's
  // key; next_rng is PCG64's next state. The same rng draws the same values (both call forms).
  for (const StreamAnswer& a : kStreams) {
    std::vector<Array> inputs = known[0].inputs;
    inputs[0] = rng_array(a.words);
    for (bool into : {false, true}) {
      const CallResult got = call_gpu(so, "known_uniform", inputs, into);
      REQUIRE_MESSAGE(got.status == KILN_OK, got.error);
      CHECK(words_of(got.outputs[0]) == std::vector<uint64_t>(a.next, a.next + 6));
      for (int e = 0; e < 6; ++e) CHECK(got.outputs[1].data<double>()[e] == a.uniforms[e]);
    }
  }
  {
    // next_rng fed back draws other values, and they are those of the next state's key.
    const CallResult first = call_gpu(so, "known_uniform", known[0].inputs, false);
    REQUIRE(first.status == KILN_OK);
    std::vector<Array> again = known[0].inputs;
    again[0] = first.outputs[0];
    const CallResult second = call_gpu(so, "known_uniform", again, false);
    REQUIRE(second.status == KILN_OK);
    int equal = 0;
    for (int e = 0; e < 6; ++e) equal += first.outputs[1].data<double>()[e] == second.outputs[1].data<double>()[e];
    CHECK(equal == 0);
    // In one graph: the second draw (from the first's next_rng) differs from the first, and is
    // what the first graph draws from that next_rng.
    const CallResult chain = call_gpu(so, "chained", known[1].inputs, false);
    REQUIRE_MESSAGE(chain.status == KILN_OK, chain.error);
    for (int e = 0; e < 6; ++e) {
      CHECK(chain.outputs[1].data<double>()[e] == first.outputs[1].data<double>()[e]);
      CHECK(chain.outputs[2].data<double>()[e] == second.outputs[1].data<double>()[e]);
    }
    CHECK(words_of(chain.outputs[0]) == words_of(second.outputs[0]));
  }

  // The laws: per parameter tuple, the GPU's draws against the evaluator's (PCG64) draws.
  double worst = 0;
  std::ostringstream report;
  for (const DrawCase& c : laws) {
    CAPTURE(c.name);
    std::vector<std::vector<double>> gs(static_cast<std::size_t>(c.group)), ws(static_cast<std::size_t>(c.group));
    CallResult got;
    for (int64_t i = 0; i < c.calls; ++i) {
      const std::vector<Array> in = call_inputs(c, i);
      const std::vector<Array> want = evaluate(*c.graph, in);
      got = call_gpu(so, c.name, in, false);
      REQUIRE_MESSAGE(got.status == KILN_OK, got.error);
      REQUIRE(got.outputs.size() == 2);
      CHECK(got.outputs[1].shape() == want[1].shape());
      CHECK(got.outputs[1].dtype() == want[1].dtype());
      CHECK(words_of(got.outputs[0]) != words_of(in[0]));
      if (c.property) c.property(got.outputs[1], in);
      for (int64_t r = 0; r < c.group; ++r) {
        const std::vector<double> g = residue(got.outputs[1], r, c.group), w = residue(want[1], r, c.group);
        gs[static_cast<std::size_t>(r)].insert(gs[static_cast<std::size_t>(r)].end(), g.begin(), g.end());
        ws[static_cast<std::size_t>(r)].insert(ws[static_cast<std::size_t>(r)].end(), w.begin(), w.end());
      }
    }
    report << c.name << ":";
    for (int64_t r = 0; r < c.group; ++r) {
      std::vector<double> g = gs[static_cast<std::size_t>(r)], w = ws[static_cast<std::size_t>(r)];
      for (auto* v : {&g, &w})
        for (double& x : *v) x = std::max(x, c.floor == 0 ? x : c.floor);
      const bool finite = std::all_of(g.begin(), g.end(), [](double v) { return !std::isnan(v); });
      CHECK_MESSAGE(finite, "NaN among the GPU's draws, tuple " << r);
      const double ks = ks_statistic(g, w);
      CHECK_MESSAGE(ks < kKsBound, "tuple " << r << ": sqrt(nm/(n+m)) D = " << ks << " (n = " << g.size() << ")");
      worst = std::max(worst, ks);
      report << " " << static_cast<int>(ks * 100) / 100.0;
    }
    report << "\n";
    // The same rng, the same draws: output_shapes + call_into gives them again.
    const CallResult into = call_gpu(so, c.name, call_inputs(c, c.calls - 1), true);
    REQUIRE_MESSAGE(into.status == KILN_OK, into.error);
    CHECK(!compare_arrays(into.outputs[1], got.outputs[1], 0.0, 0.0));
  }
  MESSAGE("Kolmogorov-Smirnov statistics sqrt(nm/(n+m)) D per tuple (bound " << kKsBound << "):\n" << report.str());

  // Shapes: 0-d, zero-length, SciPy's zero scale.
  for (const DrawCase& c : shapes) {
    CAPTURE(c.name);
    const std::vector<Array> want = evaluate(*c.graph, c.inputs);
    for (bool into : {false, true}) {
      const CallResult got = call_gpu(so, c.name, c.inputs, into);
      REQUIRE_MESSAGE(got.status == KILN_OK, got.error);
      CHECK(got.outputs[1].shape() == want[1].shape());
      if (c.name == "zero_scale") CHECK(!compare_arrays(got.outputs[1], want[1], 0.0, 0.0));
      if (c.name == "mvnormal_eigh_indefinite")
        for (const Array* a : {&got.outputs[1], &want[1]})
          for (double v : residue(*a, 0, 1)) CHECK(std::isnan(v));
    }
  }

  // Errors: the evaluator's and the GPU's refusals say the same.
  for (const DrawCase& c : errors) {
    CAPTURE(c.name);
    std::string cpu;
    try {
      evaluate(*c.graph, c.inputs);
    } catch (const std::exception& e) {
      cpu = e.what();
    }
    CHECK(cpu.find(c.error) != std::string::npos);
    for (bool into : {false, true}) {
      // output_shapes gives the negative length itself (it runs infer_shape's graph, which does
      // not check lengths, on every backend): no call_into buffers to make.
      if (into && c.name == "e_dynamic_size") continue;
      const CallResult got = call_gpu(so, c.name, c.inputs, into);
      CHECK(got.status != KILN_OK);
      CHECK_MESSAGE(got.error.find(c.error) != std::string::npos, got.error);
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE(graphs.size() << " graphs (build and calls) in " << static_cast<int>(seconds) << " s; largest KS statistic "
                        << worst);
#endif
}

TEST_CASE("cuda: the conformance graphs build: random variables on Philox streams") {
  // Part of the cuda_nvcc_build entries (one of the two shards builds it).
  const char* env = std::getenv("KILN_CUDA_SHARD");
  if (env && std::string(env) != "1/2") {
    MESSAGE("built by shard 1/2");
    return;
  }
  const std::string nvcc = find_nvcc();
  if (nvcc.empty()) {
    MESSAGE("skipped: no nvcc (set CUDACXX or install the CUDA toolkit)");
    return;
  }
  std::vector<DrawCase> cases = distribution_cases();
  std::vector<DrawCase> shapes = shape_cases(), errors = error_cases();
  NamedGraphs graphs;
  for (auto* list : {&cases, &shapes, &errors})
    for (const DrawCase& c : *list) graphs.emplace_back(c.graph.get(), c.name);
  CompileOptions o = test_compile_options();
  o.backend = "cuda";
  const GeneratedLibrary lib = emit_bundle(graphs, "gpu_random_cuda", o);
  BuildOptions build;
  build.cxx = nvcc;
  build.opt_level = "-O1";
  build.cuda_arch = {"sm_75"};
  build.cxxflags = {"-Xptxas", "-v"};
  build.use_cache = false;
  build.cache_dir = KILN_TEST_CACHE_DIR;
  const auto start = std::chrono::steady_clock::now();
  BuildResult built;
  try {
    built = build_library(lib, build);
  } catch (const CompileFailure& e) {
    FAIL("nvcc failed: " << e.what());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::error_code ec;
  std::filesystem::remove_all(std::filesystem::path(built.library_path).parent_path(), ec);
  int kernels = 0;
  std::istringstream lines(built.compiler_output);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("spill stores") == std::string::npos) continue;
    ++kernels;
    CHECK_MESSAGE(line.find(" 0 bytes spill stores, 0 bytes spill loads") != std::string::npos, line);
  }
  CHECK(kernels > 0);
  int registers = 0;
  std::int64_t stack = 0;
  std::string widest;
  for (const PtxasFunction& f : parse_ptxas_report(built.compiler_output)) {
    CHECK_MESSAGE(f.spill_store_bytes + f.spill_load_bytes == 0, f.name << " spills");
    if (f.registers > registers) widest = f.name;
    registers = std::max(registers, f.registers);
    stack = std::max(stack, f.stack_bytes);
  }
  MESSAGE(graphs.size() << " random-variable graphs built by nvcc for sm_75 in " << static_cast<int>(seconds) << " s, "
                        << kernels << " functions without spills; at most " << registers << " registers (" << widest
                        << "), stack frames of at most " << stack << " bytes");
}
