// Shape-building and checking ops (Reshape, SpecifyShape, Alloc, AllocEmpty, MakeVector, Join,
// Split, ARange, Eye, Tri, ExtractDiag, AllocDiag, CheckAndRaise, Assert): type inference and
// its refusals, printing, loader refusals of bad props (naming the JSON pointer), the builder
// API, infer_shape, and saving/reloading.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/elementwise.h"
#include "api/graph_builder.h"
#include "eval/evaluator.h"
#include "io/graph_load.h"
#include "io/graph_save.h"
#include "ir/error.h"
#include "kiln/runtime/scalar_math.hpp"
#include "ops/alloc.h"
#include "ops/array_util.h"
#include "ops/assert.h"
#include "ops/constant.h"
#include "ops/diag.h"
#include "ops/join.h"
#include "ops/reshape.h"
#include "ops/shape.h"

using namespace kiln;
using Json = nlohmann::json;

namespace {

Var in(DType dt, const Shape& shape, const std::string& name = "") {
  return make_input(TensorType(dt, shape), name);
}

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

Array arr(DType dt, const Shape& shape, const std::vector<double>& values) {
  Array a = Array::empty(dt, shape);
  REQUIRE(static_cast<std::int64_t>(values.size()) == a.size());
  visit_real_dtype(dt, [&](auto t) {
    using T = decltype(t);
    for (std::size_t i = 0; i < values.size(); ++i)
      a.data<T>()[i] = kiln_scalar::convert<T>(values[i]);
  });
  return a;
}

Array scalar(DType dt, double v) { return make_scalar_array(dt, v); }

std::vector<double> values(const Array& a) {
  std::vector<double> out;
  a.for_each_index([&](const std::int64_t* idx) { out.push_back(element_as_double(a, idx)); });
  return out;
}

/// Evaluates `outputs` of a graph with the given inputs.
std::vector<Array> run(const VarList& inputs, const VarList& outputs,
                       const std::vector<Array>& values) {
  FunctionGraph fg(inputs, outputs);
  return evaluate(fg, values);
}

/// Checks that the op's infer_shape of `out`'s node, evaluated on `values`, gives the shapes of
/// the node's actual outputs.
void check_infer_shape(const Var& out, const VarList& inputs, const std::vector<Array>& vals) {
  Apply* node = out->owner();
  REQUIRE(node);
  std::vector<ShapeVars> in_shapes;
  for (const auto& i : node->inputs()) {
    ShapeVars dims;
    for (int d = 0; d < i->ndim(); ++d) dims.push_back(shape_i(i, d));
    in_shapes.push_back(dims);
  }
  std::vector<ShapeVars> shapes = output_shapes(*node, in_shapes);
  REQUIRE(static_cast<int>(shapes.size()) == node->num_outputs());
  VarList outs;
  for (int k = 0; k < node->num_outputs(); ++k) {
    REQUIRE(static_cast<int>(shapes[static_cast<std::size_t>(k)].size()) ==
            node->output(k)->ndim());
    outs.push_back(node->output(k));
    for (const auto& d : shapes[static_cast<std::size_t>(k)]) {
      CHECK(d->dtype() == DType::Int64);
      CHECK(d->ndim() == 0);
      outs.push_back(d);
    }
  }
  std::vector<Array> got = run(inputs, outs, vals);
  std::size_t pos = 0;
  for (int k = 0; k < node->num_outputs(); ++k) {
    const Array& actual = got[pos++];
    for (int d = 0; d < actual.ndim(); ++d)
      CHECK_MESSAGE(scalar_to_int64(got[pos++]) == actual.shape(d), "output " << k << " dim " << d);
  }
}

/// A one-node graph file: inputs x0, x1, ... of the given types (constants where `consts` has
/// a value), node `op` with `props`, outputs of the given types.
std::string one_node_graph(const std::string& op, const Json& props,
                           const std::vector<Json>& input_types, const std::vector<Json>& out_types,
                           const std::vector<Json>& consts = {}) {
  Json g = {{"format", "kiln-graph"}, {"version", 1}, {"name", "t"}};
  Json vars = Json::array(), node_ins = Json::array(), graph_ins = Json::array(),
       outs = Json::array();
  for (std::size_t i = 0; i < input_types.size(); ++i) {
    Json v = {{"id", "x" + std::to_string(i)}, {"type", input_types[i]}};
    if (i < consts.size() && !consts[i].is_null())
      v["value"] = consts[i];
    else
      graph_ins.push_back("x" + std::to_string(i));
    vars.push_back(v);
    node_ins.push_back("x" + std::to_string(i));
  }
  for (std::size_t k = 0; k < out_types.size(); ++k) {
    vars.push_back({{"id", "o" + std::to_string(k)}, {"type", out_types[k]}});
    outs.push_back("o" + std::to_string(k));
  }
  Json node = {{"op", op}, {"inputs", node_ins}, {"outputs", outs}};
  if (!props.is_null()) node["props"] = props;
  g["variables"] = vars;
  g["nodes"] = Json::array({node});
  g["inputs"] = graph_ins;
  g["outputs"] = outs;
  return g.dump();
}

Json ty(const std::string& dtype, const Json& shape) {
  return {{"dtype", dtype}, {"shape", shape}};
}

std::string load_error(const std::string& text) {
  return error_of([&] { load_graph_text(text, ""); });
}

const Json kNull = nullptr;

}  // namespace

