// Products: Dot, BatchedDot, the BLAS forms and Blockwise — type inference, printing, loader
// refusals (each naming its JSON pointer), the builder API and infer_shape.
#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/graph_builder.h"
#include "eval/evaluator.h"
#include "io/graph_load.h"
#include "io/graph_save.h"
#include "ir/error.h"
#include "ops/blas.h"
#include "ops/blockwise.h"
#include "ops/constant.h"
#include "ops/dimshuffle.h"
#include "ops/dot.h"
#include "ops/shape.h"

using namespace kiln;
using Json = nlohmann::json;

namespace {

Var in(DType dt, const Shape& shape) { return make_input(TensorType(dt, shape)); }

/// The message of the UserError that `f` throws ("" when it throws none).
template <typename F>
std::string error_of(F&& f) {
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

/// A C-contiguous array holding `values` (row-major) converted to dt.
Array arr(DType dt, const Shape& shape, const std::vector<double>& values) {
  Array a = Array::empty(dt, shape);
  REQUIRE(static_cast<std::int64_t>(values.size()) == a.size());
  visit_real_dtype(dt, [&](auto t) {
    using T = decltype(t);
    for (std::size_t i = 0; i < values.size(); ++i) a.data<T>()[i] = static_cast<T>(values[i]);
  });
  return a;
}

double at(const Array& a, std::int64_t flat) {
  Array c = a.contiguous();
  double v = 0;
  visit_real_dtype(c.dtype(), [&](auto t) { v = static_cast<double>(c.data<decltype(t)>()[flat]); });
  return v;
}

/// A one-node graph file: inputs x0, x1, ... of the given types, node `op` with `props`, one
/// output of type `out`.
std::string one_node_graph(const std::string& op, const Json& props,
                           const std::vector<Json>& input_types, const Json& out) {
  Json g = {{"format", "kiln-graph"}, {"version", 1}, {"name", "t"}};
  Json vars = Json::array(), ins = Json::array();
  for (std::size_t i = 0; i < input_types.size(); ++i) {
    vars.push_back({{"id", "x" + std::to_string(i)}, {"type", input_types[i]}});
    ins.push_back("x" + std::to_string(i));
  }
  vars.push_back({{"id", "out"}, {"type", out}});
  Json node = {{"op", op}, {"inputs", ins}, {"outputs", {"out"}}};
  if (!props.is_null()) node["props"] = props;
  g["variables"] = vars;
  g["nodes"] = Json::array({node});
  g["inputs"] = ins;
  g["outputs"] = {"out"};
  return g.dump();
}

Json ty(const std::string& dtype, const Json& shape) {
  return {{"dtype", dtype}, {"shape", shape}};
}

/// The UserError of loading `text` (its where() and full text), or fails the test.
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

Json blockwise_props(const std::string& core, const std::string& signature) {
  return {{"core_op", {{"op", core}, {"props", Json::object()}}}, {"signature", signature}};
}

/// Evaluates infer_shape of `out`'s node on the run-time shapes of `inputs` and compares it with
/// the shape `evaluate` actually produces.
void check_infer_shape(const Var& out, const VarList& inputs, const std::vector<Array>& values) {
  const Apply& node = *out->owner();
  std::vector<ShapeVars> in_shapes;
  for (const auto& v : node.inputs()) {
    ShapeVars dims;
    for (int d = 0; d < v->ndim(); ++d) dims.push_back(shape_i(v, d));
    in_shapes.push_back(dims);
  }
  const std::vector<ShapeVars> shapes = node.op().infer_shape(node, in_shapes);
  REQUIRE(shapes.size() == 1);
  VarList outs = {out};
  for (const auto& d : shapes[0]) outs.push_back(d);
  FunctionGraph fg(inputs, outs);
  auto result = evaluate(fg, values);
  REQUIRE(static_cast<int>(result.size()) == 1 + out->ndim());
  for (int d = 0; d < out->ndim(); ++d)
    CHECK(at(result[static_cast<std::size_t>(d + 1)], 0) == result[0].shape(d));
}

}  // namespace

TEST_CASE("Dot: output types follow np.dot's shapes and PyTensor's upcast") {
  auto t = [](DType a, const Shape& sa, DType b, const Shape& sb) {
    return apply1(std::make_shared<Dot>(), {in(a, sa), in(b, sb)})->type();
  };
  CHECK(t(f64, {4}, f64, {4}) == TensorType(f64, {}));
  CHECK(t(f32, {3, 4}, f32, {-1}) == TensorType(f32, {3}));
  CHECK(t(f64, {-1}, f64, {4, 2}) == TensorType(f64, {2}));
  CHECK(t(f64, {3, -1}, f64, {-1, 5}) == TensorType(f64, {3, 5}));
  CHECK(t(i32, {2, 2}, f32, {2, 2}).dtype == f64);
  CHECK(t(i8, {2}, u8, {2}).dtype == i16);
  CHECK(t(i32, {2}, i32, {2}).dtype == i32);
  CHECK(t(boolean, {2, 3}, boolean, {3}).dtype == boolean);
  CHECK(t(i8, {2}, f32, {2}).dtype == f32);
}

TEST_CASE("Dot: refuses ranks other than 1 and 2, naming the op and the input") {
  auto dot_of = [](const Shape& a, const Shape& b) {
    return error_of([&] { apply1(std::make_shared<Dot>(), {in(f64, a), in(f64, b)}); });
  };
  std::string e = dot_of({2, 3, 4}, {4});
  CHECK(contains(e, "Dot: input 0 must have rank 1 or 2"));
  CHECK(contains(e, "Tensor3"));
  CHECK(contains(dot_of({3}, {}), "Dot: input 1 must have rank 1 or 2"));
  CHECK(contains(dot_of({}, {3}), "Dot: input 0"));
  CHECK(contains(dot_of({2, 3}, {4, 2}), "inner dimensions do not match"));
  CHECK(contains(dot_of({3}, {4}), "inner dimensions do not match"));
  CHECK(dot_of({3}, {-1}).empty());
  CHECK(contains(error_of([] { apply1(std::make_shared<Dot>(), {in(f64, {3})}); }),
                 "takes 2 inputs"));
}

TEST_CASE("BatchedDot: 3-d operands, equal batch lengths, upcast") {
  auto bd = [](DType a, const Shape& sa, DType b, const Shape& sb) {
    return apply1(std::make_shared<BatchedDot>(), {in(a, sa), in(b, sb)})->type();
  };
  CHECK(bd(f32, {2, 3, 4}, f32, {-1, 4, 5}) == TensorType(f32, {2, 3, 5}));
  CHECK(bd(i16, {-1, 3, 4}, f32, {-1, -1, 5}) == TensorType(f32, {-1, 3, 5}));
  auto err = [](const Shape& a, const Shape& b) {
    return error_of([&] { apply1(std::make_shared<BatchedDot>(), {in(f64, a), in(f64, b)}); });
  };
  CHECK(contains(err({1, 3, 4}, {3, 4, 5}), "batch lengths differ"));
  CHECK(contains(err({2, 3, 4}, {2, 5, 5}), "inner dimensions do not match"));
  CHECK(contains(err({3, 4}, {2, 4, 5}), "BatchedDot: input 0 must have rank 3"));
}

TEST_CASE("BLAS forms: float dtypes only, the dtypes PyTensor ties together, ranks and lengths") {
  auto gemv_err = [](DType y, DType a, DType A, DType x, DType b, Shape sa = {},
                     Shape sA = {3, 4}) {
    return error_of([&] {
      apply1(std::make_shared<Gemv>(), {in(y, {3}), in(a, sa), in(A, sA), in(x, {4}), in(b, {})});
    });
  };
  CHECK(gemv_err(f64, f64, f64, f64, f64).empty());
  CHECK(gemv_err(f32, f64, f32, f32, f64).empty());  // PyTensor leaves a and b free
  CHECK(contains(gemv_err(i32, f64, i32, i32, f64),
                 "Gemv{no_inplace}: input 0 (y) must have a float dtype"));
  CHECK(contains(gemv_err(f32, f32, f64, f32, f32), "inputs y, A, x must have one dtype"));
  CHECK(contains(gemv_err(f64, f64, f64, f64, f64, {1}), "input 1 (a) must be a 0-d scalar"));
  CHECK(contains(gemv_err(f64, i64, f64, f64, f64), "input 1 (a) must have a float dtype"));
  CHECK(contains(gemv_err(f64, f64, f64, f64, f64, {}, {3, 5}),
                 "the columns of A and the length of x differ"));
  CHECK(contains(gemv_err(f64, f64, f64, f64, f64, {}, {2, 4}),
                 "the rows of A and the length of y differ"));

  auto gemm_err = [](DType z, DType a, Shape sx) {
    return error_of([&] {
      apply1(std::make_shared<Gemm>(),
             {in(z, {2, 3}), in(a, {}), in(f64, sx), in(f64, {4, 3}), in(f64, {})});
    });
  };
  CHECK(gemm_err(f64, f64, {2, 4}).empty());
  CHECK(contains(gemm_err(f64, f32, {2, 4}),
                 "Gemm{no_inplace}: inputs z, a, x, y, b must have one dtype"));
  CHECK(contains(gemm_err(f64, f64, {2, 5}), "the columns of x and the rows of y differ"));
  CHECK(contains(gemm_err(f64, f64, {4}), "input 2 (x) must be a matrix"));

  CHECK(contains(
      error_of([] {
        apply1(std::make_shared<Ger>(), {in(f32, {2, 3}), in(f64, {}), in(f32, {2}), in(f32, {3})});
      }),
      "Ger{non-destructive}: inputs A, a, x, y must have one dtype"));
  CHECK(contains(error_of([] {
                   apply1(std::make_shared<Ger>(true),
                          {in(i64, {2, 3}), in(i64, {}), in(i64, {2}), in(i64, {3})});
                 }),
                 "CGer{non-destructive}: input 0 (A) must have a float dtype"));
  CHECK(contains(error_of([] {
                   apply1(std::make_shared<Dot22>(), {in(f32, {2, 3}), in(f64, {3, 2})});
                 }),
                 "Dot22: inputs x, y must have one dtype"));
  CHECK(contains(error_of([] {
                   apply1(std::make_shared<Dot22>(), {in(f64, {3}), in(f64, {3, 2})});
                 }),
                 "Dot22: input 0 (x) must be a matrix"));
  CHECK(contains(
      error_of([] {
        apply1(std::make_shared<Dot22Scalar>(), {in(f64, {2, 3}), in(f64, {3, 2}), in(f32, {})});
      }),
      "Dot22Scalar: inputs x, y, a must have one dtype"));

  // Output types: the accumulated operand's type, sharpened by the others' static lengths.
  CHECK(gemv(in(f32, {-1}), in(f32, {}), in(f32, {3, -1}), in(f32, {-1}), in(f32, {}))->type() ==
        TensorType(f32, {3}));
  CHECK(
      gemm(in(f64, {-1, -1}), in(f64, {}), in(f64, {2, 3}), in(f64, {3, 5}), in(f64, {}))->type() ==
      TensorType(f64, {2, 5}));
  CHECK(ger(in(f64, {-1, 4}), in(f64, {}), in(f64, {2}), in(f64, {-1}))->type() ==
        TensorType(f64, {2, 4}));
  CHECK(dot22scalar(in(f32, {2, -1}), in(f32, {-1, 7}), in(f32, {}))->type() ==
        TensorType(f32, {2, 7}));
}

TEST_CASE("printing follows PyTensor") {
  CHECK(Dot().str() == "Dot");
  CHECK(BatchedDot().str() == "BatchedDot");
  CHECK(Gemv().str() == "Gemv{no_inplace}");
  CHECK(Gemv(true).str() == "CGemv{no_inplace}");
  CHECK(Gemm().str() == "Gemm{no_inplace}");
  CHECK(Ger().str() == "Ger{non-destructive}");
  CHECK(Ger(true).str() == "CGer{non-destructive}");
  CHECK(Dot22().str() == "Dot22");
  CHECK(Dot22Scalar().str() == "Dot22Scalar");
  CHECK(Blockwise(std::make_shared<Dot>(), "(m,k),(k,n)->(m,n)").str() ==
        "Blockwise{Dot, (m,k),(k,n)->(m,n)}");
  CHECK(Blockwise(std::make_shared<Dot>(), " ( m , k ) , (k) -> ( m ) ").str() ==
        "Blockwise{Dot, (m,k),(k)->(m)}");
  CHECK(Gemv(true).name() == "CGemv");
  CHECK(!Gemv(true).equals(Gemv(false)));
  CHECK(Blockwise(std::make_shared<Dot>(), "(k),(k)->()")
            .equals(Blockwise(std::make_shared<Dot>(), "(k), (k)->()")));
}

TEST_CASE("gufunc signatures: parsing and fitting the core op") {
  GufuncSignature s = GufuncSignature::parse("(m,k),(k,n)->(m,n)");
  REQUIRE(s.inputs.size() == 2);
  CHECK(s.inputs[1] == std::vector<std::string>{"k", "n"});
  CHECK(s.outputs[0] == std::vector<std::string>{"m", "n"});
  CHECK(GufuncSignature::parse("(n),(n)->()").outputs[0].empty());
  CHECK(GufuncSignature::parse("()->(),()").str() == "()->(),()");
  for (const char* bad : {"", "(m,k)(k,n)->(m,n)", "(m,k),(k,n)", "(m,,k),(k)->(m)",
                          "(m,k),(k)->(m", "m,k->m", "(m,k),(k)->(m)x", "(m-1),(k)->()"})
    CHECK_MESSAGE(
        contains(error_of([&] { GufuncSignature::parse(bad); }), "malformed gufunc signature"),
        bad);

  auto fit = [](const char* sig) {
    return error_of([&] { Blockwise(std::make_shared<Dot>(), sig); });
  };
  CHECK(fit("(m,k),(k,n)->(m,n)").empty());
  CHECK(fit("(k),(k,n)->(n)").empty());
  CHECK(contains(fit("(m,k,j),(k,n)->(m,n)"), "input 0 of Dot must have 1 or 2 core dimensions"));
  CHECK(contains(fit("(m,k),(j,n)->(m,n)"), "the contracted dimension must have one name"));
  CHECK(contains(fit("(m,k),(k,n)->(n,m)"), "the output of Dot must be (m,n)"));
  CHECK(contains(fit("(m,k),(k,n),(n)->(m,n)"), "Dot takes 2 inputs and gives 1 output"));
  CHECK(contains(error_of([] { Blockwise(std::make_shared<Dot22>(), "(k),(k,n)->(n)"); }),
                 "input 0 of Dot22 must have 2 core dimensions"));
  try {
    Blockwise(std::make_shared<Gemv>(), "(m),(),(m,n),(n),()->(m)");
    FAIL("expected NotImplementedError");
  } catch (const NotImplementedError& e) {
    CHECK(contains(e.what(), "Blockwise with core op Gemv{no_inplace} is not implemented yet"));
  }
}

TEST_CASE("Blockwise: type inference broadcasts statically-1 batch dimensions") {
  auto bw = [](const Shape& a, const Shape& b, const char* sig = "(m,k),(k,n)->(m,n)") {
    return apply1(std::make_shared<Blockwise>(std::make_shared<Dot>(), sig),
                  {in(f32, a), in(i8, b)})
        ->type();
  };
  CHECK(bw({1, 3, 4}, {5, 4, 2}) == TensorType(f32, {5, 3, 2}));
  CHECK(bw({-1, 3, 4}, {1, -1, 2}) == TensorType(f32, {-1, 3, 2}));
  CHECK(bw({1, 3, 4}, {-1, 4, 2}) == TensorType(f32, {-1, 3, 2}));
  CHECK(bw({2, 1, 3, -1}, {1, 6, 4, 2}) == TensorType(f32, {2, 6, 3, 2}));
  CHECK(bw({2, 3, 4}, {2, 4}, "(m,k),(k)->(m)") == TensorType(f32, {2, 3}));
  auto err = [](const Shape& a, const Shape& b) {
    return error_of([&] {
      apply1(std::make_shared<Blockwise>(std::make_shared<Dot>(), "(m,k),(k,n)->(m,n)"),
             {in(f64, a), in(f64, b)});
    });
  };
  CHECK(contains(err({2, 3, 4}, {3, 4, 2}), "incompatible batch shapes"));
  CHECK(contains(err({2, 3, 4}, {2, 5, 2}), "core dimension 'k' has static length 4"));
  CHECK(contains(err({3, 4}, {2, 4, 2}), "input 1 has 1 batch dimensions but input 0 has 0"));
  CHECK(contains(err({4}, {2, 4, 2}),
                 "input 0 has rank 1 but the signature gives it 2 core dimensions"));
  CHECK(contains(err({2, 3, 4}, {2, 5, 2}), "Blockwise{Dot, (m,k),(k,n)->(m,n)}"));
}

TEST_CASE("loader: Blockwise props are checked and errors name the JSON pointer") {
  const Json x = ty("float64", {2, 3, 4}), y = ty("float64", {2, 4, 5}),
             o = ty("float64", {2, 3, 5});
  auto load = [&](const Json& props) {
    return load_error(one_node_graph("Blockwise", props, {x, y}, o));
  };

  CHECK_NOTHROW(load_graph_text(
      one_node_graph("Blockwise", blockwise_props("Dot", "(m,k),(k,n)->(m,n)"), {x, y}, o), ""));

  LoadError e = load(blockwise_props("Dot", "(m,k),(k,n)->(m,n"));
  CHECK(e.where == "/nodes/0/props/signature");
  CHECK(contains(e.what, "malformed gufunc signature"));
  e = load(blockwise_props("Dot", "(m,k,j),(k,n)->(m,n)"));
  CHECK(e.where == "/nodes/0/props/signature");
  CHECK(contains(e.what, "does not fit core op Dot"));
  e = load(blockwise_props("Dot", "(m,k),(k,n)->(m)"));
  CHECK(e.where == "/nodes/0/props/signature");
  e = load(blockwise_props("Dot", "(m,k),(k,n),(n)->(m,n)"));
  CHECK(e.where == "/nodes/0/props/signature");

  // A core op kiln does not loop is batched by its own rule (blockwise_by_vectorize); the
  // node must still fit the signature, and the core op's props are checked as on a node.
  e = load(blockwise_props("Softmax", "(n)->(n)"));
  CHECK(!e.not_implemented);
  CHECK(e.where == "/nodes/0/props/signature");
  CHECK(contains(e.what, "has 1 input(s), the node 2"));
  e = load(blockwise_props("Elemwise", "(),()->()"));
  CHECK(!e.not_implemented);
  CHECK(e.where == "/nodes/0/props/core_op/props/scalar_op");
  e = load(blockwise_props("NoSuchOp", "(m,k),(k,n)->(m,n)"));
  CHECK(!e.not_implemented);
  CHECK(e.where == "/nodes/0/props/core_op/op");

  Json p = blockwise_props("Dot", "(m,k),(k,n)->(m,n)");
  p["core_op"]["props"]["bogus"] = 1;
  CHECK(load(p).where == "/nodes/0/props/core_op/props/bogus");
  p = blockwise_props("Dot", "(m,k),(k,n)->(m,n)");
  p["core_op"]["extra"] = 1;
  CHECK(load(p).where == "/nodes/0/props/core_op/extra");
  p = blockwise_props("Dot", "(m,k),(k,n)->(m,n)");
  p["core_op"] = "Dot";
  CHECK(load(p).where == "/nodes/0/props/core_op");
  p = blockwise_props("Dot", "(m,k),(k,n)->(m,n)");
  p["signature"] = 3;
  CHECK(load(p).where == "/nodes/0/props/signature");
  p["signature"] = "(m,k),(k,n)->(m,n)";
  p["bogus"] = true;
  CHECK(load(p).where == "/nodes/0/props/bogus");

  // Input problems are the node's: a batch rank mismatch, a declared type that disagrees.
  e = load_error(one_node_graph("Blockwise", blockwise_props("Dot", "(m,k),(k,n)->(m,n)"),
                                {ty("float64", {3, 4}), y}, o));
  CHECK(e.where == "/nodes/0");
  e = load_error(one_node_graph("Blockwise", blockwise_props("Dot", "(m,k),(k,n)->(m,n)"), {x, y},
                                ty("float32", {2, 3, 5})));
  CHECK(e.where == "/nodes/0/outputs/0");
}

TEST_CASE("loader: products, in-place props accepted and ignored, spellings kept") {
  const Json v = ty("float64", {3}), m = ty("float64", {3, 4}), s = ty("float64", Json::array());
  std::string text =
      one_node_graph("CGemv", {{"inplace", true}}, {v, s, m, ty("float64", {4}), s}, v);
  FunctionGraph fg = load_graph_text(text, "");
  CHECK(fg.outputs()[0]->owner()->op().str() == "CGemv{no_inplace}");
  std::string saved = save_graph_text(fg);
  CHECK(contains(saved, "\"CGemv\""));
  CHECK(save_graph_text(load_graph_text(saved, "")) == saved);

  CHECK_NOTHROW(load_graph_text(
      one_node_graph("CGer", {{"destructive", true}},
                     {ty("float64", {3, 4}), s, v, ty("float64", {4})}, ty("float64", {3, 4})),
      ""));
  LoadError e =
      load_error(one_node_graph("Gemv", {{"inplace", 3}}, {v, s, m, ty("float64", {4}), s}, v));
  CHECK(e.where == "/nodes/0/props/inplace");
  e = load_error(one_node_graph("Dot", {{"axis", 0}}, {m, ty("float64", {4})}, v));
  CHECK(e.where == "/nodes/0/props/axis");
  e = load_error(one_node_graph("Dot", Json(), {ty("float64", {2, 3, 4}), ty("float64", {4})}, v));
  CHECK(e.where == "/nodes/0");
  CHECK(contains(e.what, "Dot: input 0 must have rank 1 or 2"));
  e = load_error(one_node_graph("Gemm", Json(),
                                {m, s, m, ty("float64", {4, 4}), ty("float32", Json::array())}, m));
  CHECK(e.where == "/nodes/0");
  CHECK(contains(e.what, "must have one dtype"));
  e = load_error(one_node_graph("Dot", Json(), {m, ty("float64", {4})}, ty("float64", {4})));
  CHECK(e.where == "/nodes/0/outputs/0");
}

TEST_CASE("builders: dot, matmul, batched_dot, outer") {
  GraphBuilder g("products");
  Var a = g.input("a", f64, {2, 3});
  Var b = g.input("b", f64, {3, -1});
  Var v = g.input("v", f64, {3});
  Var s = g.input("s", f64, {});
  Var batch = g.input("batch", f64, {4, 1, 3, 2});  // matmul(a, batch): a is left-padded

  Var d = dot(a, b);
  CHECK(d->owner()->op().name() == "Dot");
  Var ds = dot(s, v);
  CHECK(ds->owner()->op().name() == "Elemwise");
  Var mm = matmul(a, batch);
  CHECK(mm->owner()->op().str() == "Blockwise{Dot, (m,k),(k,n)->(m,n)}");
  CHECK(mm->type() == TensorType(f64, {4, 1, 2, 2}));
  CHECK(matmul(v, b)->owner()->op().name() == "Dot");
  Var vm = matmul(v, batch);
  CHECK(vm->owner()->op().str() == "Blockwise{Dot, (k),(k,n)->(n)}");
  CHECK(vm->type() == TensorType(f64, {4, 1, 2}));
  CHECK(contains(error_of([&] { matmul(s, v); }), "matmul: operands must have rank 1 or more"));
  Var o = outer(v, v);
  CHECK(o->type() == TensorType(f64, {3, 3}));
  CHECK(contains(error_of([&] { dot(batch, v); }), "Dot: input 0 must have rank 1 or 2"));

  Var x3 = g.input("x3", f32, {2, 3, 4});
  Var y3 = g.input("y3", f32, {2, 4, 5});
  Var x2 = g.input("x2", f32, {2, 4});
  CHECK(batched_dot(x3, y3)->owner()->op().name() == "BatchedDot");
  CHECK(batched_dot(x2, y3)->owner()->op().str() == "Blockwise{Dot, (k),(k,n)->(n)}");
  CHECK(batched_dot(x2, x2)->type() == TensorType(f32, {2}));

  g.output(d, "d");
  g.output(ds, "ds");
  g.output(mm, "mm");
  g.output(o, "o");
  g.output(vm, "vm");
  FunctionGraph fg = g.build();
  fg.verify();
  Array av = arr(f64, {2, 3}, {1, 2, 3, 4, 5, 6});
  Array bv = arr(f64, {3, 2}, {1, 0, 0, 1, 1, 1});
  Array vv = arr(f64, {3}, {1, -1, 2});
  Array sv = arr(f64, {}, {2});
  std::vector<double> bt(24);
  for (std::size_t i = 0; i < bt.size(); ++i) bt[i] = static_cast<double>(i);
  Array batch_v = arr(f64, {4, 1, 3, 2}, bt);
  auto out = evaluate(fg, {av, bv, vv, sv, batch_v, Array::zeros(f32, {2, 3, 4}),
                           Array::zeros(f32, {2, 4, 5}), Array::zeros(f32, {2, 4})});
  CHECK(out[0].shape() == Shape{2, 2});
  CHECK(at(out[0], 0) == 4);   // 1 + 3
  CHECK(at(out[0], 3) == 11);  // 5 + 6
  CHECK(at(out[1], 2) == 4);   // 2 * 2
  // mm[b, 0] = a @ batch[b, 0]; batch 3, (0, 0): sum_k a[0, k] * batch[3, 0, k, 0] = 1*18 + 2*20 +
  // 3*22
  CHECK(out[2].shape() == Shape{4, 1, 2, 2});
  CHECK(at(out[2], 12) == 18 + 40 + 66);
  CHECK(at(out[3], 1) == -1);         // outer: v[0] * v[1]
  CHECK(at(out[4], 0) == 0 - 2 + 8);  // v @ batch[0, 0][:, 0] = 1*0 - 1*2 + 2*4
}

TEST_CASE("builders: BLAS forms evaluate, and b = 0 never reads y / z") {
  GraphBuilder g("blas");
  Var y = g.input("y", f64, {2});
  Var A = g.input("A", f64, {2, 3});
  Var x = g.input("x", f64, {3});
  Var z = g.input("z", f64, {2, 2});
  Var B = g.input("B", f64, {3, 2});
  Var zero = scalar_constant(f64, 0.0), two = scalar_constant(f64, 2.0),
      half = scalar_constant(f64, 0.5);
  g.output(gemv(y, two, A, x, zero), "gemv_b0");
  g.output(gemv(y, two, A, x, half), "gemv");
  g.output(gemm(z, two, A, B, zero), "gemm_b0");
  g.output(gemm(z, two, A, B, half), "gemm");
  g.output(ger(A, two, y, x), "ger");
  g.output(dot22(A, B), "dot22");
  g.output(dot22scalar(A, B, half), "dot22scalar");
  FunctionGraph fg = g.build();
  const double nan = std::nan("");
  Array yv = arr(f64, {2}, {nan, nan});
  Array Av = arr(f64, {2, 3}, {1, 2, 3, 4, 5, 6});
  Array xv = arr(f64, {3}, {1, 0, -1});
  Array zv = arr(f64, {2, 2}, {nan, nan, nan, nan});
  Array Bv = arr(f64, {3, 2}, {1, 0, 0, 1, 1, 1});
  auto out = evaluate(fg, {yv, Av, xv, zv, Bv});
  CHECK(at(out[0], 0) == -4);  // 2 * (1 - 3)
  CHECK(at(out[0], 1) == -4);
  CHECK(std::isnan(at(out[1], 0)));  // b != 0 reads the NaN
  CHECK(at(out[2], 0) == 8);         // 2 * (1 + 3)
  CHECK(at(out[2], 3) == 22);        // 2 * (5 + 6)
  CHECK(std::isnan(at(out[3], 0)));
  CHECK(std::isnan(at(out[4], 0)));  // Ger always reads A + ...: A is finite, y is NaN
  CHECK(at(out[5], 1) == 5);
  CHECK(at(out[6], 1) == 2.5);

  // Non-contiguous operands through the same loops.
  Array At = arr(f64, {3, 2}, {1, 4, 2, 5, 3, 6});
  Array Aview = At.view({2, 3}, {1, 2});
  auto again = evaluate(fg, {yv, Aview, xv, zv, Bv});
  CHECK(at(again[0], 1) == -4);
  CHECK(at(again[5], 3) == 11);
}

TEST_CASE("infer_shape matches the shapes perform produces") {
  Var a = in(f64, {-1, -1}), b = in(f64, {-1, -1}), v = in(f64, {-1}), w = in(f64, {-1});
  Array av = Array::zeros(f64, {2, 3}), bv = Array::zeros(f64, {3, 4}), vv = Array::zeros(f64, {3}),
        wv = Array::zeros(f64, {2});
  check_infer_shape(dot(a, b), {a, b}, {av, bv});
  check_infer_shape(dot(a, v), {a, v}, {av, vv});
  check_infer_shape(dot(w, a), {w, a}, {wv, av});
  check_infer_shape(dot(v, v), {v}, {vv});
  Var s = in(f64, {});
  Array sv = Array::zeros(f64, {});
  check_infer_shape(gemv(w, s, a, v, s), {w, s, a, v}, {wv, sv, av, vv});
  Var z = in(f64, {-1, -1});
  check_infer_shape(gemm(z, s, a, b, s), {z, s, a, b}, {Array::zeros(f64, {2, 4}), sv, av, bv});
  check_infer_shape(ger(a, s, w, v), {a, s, w, v}, {av, sv, wv, vv});
  check_infer_shape(dot22(a, b), {a, b}, {av, bv});
  check_infer_shape(dot22scalar(a, b, s), {a, b, s}, {av, bv, sv});
  Var x3 = in(f32, {-1, -1, -1}), y3 = in(f32, {-1, -1, -1});
  Array x3v = Array::zeros(f32, {2, 3, 4}), y3v = Array::zeros(f32, {2, 4, 5});
  check_infer_shape(batched_dot(x3, y3), {x3, y3}, {x3v, y3v});
  Var one = in(f32, {1, -1, -1});
  check_infer_shape(matmul(one, y3), {one, y3}, {Array::zeros(f32, {1, 2, 4}), y3v});
  check_infer_shape(matmul(x3, v), {x3, v}, {x3v, Array::zeros(f64, {4})});
}

TEST_CASE("run-time failures name the problem") {
  GraphBuilder g("fail");
  Var a = g.input("a", f64, {-1, -1});
  Var b = g.input("b", f64, {-1, -1, -1});
  g.output(matmul(a, b));
  FunctionGraph fg = g.build();
  std::string e = error_of([&] {
    evaluate(fg, {Array::zeros(f64, {2, 3}), Array::zeros(f64, {2, 4, 2})});
  });
  CHECK(contains(e, "core dimension 'k' has length 3 in input 0 but 4 in input 1"));
  CHECK(contains(e, "Blockwise{Dot, (m,k),(k,n)->(m,n)}"));
}
