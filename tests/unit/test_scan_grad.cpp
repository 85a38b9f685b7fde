// Gradients through Scan (grad/scan_grad.cpp): for each ScanInfo form — sequences (two read from
// one source at different offsets), sit-sot, mit-sot with taps [-2, -1], nit-sot, non-sequences,
// vector states with a matrix parameter, a while-loop, outputs used only in part — the gradient
// of a scalar cost is checked against central finite differences of the cost, through the
// reference evaluator and through one compiled library (after kiln's rewrite pipeline).
// PyTensor's own pytensor.grad values are checked by the fixtures in tests/fixtures/cases/scan
// whose names start with grad_ (tests/fixtures/pytensor3/export_scan_cases.py).
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <tuple>

#include <nlohmann/json.hpp>

#include "compiled.h"
#include "eval/evaluator.h"
#include "fixtures.h"
#include "grad/grad.h"
#include "grad_check.h"
#include "ir/error.h"
#include "kiln/runtime/npy.hpp"
#include "ops/alloc.h"
#include "ops/dot.h"
#include "ops/join.h"
#include "ops/math.h"
#include "ops/reduce.h"
#include "ops/scan.h"
#include "ops/shape.h"
#include "ops/subtensor.h"
#include "rewrite/pipeline.h"
#include "transform/vectorize.h"
#include "v2_test_util.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

const TensorType kF64Scalar(DType::Float64, {});
TensorType f64(Shape s) { return TensorType(DType::Float64, std::move(s)); }

// The Scan node of `info` whose step maps `inner_in` to `inner_out`, applied to `outer`.
VarList scan(const ScanInfo& info, const VarList& inner_in, const VarList& inner_out, const VarList& outer,
             std::int64_t truncate_gradient = -1) {
  auto step = std::make_shared<FunctionGraph>(inner_in, inner_out, "step");
  return make_node(std::make_shared<Scan>(info, step, truncate_gradient, "step"), outer)->outputs();
}

ScanInfo info_of(int n_seqs, std::vector<ScanInfo::Taps> mit_sot, int n_sit_sot, int n_nit_sot, int n_non_seqs,
                 bool as_while = false) {
  ScanInfo info;
  info.n_seqs = n_seqs;
  info.mit_sot_in_slices = std::move(mit_sot);
  info.sit_sot_in_slices.assign(static_cast<std::size_t>(n_sit_sot), ScanInfo::Taps{-1});
  info.n_nit_sot = n_nit_sot;
  info.n_non_seqs = n_non_seqs;
  info.as_while = as_while;
  return info;
}

// A buffer of `rows` rows shaped like `first` whose row 0 is `first`.
Var buffer_from(const Var& first, const Var& rows) {
  std::vector<IntArg> lengths{rows};
  for (int d = 0; d < first->ndim(); ++d) lengths.emplace_back(shape_i(first, d));
  return inc_subtensor(alloc(make_constant(Array::zeros(DType::Float64, {})), IntList(lengths)), {idx(0)}, first);
}

Array i64(std::int64_t v) {
  Array a = Array::empty(DType::Int64, {});
  *a.data<std::int64_t>() = v;
  return a;
}

Array i64_vector(const std::vector<std::int64_t>& values) {
  Array a = Array::empty(DType::Int64, {static_cast<std::int64_t>(values.size())});
  std::copy(values.begin(), values.end(), a.data<std::int64_t>());
  return a;
}

struct GradCase {
  std::string name;
  VarList xs;
  Var cost;
  std::vector<Array> point;
};

