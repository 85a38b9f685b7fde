// The graph passes of the default pipeline: fusion (Composites, multi-output Composites, fused
// reductions), BLAS (Gemv/Gemm/Ger absorbing scalings, additions and transposes) and in-place.
// Each is checked structurally, for where it must not fire, and for values (reference evaluator
// before vs after on random inputs).
#include <doctest/doctest.h>

#include <random>

#include "api/elementwise.h"
#include "api/graph_builder.h"
#include "eval/evaluator.h"
#include "grad/grad.h"
#include "fixtures.h"
#include "io/graph_load.h"
#include "io/output_names.h"
#include "ops/alloc.h"
#include "ops/dimshuffle.h"
#include "ops/dot.h"
#include "ops/elemwise.h"
#include "ops/reduce.h"
#include "ops/scalar/composite.h"
#include "ops/shape.h"
#include "print/dprint.h"
#include "rewrite/pipeline.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

Array random_input(const Variable& v, std::mt19937& rng) {
  Shape shape;
  for (auto d : v.shape()) shape.push_back(d == kUnknownLength ? 5 : d);
  Array a = Array::empty(v.dtype(), shape);
  std::uniform_real_distribution<double> dist(-2, 2);
  visit_real_dtype(v.dtype(), [&](auto t) {
    using T = decltype(t);
    for (std::int64_t i = 0; i < a.size(); ++i) a.data<T>()[i] = static_cast<T>(dist(rng));
  });
  return a;
}

// The default pipeline (verified after every pass) on a copy, checked by value against the
// original.
FunctionGraph pipelined(const FunctionGraph& fg, PipelineOptions o = {}) {
  FunctionGraph g = fg.clone();
  o.verify = true;
  run_pipeline(g, o);
  g.verify();
  std::mt19937 rng(11);
  for (int trial = 0; trial < 3; ++trial) {
    std::vector<Array> inputs;
    for (const auto& in : fg.inputs()) inputs.push_back(random_input(*in, rng));
    auto before = evaluate(fg, inputs);
    auto after = evaluate(g, inputs);
    REQUIRE(before.size() == after.size());
    for (std::size_t k = 0; k < before.size(); ++k) {
      bool f32 = before[k].dtype() == DType::Float32;
      auto diff = compare_arrays(after[k], before[k], f32 ? 1e-5 : 1e-9, f32 ? 1e-6 : 1e-12);
      CHECK_MESSAGE(!diff, "output " << k << " changed: " << diff.value_or("") << "\n" << dprint(g));
    }
  }
  return g;
}

int count_ops(const FunctionGraph& fg, const std::string& name) {
  int n = 0;
  for (Apply* node : fg.toposort()) n += node->op().name() == name;
  return n;
}

bool is_composite(const Apply* node) {
  if (!node || node->op().name() != "Elemwise") return false;
  return static_cast<const Elemwise&>(node->op()).scalar_op().id() == ScalarOpId::Composite;
}

int count_composites(const FunctionGraph& fg) {
  int n = 0;
  for (Apply* node : fg.toposort()) n += is_composite(node);
  return n;
}

}  // namespace

TEST_CASE("fusion: an elementwise chain with broadcasting is one Composite") {
  GraphBuilder g("chain");
  auto x = g.input("x", f64, {-1, 3});
  auto b = g.input("b", f64, {3});
  g.output(exp(sin(x)) + 0.5 * log1p(x * x) + b, "y");
  FunctionGraph fg = pipelined(g.build());
  INFO(dprint(fg));
  // One loop; b enters it through a broadcasting view (DimShuffle{x,0}), no other node.
  CHECK(count_ops(fg, "Elemwise") == 1);
  CHECK(count_ops(fg, "Elemwise") + count_ops(fg, "DimShuffle") == fg.num_nodes());
  CHECK(is_composite(fg.outputs()[0]->owner()));
}

TEST_CASE("fusion: the exp(sin(x)) dot graph is one Composite feeding one gemv, then cos") {
  // PyTensor's matrix @ vector: the vector is expanded to a column, multiplied, squeezed.
  GraphBuilder g("expsin_dot");
  auto X = g.input("X", f64, {-1, -1});
  auto w = g.input("w", f64, {-1});
  g.output(cos(squeeze(dot(exp(sin(X)), expand_dims(w, 1)), {1})), "y");
  FunctionGraph fg = pipelined(g.build());
  INFO(dprint(fg));
  CHECK(count_composites(fg) == 1);  // exp∘sin fused into one loop
  CHECK(count_ops(fg, "Elemwise") == 2);  // that loop and the cos after the gemv
  CHECK(count_ops(fg, "Gemv") == 1);
  CHECK(count_ops(fg, "Dot") == 0);
  Apply* out = fg.outputs()[0]->owner();
  REQUIRE(out);
  CHECK(out->op().str() == "Cos");
}

