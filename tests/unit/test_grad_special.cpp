// Gradients of the special functions (api/special.h) by finite differences (verify_grad: the
// pullback and the pushforward), over representative points and the hard regions of each
// algorithm — Temme's expansion and the small-a form of gammainc, the continued fraction and
// the complement series of betainc, the transformations of hyp2f1 — plus the not-implemented
// order derivatives, second derivatives, float32 gradients staying float32, and a gradient
// graph rewritten (fused) and compiled through the C++ backend.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "api/elementwise.h"
#include "api/graph_builder.h"
#include "api/special.h"
#include "compiled.h"
#include "eval/evaluator.h"
#include "fixtures.h"
#include "grad/grad.h"
#include "grad_check.h"
#include "ir/error.h"
#include "ops/constant.h"
#include "ops/reduce.h"
#include "rewrite/pipeline.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

Array vector_of(std::vector<double> values) {
  Array a = Array::empty(DType::Float64, {static_cast<std::int64_t>(values.size())});
  for (std::size_t i = 0; i < values.size(); ++i) a.data<double>()[i] = values[i];
  return a;
}

// verify_grad at the given points (one vector per input, same lengths), one point at a time:
// in a sum over points of very different magnitudes (i0(30) ~ 8e11 beside i0(0.5)) the small
// ones' finite differences would vanish in the large ones' rounding.
void check_at(const GradFn& f, std::vector<std::vector<double>> points, double eps = 1e-6, double tol = 1e-5) {
  for (std::size_t k = 0; k < points[0].size(); ++k) {
    Check check;
    std::vector<Shape> shapes;
    std::string where;
    for (auto& p : points) {
      check.point.push_back(vector_of({p[k]}));
      shapes.push_back({1});
      where += std::to_string(p[k]) + " ";
    }
    check.eps = eps;
    check.tol = tol;
    INFO("at " << where);
    verify_grad(f, shapes, check);
  }
}