// x_t = rho * tanh(x_{t-1}) + sigma * e_t, the whole trajectory (x0 included) in the cost.
GradCase sit_sot_case() {
  Var x0 = make_input(kF64Scalar, "x0"), e = make_input(f64({kUnknownLength}), "e");
  Var rho = make_input(kF64Scalar, "rho"), sigma = make_input(kF64Scalar, "sigma");
  Var ie = make_input(kF64Scalar, "e_t"), xm1 = make_input(kF64Scalar, "x_tm1");
  Var irho = make_input(kF64Scalar, "rho"), isig = make_input(kF64Scalar, "sigma");
  Var n = shape_i(e, 0);
  Var out = scan(info_of(1, {}, 1, 0, 2), {ie, xm1, irho, isig}, {irho * tanh(xm1) + isig * ie},
                 {n, e, buffer_from(x0, n + 1), rho, sigma})[0];
  return {"sit_sot", {x0, e, rho, sigma}, sum(out * cos(out)),
          {f64_array({}, {0.3}), f64_array({5}, {0.5, -1, 0.25, 2, -0.7}), f64_array({}, {0.8}), f64_array({}, {1.3})}};
}

// An AR(2) with a nonlinear tap, x_t = c x_{t-2} + sin(x_{t-1}) + e_t, and a nit-sot y_t = x_t^2:
// the cost uses the last state only and the whole nit-sot.
GradCase mit_sot_case() {
  Var init = make_input(f64({2}), "init"), e = make_input(f64({6}), "e"), c = make_input(kF64Scalar, "c");
  Var ie = make_input(kF64Scalar, "e_t"), xm2 = make_input(kF64Scalar, "x_tm2"), xm1 = make_input(kF64Scalar, "x_tm1");
  Var ic = make_input(kF64Scalar, "c");
  Var x = ic * xm2 + sin(xm1) + ie;
  Var n = make_constant(i64(6));
  VarList outs = scan(info_of(1, {{-2, -1}}, 0, 1, 1), {ie, xm2, xm1, ic}, {x, x * x},
                      {n, e, concatenate({init, alloc(make_constant(Array::zeros(DType::Float64, {})), {6})}), n, c});
  return {"mit_sot_last_and_nit_sot", {init, e, c}, at(outs[0], -1) + sum(outs[1]),
          {f64_array({2}, {0.2, -0.4}), f64_array({6}, {0.1, 0.3, -0.2, 0.5, 0.05, -0.6}), f64_array({}, {0.45})}};
}

// A vector state h_t = tanh(W h_{t-1} + u_t - 0.5 u_{t+1}): a matrix parameter, and two
// sequences read from one source at offsets 0 and 1 (what scan() makes of taps [0, 1]).
GradCase vector_state_case() {
  Var W = make_input(f64({3, 3}), "W"), u = make_input(f64({5, 3}), "u"), h0 = make_input(f64({3}), "h0");
  Var a = make_input(f64({3}), "u_t"), b = make_input(f64({3}), "u_tp1"), hm1 = make_input(f64({3}), "h_tm1");
  Var iW = make_input(f64({3, 3}), "W");
  Var n = make_constant(i64(4));
  Var out = scan(info_of(2, {}, 1, 0, 1), {a, b, hm1, iW}, {tanh(dot(iW, hm1) + a - 0.5 * b)},
                 {n, subtensor(u, {slice(0, 4)}), subtensor(u, {slice(1, 5)}), buffer_from(h0, n + 1), W})[0];
  std::mt19937 rng(7);
  return {"vector_state_two_sequences", {W, u, h0}, sum(out * cos(out)),
          {random_array(DType::Float64, {3, 3}, rng, {}), random_array(DType::Float64, {5, 3}, rng, {}),
           random_array(DType::Float64, {3}, rng, {})}};
}

// x_t = a x_{t-1} + 0.1 until x_t > 5 (at most 20 steps): the loop stops after 4 steps at the
// point checked, far from the threshold, so finite differences do not change the step count.
GradCase while_case() {
  Var x0 = make_input(kF64Scalar, "x0"), a = make_input(kF64Scalar, "a");
  Var xm1 = make_input(kF64Scalar, "x_tm1"), ia = make_input(kF64Scalar, "a");
  Var x = ia * xm1 + 0.1;
  Var n = make_constant(i64(20));
  Var out = scan(info_of(0, {}, 1, 0, 1, true), {xm1, ia}, {x, x > 5.0}, {n, buffer_from(x0, n + 1), a})[0];
  return {"while_loop", {x0, a}, sum(out * out), {f64_array({}, {1.0}), f64_array({}, {1.5})}};
}

