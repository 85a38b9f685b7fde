// Compiled products on what the tiny NumPy fixtures do not reach, built with the C++ API: a
// float32 MLP layer relu(X@W + b), transposed and otherwise strided operands at sizes where
// BLAS runs its real kernels (in place as CblasTrans, or copied when BLAS cannot read the
// layout), the row/column/1×1 shapes that dispatch to gemv and dot, Gemv/Gemm/Ger produced by
// the rewrite pipeline, integer products and batched matmul. Each output is compared with the
// reference evaluator (perform) on the graph as written.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <random>

#include "api/elementwise.h"
#include "api/graph_builder.h"
#include "compiled.h"
#include "eval/evaluator.h"
#include "fixtures.h"
#include "ops/blas.h"
#include "ops/dimshuffle.h"
#include "ops/dot.h"
#include "rewrite/pipeline.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

Array random_array(DType dt, const Shape& shape, std::mt19937& rng) {
  Array a = Array::empty(dt, shape);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::uniform_int_distribution<std::int64_t> ints(-1000, 1000);
  visit_real_dtype(dt, [&](auto t) {
    using T = decltype(t);
    for (std::int64_t i = 0; i < a.size(); ++i) {
      if constexpr (std::is_floating_point_v<T>)
        a.data<T>()[i] = static_cast<T>(dist(rng));
      else
        a.data<T>()[i] = static_cast<T>(ints(rng));
    }
  });
  return a;
}

// A rows×cols matrix in layouts BLAS reads in place (contiguous, transposed, a column slice
// with a leading dimension larger than its width) and layouts it cannot (reversed rows, every
// other column, a broadcast row with stride 0); all but the first are views.
std::vector<std::pair<std::string, Array>> layouts(DType dt, std::int64_t rows, std::int64_t cols,
                                                   std::mt19937& rng) {
  std::vector<std::pair<std::string, Array>> out;
  out.emplace_back("contiguous", random_array(dt, {rows, cols}, rng));
  Array t = random_array(dt, {cols, rows}, rng);
  out.emplace_back("transposed", t.view({rows, cols}, {1, rows}));
  Array wide = random_array(dt, {rows, cols + 3}, rng);
  out.emplace_back("column slice", wide.view({rows, cols}, {cols + 3, 1}, 1));
  Array r = random_array(dt, {rows, cols}, rng);
  out.emplace_back("reversed rows", r.view({rows, cols}, {-cols, 1}, rows > 0 ? (rows - 1) * cols : 0));
  Array w = random_array(dt, {rows, 2 * cols}, rng);
  out.emplace_back("every other column", w.view({rows, cols}, {2 * cols, 2}));
  Array b = random_array(dt, {cols}, rng);
  out.emplace_back("broadcast row", b.view({rows, cols}, {0, 1}));
  return out;
}

// float32 sums come out of BLAS in another order than perform's loop.
std::optional<double> rtol_for(DType dt) { return dt == DType::Float32 ? std::optional<double>(1e-4) : std::nullopt; }
std::optional<double> atol_for(DType dt) { return dt == DType::Float32 ? std::optional<double>(1e-5) : std::nullopt; }

// Calls the compiled graph both ways and compares with perform on `reference`.
void check_call(const FunctionGraph& reference, const kiln_graph_info& info, const std::vector<Array>& inputs) {
  const std::vector<Array> expected = evaluate(reference, inputs);
  for (bool into : {false, true}) {
    INFO(std::string(into ? "output_shapes + call_into" : "call"));
    CallResult r = call_compiled(info, inputs, into);
    REQUIRE_MESSAGE(r.status == KILN_OK, kiln_status_name(r.status) << ": " << r.error);
    REQUIRE(r.outputs.size() == expected.size());
    for (std::size_t k = 0; k < expected.size(); ++k) {
      const DType dt = expected[k].dtype();
      auto diff = compare_arrays(r.outputs[k], expected[k], rtol_for(dt), atol_for(dt));
      CHECK_MESSAGE(!diff, "output " << k << " vs perform: " << diff.value_or(""));
    }
  }
}

BuildResult compile_all(const std::vector<const FunctionGraph*>& graphs, const std::string& name) {
  NamedGraphs named;
  for (std::size_t i = 0; i < graphs.size(); ++i) named.emplace_back(graphs[i], "g" + std::to_string(i));
  return build_bundle(named, name);
}

FunctionGraph pipelined(const FunctionGraph& fg) {
  FunctionGraph g = fg.clone();
  run_pipeline(g);
  return g;
}

int count_ops(const FunctionGraph& fg, const std::string& name) {
  int n = 0;
  for (Apply* node : fg.toposort()) n += node->op().name() == name;
  return n;
}

}  // namespace