TEST_CASE("shape ops print as PyTensor does") {
  CHECK(Reshape(2).str() == "Reshape{2}");
  CHECK(SpecifyShape().str() == "SpecifyShape");
  CHECK(Alloc().str() == "Alloc");
  CHECK(AllocEmpty(DType::Float64).str() == "AllocEmpty{dtype='float64'}");
  CHECK(MakeVector().str() == "MakeVector{dtype='int64'}");
  CHECK(Join().str() == "Join");
  CHECK(Split(2).str() == "Split{2}");
  CHECK(ARange(DType::Int64).str() == "ARange{dtype='int64'}");
  CHECK(EyeLike(EyeLike::Kind::Eye, DType::Float64).str() == "Eye{dtype='float64'}");
  CHECK(EyeLike(EyeLike::Kind::Tri, DType::Int8).str() == "Tri{dtype='int8'}");
  CHECK(ExtractDiag(0, 0, 1).str() == "ExtractDiag{offset=0, axis1=0, axis2=1, view=True}");
  CHECK(ExtractDiag(2, 2, 0).str() == "ExtractDiag{offset=-2, axis1=0, axis2=2, view=True}");
  CHECK(AllocDiag(1, 0, 2).str() == "AllocDiag{self.axis1=0, self.axis2=2, self.offset=1}");
  CHECK(CheckAndRaise("bad", "ValueError").str() == "CheckAndRaise{raises=ValueError, msg='bad'}");
  CHECK(Assert("x").str() == "Assert{msg='x'}");
  // Messages longer than 30 characters are cut to 27 and "..." (counted in code points).
  CHECK(Assert("0123456789012345678901234567890").str() ==
        "Assert{msg='012345678901234567890123456...'}");
  CHECK(Assert("\xc3\xa9"
               "23456789012345678901234567890")
            .str() ==
        "Assert{msg='\xc3\xa9"
        "23456789012345678901234567890'}");
}

TEST_CASE("Reshape: type inference") {
  auto x = in(DType::Float64, {2, 3, 4});
  CHECK(reshape(x, {4, -1})->type() == TensorType(DType::Float64, {4, 6}));
  CHECK(reshape(x, {-1})->type() == TensorType(DType::Float64, {24}));
  auto y = in(DType::Int8, {-1, 3});
  CHECK(reshape(y, {-1, 3})->type() == TensorType(DType::Int8, {-1, 3}));
  auto n = in(DType::Int32, {});
  CHECK(reshape(y, {n, 2})->type() == TensorType(DType::Int8, {-1, 2}));  // through MakeVector
  CHECK(reshape(x, {n, 2, -1})->type().shape == Shape{-1, 2, -1});
  CHECK(reshape(x, {2, n, 4})->type().shape == Shape{2, 3, 4});  // the one unknown is deduced
  auto s = in(DType::Int64, {-1});
  CHECK(reshape(x, s, 2)->type().shape == Shape{-1, -1});
  // A 0-d result from an empty constant shape, whatever its dtype (PyTensor accepts that too).
  auto one = in(DType::Float32, {1, 1});
  Var empty_float = make_constant(Array::empty(DType::Float64, {0}));
  CHECK(reshape(one, empty_float, 0)->type() == TensorType(DType::Float32, {}));

  CHECK(contains(error_of([&] {
                   reshape(x, make_constant(arr(DType::UInt8, {2}, {4, 6})), 2);
                 }),
                 "Shape must be integers; got uint8"));
  CHECK(contains(error_of([&] { reshape(x, in(DType::Float64, {2}), 2); }),
                 "Shape must be integers"));
  CHECK(contains(error_of([&] { reshape(x, in(DType::Int64, {3}), 2); }),
                 "has length 3, should be 2"));
  CHECK(contains(error_of([&] { reshape(x, in(DType::Int64, {2, 2}), 2); }), "1-d integer vector"));
  CHECK(contains(error_of([&] { reshape(x, {-1, -1}); }), "only specify one unknown dimension"));
  CHECK(contains(error_of([&] { reshape(x, {5, 5}); }), "incompatible with the new shape"));
  CHECK(contains(error_of([&] { reshape(x, s); }), "must be known statically"));
}