double evaluate_cost(const GradCase& c, const std::vector<Array>& point) {
  FunctionGraph fg(c.xs, {c.cost});
  return evaluate_scalar(fg, point);
}

// Central finite differences of the cost at the case's point, one per input element.
std::vector<std::vector<double>> finite_differences(const GradCase& c) {
  const double eps = 1e-6;
  std::vector<std::vector<double>> out;
  for (std::size_t i = 0; i < c.xs.size(); ++i) {
    out.emplace_back();
    for (std::int64_t j = 0; j < c.point[i].size(); ++j) {
      std::vector<Array> plus = c.point, minus = c.point;
      plus[i] = c.point[i].copy();
      minus[i] = c.point[i].copy();
      plus[i].data<double>()[j] += eps;
      minus[i].data<double>()[j] -= eps;
      out.back().push_back((evaluate_cost(c, plus) - evaluate_cost(c, minus)) / (2 * eps));
    }
  }
  return out;
}

void check_against(const std::vector<Array>& grads, const std::vector<std::vector<double>>& fd, const std::string& where) {
  REQUIRE(grads.size() == fd.size());
  for (std::size_t i = 0; i < grads.size(); ++i) {
    std::vector<double> g = values_of(grads[i]);
    REQUIRE(g.size() == fd[i].size());
    for (std::size_t j = 0; j < g.size(); ++j)
      CHECK_MESSAGE(close(g[j], fd[i][j], 1e-6), where << ": input " << i << " element " << j << ": gradient " << g[j]
                                                       << " vs finite differences " << fd[i][j]);
  }
}

}  // namespace

TEST_CASE("Scan gradients: sit-sot, mit-sot, nit-sot, sequences, non-sequences and while-loops agree with finite differences, evaluated and compiled") {
  std::vector<GradCase> cases = {sit_sot_case(), mit_sot_case(), vector_state_case(), while_case()};
  std::vector<std::unique_ptr<FunctionGraph>> graphs;
  NamedGraphs named;
  std::vector<std::vector<std::vector<double>>> fds;
  for (const GradCase& c : cases) {
    CAPTURE(c.name);
    VarList grads = grad(c.cost, c.xs);
    VarList outs{c.cost};
    outs.insert(outs.end(), grads.begin(), grads.end());
    FunctionGraph fg(c.xs, outs);
    fg.verify();
    std::vector<Array> values = evaluate(fg, c.point);
    fds.push_back(finite_differences(c));
    check_against(std::vector<Array>(values.begin() + 1, values.end()), fds.back(), "evaluator");
    graphs.push_back(std::make_unique<FunctionGraph>(fg.clone()));
    run_pipeline(*graphs.back());
    std::vector<Array> rewritten = evaluate(*graphs.back(), c.point);
    check_against(std::vector<Array>(rewritten.begin() + 1, rewritten.end()), fds.back(), "evaluator after rewrites");
    named.push_back({graphs.back().get(), c.name});
  }
  BuildResult built = build_bundle(named, "scan_grad");
  Library so(built.library_path);
  for (std::size_t k = 0; k < cases.size(); ++k) {
    CAPTURE(cases[k].name);
    CallResult r = call_compiled(so.graph(cases[k].name), cases[k].point);
    REQUIRE_MESSAGE(r.status == KILN_OK, r.error);
    CHECK(close(values_of(r.outputs[0])[0], evaluate_cost(cases[k], cases[k].point), 1e-12));
    check_against(std::vector<Array>(r.outputs.begin() + 1, r.outputs.end()), fds[k], "compiled");
  }
}