TEST_CASE("compiled dot: a float32 MLP layer relu(X@W + b), as written and rewritten") {
  GraphBuilder g("mlp");
  auto X = g.input("X", f32, {-1, -1});
  auto W = g.input("W", f32, {-1, -1});
  auto b = g.input("b", f32, {-1});
  g.output(maximum(dot(X, W) + dimshuffle(b, {DimShuffle::kNewAxis, 0}), 0), "h");
  const FunctionGraph fg = g.build();
  const FunctionGraph opt = pipelined(fg);
  CHECK(count_ops(opt, "Dot") == 0);
  CHECK(count_ops(opt, "Dot22") + count_ops(opt, "Gemm") == 1);
  BuildResult built = compile_all({&fg, &opt}, "dot_mlp");
  Library so(built.library_path);
  std::mt19937 rng(1);
  for (const auto& item : {std::array<std::int64_t, 3>{64, 100, 50}, {1, 7, 5}, {9, 1, 1}, {0, 4, 3},
                                {3, 0, 2}, {5, 6, 0}}) {
    const auto& batch = std::get<0>(item);
    const auto& in = std::get<1>(item);
    const auto& out = std::get<2>(item);
    INFO("X " << batch << "x" << in << ", W " << in << "x" << out);
    const std::vector<Array> inputs = {random_array(f32, {batch, in}, rng), random_array(f32, {in, out}, rng),
                                       random_array(f32, {out}, rng)};
    check_call(fg, so.graph("g0"), inputs);
    check_call(fg, so.graph("g1"), inputs);
  }
}

TEST_CASE("compiled dot: transposed and strided operands, every shape class") {
  // X.T @ y and P.T @ Q.T (transposes of variables: DimShuffle views BLAS reads as
  // CblasTrans), and A @ B on inputs whose layouts vary at run time.
  GraphBuilder g("strided");
  auto X = g.input("X", f64, {-1, -1});
  auto y = g.input("y", f64, {-1});
  auto A = g.input("A", f64, {-1, -1});
  auto B = g.input("B", f64, {-1, -1});
  auto P = g.input("P", f64, {-1, -1});
  auto Q = g.input("Q", f64, {-1, -1});
  g.output(dot(transpose(X), y), "xty");
  g.output(dot(A, B), "ab");
  g.output(dot(transpose(P), transpose(Q)), "ptqt");
  const FunctionGraph fg = g.build();
  GraphBuilder g32("strided32");
  auto A32 = g32.input("A", f32, {-1, -1});
  auto B32 = g32.input("B", f32, {-1, -1});
  auto v32 = g32.input("v", f32, {-1});
  g32.output(dot(A32, B32), "ab");
  g32.output(dot(v32, B32), "vb");
  const FunctionGraph fg32 = g32.build();
  BuildResult built = compile_all({&fg, &fg32}, "dot_strided");
  Library so(built.library_path);

  std::mt19937 rng(2);
  // (m, k, n): gemm, gemv on a column, gemv on a row, dot for 1×1.
  for (const auto& item : {std::array<std::int64_t, 3>{37, 53, 29}, {23, 17, 1}, {1, 17, 23}, {1, 40, 1}}) {
    const auto& m = std::get<0>(item);
    const auto& k = std::get<1>(item);
    const auto& n = std::get<2>(item);
    const auto as = layouts(f64, m, k, rng), bs = layouts(f64, k, n, rng);
    const auto ps = layouts(f64, k, m, rng), qs = layouts(f64, n, k, rng);
    const auto as32 = layouts(f32, m, k, rng), bs32 = layouts(f32, k, n, rng);
    for (std::size_t i = 0; i < as.size(); ++i) {
      for (std::size_t j = 0; j < bs.size(); ++j) {
        INFO("m " << m << ", k " << k << ", n " << n << "; left " << as[i].first << ", right " << bs[j].first);
        check_call(fg, so.graph("g0"),
                   {as[i].second, random_array(f64, {m}, rng), as[i].second, bs[j].second, ps[i].second, qs[j].second});
        check_call(fg32, so.graph("g1"), {as32[i].second, bs32[j].second, random_array(f32, {k}, rng)});
      }
    }
  }
}

