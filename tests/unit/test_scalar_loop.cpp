// ScalarLoop (ops/scalar/scalar_loop.h): PyTensor's loop over a scalar inner graph, in an
// Elemwise and nested in a Composite; for and while loops, per-element step counts (zero and
// negative included), through the reference evaluator and compiled code against values computed
// here by hand; the loader's refusals and the gradient's.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "api/elementwise.h"
#include "compiled.h"
#include "eval/evaluator.h"
#include "grad/grad.h"
#include "io/graph_load.h"
#include "io/graph_save.h"
#include "ir/error.h"
#include "ops/reduce.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

// x <- x * a + 1, n_steps times: carried x (float64), constant a.
const char* const kAffineLoop = R"({"name": "ScalarLoop", "is_while": false,
  "variables": [{"id": "x", "dtype": "float64"}, {"id": "a", "dtype": "float64"},
                {"id": "c1", "dtype": "float64", "value": 1.0},
                {"id": "t0", "dtype": "float64"}, {"id": "t1", "dtype": "float64"}],
  "inputs": ["x", "a"],
  "nodes": [{"op": "mul", "inputs": ["x", "a"], "outputs": ["t0"]},
            {"op": "add", "inputs": ["t0", "c1"], "outputs": ["t1"]}],
  "outputs": ["t1"]})";

// Newton's iteration for sqrt(c), until a step changes x by less than 1e-12: carried x,
// constant c; outputs the new x and until.
const char* const kNewtonLoop = R"({"name": "ScalarLoop", "is_while": true,
  "variables": [{"id": "x", "dtype": "float64"}, {"id": "c", "dtype": "float64"},
                {"id": "half", "dtype": "float64", "value": 0.5}, {"id": "tol", "dtype": "float64", "value": 1e-12},
                {"id": "q", "dtype": "float64"}, {"id": "s", "dtype": "float64"}, {"id": "x1", "dtype": "float64"},
                {"id": "d", "dtype": "float64"}, {"id": "ad", "dtype": "float64"}, {"id": "stop", "dtype": "bool"}],
  "inputs": ["x", "c"],
  "nodes": [{"op": "true_div", "inputs": ["c", "x"], "outputs": ["q"]},
            {"op": "add", "inputs": ["x", "q"], "outputs": ["s"]},
            {"op": "mul", "inputs": ["half", "s"], "outputs": ["x1"]},
            {"op": "sub", "inputs": ["x1", "x"], "outputs": ["d"]},
            {"op": "abs", "inputs": ["d"], "outputs": ["ad"]},
            {"op": "lt", "inputs": ["ad", "tol"], "outputs": ["stop"]}],
  "outputs": ["x1", "stop"]})";