TEST_CASE("Scan gradients: disconnected, integer and refused inputs") {
  // x_t = a x_{t-1} + k_t (an integer sequence), z_t = b x_{t-1} (a nit-sot the cost ignores).
  Var x0 = make_input(kF64Scalar, "x0"), a = make_input(kF64Scalar, "a"), b = make_input(kF64Scalar, "b");
  Var k = make_input(TensorType(DType::Int64, {3}), "k");
  Var ik = make_input(TensorType(DType::Int64, {}), "k_t"), xm1 = make_input(kF64Scalar, "x_tm1");
  Var ia = make_input(kF64Scalar, "a"), ib = make_input(kF64Scalar, "b");
  Var n = make_constant(i64(3));
  VarList outs = scan(info_of(1, {}, 1, 1, 2), {ik, xm1, ia, ib}, {ia * xm1 + cast(ik, DType::Float64), ib * xm1},
                      {n, k, buffer_from(x0, n + 1), n, a, b});
  Var cost = sum(outs[0]);
  // b reaches only the ignored nit-sot: disconnected, as in PyTensor.
  CHECK_THROWS_WITH_AS(grad(cost, VarList{b}), doctest::Contains("does not depend on"), UserError);
  GradOptions zero;
  zero.disconnected = GradOptions::Disconnected::Zero;
  VarList g = grad(cost, {x0, a, b}, zero);
  FunctionGraph fg({x0, a, b, k}, g);
  std::vector<Array> v = evaluate(fg, {f64_array({}, {2}), f64_array({}, {0.5}), f64_array({}, {9}), i64_vector({1, 2, 3})});
  // x = [2, 2, 3, 4.5] (x0 included in the cost): d/dx0 = 1 + .5 + .25 + .125; dx_t/da = x_{t-1}
  // + a dx_{t-1}/da = 2, 3, 4.5.
  CHECK(values_of(v[0])[0] == doctest::Approx(1.875));
  CHECK(values_of(v[1])[0] == doctest::Approx(9.5));
  CHECK(values_of(v[2])[0] == 0);
  // An integer sequence has no gradient.
  CHECK_THROWS_WITH_AS(grad(cost, VarList{k}), doctest::Contains("int64"), UserError);

}

TEST_CASE("Scan gradients: truncate_gradient goes back over the last k steps only") {
  // x_t = a x_{t-1}, x = [2, 1, .5, .25], cost = sum(x). With k = 2 the backward pass covers
  // steps 2 and 1: d/da = 1 * x_2 + (1 + a) * x_1 = 2, and x0 gets only its own cotangent 1;
  // k >= 3 is the whole gradient (1.875, 5.5).
  Var x0 = make_input(kF64Scalar, "x0"), a = make_input(kF64Scalar, "a");
  Var xm1 = make_input(kF64Scalar, "x_tm1"), ia = make_input(kF64Scalar, "a");
  Var n = make_constant(i64(3));
  for (const auto& [k, dx0, da] : std::vector<std::tuple<std::int64_t, double, double>>{
           {0, 1.0, 0.0}, {1, 1.0, 0.5}, {2, 1.0, 2.0}, {3, 1.875, 5.5}, {5, 1.875, 5.5}}) {
    CAPTURE(k);
    Var tout = scan(info_of(0, {}, 1, 0, 1), {xm1, ia}, {ia * xm1}, {n, buffer_from(x0, n + 1), a}, k)[0];
    FunctionGraph fg({x0, a}, grad(sum(tout), VarList{x0, a}));
    std::vector<Array> v = evaluate(fg, {f64_array({}, {2}), f64_array({}, {0.5})});
    CHECK(values_of(v[0])[0] == doctest::Approx(dx0));
    CHECK(values_of(v[1])[0] == doctest::Approx(da));
  }
}

