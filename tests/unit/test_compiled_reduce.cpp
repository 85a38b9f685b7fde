// Compiled reductions, argmax, scans and softmax on inputs the tiny NumPy fixtures do not
// reach: long rows (the lane and chunk paths, one and two threads), reductions over leading,
// middle and scattered axes, strided views, NaNs; and fused reductions (sum(x*x), sum(exp(x)))
// built with the C++ API. Each output is compared with the reference evaluator (perform).
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "api/elementwise.h"
#include "api/graph_builder.h"
#include "compiled.h"
#include "eval/evaluator.h"
#include "fixtures.h"
#include "ir/error.h"
#include "ops/cumulative.h"
#include "ops/reduce.h"
#include "ops/softmax.h"
#include "print/dprint.h"
#include "rewrite/pipeline.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

// Uniform values in [lo, hi] (integers: rounded; bools: about half true).
Array random_array(DType dt, const Shape& shape, std::mt19937& rng, double lo, double hi) {
  Array a = Array::empty(dt, shape);
  std::uniform_real_distribution<double> dist(lo, hi);
  visit_real_dtype(dt, [&](auto t) {
    using T = decltype(t);
    for (std::int64_t i = 0; i < a.size(); ++i) {
      const double v = dist(rng);
      if constexpr (std::is_same_v<T, bool>)
        a.data<T>()[i] = v > (lo + hi) / 2;
      else if constexpr (std::is_floating_point_v<T>)
        a.data<T>()[i] = static_cast<T>(v);
      else
        a.data<T>()[i] = static_cast<T>(std::lround(v));
    }
  });
  return a;
}

// A rows x cols matrix in several layouts: C-contiguous, transposed, rows reversed (negative
// stride), every other column; the last three are views.
std::vector<std::pair<std::string, Array>> layouts(DType dt, std::int64_t rows, std::int64_t cols,
                                                   std::mt19937& rng, double lo, double hi) {
  std::vector<std::pair<std::string, Array>> out;
  out.emplace_back("contiguous", random_array(dt, {rows, cols}, rng, lo, hi));
  Array t = random_array(dt, {cols, rows}, rng, lo, hi);
  out.emplace_back("transposed", t.view({rows, cols}, {1, rows}));
  Array r = random_array(dt, {rows, cols}, rng, lo, hi);
  out.emplace_back("reversed rows", r.view({rows, cols}, {-cols, 1}, rows > 0 ? (rows - 1) * cols : 0));
  Array w = random_array(dt, {rows, 2 * cols}, rng, lo, hi);
  out.emplace_back("every other column", w.view({rows, cols}, {2 * cols, 2}));
  return out;
}

// A copy of `a` (float) with NaNs scattered in, some rows starting with one.
Array with_nans(const Array& a, std::mt19937& rng) {
  Array b = a.copy();
  visit_real_dtype(b.dtype(), [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_floating_point_v<T>) {
      std::uniform_int_distribution<std::int64_t> pos(0, b.size() > 0 ? b.size() - 1 : 0);
      for (int i = 0; i < 5 && b.size() > 0; ++i) b.data<T>()[pos(rng)] = NAN;
      if (b.size() > 0) b.data<T>()[0] = NAN;
    }
  });
  return b;
}

// Calls the compiled graph both ways with one and two threads; every result must match the
// reference evaluator's (or fail when it fails), and the two thread counts must agree exactly.
void check_call(const FunctionGraph& reference, const kiln_graph_info& info, const std::vector<Array>& inputs) {
  std::vector<Array> expected;
  std::string failure;
  try {
    expected = evaluate(reference, inputs);
  } catch (const RuntimeFailure& e) {
    failure = e.what();
  }
  std::vector<Array> first;
  for (int threads : {1, 2}) {
    for (bool into : {false, true}) {
      INFO("threads " << threads << (into ? ", output_shapes + call_into" : ", call"));
      CallResult r = call_compiled(info, inputs, into, threads);
      if (!failure.empty()) {
        CHECK_MESSAGE(r.status != KILN_OK, "perform failed (" << failure << ") but the compiled graph did not");
        continue;
      }
      REQUIRE_MESSAGE(r.status == KILN_OK, kiln_status_name(r.status) << ": " << r.error);
      REQUIRE(r.outputs.size() == expected.size());
      for (std::size_t k = 0; k < expected.size(); ++k) {
        INFO("output " << k << " (" << reference.outputs()[k]->owner()->op().str() << ")");
        auto diff = compare_arrays(r.outputs[k], expected[k], std::nullopt, std::nullopt);
        CHECK_MESSAGE(!diff, "vs perform: " << diff.value_or(""));
        if (first.size() > k) {
          auto same = compare_arrays(r.outputs[k], first[k], 0.0, 0.0);
          CHECK_MESSAGE(!same, "thread counts disagree: " << same.value_or(""));
        }
      }
      if (first.empty()) first = r.outputs;
    }
  }
}

