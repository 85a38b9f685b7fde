// Reductions, Argmax, CumOp and the softmax family: builder API, type inference, printing,
// loader refusals (naming the JSON pointer) and shapes. Values are covered by the NumPy
// fixtures (families reduce, cumulative, softmax).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>

#include "api/graph_builder.h"
#include "eval/evaluator.h"
#include "io/graph_load.h"
#include "io/graph_save.h"
#include "ir/error.h"
#include "ops/cumulative.h"
#include "ops/elemwise.h"
#include "ops/reduce.h"
#include "ops/scalar/composite.h"
#include "ops/shape.h"
#include "ops/softmax.h"

using namespace kiln;

namespace {

// A one-node graph file: input x of `in_type`, op with `props`, output of `out_type`.
std::string one_node_graph(const std::string& op, const std::string& props,
                           const std::string& in_type, const std::string& out_type,
                           int n_inputs = 1) {
  std::string inputs = n_inputs == 1 ? R"(["x"])" : R"(["x", "x"])";
  return R"({"format": "kiln-graph", "version": 1, "name": "t",
    "variables": [{"id": "x", "type": )" +
         in_type + R"(}, {"id": "y", "type": )" + out_type + R"(}],
    "nodes": [{"op": ")" +
         op + R"(", "props": )" + props + R"(, "inputs": )" + inputs + R"(, "outputs": ["y"]}],
    "inputs": ["x"], "outputs": ["y"]})";
}