TEST_CASE("Scan gradients: circular buffers (PyTensor's scan_save_mem) are run again on whole buffers") {
  // x_t = a x_{t-1} in a buffer of 2 rows: after n steps it holds x_{n-1}, x_n. cost = x_{n-1} + 3 x_n.
  Var x0 = make_input(kF64Scalar, "x0"), a = make_input(kF64Scalar, "a");
  Var xm1 = make_input(kF64Scalar, "x_tm1"), ia = make_input(kF64Scalar, "a");
  Var n = make_input(TensorType(DType::Int64, {}), "n");
  auto build = [&](const Var& steps) {
    Var out = scan(info_of(0, {}, 1, 0, 1), {xm1, ia}, {ia * xm1}, {steps, buffer_from(x0, make_constant(i64(2))), a})[0];
    return grad(at(out, 0) + 3.0 * at(out, 1), VarList{x0, a});
  };
  // n known only at run time (an IfElse picks the states), and n = 5 known (always run again).
  FunctionGraph dynamic({x0, a, n}, build(n));
  FunctionGraph fixed({x0, a}, build(make_constant(i64(5))));
  auto expect = [](double x, double a, int n) {
    // d/dx0 and d/da of a^(n-1) x0 + 3 a^n x0 (for n = 1 the buffer holds x0, x1).
    return std::vector<double>{std::pow(a, n - 1) + 3 * std::pow(a, n),
                               (n - 1) * std::pow(a, n - 2) * x + 3 * n * std::pow(a, n - 1) * x};
  };
  FunctionGraph rewritten = dynamic.clone();
  run_pipeline(rewritten);
  BuildResult built = build_bundle({{&rewritten, "dynamic"}, {&fixed, "fixed"}}, "scan_grad_circular");
  Library so(built.library_path);
  for (int steps : {1, 2, 5}) {
    CAPTURE(steps);
    const std::vector<Array> point = {f64_array({}, {0.7}), f64_array({}, {1.3}), i64(steps)};
    const std::vector<double> want = expect(0.7, 1.3, steps);
    std::vector<Array> got = evaluate(dynamic, point);
    CallResult r = call_compiled(so.graph("dynamic"), point);
    REQUIRE_MESSAGE(r.status == KILN_OK, r.error);
    for (std::size_t i = 0; i < 2; ++i) {
      CHECK(values_of(got[i])[0] == doctest::Approx(want[i]).epsilon(1e-12));
      CHECK(values_of(r.outputs[i])[0] == doctest::Approx(want[i]).epsilon(1e-12));
    }
  }
  const std::vector<double> want5 = expect(0.7, 1.3, 5);
  std::vector<Array> got5 = evaluate(fixed, {f64_array({}, {0.7}), f64_array({}, {1.3})});
  CallResult r5 = call_compiled(so.graph("fixed"), {f64_array({}, {0.7}), f64_array({}, {1.3})});
  REQUIRE_MESSAGE(r5.status == KILN_OK, r5.error);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(values_of(got5[i])[0] == doctest::Approx(want5[i]).epsilon(1e-12));
    CHECK(values_of(r5.outputs[i])[0] == doctest::Approx(want5[i]).epsilon(1e-12));
  }
}

TEST_CASE("Scan gradients: PyTensor's pytensor.grad of time-series log-likelihoods written with scan") {
  // Each grad_* fixture holds the cost as PyTensor built it and, in case.json's "x-grads",
  // pytensor.grad of it with respect to every graph input (export_scan_cases.py).
  const auto cases = list_fixture_cases("scan/grad_");
  CHECK(cases.size() >= 4);
  NamedGraphs named;
  std::vector<std::unique_ptr<FunctionGraph>> graphs;
  std::vector<FixtureCase> loaded;
  std::vector<std::vector<Array>> expected;
  for (const auto& dir : cases) {
    CAPTURE(dir);
    FixtureCase c = load_fixture_case(dir);
    std::ifstream case_file(dir + "/case.json");
    const nlohmann::json spec = nlohmann::json::parse(case_file);
    REQUIRE(spec.contains("x-grads"));
    std::vector<Array> want;
    for (const auto& file : spec["x-grads"]) want.push_back(npy::load(dir + "/" + file.get<std::string>()));
    REQUIRE(want.size() == c.graph.inputs().size());
    VarList grads = grad(c.graph.outputs()[0], c.graph.inputs());
    auto fg = std::make_unique<FunctionGraph>(c.graph.inputs(), grads);
    std::vector<Array> got = evaluate(*fg, c.inputs);
    for (std::size_t i = 0; i < got.size(); ++i) {
      auto diff = compare_arrays(got[i], want[i], 1e-9, 1e-12);
      CHECK_MESSAGE(!diff, "evaluator, gradient " << i << ": " << diff.value_or(""));
    }
    run_pipeline(*fg);
    graphs.push_back(std::move(fg));
    named.push_back({graphs.back().get(), "g" + std::to_string(named.size())});
    loaded.push_back(std::move(c));
    expected.push_back(std::move(want));
  }
  BuildResult built = build_bundle(named, "scan_grad_pytensor");
  Library so(built.library_path);
  for (std::size_t k = 0; k < loaded.size(); ++k) {
    CAPTURE(loaded[k].name);
    CallResult r = call_compiled(so.graph(named[k].second), loaded[k].inputs);
    REQUIRE_MESSAGE(r.status == KILN_OK, r.error);
    for (std::size_t i = 0; i < r.outputs.size(); ++i) {
      auto diff = compare_arrays(r.outputs[i], expected[k][i], 1e-9, 1e-12);
      CHECK_MESSAGE(!diff, "compiled, gradient " << i << ": " << diff.value_or(""));
    }
  }
}