// Compiles the graphs into one library.
BuildResult compile_all(const std::vector<const FunctionGraph*>& graphs, const std::string& name) {
  NamedGraphs named;
  for (std::size_t i = 0; i < graphs.size(); ++i) named.emplace_back(graphs[i], "g" + std::to_string(i));
  return build_bundle(named, name);
}

// Every op of the three families on one matrix input of `dt` (those that accept it).
FunctionGraph matrix_graph(DType dt) {
  GraphBuilder g(std::string("matrix_") + std::string(dtype_name(dt)));
  auto x = g.input("x", dt, {-1, -1});
  g.output(sum(x));
  g.output(sum(x, 0));
  g.output(sum(x, 1));
  g.output(prod(x, 1));
  g.output(prod(x, 0));
  g.output(max(x, 1));
  g.output(min(x, 0));
  g.output(argmax(x));
  g.output(argmax(x, 0));
  g.output(argmax(x, 1));
  g.output(cumsum(x));
  g.output(cumsum(x, 0));
  g.output(cumsum(x, 1));
  if (dt != DType::Bool) {
    g.output(prod_without_zeros(x, 1));
    g.output(cumprod(x, 1));
    g.output(cumprod(x, 0));
  }
  if (!is_float(dt)) {
    g.output(all(x, 1));
    g.output(any(x, 0));
  }
  if (is_float(dt)) {
    g.output(softmax(x, 1));
    g.output(softmax(x, 0));
    g.output(softmax(x));
    g.output(log_softmax(x, 1));
    g.output(log_softmax(x, 0));
    g.output(log_softmax(x));
    g.output(softmax_grad(x * 2, softmax(x, 1), 1));
    g.output(softmax_grad(x, softmax(x, 0), 0));
    g.output(softmax_grad(x, softmax(x)));
  }
  return g.build();
}

// Reductions over several axes of a 3-d input: a middle run, scattered axes, trailing axes.
FunctionGraph cube_graph() {
  GraphBuilder g("cube");
  auto x = g.input("x", DType::Float64, {-1, -1, -1});
  g.output(sum(x, 1));
  g.output(sum(x, {0, 2}));
  g.output(sum(x, {1, 2}));
  g.output(sum(x, {0, 1}));
  g.output(max(x, {0, 2}));
  g.output(argmax(x, {0, 2}));
  g.output(argmax(x, {1, 2}));
  g.output(softmax(x, 1));
  g.output(cumsum(x, 1));
  return g.build();
}

bool has_fused_reduction(const FunctionGraph& fg, int count) {
  int fused = 0, elemwise = 0;
  for (Apply* n : fg.toposort()) {
    if (n->op().name() == "Elemwise") ++elemwise;
    if (n->op().name() == "CAReduce" &&
        static_cast<const CAReduce&>(n->op()).scalar_op().id() == ScalarOpId::Composite)
      ++fused;
  }
  return fused == count && elemwise == 0;
}

}  // namespace

