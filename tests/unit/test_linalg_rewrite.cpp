// The linear-algebra rewrites (rewrite/linalg.cpp) in the default pipeline: each checked for the
// ops it leaves, for where it must not fire, and by value (the reference evaluator before and
// after, on inputs the ops are defined for).
#include <doctest/doctest.h>

#include <random>

#include "api/elementwise.h"
#include "eval/evaluator.h"
#include "fixtures.h"
#include "linalg_data.h"
#include "ops/blockwise.h"
#include "ops/dimshuffle.h"
#include "ops/dot.h"
#include "ops/linalg/linalg.h"
#include "print/dprint.h"
#include "rewrite/pipeline.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

// How many nodes of the graph have op `name` (looking through Blockwise when `core`).
int count_ops(const FunctionGraph& fg, const std::string& name, bool core = false) {
  int n = 0;
  for (const Apply* node : fg.toposort()) {
    const Op* op = &node->op();
    if (core)
      if (const auto* bw = dynamic_cast<const Blockwise*>(op)) op = &bw->core_op();
    n += op->name() == name;
  }
  return n;
}


// The default pipeline on a copy, checked by value on `inputs`.
FunctionGraph pipelined(const FunctionGraph& fg, const std::vector<Array>& inputs) {
  FunctionGraph g = fg.clone();
  PipelineOptions o;
  o.verify = true;
  run_pipeline(g, o);
  g.verify();
  auto before = evaluate(fg, inputs);
  auto after = evaluate(g, inputs);
  REQUIRE(before.size() == after.size());
  for (std::size_t k = 0; k < before.size(); ++k) {
    auto diff = compare_arrays(after[k], before[k], 1e-8, 1e-10);
    CHECK_MESSAGE(!diff, "output " << k << " changed: " << diff.value_or("") << "\n" << dprint(g));
  }
  return g;
}

}  // namespace

TEST_CASE("linalg rewrite: a Blockwise without batch dimensions becomes its core op (then BLAS)") {
  std::mt19937 rng(1);
  Var z = make_input(TensorType(DType::Float64, {-1}), "z");
  // PyTensor 3.x's z[None, :] @ z[:, None]: a Blockwise of Dot with no batch dimensions.
  Var outer_product = blockwise1(std::make_shared<Dot>(), "(m,k),(k,n)->(m,n)",
                                 {dimshuffle(z, {DimShuffle::kNewAxis, 0}), dimshuffle(z, {0, DimShuffle::kNewAxis})});
  FunctionGraph fg({z}, {outer_product});
  FunctionGraph g = pipelined(fg, {normal_array({4}, rng)});
  CHECK(count_ops(g, "Blockwise") == 0);
  bool blas = false;
  for (const Apply* node : g.toposort())
    for (const char* op : {"Dot22", "Gemm", "Gemv", "CGemv", "Ger", "CGer", "Dot"}) blas = blas || node->op().name() == op;
  CHECK_MESSAGE(blas, dprint(g));
  // Static-1 batch dimensions are squeezed and put back.
  Var a = make_input(TensorType(DType::Float64, {1, -1, -1}), "a");
  FunctionGraph fg2({a}, {cholesky(a)});
  FunctionGraph g2 = pipelined(fg2, {spd_matrices({1, 3, 3}, rng)});
  CHECK(count_ops(g2, "Blockwise") == 0);
  CHECK(count_ops(g2, "Cholesky") == 1);
  // A real batch stays a Blockwise.
  Var b = make_input(TensorType(DType::Float64, {-1, -1, -1}), "b");
  FunctionGraph fg3({b}, {cholesky(b)});
  CHECK(count_ops(pipelined(fg3, {spd_matrices({2, 3, 3}, rng)}), "Blockwise") == 1);
}