TEST_CASE("fusion: one subexpression with several consumers becomes a multi-output Composite") {
  // The logistic-regression training step, gradients written out: the sigmoid is needed by the
  // loss and by both gradients, so the fused kernel computes it once and exports it.
  GraphBuilder g("logreg_step");
  auto X = g.input("X", f64, {-1, 4});
  auto y = g.input("y", f64, {-1});
  auto w = g.input("w", f64, {4});
  auto b = g.input("b", f64, {});
  auto z = dot(X, w) + b;
  auto p = sigmoid(z);
  auto loss = mean(softplus(z) - y * z) + 0.01 * sum(w * w);
  auto err = p - y;
  auto gw = dot(transpose(X), err) / cast(shape_i(X, 0), f64) + 0.02 * w;
  auto gb = mean(err);
  g.output(loss, "loss");
  g.output(gw, "gw");
  g.output(gb, "gb");
  g.output(p > 0.5, "prediction");
  FunctionGraph fg = pipelined(g.build());
  INFO(dprint(fg));
  // z itself is computed once (a gemv absorbing + b), and every elementwise use of z lives in
  // Composites; no Sigmoid or Softplus node stands alone.
  CHECK(count_ops(fg, "Gemv") >= 1);
  CHECK(count_ops(fg, "Dot") == 0);
  for (Apply* node : fg.toposort()) {
    CHECK(node->op().str() != "Sigmoid");
    CHECK(node->op().str() != "Softplus");
  }
  int multi_output = 0;
  for (Apply* node : fg.toposort()) multi_output += is_composite(node) && node->num_outputs() > 1;
  CHECK(multi_output >= 1);
}

TEST_CASE("fusion: an elementwise producer folds into its reduction") {
  GraphBuilder g("sumsq");
  auto x = g.input("x", f64, {-1});
  auto m = g.input("m", f32, {4, 3});
  g.output(sum(x * x), "ss");
  g.output(sum(exp(m), 1), "rowsum");
  g.output(max(abs(m)), "maxabs");
  FunctionGraph fg = pipelined(g.build());
  INFO(dprint(fg));
  CHECK(fg.num_nodes() == 3);
  for (Apply* node : fg.toposort()) {
    CHECK(node->op().name() != "Elemwise");  // x*x, exp(m) and abs(m) are never materialised
    CHECK(node->inputs()[0]->is_input());
  }
  CHECK(fg.outputs()[1]->dtype() == DType::Float32);

  // max over a length that may be 0 must keep failing there: not folded.
  GraphBuilder h("maxabs_unknown");
  auto v = h.input("v", f64, {-1});
  h.output(max(abs(v)), "m");
  FunctionGraph fh = pipelined(h.build());
  CHECK(fh.num_nodes() == 2);
}

TEST_CASE("fusion does not fire across a non-elementwise op or change dtypes") {
  GraphBuilder g("nofuse");
  auto x = g.input("x", f32, {-1, -1});
  auto t = exp(x);
  g.output(log(transpose(t) + 1.0f), "y");  // a transpose between two elementwise chains
  g.output(cast(x, f64) * 2.0, "wide");
  FunctionGraph fg = pipelined(g.build());
  INFO(dprint(fg));
  CHECK(fg.outputs()[0]->dtype() == DType::Float32);
  CHECK(fg.outputs()[1]->dtype() == DType::Float64);
  CHECK(count_ops(fg, "DimShuffle") == 1);
}