TEST_CASE("Reductions: compiled fused sum(x*x) and sum(exp(x))") {
  std::vector<FunctionGraph> plain, fused;
  for (DType dt : {DType::Float64, DType::Float32}) {
    GraphBuilder g(std::string("fused_") + std::string(dtype_name(dt)));
    // One input per reduction, so that merging does not share a producer between two sums.
    auto a = g.input("a", dt, {-1, -1}), b = g.input("b", dt, {-1, -1});
    auto c = g.input("c", dt, {-1, -1}), d = g.input("d", dt, {-1, -1});
    auto e = g.input("e", dt, {-1, -1});
    g.output(sum(a * a));
    g.output(sum(b * b, 0));
    g.output(sum(exp(c), -1));
    g.output(sum(exp(d), {0, 1}));
    // The column path: its lane loop and the remainder after it must give the same bits at one
    // and two threads (a math call vectorised in one copy of a loop and not the other would not).
    g.output(sum(exp(e), 0));
    plain.push_back(g.build());
    fused.push_back(plain.back().clone());
    run_pipeline(fused.back());  // x*x becomes sqr(x), then each sum fuses with its producer
    REQUIRE_MESSAGE(has_fused_reduction(fused.back(), 5), dprint(fused.back()));
  }
  BuildResult built = compile_all({&fused[0], &fused[1]}, "test_fused_reductions");
  Library so(built.library_path);
  std::mt19937 rng(11);
  for (std::size_t i = 0; i < fused.size(); ++i) {
    const DType dt = fused[i].inputs()[0]->dtype();
    for (const Shape& shape : std::vector<Shape>{{3, 5}, {0, 4}, {1, 70000}, {300, 257}, {40000, 3}}) {
      for (const auto& item : layouts(dt, shape[0], shape[1], rng, -2, 2)) {
        const Array& x = item.second;
        INFO(dtype_name(dt) << " " << shape_str(shape) << " " << item.first);
        check_call(plain[i], so.graph("g" + std::to_string(i)), {x, x, x, x, x});
        check_call(fused[i], so.graph("g" + std::to_string(i)), {x, x, x, x, x});
      }
    }
  }
}

TEST_CASE("Reductions, argmax, scans and softmax: compiled on long rows and strided views") {
  const std::vector<DType> dtypes = {DType::Float64, DType::Float32, DType::Int32, DType::UInt8, DType::Bool};
  std::vector<FunctionGraph> graphs;
  for (DType dt : dtypes) graphs.push_back(matrix_graph(dt));
  graphs.push_back(cube_graph());
  std::vector<const FunctionGraph*> pointers;
  for (const auto& g : graphs) pointers.push_back(&g);
  BuildResult built = compile_all(pointers, "test_compiled_reductions");
  Library so(built.library_path);
  std::mt19937 rng(5);

  for (std::size_t i = 0; i < dtypes.size(); ++i) {
    const DType dt = dtypes[i];
    // Values near 1 keep long products finite; integers stay small so that they also wrap.
    const double lo = is_float(dt) ? 0.9 : -3, hi = is_float(dt) ? 1.1 : 3;
    for (const Shape& shape :
         std::vector<Shape>{{3, 5}, {0, 6}, {6, 0}, {1, 1}, {1, 70000}, {2, 40000}, {130, 257}, {30000, 3}}) {
      for (const auto& item : layouts(dt, shape[0], shape[1], rng, lo, hi)) {
        const Array& x = item.second;
        INFO(dtype_name(dt) << " " << shape_str(shape) << " " << item.first);
        check_call(graphs[i], so.graph("g" + std::to_string(i)), {x});
        if (is_float(dt) && x.size() > 0) {
          INFO("with NaNs");
          check_call(graphs[i], so.graph("g" + std::to_string(i)), {with_nans(x.contiguous(), rng)});
        }
      }
    }
  }

  const kiln_graph_info& cube = so.graph("g" + std::to_string(dtypes.size()));
  for (const Shape& shape : std::vector<Shape>{{2, 3, 4}, {0, 3, 2}, {5, 40, 300}, {64, 2, 700}}) {
    Array x = random_array(DType::Float64, shape, rng, 0.9, 1.1);
    INFO("cube " << shape_str(shape));
    check_call(graphs.back(), cube, {x});
    // Dimensions reversed: every reduction takes a strided path.
    Array base = random_array(DType::Float64, {shape[2], shape[1], shape[0]}, rng, 0.9, 1.1);
    check_call(graphs.back(), cube, {base.view(shape, {1, shape[0], shape[0] * shape[1]})});
  }
}