TEST_CASE("Reshape: evaluation, views and infer_shape") {
  auto x = in(DType::Int32, {-1, -1});
  auto s = in(DType::Int64, {-1});
  auto y = reshape(x, s, 2);
  Array xv = arr(DType::Int32, {2, 3}, {0, 1, 2, 3, 4, 5});
  Array transposed = xv.view({3, 2}, {1, 3});  // non-contiguous
  auto out = run({x, s}, {y}, {transposed, arr(DType::Int64, {2}, {-1, 3})});
  CHECK(out[0].shape() == Shape{2, 3});
  CHECK(values(out[0]) == std::vector<double>{0, 3, 1, 4, 2, 5});
  check_infer_shape(y, {x, s}, {xv, arr(DType::Int64, {2}, {3, -1})});
  // A contiguous input is reshaped without a copy (view_map {0: [0]}).
  auto r = run({x, s}, {y}, {xv, arr(DType::Int64, {2}, {3, 2})});
  CHECK(r[0].data() == xv.data());
  CHECK(Reshape(2).view_map() == IndexMap{{0, {0}}});

  auto n = in(DType::Int64, {});
  auto z = reshape(x, {n, -1});
  check_infer_shape(z, {x, n}, {xv, make_int64_scalar(3)});
  auto z3 = reshape(x, {n, 3});  // a MakeVector entry that is -1 at run time
  check_infer_shape(z3, {x, n}, {xv, make_int64_scalar(-1)});
  check_infer_shape(z3, {x, n}, {xv, make_int64_scalar(2)});
  auto c = reshape(x, {-1, 2});
  check_infer_shape(c, {x}, {xv});
  auto scalar_in = in(DType::Float64, {});
  check_infer_shape(reshape(scalar_in, {1, 1}), {scalar_in},
                    {make_scalar_array(DType::Float64, 2.5)});

  CHECK(contains(error_of([&] {
                   run({x, s}, {y}, {xv, arr(DType::Int64, {2}, {4, 4})});
                 }),
                 "cannot reshape array of size 6 into shape (4, 4)"));
  CHECK(contains(error_of([&] {
                   run({x, s}, {y}, {xv, arr(DType::Int64, {2}, {-1, -1})});
                 }),
                 "one unknown dimension"));
}

TEST_CASE("SpecifyShape: type inference, checks and infer_shape") {
  auto x = in(DType::Float32, {-1, 3, -1});
  auto n = in(DType::UInt8, {});
  auto y = specify_shape(x, {2, -1, n});
  CHECK(y->type() == TensorType(DType::Float32, {2, 3, -1}));
  CHECK(y->owner()->op().str() == "SpecifyShape");
  CHECK(specify_shape(x, {-1, 3, -1}) == x);  // nothing new: no node
  CHECK(contains(error_of([&] {
                   specify_shape(x, {2, 3});
                 }),
                 "will never match a shape of length 2"));
  CHECK(contains(error_of([&] { specify_shape(x, {2, 4, 1}); }), "static length 3"));
  CHECK(contains(error_of([&] { specify_shape(x, {2, -2, 1}); }), "negative"));
  CHECK(contains(error_of([&] {
                   apply1(std::make_shared<SpecifyShape>(), {x, in(DType::Float64, {}), n, n});
                 }),
                 "must be a 0-d integer"));

  Array xv = Array::zeros(DType::Float32, {2, 3, 4});
  auto out = run({x, n}, {y}, {xv, scalar(DType::UInt8, 4)});
  CHECK(out[0].data() == xv.data());  // a view
  check_infer_shape(y, {x, n}, {xv, scalar(DType::UInt8, 4)});
  std::string err = error_of([&] { run({x, n}, {y}, {xv, scalar(DType::UInt8, 5)}); });
  CHECK(contains(err, "SpecifyShape: got shape (2, 3, 4), expected (2, None, 5)"));
}

