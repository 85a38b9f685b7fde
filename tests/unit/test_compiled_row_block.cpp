// Row-block fusion (codegen/row_block_fusion.h, emit_row_block.cpp): which nodes form a group,
// how lowering stores them, and the compiled pass against the reference evaluator — shapes that
// give one or many chunks and blocks, zero-length dimensions, layouts that BLAS reads in place,
// and that BLAS cannot read; strided, reversed and repeated vectors; thread counts (whose
// results must be identical); and the members' error messages.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "api/elementwise.h"
#include "api/graph_builder.h"
#include "codegen/backend.h"
#include "codegen/lowering.h"
#include "codegen/row_block_fusion.h"
#include "compiled.h"
#include "eval/evaluator.h"
#include "fixtures.h"
#include "grad/grad.h"
#include "ops/dimshuffle.h"
#include "ops/dot.h"
#include "ops/reduce.h"
#include "rewrite/pipeline.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

Array random_array(DType dt, const Shape& shape, std::mt19937& rng, double lo = -1, double hi = 1) {
  Array a = Array::empty(dt, shape);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (std::int64_t i = 0; i < a.size(); ++i) {
    if (dt == DType::Float32)
      a.data<float>()[i] = static_cast<float>(dist(rng));
    else
      a.data<double>()[i] = dist(rng);
  }
  return a;
}

// The logistic-regression training step: loss, p and the gradients of the loss with respect to
// w and b, as `kiln grad` builds it, then the default rewrite pipeline.
FunctionGraph logistic_step(DType dt) {
  GraphBuilder g(dt == DType::Float32 ? "logreg32" : "logreg64");
  auto X = g.input("X", dt, {-1, -1});
  auto y = g.input("y", dt, {-1});
  auto w = g.input("w", dt, {-1});
  auto b = g.input("b", dt, {});
  auto z = dot(X, w) + b;
  auto p = sigmoid(z);
  auto loss = mean(y * softplus(-z) + (1 - y) * softplus(z)) + 0.01 * sum(w * w);
  VarList grads = grad(loss, VarList{w, b});
  g.output(loss, "loss");
  g.output(p, "p");
  g.output(grads[0], "grad_w");
  g.output(grads[1], "grad_b");
  FunctionGraph fg = g.build();
  run_pipeline(fg);
  return fg;
}

// A vector of n random elements `step` apart (negative: in reverse; 0: one element repeated).
Array spaced_vector(DType dt, std::int64_t n, std::int64_t step, std::mt19937& rng) {
  const std::int64_t span = step == 0 ? 1 : (step < 0 ? -step : step) * n;
  return random_array(dt, {span > 0 ? span : 1}, rng).view({n}, {step}, step < 0 && n > 0 ? (n - 1) * -step : 0);
}

// X as an n×k matrix in a layout chosen at run time.
Array matrix_in_layout(const std::string& layout, DType dt, std::int64_t n, std::int64_t k, std::mt19937& rng) {
  if (layout == "contiguous") return random_array(dt, {n, k}, rng);
  if (layout == "transposed") return random_array(dt, {k, n}, rng).view({n, k}, {1, n});
  if (layout == "column slice") return random_array(dt, {n, k + 3}, rng).view({n, k}, {k + 3, 1}, 1);
  // Reversed rows: unit-stride rows that BLAS is not given (negative leading dimension).
  return random_array(dt, {n, k}, rng).view({n, k}, {-k, 1}, n > 0 ? (n - 1) * k : 0);
}

bool bitwise_equal(const Array& a, const Array& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  Array ca = a.contiguous(), cb = b.contiguous();
  return std::memcmp(ca.data(), cb.data(), ca.nbytes()) == 0;
}

std::optional<double> rtol_for(DType dt) { return dt == DType::Float32 ? std::optional<double>(2e-4) : 1e-9; }
std::optional<double> atol_for(DType dt) { return dt == DType::Float32 ? std::optional<double>(2e-5) : 1e-11; }

