// Automatic differentiation and graph transformations: verify_grad (central finite differences
// in float64 against the pullback and the pushforward) for every differentiable op, with
// broadcasting; float32 gradients; Hessians; the seed examples (grad of sum(log1p(x)),
// vectorize_graph of log(1+x), graph_replace's refusal); the errors for non-differentiable
// paths; and gradient graphs compiled through the C++ backend.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>

#include "api/elementwise.h"
#include "api/graph_builder.h"
#include "compiled.h"
#include "grad_check.h"
#include "eval/evaluator.h"
#include "fixtures.h"
#include "grad/grad.h"
#include "transform/replace.h"
#include "transform/vectorize.h"
#include "ops/constant.h"
#include "io/graph_load.h"
#include "ir/error.h"
#include "ops/advanced_subtensor.h"
#include "ops/alloc.h"
#include "ops/array_util.h"
#include "ops/assert.h"
#include "ops/blas.h"
#include "ops/cumulative.h"
#include "ops/diag.h"
#include "ops/dimshuffle.h"
#include "ops/dot.h"
#include "ops/extra_ops.h"
#include "ops/fill_diagonal.h"
#include "ops/join.h"
#include "ops/reduce.h"
#include "ops/reshape.h"
#include "ops/scalar/composite.h"
#include "ops/shape.h"
#include "ops/softmax.h"
#include "ops/sort.h"
#include "ops/subtensor.h"
#include "rewrite/pipeline.h"
#include "../../samples/logistic_regression/train.hpp"

using namespace kiln;
using namespace kiln::testing;

