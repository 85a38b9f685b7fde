// Compiled linear algebra on what the tiny NumPy fixtures do not reach: batches large enough to
// split over threads (kiln's unrolled small Cholesky and LAPACK per matrix), a failing matrix
// inside a threaded batch (NaN in its place, or the error of the first failing one), matrices
// large enough that LAPACK/BLAS run their blocked kernels, triangular operands BLAS reads in
// place or that have to be copied, and a GP log-likelihood with its gradient. Each output is
// compared with the reference evaluator (perform) on the graph as written.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "api/elementwise.h"
#include "compile/compile.h"
#include "compiled.h"
#include "eval/evaluator.h"
#include "fixtures.h"
#include "linalg_data.h"
#include "grad/grad.h"
#include "ops/array_util.h"
#include "ops/dimshuffle.h"
#include "ops/dot.h"
#include "ops/linalg/linalg.h"
#include "ops/reduce.h"
#include "ops/shape.h"
#include "rewrite/pipeline.h"

using namespace kiln;
using namespace kiln::testing;

namespace {


// Calls the compiled graph (call and call_into, `threads` threads) and compares with perform.
void check_call(const FunctionGraph& reference, const kiln_graph_info& info, const std::vector<Array>& inputs,
                int threads, double rtol = 1e-9, double atol = 1e-9) {
  const std::vector<Array> expected = evaluate(reference, inputs);
  for (bool into : {false, true}) {
    INFO(std::string(into ? "output_shapes + call_into" : "call") << ", " << threads << " thread(s)");
    CallResult r = call_compiled(info, inputs, into, threads);
    REQUIRE_MESSAGE(r.status == KILN_OK, kiln_status_name(r.status) << ": " << r.error);
    REQUIRE(r.outputs.size() == expected.size());
    for (std::size_t k = 0; k < expected.size(); ++k) {
      auto diff = compare_arrays(r.outputs[k], expected[k], rtol, atol);
      CHECK_MESSAGE(!diff, "output " << k << " vs perform: " << diff.value_or(""));
    }
  }
}

BuildResult compile_all(const std::vector<const FunctionGraph*>& graphs, const std::string& name) {
  NamedGraphs named;
  for (std::size_t i = 0; i < graphs.size(); ++i) named.emplace_back(graphs[i], "g" + std::to_string(i));
  return build_bundle(named, name);
}

}  // namespace

TEST_CASE("compiled linalg: threaded batches, with a failing matrix inside") {
  std::mt19937 rng(1);
  Var a = make_input(TensorType(DType::Float64, {-1, -1, -1}), "a");
  Var b = make_input(TensorType(DType::Float64, {-1, -1}), "b");
  FunctionGraph chol({a}, {cholesky(a)});
  FunctionGraph chol_raise({a}, {cholesky(a, true, true)});
  FunctionGraph solved({a, b}, {solve(a, b, "gen", false, 1), slogdet(a)[1]});
  FunctionGraph inverse({a}, {matrix_inverse(a)});
  FunctionGraph values({a}, {eigvalsh(a), svd(a, false, false)[0]});
  BuildResult built = compile_all({&chol, &chol_raise, &solved, &inverse, &values}, "linalg_batches");
  Library so(built.library_path);

  for (std::int64_t n : {4, 9}) {  // kiln's unrolled Cholesky, and LAPACK's
    INFO("n = " << n);
    Array x = spd_matrices({3000, n, n}, rng);
    for (std::int64_t i = 0; i < n * n; ++i) x.data<double>()[1234 * n * n + i] = 1.0;  // not positive definite
    for (int threads : {1, 2}) {
      check_call(chol, so.graph("g0"), {x}, threads, 1e-10, 1e-10);
      check_call(solved, so.graph("g2"), {x, normal_array({3000, n}, rng)}, threads, 1e-8, 1e-8);
      check_call(values, so.graph("g4"), {spd_matrices({3000, n, n}, rng)}, threads, 1e-9, 1e-9);
      CallResult r = call_compiled(so.graph("g1"), {x}, false, threads);
      CHECK(r.status == KILN_ERR_LINALG);
      CHECK(r.error.find("matrix is not positive definite") != std::string::npos);
      CHECK(r.error.find("Cholesky") != std::string::npos);  // the node
    }
  }
  // Two singular matrices: the first one's failure is reported, whatever the thread count.
  Array x = spd_matrices({500, 6, 6}, rng);
  for (std::int64_t k : {123, 321})
    for (std::int64_t i = 0; i < 36; ++i) x.data<double>()[k * 36 + i] = static_cast<double>(i % 6);
  for (int threads : {1, 2}) {
    CallResult r = call_compiled(so.graph("g3"), {x}, false, threads);
    CHECK(r.status == KILN_ERR_LINALG);
    CHECK(r.error.find("singular matrix") != std::string::npos);
  }
  Array fine = spd_matrices({500, 6, 6}, rng);
  check_call(inverse, so.graph("g3"), {fine}, 2, 1e-9, 1e-9);
}

TEST_CASE("compiled linalg: large matrices, triangular operands in place or copied, GP log-likelihood and gradient") {
  std::mt19937 rng(2);
  Var K = make_input(TensorType(DType::Float64, {-1, -1}), "K");
  Var y = make_input(TensorType(DType::Float64, {-1}), "y");
  // -1/2 y^T K^-1 y - sum(log(diag(L))) - n/2 log(2 pi), through L = cholesky(K) and two
  // triangular solves (the second on L^T, a transposed view BLAS reads in place).
  Var L = cholesky(K);
  Var alpha = solve_triangular(transpose(L), solve_triangular(L, y, true), false);
  Var n = cast(shape_i(y, 0), DType::Float64);
  Var loglik = -0.5 * dot(y, alpha) - sum(log(diag_of(L))) - 0.5 * n * std::log(2 * M_PI);
  VarList grads = grad(loglik, {K, y});
  FunctionGraph gp({K, y}, {loglik, grads[0], grads[1]});
  FunctionGraph gp_opt = gp.clone();
  run_pipeline(gp_opt);
  // Triangular solves whose operand BLAS can read (contiguous, transposed) and cannot (every other
  // row and column), float32.
  Var A = make_input(TensorType(DType::Float32, {-1, -1}), "A");
  Var B = make_input(TensorType(DType::Float32, {-1, -1}), "B");
  FunctionGraph tri({A, B}, {solve_triangular(A, B, true), solve_triangular(transpose(A), B, false, false, true),
                             cho_solve(A, B, true)});
  BuildResult built = compile_all({&gp, &gp_opt, &tri}, "linalg_large");
  Library so(built.library_path);
  for (std::int64_t size : {1, 40, 300}) {
    INFO("n = " << size);
    std::vector<Array> in = {spd_matrices({size, size}, rng), normal_array({size}, rng)};
    for (int threads : {1, 2}) {
      check_call(gp, so.graph("g0"), in, threads, 1e-8, 1e-9);
      check_call(gp, so.graph("g1"), in, threads, 1e-8, 1e-9);
    }
  }
  Array base = astype(spd_matrices({120, 120}, rng), DType::Float32);
  for (std::int64_t i = 0; i < 120; ++i) base.data<float>()[i * 120 + i] += 20.0f;
  Array rhs = astype(normal_array({60, 5}, rng), DType::Float32);
  const Array strided = base.view({60, 60}, {240, 2});
  const Array corner = base.view({60, 60}, {120, 1});
  for (const Array& a : {corner, strided, base.view({60, 60}, {1, 120})}) check_call(tri, so.graph("g2"), {a, rhs}, 2, 2e-4, 2e-4);
}