TEST_CASE("Alloc and AllocEmpty") {
  auto v = in(DType::Int16, {-1});
  auto n = in(DType::Int32, {});
  CHECK(alloc(v, {2, n})->type() == TensorType(DType::Int16, {2, -1}));
  CHECK(alloc(v, {2, 3})->type() == TensorType(DType::Int16, {2, 3}));
  auto b = in(DType::Float64, {1});
  CHECK(alloc(b, {2, 5})->type() == TensorType(DType::Float64, {2, 5}));
  CHECK(alloc(b, {2, n})->type() == TensorType(DType::Float64, {2, -1}));
  auto s = in(DType::Bool, {3});
  CHECK(alloc(s, {n, n})->type() == TensorType(DType::Bool, {-1, 3}));
  CHECK(contains(error_of([&] { alloc(s, {4}); }), "cannot be broadcast"));
  CHECK(contains(error_of([&] {
                   alloc(in(DType::Float64, {2, 2}), {4});
                 }),
                 "rank 2 but only 1 lengths"));
  CHECK(contains(error_of([&] { alloc(v, {in(DType::Float64, {})}); }), "must be a 0-d integer"));
  CHECK(contains(error_of([&] { alloc(v, {in(DType::Bool, {})}); }), "must be a 0-d integer"));
  CHECK(contains(error_of([&] { alloc(v, {-3}); }), "negative"));

  auto y = alloc(v, {2, n});
  Array vv = arr(DType::Int16, {3}, {1, 2, 3});
  auto out = run({v, n}, {y}, {vv, scalar(DType::Int32, 3)});
  CHECK(values(out[0]) == std::vector<double>{1, 2, 3, 1, 2, 3});
  check_infer_shape(y, {v, n}, {vv, scalar(DType::Int32, 3)});
  CHECK(contains(error_of([&] {
                   run({v, n}, {y}, {arr(DType::Int16, {1}, {7}), scalar(DType::Int32, 3)});
                 }),
                 "Runtime broadcasting not allowed"));
  CHECK_FALSE(y->owner()->op().do_constant_folding(*y->owner()));

  auto e = alloc_empty(DType::Float32, {n, 2});
  CHECK(e->type() == TensorType(DType::Float32, {-1, 2}));
  auto eo = run({n}, {e}, {scalar(DType::Int32, 2)});
  CHECK(values(eo[0]) == std::vector<double>{0, 0, 0, 0});
  CHECK_FALSE(e->owner()->op().do_constant_folding(*e->owner()));
  check_infer_shape(e, {n}, {scalar(DType::Int32, 2)});
}

TEST_CASE("MakeVector: upcasting inputs only") {
  auto a = in(DType::Int8, {});
  auto b = in(DType::Int32, {});
  auto v = make_vector({a, b});  // dtype from the inputs: int32
  CHECK(v->type() == TensorType(DType::Int32, {2}));
  CHECK(make_vector({a, b}, DType::Int64)->type() == TensorType(DType::Int64, {2}));
  CHECK(make_vector({})->type() == TensorType(DType::Int64, {0}));
  CHECK(contains(error_of([&] { make_vector({in(DType::Float64, {})}, DType::Int64); }),
                 "does not upcast to int64 (it would give float64)"));
  CHECK(contains(error_of([&] { make_vector({in(DType::UInt64, {})}, DType::Int64); }),
                 "does not upcast"));
  CHECK(contains(error_of([&] { make_vector({in(DType::Int64, {2})}); }), "must be 0-d"));
  auto out = run({a, b}, {make_vector({a, b}, DType::Float64)},
                 {scalar(DType::Int8, -3), scalar(DType::Int32, 7)});
  CHECK(out[0].dtype() == DType::Float64);
  CHECK(values(out[0]) == std::vector<double>{-3, 7});
}

TEST_CASE("Join: type inference, run-time axis and infer_shape") {
  auto x = in(DType::Int8, {2, -1});
  auto y = in(DType::Float32, {-1, 3});
  auto j = join(0, {x, y});
  CHECK(j->type() == TensorType(DType::Float32, {-1, 3}));
  CHECK(concatenate({x, y}, 1)->type() == TensorType(DType::Float32, {2, -1}));
  auto p = in(DType::Int64, {2, 3});
  auto q = in(DType::Int64, {4, 3});
  CHECK(join(0, {p, q})->type() == TensorType(DType::Int64, {6, 3}));
  // A literal axis makes PyTensor 3.x's Join{axis}, normalised (tensors only as inputs).
  CHECK(static_cast<const Join&>(join(-2, {p, q})->owner()->op()).axis() == 0);
  CHECK(join(-2, {p, q})->owner()->op().str() == "Join{axis=0}");
  CHECK(join(-2, {p, q})->owner()->num_inputs() == 2);
  CHECK(join(0, {p}) == p);  // a single tensor is returned as is
  CHECK(contains(error_of([&] { join(1, {p, q}); }), "the static lengths differ"));
  CHECK(contains(error_of([&] { join(2, {p, q}); }), "out of bounds"));
  CHECK(contains(
      error_of([&] {
        join(0, {p, in(DType::Int64, {3})});
      }),
      "Only tensors with the same number of dimensions can be joined. Input ndims were: [2, 1]"));
  CHECK(contains(error_of([&] {
                   join(0, {in(DType::Int64, {}), in(DType::Int64, {})});
                 }),
                 "cannot join 0-d"));
  CHECK(contains(error_of([&] { join(in(DType::UInt8, {}), {p, q}); }), "0-d signed integer"));
  CHECK(contains(error_of([&] { join(in(DType::Float64, {}), {p, q}); }), "0-d signed integer"));

  auto axis = in(DType::Int32, {});
  auto r = join(axis, {p, p, p});
  CHECK(r->type() == TensorType(DType::Int64, {-1, -1}));
  Array pv = arr(DType::Int64, {2, 3}, {1, 2, 3, 4, 5, 6});
  for (int a : {0, 1, -1, -2}) check_infer_shape(r, {axis, p}, {scalar(DType::Int32, a), pv});
  auto out = run({axis, p}, {r}, {scalar(DType::Int32, 1), pv});
  CHECK(out[0].shape() == Shape{2, 9});
  auto xa = in(DType::Float64, {-1, -1});
  auto xb = in(DType::Float64, {-1, -1});
  auto jj = join(1, {xa, xb});
  check_infer_shape(jj, {xa, xb},
                    {Array::zeros(DType::Float64, {2, 0}), Array::zeros(DType::Float64, {2, 5})});
}