namespace {

using Fn = std::function<Var(const VarList&)>;

// The default pipeline, verified after every pass (kiln compile runs the same).
void pipeline_for_compiling(FunctionGraph& fg) {
  PipelineOptions options;
  options.verify = true;
  run_pipeline(fg, options);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Elemwise

TEST_CASE("grad: every differentiable unary scalar op, by finite differences") {
  struct Case {
    const char* name;
    Var (*fn)(const Var&);
    Domain domain;
  };
  const Case cases[] = {
      {"neg", neg, {}},         {"abs", abs, {0.1, 1}},         {"exp", exp, {}},
      {"exp2", exp2, {}},       {"expm1", expm1, {}},           {"log", log, {0.5, 2}},
      {"log2", log2, {0.5, 2}}, {"log10", log10, {0.5, 2}},     {"log1p", log1p, {-0.5, 2}},
      {"sqrt", sqrt, {0.5, 2}}, {"sqr", sqr, {}},               {"reciprocal", reciprocal, {0.5, 2}},
      {"sin", sin, {}},         {"cos", cos, {}},               {"tan", tan, {}},
      {"arcsin", arcsin, {-0.8, 0.8}}, {"arccos", arccos, {-0.8, 0.8}}, {"arctan", arctan, {}},
      {"sinh", sinh, {}},       {"cosh", cosh, {}},             {"tanh", tanh, {}},
      {"arcsinh", arcsinh, {}}, {"arccosh", arccosh, {1.5, 3}}, {"arctanh", arctanh, {-0.8, 0.8}},
      {"sigmoid", sigmoid, {-3, 3}}, {"softplus", softplus, {-3, 3}}, {"log1mexp", log1mexp, {-3, -0.1}},
      {"erf", erf, {}},         {"erfc", erfc, {}},             {"erfcx", erfcx, {-1, 2}},
      {"erfinv", erfinv, {-0.8, 0.8}}, {"gamma", gamma, {0.5, 3}}, {"gammaln", gammaln, {0.5, 3}},
      {"psi", psi, {0.5, 3}},   {"psi (reflected)", psi, {-2.9, -2.1}},
      {"identity", identity, {}},
  };
  for (const auto& c : cases) {
    SUBCASE(c.name) {
      Check check;
      check.domain = c.domain;
      verify_grad([&](const VarList& x) { return c.fn(x[0]); }, {{2, 3}}, check);
      verify_grad([&](const VarList& x) { return c.fn(x[0]); }, {{}}, check);
    }
  }
}

TEST_CASE("grad: binary and ternary scalar ops, with broadcasting") {
  Check positive;
  positive.domain = {0.5, 2};
  SUBCASE("add/sub/mul/div") {
    verify_grad([](const VarList& x) { return x[0] + x[1]; }, {{3, 1}, {1, 4}});
    verify_grad([](const VarList& x) { return x[0] - x[1]; }, {{3, 4}, {4}});
    verify_grad([](const VarList& x) { return x[0] * x[1] * x[0]; }, {{2, 3}, {1, 3}});
    verify_grad([](const VarList& x) { return elemwise1(ScalarOp(ScalarOpId::Add), {x[0], x[1], x[0]}); },
                {{2, 1}, {}});
    verify_grad([](const VarList& x) { return x[0] / x[1]; }, {{3, 2}, {3, 1}}, positive);
  }
  SUBCASE("pow/maximum/minimum/arctan2/mod") {
    verify_grad([](const VarList& x) { return pow(x[0], x[1]); }, {{4}, {1}}, positive);
    verify_grad([](const VarList& x) { return maximum(x[0], x[1]); }, {{2, 3}, {2, 3}});
    verify_grad([](const VarList& x) { return minimum(x[0], x[1]); }, {{2, 3}, {1, 3}});
    verify_grad([](const VarList& x) { return arctan2(x[0], x[1]); }, {{3}, {3}}, positive);
    verify_grad([](const VarList& x) { return mod(x[0], x[1]); }, {{4}, {4}},
                Check{{0.1, 0.9}, {}, 1e-6, 1e-5, true});
  }
  SUBCASE("switch/clip/second, integer and bool operands") {
    verify_grad([](const VarList& x) { return switch_(x[0] > 0, x[0] * x[1], x[1]); }, {{5}, {5}});
    verify_grad([](const VarList& x) { return clip(x[0], x[1], 0.5); }, {{6}, {1}});
    // Bounds the wrong way round (PyTensor's Clip: below lo gives lo, else above hi gives hi).
    verify_grad([](const VarList& x) { return clip(x[0], x[1] + 0.6, x[2] - 0.6); }, {{8}, {8}, {8}});
    verify_grad([](const VarList& x) { return second(x[0], x[1]); }, {{2, 3}, {1, 3}});
    verify_grad([](const VarList& x) { return x[0] * (x[0] > 0) + 3 * x[0]; }, {{5}});
    verify_grad([](const VarList& x) { return cast(x[0], f32) * 2; }, {{3}}, Check{{}, {}, 1e-3, 1e-3, true});
    // floor is piecewise constant: zero gradient (away from the jumps).
    verify_grad([](const VarList& x) { return floor(x[0]) + x[0]; }, {{4}}, Check{{0.1, 0.9}, {}, 1e-6, 1e-5, true});
  }
}

TEST_CASE("grad: Composite, through its inner graph") {
  auto g = std::make_shared<CompositeGraph>();
  int a = g->add_input(DType::Float64), b = g->add_input(DType::Float64);
  int e = g->add_node(ScalarOp(ScalarOpId::Exp), {a})[0];
  int m = g->add_node(ScalarOp(ScalarOpId::Mul), {e, b})[0];
  int l = g->add_node(ScalarOp(ScalarOpId::Log1p), {m})[0];
  g->add_output(l);
  g->add_output(e);
  ScalarOp comp = ScalarOp::composite(g);
  verify_grad([&](const VarList& x) {
    VarList outs = elemwise(comp, {x[0], x[1]});
    return outs[0] + 2 * outs[1];
  }, {{3, 1}, {3, 4}}, Check{{0.1, 1}, {}, 1e-6, 1e-5, true});
  // Only one output used: the other's cotangent is null.
  verify_grad([&](const VarList& x) { return elemwise(comp, {x[0], x[1]})[0]; }, {{2}, {2}},
              Check{{0.1, 1}, {}, 1e-6, 1e-5, true});
  // One input computed from another outside the node (PyMC's log-transformed scales give
  // Composite(sigma_log__, exp(sigma_log__), ...)): the outside path counts once.
  verify_grad([&](const VarList& x) {
    VarList outs = elemwise(comp, {x[0], exp(x[0])});
    return outs[0] + 2 * outs[1] + exp(x[0]);
  }, {{3}}, Check{{0.1, 1}, {}, 1e-6, 1e-5, true});
}

// ---------------------------------------------------------------------------------------------
// Shapes, reductions, products

TEST_CASE("grad: DimShuffle, reductions, Max/Min, Prod with zeros") {
  verify_grad([](const VarList& x) { return transpose(x[0]); }, {{2, 3}});
  verify_grad([](const VarList& x) { return dimshuffle(x[0], {1, DimShuffle::kNewAxis, 0}); }, {{2, 3}});
  verify_grad([](const VarList& x) { return squeeze(x[0]) * 2; }, {{1, 3}});
  verify_grad([](const VarList& x) { return sum(x[0], 1); }, {{2, 3}});
  verify_grad([](const VarList& x) { return sum(x[0]); }, {{2, 3, 2}});
  verify_grad([](const VarList& x) { return mean(x[0], {0, 2}); }, {{2, 3, 2}});
  verify_grad([](const VarList& x) { return prod(x[0], 0); }, {{3, 2}});
  verify_grad([](const VarList& x) { return max(x[0], 1); }, {{3, 4}});
  verify_grad([](const VarList& x) { return min(x[0]); }, {{3, 4}});
  verify_grad([](const VarList& x) { return prod_without_zeros(x[0], 0); }, {{3, 2}});
  SUBCASE("prod with one and with two zeros in a group, as PyTensor") {
    Array p = Array::empty(f64, {3, 3});
    const double v[] = {0, 2, 0, 3, 0, 0, 4, 5, 6};
    for (int i = 0; i < 9; ++i) p.data<double>()[i] = v[i];
    Check check;
    check.point = {p};
    verify_grad([](const VarList& x) { return prod(x[0], 0); }, {{3, 3}}, check);
    verify_grad([](const VarList& x) { return prod(x[0]); }, {{3, 3}}, check);
  }
}

TEST_CASE("grad: Dot in every rank combination, BatchedDot, Blockwise, BLAS forms") {
  verify_grad([](const VarList& x) { return dot(x[0], x[1]); }, {{3}, {3}});
  verify_grad([](const VarList& x) { return dot(x[0], x[1]); }, {{2, 3}, {3}});
  verify_grad([](const VarList& x) { return dot(x[0], x[1]); }, {{3}, {3, 2}});
  verify_grad([](const VarList& x) { return dot(x[0], x[1]); }, {{2, 3}, {3, 4}});
  verify_grad([](const VarList& x) { return batched_dot(x[0], x[1]); }, {{2, 2, 3}, {2, 3, 2}});
  verify_grad([](const VarList& x) { return matmul(x[0], x[1]); }, {{2, 2, 3}, {3, 2}});
  verify_grad([](const VarList& x) { return matmul(x[0], x[1]); }, {{1, 2, 3}, {2, 3, 2}});
  verify_grad([](const VarList& x) { return gemv(x[0], x[1], x[2], x[3], x[4]); }, {{2}, {}, {2, 3}, {3}, {}});
  verify_grad([](const VarList& x) { return gemm(x[0], x[1], x[2], x[3], x[4]); }, {{2, 2}, {}, {2, 3}, {3, 2}, {}});
  verify_grad([](const VarList& x) { return ger(x[0], x[1], x[2], x[3]); }, {{2, 3}, {}, {2}, {3}});
  verify_grad([](const VarList& x) { return dot22(x[0], x[1]); }, {{2, 3}, {3, 2}});
  verify_grad([](const VarList& x) { return dot22scalar(x[0], x[1], x[2]); }, {{2, 3}, {3, 2}, {}});
}

TEST_CASE("grad: shape-building and indexing ops") {
  SUBCASE("Reshape, SpecifyShape, Alloc, MakeVector, CheckAndRaise") {
    verify_grad([](const VarList& x) { return reshape(x[0], {3, -1}); }, {{2, 3}});
    verify_grad([](const VarList& x) { return specify_shape(x[0], {2, 3}) * 2; }, {{2, -1}});
    verify_grad([](const VarList& x) { return alloc(x[0], {2, 3}); }, {{1, 3}});
    verify_grad([](const VarList& x) { return alloc(x[0], {2, 3}); }, {{}});
    verify_grad([](const VarList& x) { return make_vector({x[0], x[1], x[0]}, f64); }, {{}, {}});
    verify_grad([](const VarList& x) { return check_and_raise(x[0] * 2, {all(x[0] < 10)}, "too big"); }, {{3}});
  }
  SUBCASE("Join and Split") {
    verify_grad([](const VarList& x) { return join(0, {x[0], x[1]}); }, {{2, 3}, {1, 3}});
    verify_grad([](const VarList& x) { return join(1, {x[0], x[1], x[0]}); }, {{2, 3}, {2, 1}});
    verify_grad([](const VarList& x) {
      VarList parts = split(x[0], {1, 3}, 0);
      return sum(parts[0]) * sum(parts[1] * parts[1]);
    }, {{4, 2}});
    verify_grad([](const VarList& x) { return split(x[0], {2, 2}, 1)[1]; }, {{2, 4}});
  }
  SUBCASE("Subtensor and IncSubtensor") {
    verify_grad([](const VarList& x) { return subtensor(x[0], {slice(1), idx(-1)}); }, {{3, 4}});
    verify_grad([](const VarList& x) { return subtensor(x[0], {slice(none, none, -2)}); }, {{5}});
    verify_grad([](const VarList& x) { return inc_subtensor(x[0], {slice(1, 3)}, x[1]); }, {{4, 3}, {3}});
    verify_grad([](const VarList& x) { return set_subtensor(x[0], {idx(0)}, x[1]); }, {{4, 3}, {1}});
    verify_grad([](const VarList& x) { return set_subtensor(x[0], {slice(1, 3)}, x[1]); }, {{4, 3}, {2, 3}});
  }
  SUBCASE("IncSubtensor with a value that broadcasts at run time (a length known only then)") {
    Check check;
    Array y = Array::empty(f64, {1});
    y.data<double>()[0] = 0.3;
    check.point = {random_array(f64, {4, 3}, *std::make_unique<std::mt19937>(1), {}), y};
    verify_grad([](const VarList& x) { return inc_subtensor(x[0], {slice(1, 3)}, x[1]); }, {{4, 3}, {-1}}, check);
  }
  SUBCASE("AdvancedSubtensor1 and AdvancedIncSubtensor1, repeated indices") {
    verify_grad([](const VarList& x) { return take(x[0], std::vector<std::int64_t>{2, 0, 2, -1}); }, {{3, 2}});
    Var idx = int64_vector_constant({1, 1, 0});
    verify_grad([&](const VarList& x) { return inc_take(x[0], idx, x[1]); }, {{3, 2}, {3, 2}});
    verify_grad([&](const VarList& x) { return set_take(x[0], int64_vector_constant({2, 0}), x[1]); },
                {{3, 2}, {2, 2}});
  }
  SUBCASE("CumOp, Softmax, LogSoftmax, SoftmaxGrad, ExtractDiag, AllocDiag") {
    verify_grad([](const VarList& x) { return cumsum(x[0], 1); }, {{2, 3}});
    verify_grad([](const VarList& x) { return cumsum(x[0]); }, {{2, 3}});
    verify_grad([](const VarList& x) { return cumprod(x[0], 0); }, {{3, 2}}, Check{{0.5, 2}, {}, 1e-6, 1e-5, true});
    verify_grad([](const VarList& x) { return softmax(x[0], 1); }, {{2, 3}});
    verify_grad([](const VarList& x) { return softmax(x[0]); }, {{2, 3}});
    verify_grad([](const VarList& x) { return log_softmax(x[0], 0); }, {{3, 2}});
    verify_grad([](const VarList& x) { return softmax_grad(x[0], x[1], 1); }, {{2, 3}, {2, 3}});
    verify_grad([](const VarList& x) { return softmax_grad(x[0], x[1]); }, {{2, 3}, {2, 3}});
    verify_grad([](const VarList& x) { return diagonal(x[0]); }, {{3, 3}});
    verify_grad([](const VarList& x) { return diagonal(x[0], 1); }, {{3, 5}});
    verify_grad([](const VarList& x) { return diagonal(x[0], -1, 1, 2); }, {{2, 4, 3}});
    verify_grad([](const VarList& x) { return alloc_diag(x[0], 1); }, {{3}});
  }
}

TEST_CASE("grad: advanced indexing, sorting and the ops of extra_ops.py") {
  auto ints = [](const std::vector<std::int64_t>& v) { return int64_vector_constant(v); };
  auto mask = [](const Shape& shape, const std::vector<bool>& values) {
    Array m = Array::empty(DType::Bool, shape);
    for (std::size_t i = 0; i < values.size(); ++i) m.data<bool>()[i] = values[i];
    return make_constant(m);
  };
  SUBCASE("AdvancedSubtensor: repeated indices, broadcasting, slices, newaxis, masks") {
    Var rows = reshape(ints({2, 0, 2, -1}), {2, 2});
    verify_grad([&](const VarList& x) { return advanced_subtensor(x[0], {rows}); }, {{3, 2}});
    verify_grad([&](const VarList& x) { return advanced_subtensor(x[0], {reshape(ints({1, 2}), {2, 1}), ints({0, 2, 0})}); },
                {{3, 4}});
    verify_grad([&](const VarList& x) { return advanced_subtensor(x[0], {ints({1, 1}), slice(), ints({0, -1})}); },
                {{2, 3, 4}});
    verify_grad([&](const VarList& x) { return advanced_subtensor(x[0], {slice(1), newaxis, ints({3, 3})}); }, {{3, 4}});
    verify_grad([&](const VarList& x) { return advanced_subtensor(x[0], {mask({2, 3}, {1, 0, 1, 1, 1, 0})}); }, {{2, 3}});
    verify_grad([&](const VarList& x) { return advanced_subtensor(x[0], {slice(), mask({3}, {0, 1, 1})}); }, {{2, 3}});
  }
  SUBCASE("AdvancedIncSubtensor: np.add.at, NumPy's +=, and sets with repeated positions") {
    Var idx = ints({1, 0, 1, 1});
    verify_grad([&](const VarList& x) { return advanced_inc_subtensor(x[0], x[1], {idx, slice()}); }, {{3, 2}, {4, 2}});
    verify_grad([&](const VarList& x) { return advanced_inc_subtensor(x[0], x[1], {idx, slice()}, true); },
                {{3, 2}, {4, 2}});
    verify_grad([&](const VarList& x) { return advanced_set_subtensor(x[0], x[1], {slice(), idx}); }, {{2, 3}, {2, 4}});
    verify_grad([&](const VarList& x) { return advanced_set_subtensor(x[0], x[1], {ints({0, 2}), ints({1, 1})}); },
                {{3, 2}, {}});
    verify_grad([&](const VarList& x) { return advanced_inc_subtensor(x[0], x[1], {mask({3}, {1, 0, 1})}); },
                {{3, 2}, {2}});
  }
  SUBCASE("SortOp (a constant axis and one known at run time), ArgSortOp's zero gradient") {
    verify_grad([](const VarList& x) { return sort(x[0], 1); }, {{3, 4}});
    verify_grad([](const VarList& x) { return sort(x[0], 0, "stable"); }, {{3, 4}});
    verify_grad([](const VarList& x) { return sort(x[0], shape_i(x[0], 0) - 2); }, {{-1, 4}});
    verify_grad([](const VarList& x) { return x[0] * cast(argsort(x[0], -1), DType::Float64); }, {{2, 3}});
  }
  SUBCASE("Repeat, BroadcastTo, SearchsortedOp") {
    verify_grad([&](const VarList& x) { return repeat(x[0], ints({2, 0, 3}), 0); }, {{3, 2}});
    verify_grad([&](const VarList& x) { return repeat(x[0], int64_constant(2), 1); }, {{3, 2}});
    verify_grad([&](const VarList& x) { return repeat(x[0], ints({1, 2, 0, 1, 1, 3}), std::nullopt); }, {{2, 3}});
    verify_grad([](const VarList& x) { return broadcast_to_view(x[0], {int64_constant(2), int64_constant(3)}); }, {{3}});
    verify_grad([](const VarList& x) {
      return broadcast_to_view(x[0], {int64_constant(2), int64_constant(3), int64_constant(4)});
    }, {{3, 1}});
    Check spread;
    spread.domain = {-5, 5};
    verify_grad([](const VarList& x) {
      return x[1] * cast(searchsorted(sort(x[0]), x[1], "right"), DType::Float64);
    }, {{4}, {3}}, spread);
  }
  SUBCASE("FillDiagonal and FillDiagonalOffset") {
    verify_grad([](const VarList& x) { return fill_diagonal(x[0], x[1]); }, {{3, 3}, {}});
    verify_grad([](const VarList& x) { return fill_diagonal(x[0], x[1]); }, {{2, 4}, {}});
    verify_grad([](const VarList& x) { return fill_diagonal(x[0], x[1]); }, {{2, 2, 2}, {}});
    for (std::int64_t offset : {-2, 1, 5})
      verify_grad([&](const VarList& x) { return fill_diagonal_offset(x[0], x[1], int64_constant(offset)); },
                  {{4, 3}, {}});
  }
}

// ---------------------------------------------------------------------------------------------
// dtypes, errors, options

TEST_CASE("grad: float32 graphs keep float32 gradients") {
  Var x = make_input(TensorType(f32, {-1}), "x");
  Var w = make_input(TensorType(f32, {3, -1}), "w");
  Var cost = sum(log1p(exp(dot(w, x)))) + sum(sqr(x)) * 0.5 + sum(tanh(x) / 3);
  for (const Var& g : grad(cost, {x, w})) CHECK(g->dtype() == f32);
  Var y = softmax(dot(w, x));
  CHECK(Rop({y}, {x}, {make_input(x->type())})[0]->dtype() == f32);
}

TEST_CASE("grad: errors name the op; options turn them into zeros") {
  Var x = make_input(TensorType(f64, {3}), "x");
  Var n = make_input(TensorType(i64, {3}), "n");
  auto message = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(message([&] { grad(sum(x * n), n); }).find("dtype int64") != std::string::npos);
  CHECK(message([&] { grad(cast(argmax(x), f64) * 2, x); }).find("Argmax") != std::string::npos);
  CHECK(message([&] { grad(sum(cast(x > 0, f64)), x); }).find("Gt") != std::string::npos);
  CHECK_NOTHROW(grad(sum(tri_gamma(x)), x));  // tri_gamma's derivative is polygamma(2, x)
  CHECK_NOTHROW(grad(sum(psi(x)), x));        // psi's derivative is tri_gamma
  CHECK(message([&] { grad(sum(n * 2), x); }).find("does not depend on \"x\"") != std::string::npos);
  CHECK(message([&] { grad(x, x); }).find("must be 0-d") != std::string::npos);

  GradOptions zero;
  zero.undefined = GradOptions::Undefined::Zero;
  zero.disconnected = GradOptions::Disconnected::Zero;
  Array p = Array::empty(f64, {3});
  for (int i = 0; i < 3; ++i) p.data<double>()[i] = i - 1.0;
  for (Var g : {grad(cast(argmax(x), f64) * 2, x, zero), grad(sum(n * 2), x, zero)}) {
    FunctionGraph fg({x, n}, {g});
    Array nv = Array::empty(i64, {3});
    for (int i = 0; i < 3; ++i) nv.data<std::int64_t>()[i] = i;
    CHECK(values_of(evaluate(fg, {p, nv})[0]) == std::vector<double>{0, 0, 0});
  }
  // Shapes on the path are disconnected, not errors: the gradient of mean(x) is 1/len.
  FunctionGraph fg({x}, {grad(mean(x), x)});
  CHECK(values_of(evaluate(fg, {p})[0]) == std::vector<double>(3, 1.0 / 3));
  // consider_constant stops the gradient.
  GradOptions stop;
  Var y = exp(x);
  stop.consider_constant = {y};
  FunctionGraph fc({x}, {grad(sum(y * x), x, stop)});
  std::vector<double> gc = values_of(evaluate(fc, {p})[0]);
  for (int i = 0; i < 3; ++i) CHECK(gc[static_cast<std::size_t>(i)] == doctest::Approx(std::exp(i - 1.0)));
}

TEST_CASE("grad: Lop with a given cotangent, jacobian") {
  Var x = make_input(TensorType(f64, {3}), "x");
  Var c = make_input(TensorType(f64, {3}), "c");
  Var g = Lop({sqr(x)}, {x}, {c})[0];
  Var j = jacobian(sqr(x) + sum(x), x);
  CHECK(j->type().shape == Shape{3, 3});
  FunctionGraph fg({x, c}, {g, j});
  Array xv = Array::empty(f64, {3}), cv = Array::empty(f64, {3});
  for (int i = 0; i < 3; ++i) {
    xv.data<double>()[i] = i + 1;
    cv.data<double>()[i] = 10 * (i + 1);
  }
  auto out = evaluate(fg, {xv, cv});
  CHECK(values_of(out[0]) == std::vector<double>{20, 80, 180});
  CHECK(values_of(out[1]) == std::vector<double>{3, 1, 1, 1, 5, 1, 1, 1, 7});
}

// Scalar functions of a 3-vector whose Hessians are checked (statically sized and not).
const std::vector<std::pair<const char*, Fn>>& hessian_functions() {
  static const std::vector<std::pair<const char*, Fn>> functions = {
      {"sum(x^3)", [](const VarList& x) { return sum(x[0] * x[0] * x[0]); }},
      {"sum(exp(x) sin(x))", [](const VarList& x) { return sum(exp(x[0]) * sin(x[0])); }},
      {"logsumexp(A x)", [](const VarList& x) {
         Var a = make_constant(random_array(f64, {4, 3}, *std::make_unique<std::mt19937>(3), {}));
         return log(sum(exp(dot(a, x[0]))));
       }},
      {"sum(softmax(x) * w)", [](const VarList& x) {
         return sum(softmax(x[0]) * make_constant(random_array(f64, {3}, *std::make_unique<std::mt19937>(5), {})));
       }},
      {"prod(x) + max(x)^2", [](const VarList& x) { return prod(x[0]) + sqr(max(x[0])); }},
  };
  return functions;
}

// The Hessian against finite differences of the (already verified) gradient.
TEST_CASE("grad: hessians of a few functions") {
  std::mt19937 rng(7);
  const auto& functions = hessian_functions();
  for (const auto& [name, f] : functions) {
    SUBCASE(name) {
      Var x = make_input(TensorType(f64, {3}), "x");
      Var cost = f({x});
      Var h = hessian(cost, x);
      REQUIRE(h->type().shape == Shape{3, 3});
      FunctionGraph hf({x}, {h});
      FunctionGraph gf({x}, {grad(cost, x)});
      Array p = random_array(f64, {3}, rng, {0.2, 1});
      std::vector<double> hv = values_of(evaluate(hf, {p})[0]);
      const double eps = 1e-6;
      for (int j = 0; j < 3; ++j) {
        Array pp = p.copy(), pm = p.copy();
        pp.data<double>()[j] += eps;
        pm.data<double>()[j] -= eps;
        std::vector<double> gp = values_of(evaluate(gf, {pp})[0]), gm = values_of(evaluate(gf, {pm})[0]);
        for (int i = 0; i < 3; ++i) {
          double fd = (gp[static_cast<std::size_t>(i)] - gm[static_cast<std::size_t>(i)]) / (2 * eps);
          CHECK_MESSAGE(close(hv[static_cast<std::size_t>(i * 3 + j)], fd, 1e-5), "H[" << i << "," << j << "]");
        }
      }
    }
  }
}

// Shapes known only at run time: the Jacobian comes from vectorize_graph over an identity
// matrix and must equal the element-by-element one built for the static shape.
TEST_CASE("grad: jacobian and hessian of run-time-sized expressions") {
  std::mt19937 rng(11);
  const auto& functions = hessian_functions();
  for (const auto& [name, f] : functions) {
    SUBCASE(name) {
      Var xs = make_input(TensorType(f64, {3}), "x");
      Var xd = make_input(TensorType(f64, {kUnknownLength}), "x");
      Var hd = hessian(f({xd}), xd);
      REQUIRE(hd->ndim() == 2);
      FunctionGraph fs({xs}, {hessian(f({xs}), xs)});
      FunctionGraph fd({xd}, {hd});
      Array p = random_array(f64, {3}, rng, {0.2, 1});
      Array want = evaluate(fs, {p})[0];
      Array got = evaluate(fd, {p})[0];
      REQUIRE(got.shape() == Shape{3, 3});
      std::vector<double> w = values_of(want), g = values_of(got);
      for (std::size_t k = 0; k < w.size(); ++k) CHECK_MESSAGE(close(g[k], w[k], 1e-12), "H[" << k / 3 << "," << k % 3 << "]");
    }
  }
  SUBCASE("a matrix-valued expression of a vector") {
    Var xd = make_input(TensorType(f64, {kUnknownLength}), "x");
    Var j = jacobian(outer(xd, sin(xd)), xd);
    REQUIRE(j->ndim() == 3);
    FunctionGraph fd({xd}, {j});
    Array p = random_array(f64, {2}, rng, {0.2, 1});
    std::vector<double> x = values_of(p);
    Array got = evaluate(fd, {p})[0];
    REQUIRE(got.shape() == Shape{2, 2, 2});
    std::vector<double> g = values_of(got);
    // d (x_a sin x_b) / d x_c
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 2; ++b)
        for (int c = 0; c < 2; ++c) {
          double want = (a == c ? std::sin(x[b]) : 0.0) + (b == c ? x[a] * std::cos(x[b]) : 0.0);
          CHECK(close(g[static_cast<std::size_t>((a * 2 + b) * 2 + c)], want, 1e-12));
        }
  }
  SUBCASE("an empty expression") {
    Var xd = make_input(TensorType(f64, {kUnknownLength}), "x");
    FunctionGraph fd({xd}, {jacobian(exp(xd), xd)});
    CHECK(evaluate(fd, {Array::empty(f64, {0})})[0].shape() == Shape{0, 0});
  }
}

// ---------------------------------------------------------------------------------------------
// The seed examples

TEST_CASE("grad: the gradient of sum(log1p(x)) is 1/(1+x) after canonicalize and specialize") {
  GraphBuilder b("seed");
  Var x = b.input("x", f64, {-1});
  b.output(grad(sum(log1p(x)), x), "gx");
  FunctionGraph fg = b.build();
  rewrite_graph(fg, {"canonicalize", "specialize"});
  // Structurally: reciprocal(1 + x) (or 1 / (1 + x)), nothing else.
  Var out = fg.outputs()[0];
  REQUIRE(out->owner());
  const auto* e = dynamic_cast<const Elemwise*>(&out->owner()->op());
  REQUIRE(e);
  Var denominator;
  if (e->scalar_op().id() == ScalarOpId::Reciprocal) {
    denominator = out->owner()->input(0);
  } else {
    REQUIRE(e->scalar_op().id() == ScalarOpId::TrueDiv);
    denominator = out->owner()->input(1);
  }
  REQUIRE(denominator->owner());
  const auto* add = dynamic_cast<const Elemwise*>(&denominator->owner()->op());
  REQUIRE(add);
  CHECK(add->scalar_op().id() == ScalarOpId::Add);
  bool has_x = false;
  for (const Var& in : denominator->owner()->inputs()) has_x = has_x || in == fg.inputs()[0];
  CHECK(has_x);
  CHECK(fg.num_nodes() <= 3);
  // By value.
  Array xv = Array::empty(f64, {4});
  const double v[] = {0, 0.5, 1, 3};
  for (int i = 0; i < 4; ++i) xv.data<double>()[i] = v[i];
  std::vector<double> got = values_of(evaluate(fg, {xv})[0]);
  for (int i = 0; i < 4; ++i) CHECK(got[static_cast<std::size_t>(i)] == doctest::Approx(1 / (1 + v[i])));
}

TEST_CASE("vectorize_graph: log(1 + x) from a scalar to a vector input") {
  Var x = make_input(TensorType(f64, {}), "x");
  Var y = log(1 + x);
  Var xs = make_input(TensorType(f64, {-1}), "xs");
  Var ys = vectorize_graph(y, {{x, xs}});
  CHECK(ys->type() == TensorType(f64, {-1}));
  FunctionGraph fg({xs}, {ys});
  Array xv = Array::empty(f64, {3});
  for (int i = 0; i < 3; ++i) xv.data<double>()[i] = i;
  std::vector<double> got = values_of(evaluate(fg, {xv})[0]);
  for (int i = 0; i < 3; ++i) CHECK(got[static_cast<std::size_t>(i)] == doctest::Approx(std::log1p(i)));
}

TEST_CASE("vectorize_graph: reductions shift their axes, dot becomes Blockwise, others are named") {
  Var x = make_input(TensorType(f64, {3}), "x");
  Var m = make_input(TensorType(f64, {3, 2}), "m");
  Var out = sum(softmax(x, 0) * x) + sum(dot(x, m) * max(m, 0));
  Var xb = make_input(TensorType(f64, {4, 3}), "xb");
  Var ob = vectorize_graph(out, {{x, xb}});
  CHECK(ob->type().shape == Shape{4});
  FunctionGraph core({x, m}, {out});
  FunctionGraph batched({xb, m}, {ob});
  std::mt19937 rng(2);
  Array xv = random_array(f64, {4, 3}, rng, {}), mv = random_array(f64, {3, 2}, rng, {});
  std::vector<double> got = values_of(evaluate(batched, {xv, mv})[0]);
  for (int b = 0; b < 4; ++b) {
    Array row = xv.view({3}, {1}, b * 3).copy();
    CHECK(got[static_cast<std::size_t>(b)] == doctest::Approx(evaluate_scalar(core, {row, mv})));
  }
  Var c = cumsum(x);
  try {
    vectorize_graph(c, {{x, xb}});
    FAIL("vectorize_graph of a flattening cumsum should be refused");
  } catch (const NotImplementedError& e) {
    CHECK(std::string(e.what()).find("Cumsum{axis=None}") != std::string::npos);
  }
}

// Join, MakeVector, IncSubtensor and the AdvancedSubtensor1 pair: data inputs get the batch
// dimensions (broadcast when only some have them), index and axis inputs stay as they are.
TEST_CASE("vectorize_graph: joins, vectors of scalars and (advanced) increments") {
  Var x = make_input(TensorType(f64, {3}), "x");
  Var y = make_input(TensorType(f64, {2}), "y");
  Var picks = int64_vector_constant({2, 0, 2});
  Var twice0 = int64_vector_constant({0, 0});
  Var out = concatenate({join(0, {x, y}), make_vector({at(x, 0), sum(y), at(x, -1)}, f64),
                         inc_subtensor(x, {slice(1, 3)}, y), set_subtensor(x, {idx(0)}, sum(y)), take(x, picks),
                         inc_take(x, twice0, y)});
  REQUIRE(out->type().shape == Shape{20});
  FunctionGraph core({x, y}, {out});
  std::mt19937 rng(4);
  for (int batched_input = 0; batched_input < 3; ++batched_input) {
    CAPTURE(batched_input);  // 0: x batched, 1: y batched, 2: both
    Var xb = batched_input != 1 ? make_input(TensorType(f64, {4, 3}), "xb") : x;
    Var yb = batched_input != 0 ? make_input(TensorType(f64, {4, 2}), "yb") : y;
    Var ob = vectorize_graph(out, {{x, xb}, {y, yb}});
    REQUIRE(ob->type().shape == Shape{4, 20});
    FunctionGraph batched({xb, yb}, {ob});
    Array xv = random_array(f64, xb->type().shape, rng, {}), yv = random_array(f64, yb->type().shape, rng, {});
    std::vector<double> got = values_of(evaluate(batched, {xv, yv})[0]);
    for (int b = 0; b < 4; ++b) {
      Array xr = batched_input != 1 ? xv.view({3}, {1}, b * 3).copy() : xv;
      Array yr = batched_input != 0 ? yv.view({2}, {1}, b * 2).copy() : yv;
      std::vector<double> want = values_of(evaluate(core, {xr, yr})[0]);
      for (int k = 0; k < 20; ++k)
        CHECK_MESSAGE(got[static_cast<std::size_t>(b * 20 + k)] == doctest::Approx(want[static_cast<std::size_t>(k)]),
                      "row " << b << " element " << k);
    }
  }
}

TEST_CASE("graph_replace: one to one, refusing a vector in a scalar's place") {
  Var x = make_input(TensorType(f64, {}), "x");
  Var y = exp(x) + x;
  Var z = make_input(TensorType(f64, {}), "z");
  Var y2 = graph_replace(y, {{x, z * 2}});
  FunctionGraph fg({z}, {y2});
  Array zv = make_scalar_array(f64, 0.5);
  CHECK(evaluate_scalar(fg, {zv}) == doctest::Approx(std::exp(1.0) + 1));
  Var v = make_input(TensorType(f64, {-1}), "v");
  CHECK_THROWS_WITH_AS(graph_replace(y, {{x, v}}),
                       "Cannot convert Type Vector(float64, shape=(?,)) (of Variable v) into Type "
                       "Scalar(float64, shape=()). You can try to manually convert v into a "
                       "Scalar(float64, shape=()).",
                       UserError);
  CHECK_THROWS_AS(graph_replace(y, {{z, x}}, true), UserError);
}

// ---------------------------------------------------------------------------------------------
// Compiled

TEST_CASE("grad compiled: value and gradient of a logistic loss and of a softmax classifier") {
  GraphBuilder b("logistic");
  Var X = b.input("X", f64, {-1, 3});
  Var yv = b.input("y", f64, {-1});
  Var w = b.input("w", f64, {3});
  Var bias = b.input("b", f64, {});
  Var p = sigmoid(dot(X, w) + bias);
  Var loss = mean(-yv * log(p) - (1 - yv) * log1p(-p)) + 0.01 * sum(sqr(w));
  VarList g = grad(loss, {w, bias});
  b.output(loss, "loss");
  b.output(g[0], "grad_w");
  b.output(g[1], "grad_b");
  FunctionGraph fg = b.build();
  FunctionGraph opt = fg.clone();
  pipeline_for_compiling(opt);

  GraphBuilder b2("softmax_clf");
  Var X2 = b2.input("X", f32, {-1, 4});
  Var W2 = b2.input("W", f32, {4, 3});
  Var logits = dot(X2, W2);
  Var loss2 = -sum(subtensor(log_softmax(logits, 1), {slice(), idx(0)})) + sum(max(logits, 1));
  b2.output(loss2, "loss");
  b2.output(grad(loss2, W2), "grad_W");
  FunctionGraph fg2 = b2.build();
  FunctionGraph opt2 = fg2.clone();
  pipeline_for_compiling(opt2);

  NamedGraphs named = {{&opt, "g0"}, {&opt2, "g1"}};
  BuildResult built = build_bundle(named, "grad_compiled");
  Library so(built.library_path);
  std::mt19937 rng(3);
  for (std::int64_t n : {5, 1, 0}) {
    INFO("n = " << n);
    Array yv_ = Array::empty(f64, {n});
    for (std::int64_t i = 0; i < n; ++i) yv_.data<double>()[i] = static_cast<double>(i % 2);
    std::vector<Array> in1 = {random_array(f64, {n, 3}, rng, {}), yv_, random_array(f64, {3}, rng, {}),
                              make_scalar_array(f64, 0.1)};
    std::vector<Array> in2 = {random_array(f32, {n, 4}, rng, {}), random_array(f32, {4, 3}, rng, {})};
    for (const auto& item :
         {std::tuple{&fg, "g0", in1}, std::tuple{&fg2, "g1", in2}}) {
      const auto& graph = std::get<0>(item);
      const auto& info_name = std::get<1>(item);
      const auto& inputs = std::get<2>(item);
      const std::vector<Array> expected = evaluate(*graph, inputs);
      CallResult r = call_compiled(so.graph(info_name), inputs);
      REQUIRE_MESSAGE(r.status == KILN_OK, r.error);
      REQUIRE(r.outputs.size() == expected.size());
      for (std::size_t k = 0; k < expected.size(); ++k) {
        auto diff = compare_arrays(r.outputs[k], expected[k], 1e-4, 1e-5);
        CHECK_MESSAGE(!diff, info_name << " output " << k << ": " << diff.value_or(""));
      }
    }
  }
}

// The training sample (samples/logistic_regression): the loss graph differentiated as
// `kiln grad loss.json --cost loss --wrt w --wrt b` does, compiled, trained for 1,000 steps.
TEST_CASE("grad compiled: the logistic-regression sample trains (loss falls, accuracy beats chance)") {
  FunctionGraph loss = load_graph_file(std::string(KILN_SOURCE_DIR) + "/samples/logistic_regression/loss.json");
  const Var& w = loss.inputs()[2];
  const Var& b = loss.inputs()[3];
  VarList grads = grad(loss.outputs()[0], {w, b});
  FunctionGraph step(loss.inputs(), {loss.outputs()[0], loss.outputs()[1], grads[0], grads[1]},
                     "logistic_regression_grad");
  pipeline_for_compiling(step);
  NamedGraphs named = {{&step, "logistic_regression_grad"}};
  BuildResult built = build_bundle(named, "logreg_sample");
  Library so(built.library_path);
  const logreg::Dataset data = logreg::make_dataset(400, 8, 1234);
  const logreg::Result r = logreg::train(so.graph("logistic_regression_grad"), data, 1000, 0.1);
  MESSAGE("loss " << r.losses.front() << " -> " << r.losses.back() << ", accuracy " << r.accuracy);
  CHECK(r.losses.front() == doctest::Approx(std::log(2.0)));
  CHECK(r.losses.back() < 0.6 * r.losses.front());  // 0.69 -> about 0.35 (5% of the labels are noise)
  bool monotone = true;
  for (std::size_t i = 1; i < r.losses.size(); ++i) monotone = monotone && r.losses[i] <= r.losses[i - 1] + 1e-12;
  CHECK(monotone);
  CHECK(r.accuracy > 0.85);
  CHECK(r.confusion[0][0] + r.confusion[0][1] + r.confusion[1][0] + r.confusion[1][1] == 400);
}
