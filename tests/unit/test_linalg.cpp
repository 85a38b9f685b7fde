// Linear algebra: type inference (PyTensor 3.x's output dtypes, static shapes, refusals), the
// loader (both prop spellings, refusals naming the JSON pointer), builders (core op or
// Blockwise), vectorize_graph, infer_shape, and the evaluator's failures. Values against
// SciPy are the NumPy fixtures' job (tests/fixtures/gen/gen_linalg.py).
#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eval/evaluator.h"
#include "transform/vectorize.h"
#include "io/graph_load.h"
#include "io/graph_save.h"
#include "ir/error.h"
#include "ops/array_util.h"
#include "ops/blockwise.h"
#include "ops/linalg/linalg.h"

#include "v2_test_util.h"

using namespace kiln;
using Json = nlohmann::json;

namespace {

Var in(DType dt, const Shape& shape) { return make_input(TensorType(dt, shape)); }

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

Json ty(const std::string& dtype, const Json& shape) { return {{"dtype", dtype}, {"shape", shape}}; }

// A one-node graph file with inputs x0, x1, ... and outputs o0, o1, ...
std::string graph_text(const std::string& op, const Json& props, const std::vector<Json>& inputs,
                       const std::vector<Json>& outputs) {
  return testing::one_node_graph_text(op, props, inputs, outputs);
}

struct LoadError {
  std::string where, what;
  bool not_implemented = false;
};
LoadError load_error(const std::string& text) {
  try {
    load_graph_text(text, "");
  } catch (const NotImplementedError& e) {
    return {e.where(), e.what(), true};
  } catch (const UserError& e) {
    return {e.where(), e.what(), false};
  }
  FAIL("the graph loaded but should have been refused");
  return {};
}

Array matrix(const Shape& shape, const std::vector<double>& values) {
  Array a = Array::empty(DType::Float64, shape);
  REQUIRE(static_cast<std::int64_t>(values.size()) == a.size());
  for (std::size_t i = 0; i < values.size(); ++i) a.data<double>()[i] = values[i];
  return a;
}

}  // namespace

TEST_CASE("linalg_output_dtype follows PyTensor 3.x") {
  using D = DType;
  CHECK(linalg_output_dtype({D::Float32}) == D::Float32);
  CHECK(linalg_output_dtype({D::Float64}) == D::Float64);
  for (D small : {D::Bool, D::Int8, D::Int16, D::UInt8, D::UInt16}) CHECK(linalg_output_dtype({small}) == D::Float32);
  for (D wide : {D::Int32, D::Int64, D::UInt32, D::UInt64}) CHECK(linalg_output_dtype({wide}) == D::Float64);
  CHECK(linalg_output_dtype({D::Float32, D::Int8}) == D::Float32);
  CHECK(linalg_output_dtype({D::Float32, D::Int32}) == D::Float64);
  CHECK(cholesky(in(D::Int16, {3, 3}))->dtype() == D::Float32);
  CHECK(det(in(D::Int64, {3, 3}))->dtype() == D::Float64);
  CHECK(solve(in(D::Float32, {3, 3}), in(D::UInt8, {3}))->dtype() == D::Float32);
  CHECK(kron(in(D::Int8, {2, 2}), in(D::Int16, {2, 2}))->dtype() == D::Int16);  // upcast, as a * b
  CHECK(block_diag({in(D::Int8, {2, 2}), in(D::Float32, {1, 1})})->dtype() == D::Float32);
  CHECK(lu_factor(in(D::Float32, {3, 3}))[1]->dtype() == D::Int32);
  CHECK(pivot_to_permutation(in(D::Int32, {3}))->dtype() == D::Int64);
}