// A graph of one Elemwise over (n_steps int64, x, a/c) with `scalar_op`, outputs as given.
std::string loop_graph(const std::string& scalar_op, const std::string& outputs_json, const std::string& out_vars) {
  return R"({"format": "kiln-graph", "version": 2, "name": "loop",
    "variables": [{"id": "n", "type": {"dtype": "int64", "shape": [null]}},
                  {"id": "x", "type": {"dtype": "float64", "shape": [null]}},
                  {"id": "a", "type": {"dtype": "float64", "shape": [null]}})" +
         out_vars + R"(],
    "nodes": [{"op": "Elemwise", "props": {"scalar_op": )" +
         scalar_op + R"(}, "inputs": ["n", "x", "a"], "outputs": )" + outputs_json + R"(}],
    "inputs": ["n", "x", "a"], "outputs": )" +
         outputs_json + "}";
}

Array i64(std::vector<std::int64_t> v) {
  Array a = Array::empty(DType::Int64, {static_cast<std::int64_t>(v.size())});
  for (std::size_t i = 0; i < v.size(); ++i) a.data<std::int64_t>()[i] = v[i];
  return a;
}

Array f64(std::vector<double> v) {
  Array a = Array::empty(DType::Float64, {static_cast<std::int64_t>(v.size())});
  for (std::size_t i = 0; i < v.size(); ++i) a.data<double>()[i] = v[i];
  return a;
}

std::string load_error(const std::string& text) {
  try {
    load_graph_text(text, "");
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("ScalarLoop: a for loop per element, evaluated and compiled") {
  const std::string y = R"(, {"id": "y", "type": {"dtype": "float64", "shape": [null]}})";
  FunctionGraph fg = load_graph_text(loop_graph(kAffineLoop, R"(["y"])", y), "");
  CHECK(load_graph_text(save_graph_text(fg), "").outputs().size() == 1);  // saves and reloads
  const std::vector<std::int64_t> n = {0, 1, 3, -2, 40};
  const std::vector<double> x = {2.0, 2.0, 0.5, 7.0, 1.0}, a = {3.0, 3.0, -2.0, 5.0, 0.9};
  std::vector<double> want;
  for (std::size_t e = 0; e < n.size(); ++e) {
    double v = x[e];
    for (std::int64_t t = 0; t < n[e]; ++t) v = v * a[e] + 1.0;  // no step for n <= 0
    want.push_back(v);
  }
  const std::vector<Array> in = {i64(n), f64(x), f64(a)};
  Array got = evaluate(fg, in)[0];
  for (std::size_t e = 0; e < n.size(); ++e) CHECK(got.data<double>()[e] == want[e]);

  BuildResult built = build_bundle({{&fg, "affine"}}, "scalar_loop_for");
  Library so(built.library_path);
  for (bool into : {false, true}) {
    CallResult r = call_compiled(so.graph("affine"), in, into);
    REQUIRE(r.status == KILN_OK);
    for (std::size_t e = 0; e < n.size(); ++e) CHECK(r.outputs[0].data<double>()[e] == want[e]);
  }
}

TEST_CASE("ScalarLoop: a while loop stops per element and reports until") {
  const std::string vars = R"(, {"id": "r", "type": {"dtype": "float64", "shape": [null]}},
                             {"id": "u", "type": {"dtype": "bool", "shape": [null]}})";
  FunctionGraph fg = load_graph_text(loop_graph(kNewtonLoop, R"(["r", "u"])", vars), "");
  // Elements: converges; no step (until stays true, x unchanged); too few steps to converge;
  // a negative count (no step).
  const std::vector<std::int64_t> n = {100, 0, 2, -1};
  const std::vector<double> x = {1.0, 3.0, 1.0, 5.0}, c = {2.0, 9.0, 1e6, 4.0};
  std::vector<double> want_r;
  std::vector<bool> want_u;
  for (std::size_t e = 0; e < n.size(); ++e) {
    double v = x[e];
    bool until = true;
    for (std::int64_t t = 0; t < n[e]; ++t) {
      const double next = 0.5 * (v + c[e] / v);
      until = std::fabs(next - v) < 1e-12;
      v = next;
      if (until) break;
    }
    want_r.push_back(v);
    want_u.push_back(until);
  }
  CHECK(want_u[0]);
  CHECK(!want_u[2]);
  const std::vector<Array> in = {i64(n), f64(x), f64(c)};
  std::vector<Array> got = evaluate(fg, in);
  for (std::size_t e = 0; e < n.size(); ++e) {
    CHECK(got[0].data<double>()[e] == want_r[e]);
    CHECK(got[1].data<bool>()[e] == want_u[e]);
  }
  BuildResult built = build_bundle({{&fg, "newton"}}, "scalar_loop_while");
  Library so(built.library_path);
  CallResult r = call_compiled(so.graph("newton"), in);
  REQUIRE(r.status == KILN_OK);
  for (std::size_t e = 0; e < n.size(); ++e) {
    CHECK(r.outputs[0].data<double>()[e] == want_r[e]);
    CHECK(r.outputs[1].data<bool>()[e] == want_u[e]);
  }
}

TEST_CASE("ScalarLoop: nested in a Composite, as PyTensor's fusion leaves it") {
  // exp(loop(n, x, a)) in one Composite, the loop a node of it.
  const std::string composite = std::string(R"({"name": "Composite",
    "variables": [{"id": "i0", "dtype": "int64"}, {"id": "i1", "dtype": "float64"}, {"id": "i2", "dtype": "float64"},
                  {"id": "l", "dtype": "float64"}, {"id": "o", "dtype": "float64"}],
    "inputs": ["i0", "i1", "i2"],
    "nodes": [{"op": )") + kAffineLoop + R"(, "inputs": ["i0", "i1", "i2"], "outputs": ["l"]},
              {"op": "exp", "inputs": ["l"], "outputs": ["o"]}],
    "outputs": ["o"]})";
  const std::string y = R"(, {"id": "y", "type": {"dtype": "float64", "shape": [null]}})";
  FunctionGraph fg = load_graph_text(loop_graph(composite, R"(["y"])", y), "");
  const std::vector<Array> in = {i64({2, 0}), f64({0.1, -1.0}), f64({0.5, 2.0})};
  const double want[] = {std::exp((0.1 * 0.5 + 1.0) * 0.5 + 1.0), std::exp(-1.0)};
  Array got = evaluate(fg, in)[0];
  BuildResult built = build_bundle({{&fg, "nested"}}, "scalar_loop_nested");
  Library so(built.library_path);
  CallResult r = call_compiled(so.graph("nested"), in);
  REQUIRE(r.status == KILN_OK);
  for (int e = 0; e < 2; ++e) {
    CHECK(got.data<double>()[e] == doctest::Approx(want[e]).epsilon(1e-15));
    CHECK(r.outputs[0].data<double>()[e] == got.data<double>()[e]);
  }
}

TEST_CASE("ScalarLoop: malformed loops are refused at their place; it has no derivative") {
  const std::string y = R"(, {"id": "y", "type": {"dtype": "float64", "shape": [null]}})";
  std::string no_flag = kAffineLoop;
  no_flag.replace(no_flag.find(R"("is_while": false,)"), std::string(R"("is_while": false,)").size(), "");
  CHECK(contains(load_error(loop_graph(no_flag, R"(["y"])", y)), "is_while"));
  CHECK(contains(load_error(loop_graph(no_flag, R"(["y"])", y)), "/nodes/0/props/scalar_op"));
  std::string not_bool = kAffineLoop;  // a while loop whose last output is a float
  not_bool.replace(not_bool.find("false"), 5, "true");
  CHECK(contains(load_error(loop_graph(not_bool, R"(["y"])", y)), "must be bool"));
  // n_steps must be an integer.
  std::string text = loop_graph(kAffineLoop, R"(["y"])", y);
  text.replace(text.find(R"("dtype": "int64")"), std::string(R"("dtype": "int64")").size(), R"("dtype": "float64")");
  CHECK(contains(load_error(text), "integer number of steps"));

  FunctionGraph fg = load_graph_text(loop_graph(kAffineLoop, R"(["y"])", y), "");
  try {
    grad(sum(fg.outputs()[0]), {fg.inputs()[1]});
    FAIL("expected the gradient to be refused");
  } catch (const NotImplementedError& e) {
    CHECK(contains(e.what(), "ScalarLoop"));
  }
}
