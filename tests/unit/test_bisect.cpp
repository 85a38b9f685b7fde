// kiln bisect (compile/bisect.h) finds a deliberately broken kernel: a test-only backend is the
// cpp backend with the Dot/Gemv emitters wrapped so that they add 1 to their output's first
// element. Bisect must name that node — its position, its op and the JSON pointer of the Dot
// the file wrote — and not the nodes before it, and find nothing with the real cpp backend.
#include <doctest/doctest.h>

#include <memory>

#include "codegen/backend.h"
#include "codegen/cpp/backend.h"
#include "compile/bisect.h"
#include "compiled.h"
#include "io/graph_load.h"
#include "ir/error.h"

using namespace kiln;

namespace {

// The cpp backend with a wrong matrix-vector product, registered once as "broken_dot_test".
const char* register_broken_dot_backend() {
  static const bool registered = [] {
    auto broken = std::make_shared<Backend>(*make_cpp_backend());
    broken->name = "broken_dot_test";
    broken->description = "test only: the cpp backend whose Dot and Gemv add 1 to their first element";
    for (OpEmitter& e : broken->ops) {
      if (e.op_name != "Dot" && e.op_name != "Gemv") continue;
      EmitFn right = e.emit;
      e.emit = [right](const NodeEmitContext& ctx) {
        NodeCode code = right(ctx);
        code.host += "\nif (" + ctx.out(0) + ".size() > 0) " + ctx.out(0) + ".data[0] += 1;  // the deliberate bug\n";
        return code;
      };
    }
    register_backend(broken);
    return true;
  }();
  (void)registered;
  return "broken_dot_test";
}

// z = log(M @ exp(x) + 1): the Dot is the file's node 2, after exp and before the rest.
const char* kGraph = R"({
  "format": "kiln-graph", "version": 1, "name": "bisect_case",
  "variables": [
    {"id": "M", "name": "M", "type": {"dtype": "float64", "shape": [3, 3]}},
    {"id": "x", "name": "x", "type": {"dtype": "float64", "shape": [3]}},
    {"id": "one", "type": {"dtype": "float64", "shape": [1]}, "value": [1.0]},
    {"id": "e", "name": "e", "type": {"dtype": "float64", "shape": [3]}},
    {"id": "neg", "name": "neg", "type": {"dtype": "float64", "shape": [3]}},
    {"id": "d", "name": "d", "type": {"dtype": "float64", "shape": [3]}},
    {"id": "s", "name": "s", "type": {"dtype": "float64", "shape": [3]}},
    {"id": "z", "name": "z", "type": {"dtype": "float64", "shape": [3]}}
  ],
  "nodes": [
    {"op": "Elemwise", "props": {"scalar_op": "exp"}, "inputs": ["x"], "outputs": ["e"]},
    {"op": "Elemwise", "props": {"scalar_op": "neg"}, "inputs": ["x"], "outputs": ["neg"]},
    {"op": "Dot", "inputs": ["M", "e"], "outputs": ["d"]},
    {"op": "Elemwise", "props": {"scalar_op": "add"}, "inputs": ["d", "one"], "outputs": ["s"]},
    {"op": "Elemwise", "props": {"scalar_op": "log"}, "inputs": ["s"], "outputs": ["z"]}
  ],
  "inputs": ["M", "x"],
  "outputs": ["z", "neg"]
})";

std::vector<Array> case_inputs() {
  Array M = Array::empty(DType::Float64, {3, 3});
  Array x = Array::empty(DType::Float64, {3});
  for (int i = 0; i < 9; ++i) M.data<double>()[i] = 0.25 * (i + 1);
  for (int i = 0; i < 3; ++i) x.data<double>()[i] = 0.1 * i - 0.2;
  return {M, x};
}

}  // namespace

TEST_CASE("bisect names the node of a deliberately broken kernel, with its JSON pointer") {
  const FunctionGraph fg = load_graph_text(kGraph, "");
  BisectOptions o;
  o.compile = kiln::testing::test_compile_options();
  o.compile.backend = register_broken_dot_backend();
  const BisectResult r = bisect(fg, case_inputs(), o);
  REQUIRE(r.first.has_value());
  const std::vector<Apply*> order = fg.toposort();
  CHECK(std::string(order[r.first->node_index]->op().name()) == "Dot");
  CHECK(r.first->node_line == "Dot 'd'");
  CHECK(r.first->origins == "/nodes/2 Dot");
  CHECK_MESSAGE(r.first->difference.rfind("at [0]: compiled ", 0) == 0, r.first->difference);
  // Every node before it was compared and agreed.
  CHECK(r.nodes_checked == r.first->node_index + 1);
}

TEST_CASE("bisect finds no difference when the kernels are right, with or without rewrites") {
  const FunctionGraph fg = load_graph_text(kGraph, "");
  BisectOptions o;
  o.compile = kiln::testing::test_compile_options();
  BisectResult r = bisect(fg, case_inputs(), o);
  CHECK_FALSE(r.first.has_value());
  CHECK(r.nodes_checked == fg.num_nodes());
  o.compile.rewrite = false;
  r = bisect(fg, case_inputs(), o);
  CHECK_FALSE(r.first.has_value());
}
