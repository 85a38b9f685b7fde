// Property test of the default pipeline: a few hundred seeded random graphs (elementwise
// chains with broadcasting, reductions, dots, transposes, shared subexpressions) give the same
// outputs before and after rewriting — through the reference evaluator, and compiled by the C++
// backend (all graphs in one library, one compile); test_backend_opencl.cpp runs them through
// the opencl backend too (property_graphs.h).
#include <doctest/doctest.h>

#include <map>
#include <random>

#include "api/elementwise.h"
#include "api/graph_builder.h"
#include "compile/compile.h"
#include "compiled.h"
#include "eval/evaluator.h"
#include "fixtures.h"
#include "property_graphs.h"
#include "ops/dimshuffle.h"
#include "ops/dot.h"
#include "ops/reduce.h"
#include "print/dprint.h"
#include "rewrite/pipeline.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

constexpr int kGraphs = 300;
constexpr std::int64_t kRows = 5, kCols = 3;

// Values by shape class: the generator only combines values whose shapes fit.
enum Shape2 { Scalar, Cols, Rows, Matrix };

struct Pools {
  std::vector<Var> by_shape[4];
};

class RandomGraph {
 public:
  RandomGraph(std::uint32_t seed, DType dt) : rng_(seed), dt_(dt) {}

  FunctionGraph build(const std::string& name) {
    GraphBuilder g(name);
    // Static or unknown lengths, at random: both paths must survive the rewrites.
    std::int64_t n = coin() ? kRows : -1, k = coin() ? kCols : -1;
    add(Matrix, g.input("X", dt_, {n, k}));
    add(Cols, g.input("v", dt_, {k}));
    add(Rows, g.input("u", dt_, {n}));
    add(Scalar, g.input("s", dt_, {}));
    int steps = 3 + pick(10);
    for (int i = 0; i < steps; ++i) step();
    std::vector<Var> candidates;
    for (auto& pool : pools_.by_shape)
      for (std::size_t i = 1; i < pool.size(); ++i) candidates.push_back(pool[i]);
    if (candidates.empty()) candidates.push_back(exp(pools_.by_shape[Matrix][0]));
    int outputs = 1 + pick(3);
    for (int o = 0; o < outputs; ++o)
      g.output(candidates[static_cast<std::size_t>(pick(static_cast<int>(candidates.size())))],
               "out" + std::to_string(o));
    return g.build();
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  bool coin() { return pick(2) == 0; }
  void add(Shape2 s, Var v) { pools_.by_shape[s].push_back(std::move(v)); }
  Var any(Shape2 s) {
    auto& pool = pools_.by_shape[s];
    // Prefer recent values (deeper graphs), sometimes reuse older ones (shared subexpressions).
    std::size_t i = coin() ? pool.size() - 1 : static_cast<std::size_t>(pick(static_cast<int>(pool.size())));
    return pool[i];
  }
  // Unary functions that keep values finite and moderate, so that rewrites which change where
  // a value overflows (the point of stabilize) cannot make a difference here.
  Var unary(const Var& x) {
    switch (pick(11)) {
      case 0: return sin(x);
      case 1: return cos(x);
      case 2: return tanh(x);
      case 3: return sigmoid(x);
      case 4: return -x;
      case 5: return x * cast(as_var(0.5), dt_);
      case 6: return exp(tanh(x));
      case 7: return log(1 + abs(x) * cast(as_var(1.0), dt_));
      case 8: return log(1 + exp(tanh(x)));
      case 9: return sqr(tanh(x)) - x;
      default: return (x - x) + x * 1;
    }
  }
  Var binary(const Var& a, const Var& b) {
    switch (pick(5)) {
      case 0: return a + b;
      case 1: return a - b;
      case 2: return a * tanh(b);
      case 3: return maximum(a, b);
      default: return a / (1 + abs(b));
    }
  }

  void step() {
    switch (pick(9)) {
      case 0: case 1: {  // unary on any shape
        Shape2 s = static_cast<Shape2>(pick(4));
        add(s, unary(any(s)));
        break;
      }
      case 2: {  // binary, same shape
        Shape2 s = static_cast<Shape2>(pick(4));
        add(s, binary(any(s), any(s)));
        break;
      }
      case 3: {  // broadcasting: matrix with a row vector, a column, or a scalar
        switch (pick(3)) {
          case 0: add(Matrix, binary(any(Matrix), any(Cols))); break;
          case 1: add(Matrix, binary(expand_dims(any(Rows), 1), any(Matrix))); break;
          default: add(Matrix, binary(any(Scalar), any(Matrix))); break;
        }
        break;
      }
      case 4: {  // reductions
        switch (pick(4)) {
          case 0: add(Cols, sum(any(Matrix), std::vector<int>{0})); break;
          case 1: add(Rows, max(any(Matrix), std::vector<int>{1})); break;
          case 2: add(Scalar, sum(any(coin() ? Rows : Cols))); break;
          default: add(Scalar, mean(any(Matrix))); break;
        }
        break;
      }
      case 5: {  // dots, sometimes scaled and shifted (the BLAS rules' patterns)
        switch (pick(4)) {
          case 0: add(Rows, dot(any(Matrix), any(Cols))); break;
          case 1: add(Cols, dot(transpose(any(Matrix)), any(Rows))); break;
          case 2: add(Rows, any(Scalar) * dot(any(Matrix), any(Cols)) + any(Rows)); break;
          default: add(Matrix, any(Matrix) + dot(expand_dims(any(Rows), 1), expand_dims(any(Cols), 0))); break;
        }
        break;
      }
      case 6: add(Matrix, transpose(transpose(any(Matrix)))); break;
      case 7: add(Scalar, sum(any(Matrix) * any(Matrix))); break;
      default: add(Matrix, unary(unary(any(Matrix)))); break;
    }
  }

  std::mt19937 rng_;
  DType dt_;
  Pools pools_;
};

Array random_input(const Variable& v, std::mt19937& rng) {
  // X is kRows x kCols, u has kRows, v has kCols, s is 0-d (static or not).
  Shape shape;
  if (v.name() == "X") shape = {kRows, kCols};
  if (v.name() == "u") shape = {kRows};
  if (v.name() == "v") shape = {kCols};
  Array a = Array::empty(v.dtype(), shape);
  std::uniform_real_distribution<double> dist(-2, 2);
  visit_real_dtype(v.dtype(), [&](auto t) {
    using T = decltype(t);
    for (std::int64_t i = 0; i < a.size(); ++i) a.data<T>()[i] = static_cast<T>(dist(rng));
  });
  return a;
}

}  // namespace