TEST_CASE("linalg type inference: static shapes and refusals") {
  const DType f64 = DType::Float64;
  CHECK(cholesky(in(f64, {-1, 4}))->shape() == Shape{4, 4});
  CHECK(contains(error_of([&] { cholesky(in(f64, {3, 4})); }), "must be a square matrix"));
  CHECK(solve(in(f64, {3, -1}), in(f64, {-1, 2}))->shape() == Shape{3, 2});
  CHECK(contains(error_of([&] { solve(in(f64, {3, 3}), in(f64, {4})); }), "same number of rows"));
  CHECK(contains(error_of([&] { apply1(std::make_shared<Solve>("gen", false, 1), {in(f64, {3, 3}), in(f64, {3, 2})}); }),
                 "input 1 must have rank 1"));
  CHECK(contains(error_of([&] { apply1(std::make_shared<Cholesky>(true, false), {in(f64, {2, 3, 3})}); }),
                 "use Blockwise for batches"));
  VarList s = svd(in(f64, {5, 3}), false);
  CHECK(s[0]->shape() == Shape{5, 3});
  CHECK(s[1]->shape() == Shape{3});
  CHECK(s[2]->shape() == Shape{3, 3});
  VarList q = qr(in(f64, {2, 6}), "economic");
  CHECK(q[0]->shape() == Shape{2, 2});
  CHECK(q[1]->shape() == Shape{2, 6});
  CHECK(kron(in(f64, {2, 3}), in(f64, {4}))->shape() == Shape{2, 12});
  CHECK(contains(error_of([&] { kron(in(f64, {2}), in(f64, {3})); }), "add up to 3 or more"));
  CHECK(block_diag({in(f64, {2, 3}), in(f64, {-1, 1})})->shape() == Shape{-1, 4});
  CHECK(pinv(in(f64, {5, 3}))->shape() == Shape{3, 5});
  CHECK_THROWS_AS(Solve("banded", false, 2), NotImplementedError);
  CHECK(contains(error_of([] { Solve("triangular", false, 2); }), "unknown assume_a"));
  CHECK(Solve("positive definite", true, 1).assume_a() == "pos");
  CHECK(Solve("her", true, 1).structure() == kiln_linalg::Structure::Symmetric);  // real matrices
}

TEST_CASE("linalg builders: the core op for matrices, a Blockwise with batch dimensions") {
  const DType f64 = DType::Float64;
  Var c = cholesky(in(f64, {3, 3}));
  CHECK(c->owner()->op().name() == "Cholesky");
  Var cb = cholesky(in(f64, {2, 5, 3, 3}));
  REQUIRE(cb->owner()->op().name() == "Blockwise");
  CHECK(cb->owner()->op().str() == "Blockwise{Cholesky{lower=True, overwrite_a=False}, (m,m)->(m,m)}");
  CHECK(cb->shape() == Shape{2, 5, 3, 3});
  // b batched, A shared: A gets a leading length-1 dimension that broadcasts.
  Var x = solve(in(f64, {3, 3}), in(f64, {4, 3}), "gen", false, 1);
  CHECK(x->owner()->op().str() == "Blockwise{Solve{assume_a='gen', lower=False, b_ndim=1, overwrite_a=False, overwrite_b=False}, (m,m),(m)->(m)}");
  CHECK(x->shape() == Shape{4, 3});
  VarList e = eigh(in(f64, {7, 4, 4}));
  CHECK(e[0]->shape() == Shape{7, 4});
  CHECK(e[1]->shape() == Shape{7, 4, 4});
  CHECK(slogdet(in(f64, {2, 3, 3}))[1]->shape() == Shape{2});
}

