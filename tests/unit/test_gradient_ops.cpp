// pytensor.gradient's ops (ops/gradient_ops.h): the identity forward, the gradient each one
// declares, graph files, canonicalize removing them, and compiled code with and without rewrites.
#include <doctest/doctest.h>

#include <string>

#include "api/elementwise.h"
#include "compile/compile.h"
#include "compiled.h"
#include "eval/evaluator.h"
#include "fixtures.h"
#include "grad_check.h"
#include "grad/grad.h"
#include "io/graph_load.h"
#include "ir/error.h"
#include "ops/gradient_ops.h"
#include "ops/reduce.h"
#include "rewrite/pipeline.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

const DType f64 = DType::Float64;

Array points() {
  Array p = Array::empty(f64, {4});
  const double v[] = {-2.0, -0.25, 0.5, 3.0};
  for (int i = 0; i < 4; ++i) p.data<double>()[i] = v[i];
  return p;
}

std::vector<double> gradient_at(const Var& cost, const Var& x) {
  FunctionGraph fg({x}, {grad(cost, x)});
  return values_of(evaluate(fg, {points()})[0]);
}

}  // namespace

TEST_CASE("gradient ops: the forward pass is the identity, the gradient is what each declares") {
  Var x = make_input(TensorType(f64, {4}), "x");
  const std::vector<double> p = values_of(points());
  FunctionGraph forward({x}, {grad_clip(x, -1, 1), grad_scale(x, 3), zero_grad(x), disconnected_grad(x), undefined_grad(x)});
  for (const Array& out : evaluate(forward, {points()})) CHECK(values_of(out) == p);

  // d/dx sum(op(x) * x): x + (what flows back through op(x)) * x's gradient of 1 ... by op:
  std::vector<double> zero = gradient_at(sum(zero_grad(x) * x), x);          // x (+ 0)
  std::vector<double> disconnected = gradient_at(sum(disconnected_grad(x) * x), x);  // x
  std::vector<double> clip = gradient_at(sum(sqr(grad_clip(x, -1, 1))), x);  // clip(2x, -1, 1)
  std::vector<double> scale = gradient_at(sum(sqr(grad_scale(x, 3))), x);    // 3 * 2x
  for (std::size_t i = 0; i < p.size(); ++i) {
    CHECK(zero[i] == p[i]);
    CHECK(disconnected[i] == p[i]);
    CHECK(clip[i] == std::min(1.0, std::max(-1.0, 2 * p[i])));
    CHECK(scale[i] == 6 * p[i]);
  }
  // Only through the gradient op: disconnected is an error (or zero when asked), zero is zero.
  CHECK_THROWS_WITH_AS(grad(sum(disconnected_grad(x)), x), doctest::Contains("does not depend"), UserError);
  CHECK(gradient_at(sum(zero_grad(x)), x) == std::vector<double>(4, 0.0));
  CHECK_THROWS_WITH(grad(sum(undefined_grad(x)), x), doctest::Contains("UndefinedGrad"));
}

TEST_CASE("gradient ops: graph files, canonicalize removes them, compiled with and without rewrites") {
  const std::string text = R"({"format": "kiln-graph", "version": 1, "name": "gops",
    "variables": [{"id": "x", "type": {"dtype": "float64", "shape": [null]}}, {"id": "a", "type": {"dtype": "float64", "shape": [null]}},
                  {"id": "b", "type": {"dtype": "float64", "shape": [null]}}, {"id": "c", "type": {"dtype": "float64", "shape": [null]}}],
    "nodes": [{"op": "GradClip", "inputs": ["x"], "outputs": ["a"], "props": {"clip_lower_bound": -1.5, "clip_upper_bound": 2}},
              {"op": "GradScale", "inputs": ["a"], "outputs": ["b"], "props": {"multiplier": 0.5}},
              {"op": "DisconnectedGrad", "inputs": ["b"], "outputs": ["c"]}],
    "inputs": ["x"], "outputs": ["c"]})";
  FunctionGraph fg = load_graph_text(text, "");
  CHECK(fg.toposort().size() == 3);
  CHECK(values_of(evaluate(fg, {points()})[0]) == values_of(points()));
  FunctionGraph rewritten = fg.clone();
  run_pipeline(rewritten);
  CHECK(rewritten.toposort().empty());

  // Bad props are refused at their JSON pointer.
  std::string bad = text;
  bad.replace(bad.find("\"clip_upper_bound\": 2"), 21, "\"clip_upper_bound\": -3");
  CHECK_THROWS_WITH(load_graph_text(bad, ""), doctest::Contains("/nodes/0/props/clip_upper_bound"));
  std::string not_number = text;
  not_number.replace(not_number.find("\"multiplier\": 0.5"), 17, "\"multiplier\": \"half\"");
  CHECK_THROWS_WITH(load_graph_text(not_number, ""), doctest::Contains("/nodes/1/props/multiplier"));

  // Compiled exactly as written (views) and rewritten (no node left): the identity either way.
  for (bool rewrite : {false, true}) {
    CompileOptions o = test_compile_options();
    o.rewrite = rewrite;
    BuildResult built = compile_bundle({{&fg, "gops"}}, rewrite ? "gops_rewritten" : "gops_as_written", o);
    Library so(built.library_path);
    CallResult r = call_compiled(so.graph("gops"), {points()});
    REQUIRE_MESSAGE(r.status == KILN_OK, r.error);
    CHECK(values_of(r.outputs[0]) == values_of(points()));
  }
}
