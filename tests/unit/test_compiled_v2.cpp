// Graph format version 2 through compiled libraries: an rng crosses the C ABI as its uint64[6]
// state, marked KILN_KIND_RNG in the graph's metadata, and an OpFromGraph compiled without
// rewriting is inlined by code generation (the backend has no OpFromGraph).
#include <doctest/doctest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "compile/compile.h"
#include "compiled.h"
#include "eval/evaluator.h"
#include "io/graph_load.h"
#include "v2_test_util.h"

using namespace kiln;
using namespace kiln::testing;
using Json = nlohmann::json;

TEST_CASE("compiled: rng inputs and outputs, and an OpFromGraph, through the C ABI") {
  const Json vec = tensor_type("float64", {nullptr});
  // (rng, x) -> (rng, exp(x)): the state passes through, marked as an rng.
  FunctionGraph rng_fg = load_graph_text(
      graph_json(2, {var("rng", {{"kind", "rng"}}), var("x", vec), var("y", vec)}, {node("exp", {"x"}, {"y"})},
                 {"rng", "x"}, {"y", "rng"})
          .dump(),
      "");
  // (x, y) -> f(x, y) * 2 with f(a, b) = a * b + b, an OpFromGraph.
  Json inner = graph_json(0, {var("a", vec), var("b", vec), var("p", vec), var("s", vec)},
                          {node("mul", {"a", "b"}, {"p"}), node("add", {"p", "b"}, {"s"})}, {"a", "b"}, {"s"});
  FunctionGraph ofg_fg = load_graph_text(
      graph_json(2, {var("x", vec), var("y", vec), var("f", vec), var("two", tensor_type("float64", {1}), {2.0}), var("z", vec)},
                 {node("OpFromGraph", {"x", "y"}, {"f"}, {{"name", "f"}, {"inner", inner}}), node("mul", {"f", "two"}, {"z"})},
                 {"x", "y"}, {"z"})
          .dump(),
      "");
  GeneratedLibrary src = emit_bundle({{&rng_fg, "v2_rng"}, {&ofg_fg, "v2_ofg"}}, "v2_probe", test_compile_options());
  // Inlined before code generation: no step runs it (node labels still name it as written).
  CHECK(src.source.find("] OpFromGraph") == std::string::npos);
  BuildResult built = build(src, test_compile_options());  // CompileFailure on error
  Library so(built.library_path);

  const kiln_graph_info& info = so.graph("v2_rng");
  CHECK(info.input_kinds[0] == KILN_KIND_RNG);
  CHECK(info.input_kinds[1] == KILN_KIND_TENSOR);
  CHECK(info.output_kinds[0] == KILN_KIND_TENSOR);
  CHECK(info.output_kinds[1] == KILN_KIND_RNG);
  CHECK(info.inputs[0].dtype == KILN_UINT64);
  REQUIRE(info.inputs[0].ndim == 1);
  CHECK(info.inputs[0].shape[0] == 6);
  Array words = Array::empty(DType::UInt64, {6});
  for (int i = 0; i < 6; ++i) words.data<std::uint64_t>()[i] = 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(i + 1);
  for (bool into : {false, true}) {
    CallResult r = call_compiled(info, {words, f64_array({2}, {0, 1})}, into);
    REQUIRE_MESSAGE(r.status == KILN_OK, r.error);
    CHECK(values_of(r.outputs[0])[0] == 1);
    CHECK(values_of(r.outputs[0])[1] == doctest::Approx(std::exp(1.0)).epsilon(1e-15));
    CHECK(r.outputs[1].dtype() == DType::UInt64);
    for (int i = 0; i < 6; ++i) CHECK(r.outputs[1].data<std::uint64_t>()[i] == words.data<std::uint64_t>()[i]);
  }
  CallResult bad = call_compiled(info, {Array::zeros(DType::UInt64, {5}), f64_array({1}, {0})});
  CHECK(bad.status == KILN_ERR_INPUT_SHAPE);

  const kiln_graph_info& ofg = so.graph("v2_ofg");
  Array x = f64_array({3}, {1, 2, 3}), y = f64_array({3}, {0.5, -1, 4});
  CallResult r = call_compiled(ofg, {x, y});
  REQUIRE_MESSAGE(r.status == KILN_OK, r.error);
  CHECK(values_of(r.outputs[0]) == std::vector<double>{2 * (1 * 0.5 + 0.5), 2 * (2 * -1 + -1), 2 * (3 * 4 + 4)});
  CHECK(values_of(r.outputs[0]) == values_of(evaluate(ofg_fg, {x, y})[0]));
}