TEST_CASE("loader: linear-algebra ops, with the 2.26 and 3.x prop spellings") {
  const Json m = ty("float64", {3, 3}), v = ty("float64", {3}), s = ty("float64", Json::array());
  auto load = [](const std::string& text) { return load_graph_text(text, ""); };
  auto op_of = [&](const std::string& text) { return load(text).toposort()[0]->op().str(); };
  CHECK(op_of(graph_text("Cholesky", {{"lower", false}, {"on_error", "raise"}, {"check_finite", true}}, {m}, {m})) ==
        "Cholesky{lower=False, overwrite_a=False, on_error='raise'}");
  CHECK(op_of(graph_text("Cholesky", {{"lower", true}, {"overwrite_a", false}}, {m}, {m})) == "Cholesky{lower=True, overwrite_a=False}");
  CHECK(op_of(graph_text("Cholesky", {{"on_error", "nan"}}, {m}, {m})) == "Cholesky{lower=True, overwrite_a=False}");
  CHECK(op_of(graph_text("Eigh", {{"UPLO", "U"}}, {m}, {v, m})) == "Eigh{lower=False, overwrite_a=False, overwrite_b=False, driver='evr'}");
  CHECK(op_of(graph_text("Eigh", {{"lower", true}, {"driver", "evd"}, {"overwrite_a", false}}, {m}, {v, m})) ==
        "Eigh{lower=True, overwrite_a=False, overwrite_b=False, driver='evd'}");
  CHECK(op_of(graph_text("SolveTriangular", {{"trans", "T"}, {"lower", true}, {"unit_diagonal", false}, {"b_ndim", 1}},
                         {m, v}, {v})) == "SolveTriangular{unit_diagonal=False, lower=True, b_ndim=1, overwrite_b=False, trans=1}");
  CHECK(op_of(graph_text("SolveTriangular", {{"trans", 0}, {"lower", true}}, {m, v}, {v})) ==
        "SolveTriangular{unit_diagonal=False, lower=True, b_ndim=1, overwrite_b=False}");
  CHECK(op_of(graph_text("Solve", {{"assume_a", "sym"}, {"lower", true}}, {m, m}, {m})) ==
        "Solve{assume_a='sym', lower=True, b_ndim=2, overwrite_a=False, overwrite_b=False}");
  CHECK(op_of(graph_text("QR", {{"mode", "complete"}, {"overwrite_a", false}}, {m}, {m, m})) ==
        "QR{overwrite_a=False, mode='full', pivoting=False}");
  CHECK(op_of(graph_text("SLogDet", Json(), {m}, {s, s})) == "SLogDet");
  CHECK(op_of(graph_text("Blockwise",
                         {{"core_op", {{"op", "Eigvalsh"}, {"props", {{"lower", true}}}}}, {"signature", "(k,k)->(k)"}},
                         {ty("float64", {2, 3, 3})}, {ty("float64", {2, 3})})) ==
        "Blockwise{Eigvalsh{lower=True, overwrite_a=False, overwrite_b=False}, (k,k)->(k)}");
  // Round trip.
  const std::string text = graph_text("LU", {{"permute_l", false}, {"p_indices", true}}, {m},
                                      {ty("int32", {3}), m, m});
  CHECK(save_graph_text(load(save_graph_text(load(text)))) == save_graph_text(load(text)));

  LoadError e = load_error(graph_text("Cholesky", {{"on_error", "ignore"}}, {m}, {m}));
  CHECK(e.where == "/nodes/0/props/on_error");
  e = load_error(graph_text("Eigh", {{"UPLO", "X"}}, {m}, {v, m}));
  CHECK(e.where == "/nodes/0/props/UPLO");
  e = load_error(graph_text("Eigh", {{"UPLO", "L"}, {"lower", false}}, {m}, {v, m}));
  CHECK(e.where == "/nodes/0/props/lower");
  e = load_error(graph_text("SolveTriangular", {{"trans", 3}}, {m, v}, {v}));
  CHECK(e.where == "/nodes/0/props/trans");
  e = load_error(graph_text("Solve", {{"b_ndim", 3}}, {m, v}, {v}));
  CHECK(e.where == "/nodes/0/props/b_ndim");
  e = load_error(graph_text("Solve", {{"b_ndim", 2}}, {m, v}, {v}));
  CHECK(contains(e.what, "input 1 must have rank 2"));
  e = load_error(graph_text("Solve", {{"assume_a", "banded"}}, {m, v}, {v}));
  CHECK(e.not_implemented);
  CHECK(e.where == "/nodes/0/props/assume_a");
  e = load_error(graph_text("QR", {{"mode", "thin"}}, {m}, {m, m}));
  CHECK(e.where == "/nodes/0/props/mode");
  e = load_error(graph_text("LU", {{"permute_l", true}, {"p_indices", true}}, {m}, {m, m}));
  CHECK(e.where == "/nodes/0/props/p_indices");
  e = load_error(graph_text("Cholesky", {{"lower", true}, {"colour", 1}}, {m}, {m}));
  CHECK(e.where == "/nodes/0/props/colour");
  e = load_error(graph_text("Det", Json(), {m}, {ty("float32", Json::array())}));
  CHECK(contains(e.what, "float"));
  e = load_error(graph_text("Blockwise", {{"core_op", {{"op", "Cholesky"}, {"props", Json::object()}}},
                                          {"signature", "(m,n)->(m,n)"}},
                            {ty("float64", {2, 3, 3})}, {ty("float64", {2, 3, 3})}));
  CHECK(e.where == "/nodes/0/props/signature");
  CHECK(contains(e.what, "the signature of Cholesky is (m,m)->(m,m)"));
  e = load_error(graph_text("BlockDiagonal", {{"n_inputs", 3}}, {m, m}, {ty("float64", {6, 6})}));
  CHECK(contains(e.what, "takes 3 input(s), got 2"));
}