TEST_CASE("BLAS: scalings, additions and transposes are absorbed") {
  GraphBuilder g("blas");
  auto A = g.input("A", f64, {-1, -1});
  auto B = g.input("B", f64, {-1, -1});
  auto C = g.input("C", f64, {-1, -1});
  auto v = g.input("v", f64, {-1});
  auto u = g.input("u", f64, {-1});
  auto a = g.input("a", f64, {});
  g.output(a * dot(A, v) + u, "gemv");             // one Gemv
  g.output(dot(transpose(A), u), "gemv_t");         // Gemv on a transposed view, no copy
  g.output(2.0 * dot(A, B) + C, "gemm");            // one Gemm
  g.output(dot(transpose(A), transpose(B)), "tt");  // Dot22/Gemm with both transposed
  g.output(C + a * outer(u, v), "ger");             // one Ger
  FunctionGraph fg = pipelined(g.build());
  INFO(dprint(fg));
  CHECK(count_ops(fg, "Dot") == 0);
  CHECK(count_ops(fg, "Gemv") == 2);
  CHECK(count_ops(fg, "Ger") == 1);
  CHECK(count_ops(fg, "Gemm") + count_ops(fg, "Dot22") == 2);
  // Transposes stay DimShuffle views; no elementwise node is left around the BLAS calls.
  CHECK(count_ops(fg, "Elemwise") == 0);
}

TEST_CASE("BLAS leaves integer dots and mixed dtypes alone") {
  GraphBuilder g("blas_int");
  auto A = g.input("A", i32, {-1, -1});
  auto v = g.input("v", i32, {-1});
  auto F = g.input("F", f32, {-1, -1});
  auto d = g.input("d", f64, {-1});
  g.output(dot(A, v) + v, "int");
  g.output(dot(F, d), "mixed");  // float32 @ float64: a float64 result
  FunctionGraph fg = pipelined(g.build());
  INFO(dprint(fg));
  CHECK(fg.outputs()[0]->dtype() == DType::Int32);
  CHECK(fg.outputs()[1]->dtype() == DType::Float64);
  CHECK(count_ops(fg, "Gemv") <= 1);
}

TEST_CASE("in-place: an intermediate no one reads later is overwritten, inputs never are") {
  GraphBuilder g("inplace");
  auto x = g.input("x", f64, {-1});
  auto m = g.input("m", f64, {-1, -1});
  auto s = sum(m, 1);  // a fresh buffer, read once
  g.output(dot(transpose(m), exp(s) * x), "y");  // exp(s)*x is an intermediate: into s's buffer
  g.output(log1p(x), "z");
  FunctionGraph fg = pipelined(g.build());
  INFO(dprint(fg, DprintOptions{false, true, false, false, "CHAR", -1, false}));
  int inplace = 0;
  for (Apply* node : fg.toposort()) {
    for (const auto& [out, ins] : node->op().destroy_map()) {
      (void)out;
      ++inplace;
      for (int i : ins) {
        CHECK_FALSE(node->input(i)->is_input());
        CHECK_FALSE(node->input(i)->is_constant());
      }
    }
  }
  CHECK(inplace == 1);  // exp(s)*x writes into s's buffer; log1p(x) must not touch x

  // Excluding the pass leaves no destroy map at all.
  PipelineOptions o;
  o.exclude = {"inplace"};
  FunctionGraph plain = pipelined(g.build(), o);
  for (Apply* node : plain.toposort()) CHECK(node->op().destroy_map().empty());
}

TEST_CASE("in-place never overwrites a value read later or returned") {
  GraphBuilder g("inplace_alias");
  auto m = g.input("m", f64, {-1, -1});
  auto s = sum(m, 1);
  g.output(s, "s");          // s is an output: it must survive
  g.output(exp(s), "e");     // so exp(s) needs its own buffer
  g.output(s + exp(s), "t");
  FunctionGraph fg = pipelined(g.build());
  INFO(dprint(fg));
  for (Apply* node : fg.toposort())
    for (const auto& [out, ins] : node->op().destroy_map())
      for (int i : ins) CHECK(node->input(i).get() != fg.outputs()[0].get());
}

TEST_CASE("fusion: PyTensor's exp(sin(x)) sample is one Composite, one gemv, then cos") {
  // samples/exp_sin_dot.json: z = exp(sin(x)); out = cos((z[None, :] @ z[:, None]).squeeze())
  FunctionGraph fg = pipelined(load_graph_file(std::string(KILN_SOURCE_DIR) + "/samples/exp_sin_dot.json"));
  INFO(dprint(fg));
  CHECK(count_composites(fg) == 1);
  CHECK(count_ops(fg, "Gemv") == 1);
  CHECK(count_ops(fg, "Dot") + count_ops(fg, "Dot22") == 0);
  Apply* out = fg.outputs()[0]->owner();
  REQUIRE(out);
  CHECK(out->op().str() == "Cos");
}