TEST_CASE("Scan gradients: the Jacobian of a statically sized Scan output, row by row") {
  // mit_sot_case's buffer has 8 rows known when the graph is built: jacobian differentiates each.
  GradCase c = mit_sot_case();
  const Var buffer = c.cost->owner()->input(0)->owner()->input(0);  // at(buffer, -1)
  REQUIRE(buffer->type().fully_static());
  Var J = jacobian(buffer, c.xs[0]);  // d buffer / d init: 8 x 2
  FunctionGraph fg(c.xs, {J, buffer});
  std::vector<Array> v = evaluate(fg, c.point);
  REQUIRE(v[0].shape() == Shape{8, 2});
  const std::vector<double> jac = values_of(v[0]);
  for (int col = 0; col < 2; ++col) {
    std::vector<Array> plus = c.point, minus = c.point;
    plus[0] = c.point[0].copy();
    minus[0] = c.point[0].copy();
    plus[0].data<double>()[col] += 1e-6;
    minus[0].data<double>()[col] -= 1e-6;
    const std::vector<double> up = values_of(evaluate(fg, plus)[1]), down = values_of(evaluate(fg, minus)[1]);
    for (int row = 0; row < 8; ++row)
      CHECK_MESSAGE(close(jac[static_cast<std::size_t>(row * 2 + col)], (up[static_cast<std::size_t>(row)] - down[static_cast<std::size_t>(row)]) / 2e-6, 1e-6),
                    "row " << row << " column " << col);
  }
}