// Calls the compiled graph on 1 and 2 threads, through call and call_into: every result matches
// perform (within float32 tolerances when X is float32: a float64 output may still come from
// float32 sums), and the thread count changes no bit.
void check_against_perform(const FunctionGraph& fg, const kiln_graph_info& info, const std::vector<Array>& inputs) {
  const DType precision = inputs[0].dtype();
  const std::vector<Array> expected = evaluate(fg, inputs);
  std::vector<Array> first;
  for (int threads : {1, 2}) {
    for (bool into : {false, true}) {
      const std::string how = std::string(into ? "call_into" : "call") + " on " + std::to_string(threads) + " thread(s)";
      INFO(how);
      CallResult r = call_compiled(info, inputs, into, threads);
      REQUIRE_MESSAGE(r.status == KILN_OK, kiln_status_name(r.status) << ": " << r.error);
      REQUIRE(r.outputs.size() == expected.size());
      for (std::size_t k = 0; k < expected.size(); ++k) {
        auto diff = compare_arrays(r.outputs[k], expected[k], rtol_for(precision), atol_for(precision));
        CHECK_MESSAGE(!diff, "output " << k << " vs perform: " << diff.value_or(""));
        if (first.size() < expected.size()) {
          first.push_back(r.outputs[k]);
        } else {
          CHECK_MESSAGE(bitwise_equal(r.outputs[k], first[k]), "output " << k << " differs between calls");
        }
      }
    }
  }
}

BuildResult compile_graphs(const std::vector<const FunctionGraph*>& graphs, const std::string& name) {
  NamedGraphs named;
  for (std::size_t i = 0; i < graphs.size(); ++i) named.emplace_back(graphs[i], "g" + std::to_string(i));
  return build_bundle(named, name);
}

}  // namespace

TEST_CASE("row-block fusion: the logistic-regression step is one pass over X") {
  const FunctionGraph fg = logistic_step(DType::Float64);
  const std::vector<RowBlockGroup> groups = find_row_block_groups(fg);
  REQUIRE(groups.size() == 1);
  const RowBlockGroup& g = groups[0];
  CHECK(g.matrix == fg.inputs()[0].get());
  CHECK(g.transposed_products.size() == 1);
  CHECK(g.reductions.size() >= 1);
  CHECK(g.elemwise.size() >= 1);
  // z and the residual are read only inside the group; p is a graph output.
  CHECK(g.internal.count(g.product->output_ptr(0)) == 1);
  CHECK(g.internal.count(fg.outputs()[1].get()) == 0);

  const LoweredGraph lg = lower(fg, [](const Apply&) { return false; }, 0, groups);
  CHECK(lg.var(g.product->output_ptr(0)).kind == StorageKind::Fused);
  CHECK(lg.group_slots.size() == 1);
  // The members run as one contiguous step.
  std::vector<std::size_t> positions;
  for (const Apply* node : g.nodes)
    positions.push_back(static_cast<std::size_t>(std::find(lg.order.begin(), lg.order.end(), node) - lg.order.begin()));
  std::sort(positions.begin(), positions.end());
  CHECK(positions.back() - positions.front() + 1 == g.nodes.size());

  const GraphStats st = graph_stats(fg, find_backend("cpp"));
  CHECK(st.row_block_passes == 1);
}

TEST_CASE("row-block fusion: no group without a second read of X, nor through an outside path") {
  GraphBuilder g("no_group");
  auto X = g.input("X", f64, {-1, -1});
  auto w = g.input("w", f64, {-1});
  auto z = dot(X, w);
  g.output(sum(exp(z)), "once");  // X is read once: BLAS alone
  // r depends on z through sum(z), a reduction outside any elementwise chain: Xᵀ r cannot be
  // in z's pass (the sum needs every row first).
  auto r = z - sum(z);
  g.output(dot(transpose(X), r), "centred");
  FunctionGraph fg = g.build();
  run_pipeline(fg);
  CHECK(find_row_block_groups(fg).empty());
}