TEST_CASE("canonicalize: an Alloc that only broadcasts to an Elemwise's shape is dropped") {
  GraphBuilder g("scaled");
  auto x = g.input("x", f64, {-1, -1});
  auto s = g.input("s", f64, {});
  // The lengths are x's (directly, and through exp(x), whose length the Elemwise checks).
  g.output(x * alloc(s, IntList{shape_i(x, 0), shape_i(x, 1)}), "a");
  g.output(exp(x) + alloc(expand_dims_left(s, 1), IntList{shape_i(x, 0), shape_i(x, 1)}), "b");
  FunctionGraph fg = pipelined(g.build());
  INFO(dprint(fg));
  CHECK(count_ops(fg, "Alloc") == 0);
}

TEST_CASE("canonicalize: an Alloc that sets an Elemwise's shape, or is not proven to match it, stays") {
  GraphBuilder g("shaping");
  auto x = g.input("x", f64, {-1});
  auto s = g.input("s", f64, {});
  auto n = g.input("n", DType::Int64, {});
  g.output(x * alloc(s, IntList{n}), "unproven");  // n == len(x) is a run-time check
  auto row = g.input("row", f64, {1, -1});
  g.output(row * alloc(s, IntList{shape_i(x, 0), shape_i(row, 1)}), "shaping");  // sets dim 0
  FunctionGraph fg = g.build();
  run_pipeline(fg);
  INFO(dprint(fg));
  CHECK(count_ops(fg, "Alloc") == 2);
}

TEST_CASE("logistic-regression gradients: no Alloc of the gradient scales") {
  GraphBuilder g("logreg");
  auto X = g.input("X", f64, {-1, -1});
  auto y = g.input("y", f64, {-1});
  auto w = g.input("w", f64, {-1});
  auto b = g.input("b", f64, {});
  auto z = dot(X, w) + b;
  auto loss = mean(y * softplus(-z) + (1.0 - y) * softplus(z)) + 0.01 * sum(w * w);
  VarList grads = grad(loss, VarList{w, b});
  g.output(loss, "loss");
  g.output(grads[0], "grad_w");
  g.output(grads[1], "grad_b");
  FunctionGraph fg = pipelined(g.build());
  INFO(dprint(fg));
  // The 1/n scale of the mean's gradient (and the L2 term's 0.01) enter their loops as
  // broadcast scalars instead of buffers of n (and len(w)) copies.
  CHECK(count_ops(fg, "Alloc") == 0);
  CHECK(count_ops(fg, "Gemv") == 2);
}

TEST_CASE("rewrites: outputs keep their names when a rewrite puts another variable in their place") {
  // Loaded graphs name outputs through their variables; fusion replaces y by an unnamed
  // Composite output, merge replaces y2 by y1 (the same computation).
  FunctionGraph fg = load_graph_text(R"({"format": "kiln-graph", "version": 1, "name": "names",
    "variables": [
      {"id": "x", "name": "x", "type": {"dtype": "float64", "shape": [null]}},
      {"id": "e", "type": {"dtype": "float64", "shape": [null]}},
      {"id": "y", "name": "y", "type": {"dtype": "float64", "shape": [null]}},
      {"id": "y1", "name": "first", "type": {"dtype": "float64", "shape": [null]}},
      {"id": "y2", "name": "second", "type": {"dtype": "float64", "shape": [null]}}],
    "nodes": [
      {"op": "Elemwise", "props": {"scalar_op": "exp"}, "inputs": ["x"], "outputs": ["e"]},
      {"op": "Elemwise", "props": {"scalar_op": "sin"}, "inputs": ["e"], "outputs": ["y"]},
      {"op": "Elemwise", "props": {"scalar_op": "cos"}, "inputs": ["x"], "outputs": ["y1"]},
      {"op": "Elemwise", "props": {"scalar_op": "cos"}, "inputs": ["x"], "outputs": ["y2"]}],
    "inputs": ["x"], "outputs": ["y", "y1", "y2"]})",
                                     "");
  run_pipeline(fg);
  INFO(dprint(fg));
  CHECK(fg.outputs()[0]->name() == "y");  // replaced: the unnamed Composite output took the name
  CHECK(fg.outputs()[1] == fg.outputs()[2]);
  CHECK(output_display_name(fg, 0) == "y");
  CHECK(output_display_name(fg, 1) == "first");
  CHECK(output_display_name(fg, 2) == "second");
}