TEST_CASE("Scan vectorize: a batched loop equals the loop run once per batch element") {
  // sit_sot_case's scan with rho batched (3 values) and x0 batched (3 values), e and sigma not;
  // then mit_sot_case with its sequence batched (2 x 6) and c not.
  GradCase a = sit_sot_case();
  const Var path = a.cost->owner()->input(0)->owner()->input(0);  // sum(out * cos(out)) -> out
  Var rho_b = make_input(f64({3}), "rho_b"), x0_b = make_input(f64({3}), "x0_b");
  Var batched = vectorize_graph(path, {{a.xs[2], rho_b}, {a.xs[0], x0_b}});
  FunctionGraph fa({x0_b, a.xs[1], rho_b, a.xs[3]}, {batched});
  FunctionGraph one(a.xs, {path});
  const Array rhos = f64_array({3}, {0.8, -0.5, 1.1}), x0s = f64_array({3}, {0.3, 2.0, -1.0});
  std::vector<Array> got = evaluate(fa, {x0s, a.point[1], rhos, a.point[3]});
  REQUIRE(got[0].shape() == Shape{3, 6});
  const std::vector<double> rows = values_of(got[0]);
  for (int b = 0; b < 3; ++b) {
    std::vector<Array> point = a.point;
    point[0] = f64_array({}, {values_of(x0s)[static_cast<std::size_t>(b)]});
    point[2] = f64_array({}, {values_of(rhos)[static_cast<std::size_t>(b)]});
    const std::vector<double> want = values_of(evaluate(one, point)[0]);
    for (std::size_t t = 0; t < want.size(); ++t) CHECK(rows[static_cast<std::size_t>(b) * 6 + t] == doctest::Approx(want[t]).epsilon(1e-14));
  }

  GradCase m = mit_sot_case();
  const Var last_plus_sum = m.cost;  // at(buffer, -1) + sum(nit-sot)
  Var e_b = make_input(f64({2, 6}), "e_b");
  Var mb = vectorize_graph(last_plus_sum, {{m.xs[1], e_b}});
  REQUIRE(mb->ndim() == 1);
  FunctionGraph fm({m.xs[0], e_b, m.xs[2]}, {mb});
  FunctionGraph mone(m.xs, {last_plus_sum});
  std::mt19937 rng(3);
  const Array es = random_array(DType::Float64, {2, 6}, rng, {});
  const std::vector<double> mrows = values_of(evaluate(fm, {m.point[0], es, m.point[2]})[0]), ev = values_of(es);
  for (int b = 0; b < 2; ++b) {
    std::vector<Array> point = m.point;
    point[1] = f64_array({6}, std::vector<double>(ev.begin() + b * 6, ev.begin() + b * 6 + 6));
    CHECK(mrows[static_cast<std::size_t>(b)] == doctest::Approx(values_of(evaluate(mone, point)[0])[0]).epsilon(1e-14));
  }
  // n_steps batched is refused naming Scan.
  Var n = make_input(TensorType(DType::Int64, {}), "n"), n_b = make_input(TensorType(DType::Int64, {2}), "n_b");
  Var x0 = make_input(kF64Scalar, "x0"), xm1 = make_input(kF64Scalar, "x_tm1");
  Var out = scan(info_of(0, {}, 1, 0, 0), {xm1}, {2.0 * xm1}, {n, buffer_from(x0, make_constant(i64(9)))})[0];
  CHECK_THROWS_WITH_AS(vectorize_graph(out, {{n, n_b}}), doctest::Contains("n_steps must not be batched"), NotImplementedError);
}

TEST_CASE("Scan gradients: the Jacobian of a run-time-sized Scan output, batched by vectorize_graph, evaluated and compiled") {
  // PyTensor's AR(2) filter (tests/fixtures/cases/scan/ar2_filter): d path / d a, path of
  // length 12 known only at run time, so jacobian batches the backward scan over the rows.
  FixtureCase c = load_fixture_case(list_fixture_cases("scan/ar2_filter").at(0));
  const Var path = c.graph.outputs()[0], a = c.graph.inputs()[2];
  REQUIRE(!path->type().fully_static());
  FunctionGraph fg(c.graph.inputs(), {jacobian(path, a), path});
  std::vector<Array> v = evaluate(fg, c.inputs);
  REQUIRE(v[0].shape() == Shape{12, 2});
  FunctionGraph compiled_fg = fg.clone();
  run_pipeline(compiled_fg);
  BuildResult built = build_bundle({{&compiled_fg, "jac"}}, "scan_jacobian");
  Library so(built.library_path);
  CallResult r = call_compiled(so.graph("jac"), c.inputs);
  REQUIRE_MESSAGE(r.status == KILN_OK, r.error);
  const std::vector<double> jac = values_of(v[0]), jac_compiled = values_of(r.outputs[0]);
  for (int col = 0; col < 2; ++col) {
    std::vector<Array> plus = c.inputs, minus = c.inputs;
    plus[2] = c.inputs[2].copy();
    minus[2] = c.inputs[2].copy();
    plus[2].data<double>()[col] += 1e-6;
    minus[2].data<double>()[col] -= 1e-6;
    const std::vector<double> up = values_of(evaluate(fg, plus)[1]), down = values_of(evaluate(fg, minus)[1]);
    for (std::size_t row = 0; row < 12; ++row) {
      const double fd = (up[row] - down[row]) / 2e-6;
      CHECK_MESSAGE(close(jac[row * 2 + static_cast<std::size_t>(col)], fd, 1e-6), "evaluator row " << row << " column " << col);
      CHECK_MESSAGE(close(jac_compiled[row * 2 + static_cast<std::size_t>(col)], fd, 1e-6), "compiled row " << row << " column " << col);
    }
  }
}