TEST_CASE("compiled row-block: logistic-regression step, every shape class and layout") {
  const FunctionGraph f64g = logistic_step(DType::Float64), f32g = logistic_step(DType::Float32);
  BuildResult built = compile_graphs({&f64g, &f32g}, "row_block_logreg");
  Library so(built.library_path);
  std::mt19937 rng(11);
  // (n, k): one row; fewer rows than a chunk; several chunks and blocks; 64 chunks of many
  // blocks; wide rows (a block of 11 rows); empty X both ways.
  const std::vector<std::pair<std::int64_t, std::int64_t>> shapes = {
      {1, 1}, {1000, 20}, {5000, 20}, {70000, 3}, {3000, 700}, {0, 4}, {6, 0}};
  for (const DType dt : {DType::Float64, DType::Float32}) {
    const FunctionGraph& fg = dt == DType::Float64 ? f64g : f32g;
    const kiln_graph_info& info = so.graph(dt == DType::Float64 ? "g0" : "g1");
    for (const auto& item : shapes) {
      const auto& n = std::get<0>(item);
      const auto& k = std::get<1>(item);
      for (const std::string layout : {"contiguous", "transposed", "column slice", "reversed rows"}) {
        INFO(dtype_name(dt) << ", X " << n << "x" << k << ", " << layout);
        Array X = matrix_in_layout(layout, dt, n, k, rng);
        Array y = random_array(dt, {n}, rng, 0, 1);
        for (std::int64_t i = 0; i < n; ++i) {  // 0/1 labels
          if (dt == DType::Float32)
            y.data<float>()[i] = std::round(y.data<float>()[i]);
          else
            y.data<double>()[i] = std::round(y.data<double>()[i]);
        }
        // A strided y (every other element) takes the strided elementwise loads.
        Array y2 = Array::empty(dt, {2 * n});
        for (std::int64_t i = 0; i < n; ++i) {
          const std::size_t sz = dtype_size(dt);
          std::memcpy(static_cast<char*>(y2.data()) + 2 * i * sz, static_cast<char*>(y.data()) + i * sz, sz);
        }
        Array y_strided = y2.view({n}, {2});
        Array w = random_array(dt, {k}, rng), b = random_array(dt, {}, rng);
        check_against_perform(fg, info, {X, y, w, b});
        if (layout == "contiguous") check_against_perform(fg, info, {X, y_strided, w, b});
      }
    }
  }
}