TEST_CASE("linalg rewrite: Solve(assume_a='pos') becomes Cholesky + CholeskySolve, batched too") {
  std::mt19937 rng(2);
  for (bool lower : {true, false}) {
    Var a = make_input(TensorType(DType::Float64, {-1, -1}), "a");
    Var b = make_input(TensorType(DType::Float64, {-1, 2}), "b");
    FunctionGraph fg({a, b}, {solve(a, b, "pos", lower)});
    FunctionGraph g = pipelined(fg, {spd_matrices({4, 4}, rng), normal_array({4, 2}, rng)});
    CHECK(count_ops(g, "Solve") == 0);
    CHECK(count_ops(g, "Cholesky") == 1);
    CHECK(count_ops(g, "CholeskySolve") == 1);
  }
  Var a = make_input(TensorType(DType::Float64, {-1, -1, -1}), "a");
  Var b = make_input(TensorType(DType::Float64, {-1, -1}), "b");
  FunctionGraph fg({a, b}, {solve(a, b, "pos", false, 1)});
  FunctionGraph g = pipelined(fg, {spd_matrices({3, 4, 4}, rng), normal_array({3, 4}, rng)});
  CHECK(count_ops(g, "Solve", true) == 0);
  CHECK(count_ops(g, "CholeskySolve", true) == 1);
  // Not positive definite: NaN either way.
  Var c = make_input(TensorType(DType::Float64, {2, 2}), "c");
  Var d = make_input(TensorType(DType::Float64, {2}), "d");
  FunctionGraph bad({c, d}, {solve(c, d, "pos", true, 1)});
  Array not_pd = Array::empty(DType::Float64, {2, 2});
  for (int i = 0; i < 4; ++i) not_pd.data<double>()[i] = i == 1 || i == 2 ? 2.0 : 1.0;
  pipelined(bad, {not_pd, normal_array({2}, rng)});
  // Other structures stay.
  FunctionGraph gen({c, d}, {solve(c, d, "gen", false, 1)});
  CHECK(count_ops(pipelined(gen, {spd_matrices({2, 2}, rng), normal_array({2}, rng)}), "Solve") == 1);
}

TEST_CASE("linalg rewrite: inverse times a vector or matrix becomes a solve") {
  std::mt19937 rng(3);
  Var x = make_input(TensorType(DType::Float64, {-1, -1}), "x");
  Var v = make_input(TensorType(DType::Float64, {-1}), "v");
  Var m = make_input(TensorType(DType::Float64, {-1, 3}), "m");
  FunctionGraph fg({x, v, m}, {dot(matrix_inverse(x), v), dot(v, matrix_inverse(x)), dot(matrix_inverse(x), m),
                               dot(transpose(m), matrix_inverse(x))});
  FunctionGraph g = pipelined(fg, {spd_matrices({4, 4}, rng), normal_array({4}, rng), normal_array({4, 3}, rng)});
  CHECK(count_ops(g, "MatrixInverse") == 0);
  CHECK(count_ops(g, "Solve") >= 2);
  // The inverse itself is an output: it stays, and products with it still become solves.
  FunctionGraph fg2({x, v}, {matrix_inverse(x), dot(matrix_inverse(x), v)});
  FunctionGraph g2 = pipelined(fg2, {spd_matrices({3, 3}, rng), normal_array({3}, rng)});
  CHECK(count_ops(g2, "MatrixInverse") == 1);
  CHECK(count_ops(g2, "Solve") == 1);
  // Batched.
  Var xb = make_input(TensorType(DType::Float64, {-1, -1, -1}), "xb");
  Var vb = make_input(TensorType(DType::Float64, {-1, -1, 1}), "vb");
  FunctionGraph fg3({xb, vb}, {matmul(matrix_inverse(xb), vb)});
  FunctionGraph g3 = pipelined(fg3, {spd_matrices({2, 3, 3}, rng), normal_array({2, 3, 1}, rng)});
  CHECK(count_ops(g3, "MatrixInverse", true) == 0);
  CHECK(count_ops(g3, "Solve", true) == 1);
}

TEST_CASE("linalg rewrite: det of triangular factors is a product of diagonals; log(det) uses SLogDet") {
  std::mt19937 rng(4);
  Var a = make_input(TensorType(DType::Float64, {-1, -1}), "a");
  FunctionGraph fg({a}, {det(cholesky(a)), det(lu(a)[1]), det(lu(a)[2])});
  FunctionGraph g = pipelined(fg, {spd_matrices({4, 4}, rng)});
  CHECK(count_ops(g, "Det") == 0);
  Var batch = make_input(TensorType(DType::Float64, {-1, -1, -1}), "batch");
  FunctionGraph fgb({batch}, {det(cholesky(batch))});
  CHECK(count_ops(pipelined(fgb, {spd_matrices({3, 4, 4}, rng)}), "Det", true) == 0);

  FunctionGraph logdet({a}, {log(det(a)), log(abs(det(a))), sgn(det(a))});
  Array neg = normal_array({4, 4}, rng);
  for (const Array& value : {spd_matrices({4, 4}, rng), neg}) {
    FunctionGraph g2 = pipelined(logdet, {value});
    CHECK(count_ops(g2, "Det") == 0);
    CHECK(count_ops(g2, "SLogDet") == 1);
  }
  // det used directly as well: left alone (two determinants would be computed).
  FunctionGraph both({a}, {log(det(a)), det(a)});
  FunctionGraph g3 = pipelined(both, {spd_matrices({3, 3}, rng)});
  CHECK(count_ops(g3, "Det") == 1);
  CHECK(count_ops(g3, "SLogDet") == 0);
}