TEST_CASE("linalg evaluator: failures, NaN results, empty batches") {
  Var a = in(DType::Float64, {-1, -1});
  auto run = [&](const Var& out, const Array& value) {
    FunctionGraph fg({a}, {out});
    return evaluate(fg, {value});
  };
  const Array not_pd = matrix({2, 2}, {1, 2, 2, 1});
  CHECK(std::isnan(run(cholesky(a), not_pd)[0].data<double>()[3]));
  CHECK(contains(error_of([&] { run(cholesky(a, true, true), not_pd); }), "matrix is not positive definite"));
  const Array singular = matrix({2, 2}, {1, 2, 2, 4});
  CHECK(contains(error_of([&] { run(matrix_inverse(a), singular); }), "singular matrix"));
  CHECK(run(det(a), singular)[0].data<double>()[0] == 0.0);
  CHECK(contains(error_of([&] { run(det(a), matrix({1, 2}, {1, 2})); }), "expected a square matrix, got shape (1, 2)"));
  CHECK(std::isnan(run(solve(a, make_constant(matrix({2}, {1, 1}))), singular)[0].data<double>()[1]));
  // An empty batch still knows its core output shapes (SVD's k from the core op's inference).
  Var batch = in(DType::Float64, {-1, -1, -1});
  FunctionGraph fg({batch}, svd(batch, false));
  std::vector<Array> outs = evaluate(fg, {Array::zeros(DType::Float64, {0, 4, 3})});
  CHECK(outs[0].shape() == Shape{0, 4, 3});
  CHECK(outs[1].shape() == Shape{0, 3});
  CHECK(outs[2].shape() == Shape{0, 3, 3});
}

TEST_CASE("linalg: vectorize_graph batches core ops as Blockwise; Blockwise infer_shape uses the core formulas") {
  const DType f64 = DType::Float64;
  Var x = in(f64, {3, 3});
  VarList usv = svd(x, false);
  Var xb = in(f64, {5, 3, 3});
  VarList batched = vectorize_graph(usv, {{x, xb}});
  REQUIRE(batched[1]->owner()->op().name() == "Blockwise");
  CHECK(batched[1]->shape() == Shape{5, 3});
  Var y = in(f64, {-1, -1});
  Var yb = in(f64, {2, -1, -1});
  Var v = vectorize_graph(solve_triangular(y, y, true), {{y, yb}});
  CHECK(v->owner()->op().str() == "Blockwise{SolveTriangular{unit_diagonal=False, lower=True, b_ndim=2, overwrite_b=False}, (m,m),(m,n)->(m,n)}");
  // SVD's k is named by the outputs only: infer_shape gives min(m, n) without computing the SVD.
  const VarList batched_svd = svd(in(f64, {2, -1, -1}), false);
  const Apply& node = *batched_svd[1]->owner();
  std::vector<ShapeVars> shapes = node.op().infer_shape(node, {{make_constant(Array::zeros(DType::Int64, {})),
                                                                  make_constant(Array::zeros(DType::Int64, {})),
                                                                  make_constant(Array::zeros(DType::Int64, {}))}});
  CHECK(shapes[1][1]->owner() != nullptr);
  CHECK(shapes[1][1]->owner()->op().name() == "Elemwise");  // minimum(m, n), not Shape_i of the output
}