namespace kiln::testing {

std::vector<PropertyCase> property_cases() {
  std::vector<PropertyCase> cases;
  for (int i = 0; i < kGraphs; ++i) {
    DType dt = i % 4 == 3 ? DType::Float32 : DType::Float64;
    FunctionGraph fg = RandomGraph(1000 + static_cast<std::uint32_t>(i), dt).build("g" + std::to_string(i));
    FunctionGraph rw = fg.clone();
    PipelineOptions o;
    o.verify = true;
    run_pipeline(rw, o);
    std::mt19937 rng(static_cast<std::uint32_t>(i));
    std::vector<Array> inputs;
    for (const auto& in : fg.inputs()) inputs.push_back(random_input(*in, rng));
    auto expected = evaluate(fg, inputs);
    bool f32 = dt == DType::Float32;
    cases.push_back(PropertyCase{std::move(fg), std::move(rw), std::move(inputs), std::move(expected),
                                 f32 ? 2e-4 : 1e-9, f32 ? 1e-5 : 1e-11});
  }
  return cases;
}

void check_property_outputs(const PropertyCase& c, const std::vector<Array>& got, const char* how) {
  REQUIRE(got.size() == c.expected.size());
  for (std::size_t k = 0; k < got.size(); ++k) {
    auto diff = compare_arrays(got[k], c.expected[k], c.rtol, c.atol);
    CHECK_MESSAGE(!diff, how << ", output " << k << ": " << diff.value_or("") << "\nbefore:\n"
                             << dprint(c.original) << "after:\n" << dprint(c.rewritten));
  }
}

}  // namespace kiln::testing

TEST_CASE("property: random graphs keep their values through the default pipeline (evaluator)") {
  std::size_t before = 0, after = 0;
  std::map<std::string, int> ops_after;
  for (const PropertyCase& c : property_cases()) {
    INFO("graph " << c.original.name());
    c.rewritten.verify();
    check_property_outputs(c, evaluate(c.rewritten, c.inputs), "reference evaluator");
    before += c.original.num_nodes();
    after += c.rewritten.num_nodes();
    for (Apply* n : c.rewritten.toposort()) ops_after[std::string(n->op().name())] += 1;
  }
  std::string summary;
  for (const auto& [op, n] : ops_after) summary += " " + op + ":" + std::to_string(n);
  MESSAGE(kGraphs << " random graphs, " << before << " nodes before, " << after << " after;" << summary);
  // The generator must exercise the passes it is meant to test.
  CHECK(ops_after["Gemv"] > 0);
  CHECK(ops_after["Elemwise"] > 0);
  CHECK(after < before);
}

TEST_CASE("property: random graphs keep their values through the default pipeline (compiled)") {
  std::vector<PropertyCase> cases = property_cases();
  NamedGraphs graphs;
  for (const PropertyCase& c : cases) graphs.emplace_back(&c.rewritten, c.original.name());
  for (const BuiltBundle& bundle : build_in_bundles(graphs, "property", 75)) {
    REQUIRE_MESSAGE(bundle.error.empty(), bundle.error);
    Library so(bundle.library_path);
    for (std::size_t i : bundle.members) {
      const PropertyCase& c = cases[i];
      INFO("graph " << c.original.name());
      for (bool into : {false, true}) {
        CallResult r = call_compiled(so.graph(c.original.name()), c.inputs, into);
        REQUIRE_MESSAGE(r.status == KILN_OK, r.error);
        check_property_outputs(c, r.outputs, into ? "compiled (call_into)" : "compiled (call)");
      }
    }
  }
}