TEST_CASE("Split: type inference, views and infer_shape") {
  auto x = in(DType::Float64, {5, -1});
  auto parts = split(x, {2, 3});
  REQUIRE(parts.size() == 2);
  CHECK(parts[0]->type() == TensorType(DType::Float64, {2, -1}));
  CHECK(parts[1]->type() == TensorType(DType::Float64, {3, -1}));
  CHECK(parts[0]->owner()->op().str() == "Split{len_splits=2, axis=0}");  // PyTensor 3.x's form
  CHECK(parts[0]->owner()->op().view_map() == IndexMap{{0, {0}}, {1, {0}}});
  auto n = in(DType::Int64, {});
  auto p2 = split(x, {n, 1, 1}, -1);
  CHECK(p2[0]->type().shape == Shape{5, -1});
  CHECK(p2[2]->type().shape == Shape{5, 1});
  CHECK(contains(error_of([&] { split(x, {2, 2}); }), "sum to 4"));
  CHECK(contains(error_of([&] { split(x, {6, -1}); }), "negative"));
  CHECK(contains(error_of([&] { split(x, {1, 4}, 2); }), "out of bounds"));
  CHECK(contains(error_of([&] { split(in(DType::Float64, {}), {1}); }), "0-d"));
  CHECK(contains(
      error_of([&] {
        make_node(std::make_shared<Split>(2), {x, int64_constant(0), in(DType::Int64, {3})});
      }),
      "expects 2 split sizes"));
  CHECK(contains(
      error_of([&] {
        make_node(std::make_shared<Split>(1), {x, int64_constant(0), in(DType::Float64, {1})});
      }),
      "integer vector"));

  Array xv = arr(DType::Float64, {5, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto out = run({x}, parts, {xv});
  CHECK(values(out[1]) == std::vector<double>{4, 5, 6, 7, 8, 9});
  CHECK(static_cast<const double*>(out[1].data()) == xv.data<double>() + 4);  // a view
  check_infer_shape(parts[0], {x}, {xv});
  check_infer_shape(p2[0], {x, n}, {xv, make_int64_scalar(0)});
  auto axis = in(DType::Int64, {});
  auto p3 = split(x, {1, 1}, axis);
  CHECK(p3[0]->type().shape == Shape{-1, -1});
  check_infer_shape(p3[0], {x, axis}, {xv, make_int64_scalar(1)});
}

TEST_CASE("ARange, Eye and Tri") {
  CHECK(arange(5)->type() == TensorType(DType::Int64, {5}));
  CHECK(arange(0.5, 10)->type() == TensorType(DType::Float32, {10}));  // 0.5 is exact in float32
  CHECK(arange(0.1, 1)->type().dtype == DType::Float64);
  CHECK(arange(5, 2)->type().shape == Shape{0});
  CHECK(arange(5, -3, -2)->type().shape == Shape{4});
  CHECK(arange(0, 1, 0)->type().shape == Shape{-1});  // a zero step fails at run time
  CHECK(arange(make_constant(scalar(DType::UInt8, 3)))->type().dtype ==
        DType::Int64);  // 0 and 1 are int8
  auto u = [](double v) { return make_constant(scalar(DType::UInt8, v)); };
  CHECK(arange(u(0), u(3), u(1))->type() == TensorType(DType::UInt64, {3}));
  CHECK(contains(error_of([&] { arange(in(DType::Int64, {2}), 1); }), "start must be 0-d"));

  auto start = in(DType::Int32, {});
  auto step = in(DType::Float64, {});
  auto r = arange(start, 10, step, DType::Float64);
  CHECK(r->type() == TensorType(DType::Float64, {-1}));
  auto out = run({start, step}, {r}, {scalar(DType::Int32, 2), scalar(DType::Float64, 2.5)});
  CHECK(values(out[0]) == std::vector<double>{2, 4.5, 7, 9.5});
  check_infer_shape(r, {start, step}, {scalar(DType::Int32, 2), scalar(DType::Float64, 2.5)});
  check_infer_shape(r, {start, step}, {scalar(DType::Int32, 2), scalar(DType::Float64, -1)});
  auto ri = arange(start, 7);
  check_infer_shape(ri, {start}, {scalar(DType::Int32, 2)});
  check_infer_shape(ri, {start}, {scalar(DType::Int32, 9)});
  CHECK(contains(error_of([&] {
                   run({start, step}, {r}, {scalar(DType::Int32, 2), scalar(DType::Float64, 0)});
                 }),
                 "step must not be zero"));

  CHECK(eye(3)->type() == TensorType(DType::Float64, {3, 3}));
  auto n = in(DType::UInt16, {});
  auto e = eye(n, 2, -1, DType::Int8);
  CHECK(e->type() == TensorType(DType::Int8, {-1, 2}));
  auto eo = run({n}, {e}, {scalar(DType::UInt16, 3)});
  CHECK(values(eo[0]) == std::vector<double>{0, 0, 1, 0, 0, 1});
  check_infer_shape(e, {n}, {scalar(DType::UInt16, 3)});
  auto t = tri(n, std::nullopt, 1, DType::Bool);
  auto to = run({n}, {t}, {scalar(DType::UInt16, 3)});
  CHECK(values(to[0]) == std::vector<double>{1, 1, 0, 1, 1, 1, 1, 1, 1});
  CHECK(contains(error_of([&] { eye(in(DType::Float64, {})); }), "n (rows) must be a 0-d integer"));
  CHECK(contains(error_of([&] { eye(3, 3, in(DType::Bool, {})); }),
                 "k (the diagonal) must be a 0-d integer"));
  CHECK(contains(error_of([&] { tri(-1); }), "negative"));
}

TEST_CASE("ExtractDiag and AllocDiag") {
  auto x = in(DType::Float64, {3, -1, 4});
  auto d = diagonal(x, 1, -1, 0);  // normalised to axes (2, 0), sorted to (0, 2) with offset -1
  const auto& op = dynamic_cast<const ExtractDiag&>(d->owner()->op());
  CHECK(op.axis1() == 0);
  CHECK(op.axis2() == 2);
  CHECK(op.offset() == -1);
  CHECK(d->type() == TensorType(DType::Float64, {-1, 2}));
  CHECK(contains(error_of([&] { diagonal(in(DType::Float64, {3})); }), "out of range"));
  CHECK(contains(
      error_of([&] { apply1(std::make_shared<ExtractDiag>(0, 0, 1), {in(DType::Float64, {3})}); }),
      "2 or more dimensions"));
  CHECK(contains(error_of([&] { ExtractDiag(0, 1, 1); }), "cannot be the same"));

  std::vector<double> xs;
  for (int i = 0; i < 24; ++i) xs.push_back(i);
  Array xv = arr(DType::Float64, {3, 2, 4}, xs);
  auto out = run({x}, {d}, {xv});
  // np.diagonal(x, 1, 2, 0)[j] = x[i + 1, j, i]... for each middle index j: [x[1,j,0], x[2,j,1]]
  CHECK(values(out[0]) == std::vector<double>{8, 17, 12, 21});
  check_infer_shape(d, {x}, {xv});
  for (std::int64_t off : {-5, -1, 0, 2, 9}) {
    auto dd = diagonal(x, off, 0, 2);
    check_infer_shape(dd, {x}, {xv});
  }

  auto v = in(DType::Int32, {2, -1});
  auto a = alloc_diag(v, 1, 2, 0);  // sorted to (0, 2), offset kept
  CHECK(a->owner()->op().str() == "AllocDiag{self.axis1=0, self.axis2=2, self.offset=1}");
  CHECK(a->type() == TensorType(DType::Int32, {-1, 2, -1}));
  Array vv = arr(DType::Int32, {2, 2}, {1, 2, 3, 4});
  auto ao = run({v}, {a}, {vv});
  CHECK(ao[0].shape() == Shape{3, 2, 3});
  // Round trip: the diagonal of the result along the same axes is the input.
  auto back = run({v}, {diagonal(a, 1, 0, 2)}, {vv});
  CHECK(values(back[0]) == std::vector<double>{1, 2, 3, 4});
  check_infer_shape(a, {v}, {vv});
  CHECK(contains(error_of([&] { alloc_diag(in(DType::Int32, {})); }), "out of range"));
}

TEST_CASE("CheckAndRaise and Assert") {
  auto x = in(DType::Float64, {-1});
  auto c = in(DType::Bool, {});
  auto f = in(DType::Int32, {-1});
  auto y = check_and_raise(x, {c, f}, "values must be positive", "ValueError");
  CHECK(y->type() == x->type());
  CHECK(y->owner()->op().view_map() == IndexMap{{0, {0}}});
  Array xv = arr(DType::Float64, {2}, {1, 2});
  auto out = run({x, c, f}, {y}, {xv, scalar(DType::Bool, 1), arr(DType::Int32, {2}, {1, -1})});
  CHECK(out[0].data() == xv.data());
  std::string err = error_of([&] {
    run({x, c, f}, {y}, {xv, scalar(DType::Bool, 1), arr(DType::Int32, {2}, {1, 0})});
  });
  CHECK(contains(err, "ValueError: values must be positive"));
  check_infer_shape(y, {x, c, f}, {xv, scalar(DType::Bool, 1), arr(DType::Int32, {1}, {1})});
  CHECK_FALSE(y->owner()->op().do_constant_folding(*y->owner()));

  auto a = assert_op(x, {make_constant(scalar(DType::Bool, 1))}, "ok");
  CHECK(a->owner()->op().name() == "Assert");
  CHECK(a->owner()->op().do_constant_folding(*a->owner()));  // the condition holds: foldable
  auto failing = assert_op(x, {make_constant(scalar(DType::Bool, 0))}, "always fails");
  CHECK_FALSE(failing->owner()->op().do_constant_folding(*failing->owner()));
  CHECK(contains(error_of([&] { run({x}, {failing}, {xv}); }), "AssertionError: always fails"));
}

TEST_CASE("shape ops: loader refusals name the JSON pointer") {
  Json m = ty("float64", {nullptr, nullptr});
  Json v = ty("int64", {nullptr});
  Json s = ty("int64", Json::array());
  auto err = load_error(one_node_graph("Reshape", Json::object(), {m, v}, {m}));
  CHECK(contains(err, "/nodes/0/props"));
  CHECK(contains(err, "ndim"));
  err = load_error(one_node_graph("Reshape", {{"ndim", "two"}}, {m, v}, {m}));
  CHECK(contains(err, "/nodes/0/props/ndim"));
  err = load_error(one_node_graph("Reshape", {{"ndim", -1}}, {m, v}, {m}));
  CHECK(contains(err, "/nodes/0/props/ndim"));
  err = load_error(one_node_graph("Reshape", {{"ndim", 2}, {"shape", 3}}, {m, v}, {m}));
  CHECK(contains(err, "/nodes/0/props/shape"));
  err = load_error(one_node_graph("Reshape", {{"ndim", 2}}, {m, ty("uint8", {2})}, {m}));
  CHECK(contains(err, "/nodes/0"));
  CHECK(contains(err, "Shape must be integers; got uint8"));
  err =
      load_error(one_node_graph("Reshape", {{"ndim", 2}}, {ty("float64", {2, 3}), ty("int64", {2})},
                                {m}, {kNull, Json::array({5, 5})}));
  CHECK(contains(err, "incompatible with the new shape"));
  err = load_error(one_node_graph("SpecifyShape", {{"x", 1}}, {m, s, s}, {m}));
  CHECK(contains(err, "/nodes/0/props/x"));
  err = load_error(one_node_graph("AllocEmpty", {{"dtype", "float128"}}, {s}, {v}));
  CHECK(contains(err, "/nodes/0/props/dtype"));
  err = load_error(one_node_graph("AllocEmpty", Json::object(), {s}, {v}));
  CHECK(contains(err, "\"dtype\""));
  err = load_error(one_node_graph("MakeVector", {{"dtype", 3}}, {s}, {v}));
  CHECK(contains(err, "/nodes/0/props/dtype"));
  err = load_error(one_node_graph("MakeVector", {{"dtype", "int8"}}, {s}, {ty("int8", {1})}));
  CHECK(contains(err, "does not upcast to int8"));
  err = load_error(one_node_graph("Join", {{"axis", 0}}, {s, m, m}, {m}));
  CHECK(contains(err, "/nodes/0/props/axis"));
  err = load_error(one_node_graph("Split", {{"len_splits", 0}}, {m, s, v}, {}));
  CHECK(contains(err, "/nodes/0/props/len_splits"));
  err = load_error(one_node_graph("Split", {{"len_splits", 2}}, {m, s, v}, {m}));
  CHECK(contains(err, "/nodes/0/outputs"));
  err = load_error(one_node_graph("ARange", {{"dtype", "complex64"}}, {s, s, s}, {v}));
  CHECK(contains(err, "/nodes/0/props/dtype"));
  err = load_error(one_node_graph("Eye", {{"dtype", true}}, {s, s, s}, {m}));
  CHECK(contains(err, "/nodes/0/props/dtype"));
  err = load_error(one_node_graph("Tri", {{"k", 1}}, {s, s, s}, {m}));
  CHECK(contains(err, "/nodes/0/props/k"));
  err = load_error(one_node_graph("ExtractDiag", {{"axis1", 1}, {"axis2", 1}}, {m}, {v}));
  CHECK(contains(err, "/nodes/0/props/axis2"));
  err = load_error(one_node_graph("ExtractDiag", {{"axis1", 3}}, {m}, {v}));
  CHECK(contains(err, "/nodes/0/props/axis1"));
  err = load_error(one_node_graph("ExtractDiag", {{"offset", 1.5}}, {m}, {v}));
  CHECK(contains(err, "/nodes/0/props/offset"));
  err = load_error(one_node_graph("ExtractDiag", {{"view", "yes"}}, {m}, {v}));
  CHECK(contains(err, "/nodes/0/props/view"));
  err = load_error(one_node_graph("AllocDiag", {{"axis1", 1}, {"axis2", 0}}, {v}, {m}));
  CHECK(contains(err, "/nodes/0/props/axis2"));
  err = load_error(one_node_graph("CheckAndRaise", {{"msg", "m"}}, {m}, {m}));
  CHECK(contains(err, "exc_type"));
  err = load_error(
      one_node_graph("CheckAndRaise", {{"msg", 3}, {"exc_type", "ValueError"}}, {m}, {m}));
  CHECK(contains(err, "/nodes/0/props/msg"));
  err = load_error(one_node_graph("CheckAndRaise", {{"exc_type", ""}}, {m}, {m}));
  CHECK(contains(err, "/nodes/0/props/exc_type"));
  err = load_error(one_node_graph("Assert", {{"msg", "m"}, {"exc_type", "ValueError"}}, {m}, {m}));
  CHECK(contains(err, "/nodes/0/props/exc_type"));
  // Declared output types must agree with inference.
  err = load_error(one_node_graph("Alloc", nullptr, {s, s}, {ty("int64", {3})}, {kNull, 2}));
  CHECK(contains(err, "/nodes/0/outputs/0"));
}

TEST_CASE("shape ops: graph files load, evaluate and save back unchanged") {
  // Accepted spellings: ExtractDiag with PyTensor's view prop, Assert with exc_type, defaults.
  Json m = ty("float64", {3, 3});
  auto fg = load_graph_text(
      one_node_graph("ExtractDiag", {{"offset", 0}, {"axis1", -1}, {"axis2", -2}, {"view", true}},
                     {m}, {ty("float64", {3})}),
      "");
  CHECK(fg.outputs()[0]->owner()->op().str() ==
        "ExtractDiag{offset=0, axis1=0, axis2=1, view=True}");
  fg = load_graph_text(one_node_graph("Assert", {{"exc_type", "AssertionError"}},
                                      {m, ty("bool", Json::array())}, {m}),
                       "");
  CHECK(fg.outputs()[0]->owner()->op().str() == "Assert{msg='PyTensor Assert failed!'}");

  GraphBuilder g("shape_ops_roundtrip");
  auto x = g.input("x", f64, {-1, 3});
  auto n = g.input("n", i64, {});
  auto r = reshape(x, {n, -1});
  auto j = join(0, {r, alloc(make_constant(scalar(DType::Float64, 1)), {1, 3})});
  auto parts = split(j, {1, 2}, 1);
  auto checked = assert_op(specify_shape(parts[1], {-1, 2}), {n > 0}, "n must be positive");
  auto ar = arange(n);
  auto e = eye(n, n, 1) + tri(n, n, 0, f64);
  auto d = alloc_diag(diagonal(e), 0);
  auto mv = make_vector({n, n});
  auto ae = alloc_empty(i8, {2});
  auto cr = check_and_raise(ar, {}, "msg with 'quotes' and \\ backslash", "ValueError");
  g.output(checked, "checked");
  g.output(parts[0], "first");
  g.output(cr, "range");
  g.output(d, "diag");
  g.output(mv, "mv");
  g.output(ae, "ae");
  FunctionGraph built = g.build();
  std::string text = save_graph_text(built);
  FunctionGraph again = load_graph_text(text, "");
  CHECK(save_graph_text(again) == text);

  Array xv = Array::zeros(DType::Float64, {2, 3});
  auto o1 = evaluate(built, {xv, make_int64_scalar(2)});
  auto o2 = evaluate(again, {xv, make_int64_scalar(2)});
  REQUIRE(o1.size() == o2.size());
  for (std::size_t k = 0; k < o1.size(); ++k) {
    CHECK(o1[k].shape() == o2[k].shape());
    CHECK(values(o1[k]) == values(o2[k]));
  }
  CHECK(o1[0].shape() == Shape{3, 2});
  CHECK(values(o1[2]) == std::vector<double>{0, 1});
  CHECK(values(o1[3]) == std::vector<double>{1, 0, 0, 1});
  CHECK(values(o1[4]) == std::vector<double>{2, 2});
  // n = 0: the reshape to (0, -1) and the assert both fail; whichever runs first reports.
  CHECK_FALSE(error_of([&] {
                evaluate(again, {Array::zeros(DType::Float64, {0, 3}), make_int64_scalar(0)});
              }).empty());
}