std::string message(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("grad: special unary functions, by finite differences") {
  SUBCASE("erfcinv") {
    check_at([](const VarList& x) { return erfcinv(x[0]); }, {{0.01, 0.3, 0.9, 1.0, 1.4, 1.97}});
  }
  SUBCASE("ndtri_exp") {
    check_at([](const VarList& x) { return ndtri_exp(x[0]); }, {{-30, -3, -0.7, -0.3, -1e-3}});
  }
  SUBCASE("i0, i1") {
    check_at([](const VarList& x) { return i0(x[0]); }, {{-25, -3, -0.2, 0.5, 4, 30}}, 1e-6, 1e-6);
    check_at([](const VarList& x) { return i1(x[0]); }, {{-25, -3, -0.2, 0.5, 4, 30}}, 1e-6, 1e-6);
  }
  SUBCASE("tri_gamma (polygamma(2, x)) and polygamma") {
    check_at([](const VarList& x) { return tri_gamma(x[0]); }, {{0.3, 1.5, 7, -2.5, -0.3}});
    check_at([](const VarList& x) { return polygamma(3, x[0]); }, {{0.5, 2, 12, -1.5}}, 1e-7);
  }
}

TEST_CASE("grad: gammainc and gammaincc in k and x") {
  const auto p = [](const VarList& x) { return gammainc(x[0], x[1]); };
  const auto q = [](const VarList& x) { return gammaincc(x[0], x[1]); };
  // Series (x <= k), continued fraction (x > k), small k (x < 1.1), Temme (k >= 20, x ~ k).
  const std::vector<std::vector<double>> points = {{0.7, 3, 3, 0.05, 0.5, 30, 60, 200},
                                                   {0.4, 1.5, 9, 0.3, 1.0, 28, 66, 190}};
  check_at(p, points, 1e-6, 1e-6);
  check_at(q, points, 1e-6, 1e-6);
}

TEST_CASE("grad: inverse incomplete gamma and beta in their last argument") {
  check_at([](const VarList& x) { return gammaincinv(2.5, x[0]); }, {{0.01, 0.3, 0.7, 0.99}});
  check_at([](const VarList& x) { return gammainccinv(0.7, x[0]); }, {{0.01, 0.3, 0.7, 0.99}});
  check_at([](const VarList& x) { return betaincinv(2.5, 0.8, x[0]); }, {{0.02, 0.4, 0.9}});
  // PyTensor has no derivative in the parameters: a clear error naming the op.
  const Var k = make_input(TensorType(DType::Float64, {}), "k");
  const Var y = make_input(TensorType(DType::Float64, {}), "y");
  CHECK_THROWS_AS(grad(gammaincinv(k, y), k), NotImplementedError);
  CHECK(message([&] { grad(gammaincinv(k, y), k); }).find("gammaincinv") != std::string::npos);
  CHECK_NOTHROW(grad(gammaincinv(k, y), y));
}

TEST_CASE("grad: Bessel functions in x; the order has no gradient") {
  check_at([](const VarList& x) { return ive(1.5, x[0]); }, {{0.5, 3, 45, 80}}, 1e-6, 1e-6);
  check_at([](const VarList& x) { return ive(2, x[0]); }, {{-3, -0.5, 0.5, 7}}, 1e-6, 1e-6);
  check_at([](const VarList& x) { return kve(0.3, x[0]); }, {{0.2, 1.5, 9, 60}}, 1e-7, 1e-6);
  check_at([](const VarList& x) { return kve(60, x[0]); }, {{5, 70}}, 1e-6, 1e-6);
  check_at([](const VarList& x) { return jv(2.5, x[0]); }, {{0.5, 3, 12, 40}}, 1e-6, 1e-6);
  check_at([](const VarList& x) { return jv(-1.5, x[0]); }, {{0.7, 4}}, 1e-6, 1e-6);
  const Var v = make_input(TensorType(DType::Float64, {}), "v");
  const Var x = make_input(TensorType(DType::Float64, {}), "x");
  for (auto f : {+[](const Var& a, const Var& b) { return jv(a, b); }, +[](const Var& a, const Var& b) { return ive(a, b); },
                 +[](const Var& a, const Var& b) { return kve(a, b); }}) {
    CHECK_THROWS_AS(grad(f(v, x), v), NotImplementedError);
    CHECK(message([&] { grad(f(v, x), v); }).find("order") != std::string::npos);
  }
}

TEST_CASE("grad: owens_t in h and a") {
  check_at([](const VarList& x) { return owens_t(x[0], x[1]); }, {{-2, 0.3, 1.5, 4, 0.7}, {0.5, -1.5, 3, 0.2, 20}});
}

TEST_CASE("grad: betainc in a, b and x") {
  const auto f = [](const VarList& x) { return betainc(x[0], x[1], x[2]); };
  // Power series, its complement, the continued fraction on either side, both parameters large.
  check_at(f, {{0.5, 2, 0.05, 30, 6, 250}, {1.5, 0.3, 20, 2, 7, 400}, {0.2, 0.7, 0.01, 0.97, 0.45, 0.38}}, 1e-7,
           1e-6);
}

TEST_CASE("grad: hyp2f1 in a, b, c and z") {
  const auto f = [](const VarList& x) { return hyp2f1(x[0], x[1], x[2], x[3]); };
  // The series (0 <= z < 1), Pfaff's transformation (z < 0, also below -1, where PyTensor gives
  // NaN), close to z = 1 — with c - a - b away from an integer: next to one the value's
  // transformation to 1 - z cancels by 1 / distance, which finite differences of step 1e-7
  // cannot resolve (at c - a - b = 2 they are off by 1e-3 while the pullback matches mpmath).
  check_at(f, {{0.5, 1.2, 0.3, 2, 0.7}, {0.7, -0.4, 1.5, 0.5, 1.1}, {1.5, 2.5, 3, 4.3, 2.2}, {0.4, -0.7, -3, 0.95, 0.6}},
           1e-7, 1e-6);
}

TEST_CASE("grad: second derivatives through the parameter-derivative ops are refused") {
  const Var k = make_input(TensorType(DType::Float64, {}), "k");
  const Var x = make_input(TensorType(DType::Float64, {}), "x");
  const Var dk = grad(gammainc(k, x), k);
  CHECK_THROWS_AS(grad(dk, k), NotImplementedError);
  CHECK(message([&] { grad(dk, k); }).find("gammainc_grad_k") != std::string::npos);
}

TEST_CASE("grad: float32 special functions keep float32 gradients") {
  const Var k = make_input(TensorType(DType::Float32, {3}), "k");
  const Var x = make_input(TensorType(DType::Float32, {3}), "x");
  const VarList g = grad(sum(gammainc(k, x) + owens_t(x, k) + i1(x)), {k, x});
  CHECK(g[0]->dtype() == DType::Float32);
  CHECK(g[1]->dtype() == DType::Float32);
  // polygamma's integer order is disconnected; its x gradient is polygamma(n + 1, x).
  const Var n = make_input(TensorType(DType::Int32, {3}), "n");
  GradOptions options;
  options.disconnected = GradOptions::Disconnected::Zero;
  const Var gp = grad(sum(polygamma(n, x)), x, options);
  CHECK(gp->dtype() == DType::Float32);
}

TEST_CASE("grad compiled: a PyMC-like log-likelihood of special functions and its gradients") {
  // A Beta-binomial-ish CDF term, a gamma CDF, a von Mises normaliser and a Student-t-like
  // hypergeometric term, with gradients in every parameter: fused by the pipeline, compiled,
  // and compared with the reference evaluator.
  GraphBuilder b("special_loglike");
  const Var a = b.input("a", DType::Float64, {-1});
  const Var c = b.input("c", DType::Float64, {-1});
  const Var x = b.input("x", DType::Float64, {-1});
  const Var loss = sum(log(betainc(a, c, x)) + log(gammaincc(a, c * x + 0.1)) - log(i0(c)) +
                       hyp2f1(a, 0.5, c + 1, -x) + owens_t(x, a));
  const VarList g = grad(loss, {a, c, x});
  b.output(loss, "loss");
  b.output(g[0], "grad_a");
  b.output(g[1], "grad_c");
  b.output(g[2], "grad_x");
  FunctionGraph fg = b.build();
  FunctionGraph opt = fg.clone();
  PipelineOptions options;
  options.verify = true;
  run_pipeline(opt, options);
  BuildResult built = build_bundle({{&opt, "g0"}}, "grad_special");
  REQUIRE(!built.library_path.empty());
  Library so(built.library_path);
  std::mt19937 rng(7);
  for (std::int64_t n : {6, 1, 0}) {
    INFO("n = " << n);
    const std::vector<Array> inputs = {random_array(DType::Float64, {n}, rng, {0.5, 4}),
                                       random_array(DType::Float64, {n}, rng, {0.5, 4}),
                                       random_array(DType::Float64, {n}, rng, {0.05, 0.95})};
    const std::vector<Array> expected = evaluate(fg, inputs);
    CallResult r = call_compiled(so.graph("g0"), inputs);
    REQUIRE_MESSAGE(r.status == KILN_OK, r.error);
    REQUIRE(r.outputs.size() == expected.size());
    for (std::size_t k = 0; k < expected.size(); ++k) {
      auto diff = compare_arrays(r.outputs[k], expected[k], 1e-12, 1e-13);
      CHECK_MESSAGE(!diff, "output " << k << ": " << diff.value_or(""));
    }
  }
}