// The message of the UserError loading `text` throws ("" when it loads).
std::string load_error(const std::string& text) {
  try {
    load_graph_text(text, "");
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

Array f64_vector(std::vector<double> v) {
  Array a = Array::empty(DType::Float64, {static_cast<std::int64_t>(v.size())});
  for (std::size_t i = 0; i < v.size(); ++i) a.data<double>()[i] = v[i];
  return a;
}

}  // namespace

TEST_CASE("reduction builders: output dtypes follow PyTensor") {
  auto x_i8 = make_input(TensorType(DType::Int8, {2, -1, 4}), "x");
  auto x_u16 = make_input(TensorType(DType::UInt16, {3}), "u");
  auto x_f32 = make_input(TensorType(DType::Float32, {2, 3}), "f");
  auto x_b = make_input(TensorType(DType::Bool, {2, 3}), "b");
  CHECK(sum(x_i8)->dtype() == DType::Int64);
  CHECK(sum(x_u16)->dtype() == DType::UInt64);
  CHECK(sum(x_f32)->dtype() == DType::Float32);
  CHECK(prod(x_b)->dtype() == DType::Int64);
  CHECK(prod_without_zeros(x_u16)->dtype() == DType::UInt64);
  CHECK(sum(x_i8, {}, DType::Int8)->dtype() == DType::Int8);
  CHECK(sum(x_i8, std::optional<std::vector<int>>{{0, 2}})->shape() == Shape{kUnknownLength});
  CHECK(sum(x_i8, std::optional<std::vector<int>>{})->shape().empty());
  CHECK(sum(x_i8, std::nullopt)->shape().empty());
  CHECK(max(x_i8)->dtype() == DType::Int8);
  CHECK(min(x_f32, 0)->dtype() == DType::Float32);
  CHECK(all(x_f32)->dtype() == DType::Bool);
  CHECK(any(x_i8, -1)->dtype() == DType::Bool);
  CHECK(argmax(x_f32, 1)->dtype() == DType::Int64);
  CHECK(careduce(ScalarOp(ScalarOpId::Add), x_i8, 0)->dtype() == DType::Int8);
  CHECK(mean(x_i8)->dtype() == DType::Float64);
  CHECK(mean(x_f32, 1)->dtype() == DType::Float32);

  // Static shapes: reduced dimensions are removed, the others keep their static lengths.
  CHECK(sum(x_i8, 1)->shape() == Shape{2, 4});
  CHECK(max(x_i8, {0, 2})->shape() == Shape{kUnknownLength});
  CHECK(sum(x_i8, -1)->shape() == Shape{2, kUnknownLength});
  CHECK(sum(x_i8)->shape().empty());
  CHECK(argmax(x_i8, {2, 0})->shape() == Shape{kUnknownLength});

  // All/Any of a non-bool input reduce `x != 0`, as PyTensor builds them.
  Var a = all(x_f32);
  CHECK(a->owner()->input(0)->owner()->op().str() == "Neq");
  CHECK(all(x_b)->owner()->input(0) == x_b);
}

TEST_CASE("reduction printing and props") {
  auto x = make_input(TensorType(DType::Float64, {-1, -1, -1}), "x");
  auto xf = make_input(TensorType(DType::Float32, {-1, -1}), "xf");
  auto xi = make_input(TensorType(DType::Int32, {-1, -1}), "xi");
  CHECK(sum(x)->owner()->op().str() == "Sum{axes=None}");
  CHECK(sum(x, 0)->owner()->op().str() == "Sum{axis=0}");
  CHECK(sum(x, {1, 0})->owner()->op().str() == "Sum{axes=[0, 1]}");
  CHECK(sum(x, -1)->owner()->op().str() == "Sum{axis=2}");
  CHECK(sum(xi)->owner()->op().str() == "Sum{axes=None}");
  // PyTensor's FixedOpCAReduce shows the accumulator when it differs from the output dtype.
  CHECK(sum(xf, 1)->owner()->op().str() == "Sum{axis=1, acc=float64}");
  CHECK(max(x)->owner()->op().str() == "Max{axes=None}");
  CHECK(min(xi, 1)->owner()->op().str() == "Min{axis=1}");
  CHECK(prod(x, {0, 2})->owner()->op().str() == "Prod{axes=[0, 2]}");
  CHECK(careduce(ScalarOp(ScalarOpId::Add), x, 0)->owner()->op().str() == "CAReduce{add, axis=0}");
  CHECK(
      careduce(ScalarOp(ScalarOpId::Add), xi, 0, std::nullopt, DType::Int64)->owner()->op().str() ==
      "CAReduce{add, axis=0, acc=int64}");
  CHECK(argmax(x, 1)->owner()->op().str() == "Argmax{axis=(1,)}");
  CHECK(argmax(x, {2, 0})->owner()->op().str() == "Argmax{axis=(0, 2)}");
  CHECK(argmax(x)->owner()->op().str() == "Argmax{axis=None}");
  CHECK(cumsum(x, 0)->owner()->op().str() == "Cumsum{axis=0}");
  CHECK(cumprod(x)->owner()->op().str() == "Cumprod{axis=None}");
  CHECK(softmax(x, -1)->owner()->op().str() == "Softmax{axis=2}");
  CHECK(log_softmax(x)->owner()->op().str() == "LogSoftmax{axis=None}");
  CHECK(softmax_grad(x, x, 1)->owner()->op().str() == "SoftmaxGrad{axis=1}");

  // Props are PyTensor's, with dtype and acc_dtype filled in as its make_node does.
  CHECK(sum(xi, 1)->owner()->op().props().dump() ==
        R"({"acc_dtype":"int64","axis":[1],"dtype":"int64"})");
  CHECK(max(xi)->owner()->op().props().dump() == R"({"axis":null})");
  CHECK(cumsum(x, -1)->owner()->op().props().dump() == R"({"axis":2,"mode":"add"})");
  // Equal ops merge: the same reduction built twice has equal ops.
  CHECK(sum(x, 0)->owner()->op().equals(sum(x, {0})->owner()->op()));
  CHECK_FALSE(sum(x, 0)->owner()->op().equals(sum(x, 1)->owner()->op()));
}

TEST_CASE("type inference refusals") {
  auto xi = make_input(TensorType(DType::Int32, {-1, -1}), "xi");
  auto xf = make_input(TensorType(DType::Float64, {-1, -1}), "xf");
  CHECK(contains(error_of([&] { softmax(xi, 1); }), "must be float32 or float64, got int32"));
  CHECK(contains(error_of([&] { log_softmax(xi); }), "float"));
  CHECK(contains(error_of([&] { softmax_grad(xi, xf, 1); }), "dy (input 0) must be float"));
  CHECK(contains(error_of([&] { softmax(xf, 2); }), "out of range"));
  CHECK(contains(error_of([&] { sum(xf, 2); }), "out of range"));
  CHECK(contains(error_of([&] { sum(xf, {1, -1}); }), "repeated"));
  CHECK(contains(error_of([&] { sum(xf, {}, std::nullopt, DType::Float32); }),
                 "would lose precision"));
  CHECK(
      contains(error_of([&] { prod(xi, {}, std::nullopt, DType::Int8); }), "would lose precision"));
  CHECK(
      error_of([&] { sum(xi, {}, std::nullopt, DType::Float32); }).empty());  // float acc for ints
  CHECK(contains(error_of([&] { careduce(ScalarOp(ScalarOpId::And), xf); }),
                 "needs bool or integer"));
  CHECK(contains(error_of([&] { careduce(ScalarOp(ScalarOpId::Sub), xf); }),
                 "cannot reduce with sub"));
  CHECK(contains(error_of([&] { cumsum(xf, 2); }), "out of range"));

  auto x3 = make_input(TensorType(DType::Float64, {2, 3}), "x3");
  auto y3 = make_input(TensorType(DType::Float64, {3, 2}), "y3");
  CHECK(contains(error_of([&] { softmax_grad(x3, y3, 0); }), "must have the same shape"));

  // A Composite reduction must be `acc, x -> acc'` with types that fit.
  auto g = std::make_shared<CompositeGraph>();
  int i0 = g->add_input(DType::Float64);
  int i1 = g->add_input(DType::Float64);
  g->add_output(g->add_node(ScalarOp(ScalarOpId::Sub), {i0, i1})[0]);
  CHECK(contains(error_of([&] { careduce(ScalarOp::composite(g), xf); }), "no identity"));
  auto h = std::make_shared<CompositeGraph>();
  int j0 = h->add_input(DType::Float64);
  int j1 = h->add_input(DType::Float64);
  h->add_output(h->add_node(ScalarOp(ScalarOpId::Add), {j0, j1})[0]);
  CHECK(contains(error_of([&] { careduce(ScalarOp::composite(h), xi); }),
                 "element input i1 is float64"));
  CHECK(careduce(ScalarOp::composite(h), xf, 1)->owner()->op().str() ==
        "CAReduce{Composite{(i0 + i1)}, axis=1}");
}

TEST_CASE("loader refusals name the JSON pointer") {
  const std::string mat = R"({"dtype": "float64", "shape": [null, null]})";
  const std::string vec = R"({"dtype": "float64", "shape": [null]})";
  const std::string sca = R"({"dtype": "float64", "shape": []})";
  const std::string ivec = R"({"dtype": "int64", "shape": [null]})";
  CHECK(load_error(one_node_graph("Sum", R"({"axis": 0})", mat, vec)).empty());
  CHECK(contains(load_error(one_node_graph("Sum", R"({"axis": 2})", mat, vec)),
                 "/nodes/0/props/axis"));
  CHECK(contains(load_error(one_node_graph("Sum", R"({"axis": [0, -2]})", mat, sca)),
                 "/nodes/0/props/axis"));
  CHECK(contains(load_error(one_node_graph("Max", R"({"axis": [0.5]})", mat, vec)),
                 "/nodes/0/props/axis/0"));
  CHECK(contains(load_error(one_node_graph("Argmax", R"({"axis": [3]})", mat, ivec)),
                 "/nodes/0/props/axis"));
  CHECK(contains(
      load_error(one_node_graph("Sum", R"({"axis": null, "acc_dtype": "float32"})", mat, sca)),
      "/nodes/0/props/acc_dtype"));
  CHECK(contains(
      load_error(one_node_graph("Sum", R"({"axis": null, "dtype": "float128"})", mat, sca)),
      "/nodes/0/props/dtype"));
  CHECK(
      contains(load_error(one_node_graph("Max", R"({"axis": null, "dtype": "float32"})", mat, sca)),
               "/nodes/0/props/dtype"));
  CHECK(load_error(one_node_graph("Max", R"({"axis": null, "dtype": "float64", "acc_dtype": null})",
                                  mat, sca))
            .empty());
  CHECK(contains(load_error(one_node_graph("Sum", R"({"axis": 0, "keepdims": true})", mat, vec)),
                 "/nodes/0/props/keepdims"));
  CHECK(load_error(one_node_graph("Prod", R"({"axis": 0, "no_zeros_in_input": false})", mat, vec))
            .empty());
  CHECK(contains(load_error(one_node_graph("Sum", R"({"axis": 0})", mat, vec, 2)), "/nodes/0"));
  CHECK(contains(
      load_error(one_node_graph("CAReduce", R"({"scalar_op": "sub", "axis": 0})", mat, vec)),
      "/nodes/0/props/scalar_op"));
  CHECK(contains(
      load_error(one_node_graph("CAReduce", R"({"scalar_op": "and", "axis": 0})", mat, vec)),
      "/nodes/0/props/scalar_op"));
  CHECK(contains(load_error(one_node_graph("CumOp", R"({"axis": 0, "mode": "max"})", mat, mat)),
                 "/nodes/0/props/mode"));
  CHECK(contains(load_error(one_node_graph("CumOp", R"({"axis": [0], "mode": "add"})", mat, mat)),
                 "/nodes/0/props/axis"));
  CHECK(contains(load_error(one_node_graph("CumOp", R"({"axis": -3, "mode": "add"})", mat, mat)),
                 "/nodes/0/props/axis"));
  CHECK(contains(load_error(one_node_graph("Softmax", R"({"axis": 2})", mat, mat)),
                 "/nodes/0/props/axis"));
  CHECK(contains(load_error(one_node_graph("SoftmaxGrad", R"({"axis": 5})", mat, mat, 2)),
                 "/nodes/0/props/axis"));
  // A non-float softmax is refused by type inference, naming the node.
  const std::string imat = R"({"dtype": "int32", "shape": [null, null]})";
  std::string err = load_error(one_node_graph("Softmax", R"({"axis": 1})", imat, imat));
  CHECK(contains(err, "/nodes/0"));
  CHECK(contains(err, "must be float32 or float64"));
  // A declared output dtype that disagrees with PyTensor's rule is refused.
  CHECK(contains(load_error(one_node_graph("Sum", R"({"axis": 0})", imat,
                                           R"({"dtype": "int32", "shape": [null]})")),
                 "/nodes/0/outputs/0"));
}

TEST_CASE("reductions save and reload unchanged") {
  GraphBuilder b("reductions");
  auto x = b.input("x", f32, {2, -1, 3});
  b.output(sum(x, {0, 2}), "s");
  b.output(max(x, -1), "m");
  b.output(argmax(x, {1, 2}), "am");
  b.output(cumprod(x, 1), "cp");
  b.output(softmax(x, 2), "sm");
  b.output(all(x), "a");
  FunctionGraph fg = b.build();
  fg.verify();
  std::string text = save_graph_text(fg);
  FunctionGraph again = load_graph_text(text, "");
  CHECK(save_graph_text(again) == text);
}

TEST_CASE("mean, as PyTensor builds it") {
  GraphBuilder b("mean");
  auto x = b.input("x", i32, {-1, 2});
  auto y = b.input("y", f64, {-1});
  b.output(mean(x), "m_all");
  b.output(mean(x, 0), "m0");
  b.output(mean(y), "m_y");
  FunctionGraph fg = b.build();
  Array xv = Array::empty(DType::Int32, {3, 2});
  for (int i = 0; i < 6; ++i) xv.data<std::int32_t>()[i] = i;
  auto out = evaluate(fg, {xv, f64_vector({})});
  CHECK(out[0].dtype() == DType::Float64);
  CHECK(out[0].data<double>()[0] == doctest::Approx(2.5));
  CHECK(out[1].data<double>()[0] == doctest::Approx(2.0));
  CHECK(out[1].data<double>()[1] == doctest::Approx(3.0));
  CHECK(std::isnan(out[2].data<double>()[0]));  // mean of nothing: 0 / 0
}

TEST_CASE("infer_shape of reductions and CumOp") {
  auto x = make_input(TensorType(DType::Float64, {-1, -1, -1}), "x");
  std::vector<Var> outs = {sum(x, 1), argmax(x, {0, 2}), cumsum(x), cumsum(x, 1), softmax(x, 0)};
  std::vector<Shape> expected = {{2, 4}, {3}, {24}, {2, 3, 4}, {2, 3, 4}};
  Array xv = Array::zeros(DType::Float64, {2, 3, 4});
  for (std::size_t k = 0; k < outs.size(); ++k) {
    Apply* node = outs[k]->owner();
    ShapeVars in_shape;
    for (int d = 0; d < 3; ++d) in_shape.push_back(shape_i(x, d));
    ShapeVars dims = node->op().infer_shape(*node, {in_shape})[0];
    REQUIRE(dims.size() == expected[k].size());
    FunctionGraph fg({x}, VarList(dims.begin(), dims.end()));
    auto vals = evaluate(fg, {xv});
    for (std::size_t d = 0; d < dims.size(); ++d)
      CHECK(vals[d].data<std::int64_t>()[0] == expected[k][d]);
  }
  auto s = make_input(TensorType(DType::Int8, {}), "s");
  Var c = cumprod(s);  // keeps its node alive
  Apply* node = c->owner();
  CHECK(c->shape() == Shape{1});
  ShapeVars dims = node->op().infer_shape(*node, {ShapeVars{}})[0];
  REQUIRE(dims.size() == 1);
  CHECK(dims[0]->is_constant());
}

TEST_CASE("Max of a zero-length axis fails at run time with a clear message") {
  GraphBuilder b("max_empty");
  auto x = b.input("x", f64, {-1});
  b.output(max(x), "m");
  FunctionGraph fg = b.build();
  try {
    evaluate(fg, {f64_vector({})});
    FAIL("expected a RuntimeFailure");
  } catch (const RuntimeFailure& e) {
    CHECK(contains(e.what(), "cannot reduce over axis 0, which has length 0"));
  }
  auto out = evaluate(fg, {f64_vector({1.0, 7.0, -2.0})});
  CHECK(out[0].data<double>()[0] == 7.0);
}

TEST_CASE("a reduction over no axes (\"axis\": []) converts each element, as PyTensor's axis=()") {
  // PyTensor's CAReduce(op, axis=()) and pt.sum(x, axis=[]) fold no element: NumPy's
  // ufunc.reduce(x, axis=()) returns x in the output dtype. An empty list is not null (all axes).
  const std::string i8mat = R"({"dtype": "int8", "shape": [null, 2]})";
  const std::string i64mat = R"({"dtype": "int64", "shape": [null, 2]})";
  const std::string f64mat = R"({"dtype": "float64", "shape": [null, 2]})";
  const std::string bmat = R"({"dtype": "bool", "shape": [null, 2]})";
  Array x = Array::empty(DType::Float64, {2, 2});
  const double xv[] = {-1.5, 0.0, 2.0, std::nan("")};
  for (int i = 0; i < 4; ++i) x.data<double>()[i] = xv[i];
  Array xi = Array::empty(DType::Int8, {2, 2});
  const std::int8_t xiv[] = {-128, 0, 7, 127};
  for (int i = 0; i < 4; ++i) xi.data<std::int8_t>()[i] = xiv[i];

  FunctionGraph sum8 = load_graph_text(one_node_graph("Sum", R"({"axis": []})", i8mat, i64mat), "");
  CHECK(sum8.outputs()[0]->type() == TensorType(DType::Int64, {-1, 2}));
  Array s = evaluate(sum8, {xi})[0];
  for (int i = 0; i < 4; ++i) CHECK(s.data<std::int64_t>()[i] == xiv[i]);
  // Named the way PyTensor's 2.x and 3.x spell it: CAReduce{add} and Max keep float64 values.
  for (const char* node : {R"("CAReduce", "props": {"scalar_op": "add", "axis": []})",
                           R"("Max", "props": {"axis": []})", R"("Prod", "props": {"axis": []})"}) {
    std::string text = one_node_graph("Sum", "{}", f64mat, f64mat);
    text.replace(text.find(R"("Sum", "props": {})"), std::string(R"("Sum", "props": {})").size(), node);
    Array y = evaluate(load_graph_text(text, ""), {x})[0];
    CHECK(y.shape() == Shape{2, 2});
    for (int i = 0; i < 3; ++i) CHECK(y.data<double>()[i] == xv[i]);
    CHECK(std::isnan(y.data<double>()[3]));
  }
  // Any: each element as a bool (NaN is true).
  Array a = evaluate(load_graph_text(one_node_graph("Any", R"({"axis": []})", f64mat, bmat), ""), {x})[0];
  const bool want[] = {true, false, true, true};
  for (int i = 0; i < 4; ++i) CHECK(a.data<bool>()[i] == want[i]);
  // A 0-d input: no axes and all axes are the same reduction.
  const std::string sca = R"({"dtype": "float64", "shape": []})";
  CHECK(load_error(one_node_graph("Sum", R"({"axis": []})", sca, sca)).empty());
}