TEST_CASE("compiled dot: Gemv, Gemm and Ger from the rewrite pipeline") {
  GraphBuilder g("blas");
  auto A = g.input("A", f64, {-1, -1});
  auto B = g.input("B", f64, {-1, -1});
  auto C = g.input("C", f64, {-1, -1});
  auto v = g.input("v", f64, {-1});
  auto u = g.input("u", f64, {-1});
  auto a = g.input("a", f64, {});
  g.output(a * dot(A, v) + u, "gemv");
  g.output(dot(transpose(A), u), "gemv_t");
  g.output(a * dot(A, B) + C, "gemm");
  g.output(C + a * outer(u, v), "ger");
  const FunctionGraph fg = g.build();
  const FunctionGraph opt = pipelined(fg);
  CHECK(count_ops(opt, "Gemv") == 2);
  CHECK(count_ops(opt, "Gemm") + count_ops(opt, "Ger") == 2);  // the outer product may become either

  GraphBuilder g32("blas32");
  auto X = g32.input("X", f32, {-1, -1});
  auto Y = g32.input("Y", f32, {-1, -1});
  auto Z = g32.input("Z", f32, {-1, -1});
  auto x = g32.input("x", f32, {-1});
  g32.output(dot(transpose(X), Y) * 0.5 + Z, "gemm_t");
  g32.output(dot(X, x) * 2.0f, "gemv_scaled");
  const FunctionGraph fg32 = g32.build();
  const FunctionGraph opt32 = pipelined(fg32);
  CHECK(count_ops(opt32, "Gemm") + count_ops(opt32, "Dot22Scalar") + count_ops(opt32, "Dot22") >= 1);
  CHECK(count_ops(opt32, "Gemv") == 1);

  BuildResult built = compile_all({&opt, &opt32}, "dot_blas");
  Library so(built.library_path);
  std::mt19937 rng(3);
  for (const auto& item : {std::array<std::int64_t, 2>{31, 31}, {1, 1}, {0, 0}, {6, 6}}) {
    const auto& m = std::get<0>(item);
    const auto& n = std::get<1>(item);
    INFO("m " << m << ", n " << n);
    const auto as = layouts(f64, m, n, rng);
    for (const auto& item : as) {
      const auto& layout = std::get<0>(item);
      const auto& Av = std::get<1>(item);
      INFO("A " << layout);
      check_call(fg, so.graph("g0"),
                 {Av, random_array(f64, {n, n}, rng), random_array(f64, {m, n}, rng), random_array(f64, {n}, rng),
                  random_array(f64, {m}, rng), random_array(f64, {}, rng)});
    }
    const auto xs = layouts(f32, n, m, rng);
    for (const auto& item : xs) {
      const auto& layout = std::get<0>(item);
      const auto& Xv = std::get<1>(item);
      INFO("X " << layout);
      check_call(fg32, so.graph("g1"),
                 {Xv, random_array(f32, {n, m}, rng), random_array(f32, {m, m}, rng), random_array(f32, {m}, rng)});
    }
  }
}

TEST_CASE("compiled dot: Gemv, Gemm and Ger with run-time scalars") {
  // b is an input: 0 must not read y / z (NaN there must not leak), other values scale it.
  GraphBuilder g("blas_direct");
  auto y = g.input("y", f64, {-1});
  auto A = g.input("A", f64, {-1, -1});
  auto x = g.input("x", f64, {-1});
  auto Z = g.input("Z", f64, {-1, -1});
  auto B = g.input("B", f64, {-1, -1});
  auto a = g.input("a", f64, {});
  auto b = g.input("b", f64, {});
  g.output(gemv(y, a, A, x, b), "gemv");
  g.output(gemm(Z, a, A, B, b), "gemm");
  g.output(ger(Z, a, y, x), "ger");
  g.output(gemv(exp(x), a, transpose(B), x, b), "gemv_of_intermediate");
  const FunctionGraph fg = g.build();
  BuildResult built = compile_all({&fg}, "dot_blas_direct");
  Library so(built.library_path);
  std::mt19937 rng(5);
  const std::int64_t m = 19, k = 23;
  for (double bv : {0.0, 0.5}) {
    Array yv = random_array(f64, {m}, rng);
    Array Zv = random_array(f64, {m, k}, rng);
    if (bv == 0.0) {
      yv.data<double>()[3] = NAN;
      Zv.data<double>()[5] = NAN;
    }
    Array bval = Array::empty(f64, {});
    bval.data<double>()[0] = bv;
    for (const auto& item : layouts(f64, m, k, rng)) {
      const auto& layout = std::get<0>(item);
      const auto& Av = std::get<1>(item);
      INFO("b " << bv << ", A " << layout);
      check_call(fg, so.graph("g0"),
                 {yv, Av, random_array(f64, {k}, rng), Zv, random_array(f64, {k, k}, rng),
                  random_array(f64, {}, rng), bval});
    }
  }
}

TEST_CASE("compiled dot: integer and mixed-dtype products, batched matmul") {
  GraphBuilder g("ints");
  auto A = g.input("A", i32, {-1, -1});
  auto B = g.input("B", i16, {-1, -1});
  auto F = g.input("F", f32, {-1, -1});
  auto S = g.input("S", f64, {-1, -1, -1});
  auto T = g.input("T", f64, {1, -1, -1});
  g.output(dot(A, B), "int");           // int32, wrapping
  g.output(dot(B, F), "mixed");         // int16 @ float32: float32 through BLAS after a conversion
  g.output(matmul(S, T), "broadcast");  // Blockwise: T's batch dimension broadcasts
  g.output(batched_dot(S, S), "batched");
  const FunctionGraph fg = g.build();
  BuildResult built = compile_all({&fg}, "dot_ints");
  Library so(built.library_path);
  std::mt19937 rng(4);
  for (std::int64_t n : {12, 1, 0}) {
    INFO("n " << n);
    check_call(fg, so.graph("g0"),
               {random_array(i32, {n, 20}, rng), random_array(i16, {20, n}, rng), random_array(f32, {n, 7}, rng),
                random_array(f64, {4, n, n}, rng), random_array(f64, {1, n, n}, rng)});
  }
}