TEST_CASE("compiled row-block: several products, kept row values, other reductions, errors") {
  GraphBuilder g("row_block_mix");
  auto X = g.input("X", f64, {-1, -1});
  auto v = g.input("v", f64, {-1});
  auto u = g.input("u", f64, {-1});
  auto g0 = g.input("g0", f64, {-1});
  auto a = g.input("a", f64, {});
  auto z = a * dot(X, v) + u;          // Gemv reading u as its initial value (b = 1)
  auto r1 = tanh(z);
  auto r2 = z * u;
  g.output(z, "z");                              // a row value kept as a graph output
  g.output(dot(transpose(X), r1) + g0, "xt_r1");  // Gemv with an initial value
  g.output(dot(transpose(X), r2), "xt_r2");
  g.output(dot(transpose(X), z), "xt_z");        // z itself, scaled and shifted, as the vector
  g.output(max(r1), "max_r1");
  g.output(min(r2), "min_r2");
  g.output(sum(gt(z, 0)), "positive");           // an int64 sum of a bool row value
  g.output(exp(r2), "exp_r2");                   // read outside the group: stored
  FunctionGraph fg = g.build();
  run_pipeline(fg);
  const auto groups = find_row_block_groups(fg);
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].transposed_products.size() == 3);
  CHECK(groups[0].reductions.size() == 3);

  BuildResult built = compile_graphs({&fg}, "row_block_mix");
  Library so(built.library_path);
  const kiln_graph_info& info = so.graph("g0");
  std::mt19937 rng(12);
  for (const auto& item : std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 2}, {2500, 7}, {40000, 33}}) {
    const auto& n = std::get<0>(item);
    const auto& k = std::get<1>(item);
    INFO("X " << n << "x" << k);
    check_against_perform(fg, info,
                          {random_array(f64, {n, k}, rng), random_array(f64, {k}, rng), random_array(f64, {n}, rng),
                           random_array(f64, {k}, rng), random_array(f64, {}, rng)});
    // The per-row loop's vectors (u: z's initial value and an Elemwise operand) strided,
    // reversed and repeated (copied into block buffers), v strided for the product.
    for (const std::int64_t step : {2, -1, 0}) {
      INFO("u and v with step " << step);
      check_against_perform(fg, info,
                            {random_array(f64, {n, k}, rng), spaced_vector(f64, k, 3, rng),
                             spaced_vector(f64, n, step, rng), random_array(f64, {k}, rng), random_array(f64, {}, rng)});
    }
  }

  SUBCASE("max of no rows fails, naming the reduction") {
    CallResult r = call_compiled(info, {Array::empty(f64, {0, 3}), random_array(f64, {3}, rng), Array::empty(f64, {0}),
                                        random_array(f64, {3}, rng), random_array(f64, {}, rng)});
    CHECK(r.status == KILN_ERR_VALUE);
    CHECK(r.error.find("Max") != std::string::npos);
    CHECK(r.error.find("length 0") != std::string::npos);
  }
  SUBCASE("a vector of the wrong length fails as the unfused node would") {
    CallResult r = call_compiled(info, {random_array(f64, {5, 3}, rng), random_array(f64, {3}, rng),
                                        random_array(f64, {4}, rng), random_array(f64, {3}, rng),
                                        random_array(f64, {}, rng)});
    CHECK(r.status == KILN_ERR_BROADCAST);
    CHECK(r.error.find("Gemv") != std::string::npos);
    CallResult r2 = call_compiled(info, {random_array(f64, {5, 3}, rng), random_array(f64, {3}, rng),
                                         random_array(f64, {5}, rng), random_array(f64, {2}, rng),
                                         random_array(f64, {}, rng)});
    CHECK(r2.status == KILN_ERR_BROADCAST);
    CHECK(r2.error.find("node [") != std::string::npos);
  }
}

TEST_CASE("compiled row-block: two groups, one reading the other's reduction") {
  GraphBuilder g("row_block_two");
  auto X1 = g.input("X1", f64, {-1, -1});
  auto X2 = g.input("X2", f64, {-1, -1});
  auto v1 = g.input("v1", f64, {-1});
  auto v2 = g.input("v2", f64, {-1});
  auto z1 = dot(X1, v1);  // the first product in the graph's order
  auto t2 = tanh(dot(X2, v2));
  auto s2 = sum(t2);
  g.output(dot(transpose(X2), t2), "g2");
  g.output(dot(transpose(X1), z1 * s2), "g1");  // reads group 2's reduction: after it
  FunctionGraph fg = g.build();
  run_pipeline(fg);
  const auto groups = find_row_block_groups(fg);
  CHECK(groups.size() == 2);  // group 2 moves ahead of group 1's first member
  CHECK(runs_as_steps(order_with_groups(fg.toposort(), groups), groups));

  BuildResult built = compile_graphs({&fg}, "row_block_two");
  Library so(built.library_path);
  std::mt19937 rng(13);
  for (const auto& item : std::vector<std::pair<std::int64_t, std::int64_t>>{{3, 2}, {3000, 5}}) {
    const auto& n = std::get<0>(item);
    const auto& k = std::get<1>(item);
    INFO("X " << n << "x" << k);
    check_against_perform(fg, so.graph("g0"),
                          {random_array(f64, {n, k}, rng), random_array(f64, {n + 1, k + 1}, rng),
                           random_array(f64, {k}, rng), random_array(f64, {k + 1}, rng)});
  }
}
