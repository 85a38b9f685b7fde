// Indexing ops: Subtensor, IncSubtensor, AdvancedSubtensor1, AdvancedIncSubtensor1 — printing,
// type inference and its refusals, loader refusals (each naming its JSON pointer), the builder
// API, infer_shape against perform, and that increments never write into their input.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eval/evaluator.h"
#include "io/graph_load.h"
#include "io/graph_save.h"
#include "ir/error.h"
#include "ops/advanced_subtensor.h"
#include "ops/array_util.h"
#include "ops/constant.h"
#include "ops/shape.h"
#include "ops/subtensor.h"

using namespace kiln;
using Json = nlohmann::json;

namespace {

Var in(DType dt, const Shape& shape, const std::string& name = "") {
  return make_input(TensorType(dt, shape), name);
}

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

/// The elements of an array in row-major order, as doubles.
std::vector<double> values_of(const Array& a) {
  std::vector<double> out;
  a.for_each_index([&](const std::int64_t* idx) { out.push_back(element_as_double(a, idx)); });
  return out;
}

/// arange(n) as float64 with the given shape.
Array iota(const Shape& shape) {
  Array a = Array::empty(DType::Float64, shape);
  for (std::int64_t i = 0; i < a.size(); ++i) a.data<double>()[i] = static_cast<double>(i);
  return a;
}

Array run1(const VarList& inputs, const Var& out, const std::vector<Array>& values) {
  FunctionGraph fg(inputs, {out});
  return evaluate(fg, values)[0];
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

Json type(const std::string& dtype, const Json& shape) {
  return {{"dtype", dtype}, {"shape", shape}};
}

/// The UserError of loading a graph text ("" if it loads), and its place.
std::pair<std::string, std::string> load_error(const std::string& text) {
  try {
    load_graph_text(text, "");
  } catch (const UserError& e) {
    return {e.message(), e.where()};
  }
  return {"", ""};
}

const Json kInput = "input";
const Json kNone = nullptr;

}  // namespace

TEST_CASE("indexing ops print as PyTensor prints them") {
  auto sub = [](std::vector<IndexEntry> e) { return Subtensor(BasicIndex(std::move(e))).str(); };
  using E = IndexEntry;
  CHECK(sub({E::integer()}) == "Subtensor{i}");
  CHECK(sub({E::slice(true, false, false)}) == "Subtensor{start:}");
  CHECK(sub({E::slice(false, true, false)}) == "Subtensor{:stop}");
  CHECK(sub({E::slice(false, false, true)}) == "Subtensor{::step}");
  CHECK(sub({E::slice(true, true, false)}) == "Subtensor{start:stop}");
  CHECK(sub({E::slice(true, false, true)}) == "Subtensor{start::step}");
  CHECK(sub({E::slice(false, true, true)}) == "Subtensor{:stop:step}");
  CHECK(sub({E::slice(true, true, true)}) == "Subtensor{start:stop:step}");
  CHECK(sub({E::slice(false, false, false)}) == "Subtensor{:}");
  CHECK(sub({E::integer(), E::slice(true, true, false)}) == "Subtensor{i, start:stop}");
  CHECK(sub({E::integer(), E::slice(false, false, false), E::integer(), E::integer(),
             E::integer()}) == "Subtensor{i, :, j, k, ii}");
  CHECK(sub({}) == "Subtensor{}");
  CHECK(IncSubtensor(BasicIndex({E::integer(), E::slice(true, false, false)}), false).str() ==
        "IncSubtensor{i, start:}");
  CHECK(IncSubtensor(BasicIndex({E::slice(false, true, false)}), true).str() ==
        "SetSubtensor{:stop}");
  CHECK(AdvancedSubtensor1().str() == "AdvancedSubtensor1");
  CHECK(AdvancedIncSubtensor1(false, false).str() == "AdvancedIncSubtensor1{no_inplace,inc}");
  CHECK(AdvancedIncSubtensor1(true, false).str() == "AdvancedIncSubtensor1{no_inplace,set}");
  CHECK(AdvancedIncSubtensor1(false, true).str() ==
        "AdvancedIncSubtensor1{no_inplace,inc,ignore_duplicates}");
}

TEST_CASE("props, equality and the graph-file form of idx_list") {
  using E = IndexEntry;
  Subtensor a(BasicIndex({E::integer(), E::slice(true, false, true)}));
  Subtensor b(BasicIndex({E::integer(), E::slice(true, false, true)}));
  Subtensor c(BasicIndex({E::integer(), E::slice(true, true, false)}));
  CHECK(a.equals(b));
  CHECK(!a.equals(c));
  CHECK(a.props() ==
        Json::parse(R"({"idx_list": [{"index": "input"}, {"slice": ["input", null, "input"]}]})"));
  CHECK(IncSubtensor(BasicIndex({E::integer()}), true).props() ==
        Json::parse(R"({"idx_list": [{"index": "input"}], "set_instead_of_inc": true})"));
  CHECK(!IncSubtensor(BasicIndex({E::integer()}), true)
             .equals(IncSubtensor(BasicIndex({E::integer()}), false)));
  CHECK(AdvancedIncSubtensor1(false, true).props() ==
        Json::parse(R"({"set_instead_of_inc": false, "ignore_duplicates": true})"));
}

TEST_CASE("builder API: subtensor, at, inc/set_subtensor") {
  Var x = in(DType::Float64, {5, 4}, "x");
  SUBCASE("static shapes from constant slices") {
    Var y = subtensor(x, {idx(0), slice(1, none, 2)});
    CHECK(y->type() == TensorType(DType::Float64, {2}));
    CHECK(y->owner()->op().str() == "Subtensor{i, start::step}");
    CHECK(subtensor(x, {slice(none, none, -1)})->type() == TensorType(DType::Float64, {5, 4}));
    CHECK(subtensor(x, {slice(-10, 10)})->type() == TensorType(DType::Float64, {5, 4}));
    CHECK(subtensor(x, {slice(3, 1)})->type() == TensorType(DType::Float64, {0, 4}));
    CHECK(at(x, -1)->type() == TensorType(DType::Float64, {4}));
    CHECK(subtensor(x, {idx(1), idx(2)})->type() == TensorType(DType::Float64, {}));
    Var i = in(DType::Int32, {}, "i");
    CHECK(subtensor(x, {slice(i)})->type() == TensorType(DType::Float64, {-1, 4}));
    CHECK(subtensor(in(DType::Float64, {-1, 4}), {slice(1, 3)})->type() ==
          TensorType(DType::Float64, {-1, 4}));
  }
  SUBCASE("values") {
    Var i = in(DType::Int8, {}, "i");
    Var y = subtensor(x, {slice(none, none, -2), idx(i)});
    Array out = run1({x, i}, y, {iota({5, 4}), arr(DType::Int8, {}, {-1})});
    CHECK(out.shape() == Shape{3});
    CHECK(values_of(out) == std::vector<double>{19, 11, 3});
    Array row = run1({x}, at(x, 2), {iota({5, 4})});
    CHECK(values_of(row) == std::vector<double>{8, 9, 10, 11});
  }
  SUBCASE("increments and sets") {
    Var v = in(DType::Float64, {-1}, "v");
    Var inc = inc_subtensor(x, {slice(none, none, 2), idx(1)}, v);
    CHECK(inc->type() == x->type());
    CHECK(inc->owner()->op().str() == "IncSubtensor{::step, i}");
    Array out = run1({x, v}, inc, {iota({5, 4}), arr(DType::Float64, {3}, {100, 200, 300})});
    CHECK(values_of(out)[1] == 101);
    CHECK(values_of(out)[9] == 209);
    CHECK(values_of(out)[17] == 317);
    CHECK(values_of(out)[5] == 5);
    Var set =
        set_subtensor(x, {idx(-1)}, 0);  // a literal value: autocast int8, cast into x's dtype
    CHECK(set->owner()->op().str() == "SetSubtensor{i}");
    CHECK(set->owner()->input(1)->dtype() == DType::Int8);
    Array s = run1({x}, set, {iota({5, 4})});
    CHECK(values_of(s)[16] == 0);
    CHECK(values_of(s)[15] == 15);
  }
  SUBCASE("misuse") {
    CHECK(contains(error_of([&] { idx(none); }), "cannot be omitted"));
    CHECK(contains(error_of([&] { subtensor(Var(), {idx(0)}); }), "null Var"));
    CHECK(contains(error_of([&] { inc_subtensor(x, {idx(0)}, Var()); }), "null Var"));
    CHECK(contains(error_of([&] { subtensor(x, {idx(0), idx(0), idx(0)}); }), "too many indices"));
  }
}

TEST_CASE("Subtensor type inference refuses bad inputs") {
  using E = IndexEntry;
  auto op = std::make_shared<Subtensor>(BasicIndex({E::integer(), E::slice(false, false, true)}));
  Var x = in(DType::Float32, {-1, -1});
  Var i = in(DType::Int64, {});
  CHECK(contains(error_of([&] { apply1(op, {x, i}); }), "takes 2 integer input(s)"));
  CHECK(contains(error_of([&] {
                   apply1(op, {x, i, in(DType::Float64, {})});
                 }),
                 "must be a 0-d integer"));
  CHECK(contains(error_of([&] {
                   apply1(op, {x, i, in(DType::Bool, {})});
                 }),
                 "must be a 0-d integer"));
  CHECK(contains(error_of([&] {
                   apply1(op, {x, in(DType::Int64, {1}), i});
                 }),
                 "must be a 0-d integer"));
  CHECK(contains(error_of([&] {
                   apply1(op, {in(DType::Float32, {-1}), i, i});
                 }),
                 "too many indices (2) for a tensor of rank 1"));
  CHECK(contains(error_of([&] {
                   apply1(op, {x, i, int64_constant(0)});
                 }),
                 "slice step cannot be zero"));
  CHECK(error_of([&] { apply1(op, {x, i, i}); }).empty());
  // Every integer dtype is accepted as an index.
  for (DType dt : {DType::Int8, DType::UInt8, DType::Int16, DType::UInt16, DType::Int32,
                   DType::UInt32, DType::Int64, DType::UInt64})
    CHECK(apply1(op, {x, in(dt, {}), in(dt, {})})->type() == TensorType(DType::Float32, {-1}));
}

TEST_CASE("IncSubtensor type inference") {
  using E = IndexEntry;
  auto inc = std::make_shared<IncSubtensor>(BasicIndex({E::slice(true, false, false)}), false);
  auto set = std::make_shared<IncSubtensor>(BasicIndex({E::slice(true, false, false)}), true);
  Var x = in(DType::Int32, {4, 3});
  Var one = int64_constant(1);
  CHECK(apply1(inc, {x, in(DType::Int64, {3}), one})->type() == x->type());
  CHECK(apply1(inc, {x, in(DType::Int8, {}), one})->type() == x->type());
  CHECK(contains(error_of([&] {
                   apply1(inc, {x, in(DType::Int32, {1, 1, 3}), one});
                 }),
                 "3-dimensional value into a 2-dimensional subtensor"));
  CHECK(contains(error_of([&] {
                   apply1(inc, {x, in(DType::Int32, {2}), one});
                 }),
                 "does not broadcast"));
  CHECK(contains(error_of([&] {
                   apply1(inc, {x, in(DType::Int32, {4, 3}), one});
                 }),
                 "does not broadcast"));
  CHECK(apply1(inc, {x, in(DType::Int32, {3, 3}), one})->type() == x->type());
  // Increments follow NumPy's same_kind rule (as PyTensor's `+=`); sets cast anything.
  CHECK(contains(error_of([&] {
                   apply1(inc, {x, in(DType::Float64, {}), one});
                 }),
                 "cannot increment a int32 tensor by a float64 value"));
  CHECK(contains(error_of([&] {
                   apply1(inc, {in(DType::UInt8, {4}), in(DType::Int8, {}), one});
                 }),
                 "cannot increment"));
  CHECK(contains(error_of([&] {
                   apply1(inc, {in(DType::Bool, {4}), in(DType::Int8, {}), one});
                 }),
                 "cannot increment"));
  CHECK(apply1(inc, {in(DType::Int8, {4}), in(DType::UInt8, {}), one})->dtype() == DType::Int8);
  CHECK(apply1(inc, {in(DType::Float32, {4}), in(DType::Float64, {}), one})->dtype() ==
        DType::Float32);
  CHECK(apply1(set, {x, in(DType::Float64, {}), one})->type() == x->type());
  CHECK(contains(error_of([&] { apply1(inc, {x}); }), "needs the tensor and the value"));
}

TEST_CASE("AdvancedSubtensor1 / AdvancedIncSubtensor1 type inference") {
  auto take_op = std::make_shared<AdvancedSubtensor1>();
  Var x = in(DType::Float64, {5, 3});
  CHECK(apply1(take_op, {x, in(DType::Int64, {4})})->type() == TensorType(DType::Float64, {4, 3}));
  CHECK(apply1(take_op, {x, in(DType::UInt8, {-1})})->type() ==
        TensorType(DType::Float64, {-1, 3}));
  CHECK(contains(error_of([&] {
                   apply1(take_op, {x, in(DType::Float64, {4})});
                 }),
                 "must be an integer vector"));
  CHECK(contains(error_of([&] {
                   apply1(take_op, {x, in(DType::Bool, {4})});
                 }),
                 "must be an integer vector"));
  CHECK(contains(error_of([&] {
                   apply1(take_op, {x, in(DType::Int64, {2, 2})});
                 }),
                 "must be an integer vector"));
  CHECK(contains(error_of([&] {
                   apply1(take_op, {in(DType::Float64, {}), in(DType::Int64, {2})});
                 }),
                 "cannot index into a 0-d tensor"));
  CHECK(contains(error_of([&] { apply1(take_op, {x}); }), "takes 2 inputs"));
  CHECK(take(x, std::vector<std::int64_t>{0, 0, 4})->type() == TensorType(DType::Float64, {3, 3}));

  auto inc = std::make_shared<AdvancedIncSubtensor1>(false, false);
  Var idx = in(DType::Int32, {-1});
  CHECK(apply1(inc, {x, in(DType::Float32, {-1, 3}), idx})->type() == x->type());
  CHECK(apply1(inc, {x, in(DType::Int64, {}), idx})->type() == x->type());
  CHECK(apply1(inc, {in(DType::Int16, {5}), in(DType::Float64, {-1}), idx})->dtype() ==
        DType::Int16);
  CHECK(contains(error_of([&] {
                   apply1(inc, {x, in(DType::Float64, {1, 2, 3}), idx});
                 }),
                 "3-dimensional value into a 2-dimensional subtensor"));
  CHECK(contains(error_of([&] {
                   apply1(inc, {x, in(DType::Float64, {-1, 4}), idx});
                 }),
                 "does not broadcast"));
  CHECK(contains(error_of([&] {
                   apply1(inc, {x, in(DType::Float64, {2, 3}), in(DType::Int32, {3})});
                 }),
                 "does not broadcast"));
  CHECK(contains(error_of([&] {
                   apply1(inc, {x, x, in(DType::Float32, {3})});
                 }),
                 "integer vector"));
}

TEST_CASE("builder API: take, inc_take, set_take") {
  Var x = in(DType::Float64, {-1, 2}, "x");
  Var i = in(DType::Int64, {-1}, "i");
  Var y = in(DType::Float64, {-1, 2}, "y");
  Array xv = iota({3, 2});
  Array iv = arr(DType::Int64, {3}, {2, -1, 0});
  Array yv = arr(DType::Float64, {3, 2}, {10, 20, 30, 40, 50, 60});
  CHECK(values_of(run1({x, i}, take(x, i), {xv, iv})) == std::vector<double>{4, 5, 4, 5, 0, 1});
  CHECK(values_of(run1({x, i, y}, inc_take(x, i, y), {xv, iv, yv})) ==
        std::vector<double>{50, 61, 2, 3, 4 + 10 + 30, 5 + 20 + 40});
  CHECK(values_of(run1({x, i, y}, inc_take(x, i, y, true), {xv, iv, yv})) ==
        std::vector<double>{50, 61, 2, 3, 4 + 30, 5 + 40});
  CHECK(values_of(run1({x, i, y}, set_take(x, i, y), {xv, iv, yv})) ==
        std::vector<double>{50, 60, 2, 3, 30, 40});
  Var full = advanced_inc_subtensor1(x, y, i, true, false);
  CHECK(full->owner()->op().str() == "AdvancedIncSubtensor1{no_inplace,set}");
}

TEST_CASE("increments copy their input; Subtensor returns a view") {
  Var x = in(DType::Float64, {-1, -1}, "x");
  Var y = in(DType::Float64, {}, "y");
  Var i = in(DType::Int64, {-1}, "i");
  Array xv = iota({3, 2});
  std::vector<double> before = values_of(xv);
  Array yv = arr(DType::Float64, {}, {7});
  Array iv = arr(DType::Int64, {2}, {0, 0});
  run1({x, y}, inc_subtensor(x, {slice(1)}, y), {xv, yv});
  run1({x, y}, set_subtensor(x, {idx(0), idx(1)}, y), {xv, yv});
  run1({x, y, i}, inc_take(x, i, y), {xv, yv, iv});
  run1({x, y, i}, inc_take(x, i, y, true), {xv, yv, iv});
  run1({x, y, i}, set_take(x, i, y), {xv, yv, iv});
  CHECK(values_of(xv) == before);

  Subtensor op(BasicIndex({IndexEntry::slice(false, false, true)}));
  CHECK(op.view_map() == IndexMap{{0, {0}}});
  Array view = run1({x}, subtensor(x, {slice(none, none, -1)}), {xv});
  CHECK(view.storage() == xv.storage());
  CHECK(view.strides()[0] == -2);
  CHECK(values_of(view) == std::vector<double>{4, 5, 2, 3, 0, 1});
}

TEST_CASE("Subtensor infer_shape agrees with perform") {
  // Every pattern of present slice parts, with integers as run-time inputs (and the step as a
  // constant of either sign), evaluated against the shape perform produces.
  Var x = in(DType::Float64, {-1}, "x");
  Var a = in(DType::Int64, {}, "a"), b = in(DType::Int32, {}, "b"), c = in(DType::Int8, {}, "c");
  const std::vector<std::int64_t> lengths = {0, 1, 4, 7};
  const std::vector<std::int64_t> bounds = {-9, -4, -1, 0, 2, 6, 9};
  for (int pattern = 0; pattern < 8; ++pattern) {
    for (int step_kind = 0; step_kind < 3;
         ++step_kind) {  // 0: input, 1: constant 2, 2: constant -3
      const bool has_start = pattern & 1, has_stop = pattern & 2;
      const bool has_step = (pattern & 4) != 0;
      if (!has_step && step_kind != 0) continue;
      Var step = step_kind == 0 ? c : int64_constant(step_kind == 1 ? 2 : -3);
      std::vector<IndexItem> index = {slice(has_start ? IndexScalar(a) : IndexScalar(none),
                                            has_stop ? IndexScalar(b) : IndexScalar(none),
                                            has_step ? IndexScalar(step) : IndexScalar(none))};
      Var y = subtensor(x, index);
      const Apply& node = *y->owner();
      std::vector<ShapeVars> in_shapes(static_cast<std::size_t>(node.num_inputs()));
      in_shapes[0] = {shape_i(x, 0)};
      ShapeVars shape = node.op().infer_shape(node, in_shapes)[0];
      REQUIRE(shape.size() == 1);
      FunctionGraph fg({x, a, b, c}, {shape[0], y});
      for (std::int64_t n : lengths)
        for (std::int64_t start : bounds)
          for (std::int64_t stop : bounds)
            for (std::int64_t st : {-2, -1, 1, 3}) {
              auto out = evaluate(
                  fg, {iota({n}), arr(DType::Int64, {}, {double(start)}),
                       arr(DType::Int32, {}, {double(stop)}), arr(DType::Int8, {}, {double(st)})});
              INFO("pattern " << pattern << " step kind " << step_kind << " n " << n << " " << start
                              << ":" << stop << ":" << st);
              REQUIRE(out[0].data<std::int64_t>()[0] == out[1].shape()[0]);
            }
    }
  }
  // Unsigned indices and integer entries; x[::-1] keeps the input's length variable.
  Var m = in(DType::Float32, {-1, -1, 3}, "m");
  Var u = in(DType::UInt16, {}, "u");
  Var y = subtensor(m, {idx(u), slice(u, none, -1)});
  const Apply& node = *y->owner();
  ShapeVars shape =
      node.op().infer_shape(node, {{shape_i(m, 0), shape_i(m, 1), shape_i(m, 2)}, {}, {}})[0];
  REQUIRE(shape.size() == 2);
  FunctionGraph fg({m, u}, {shape[0], shape[1], y});
  auto out = evaluate(fg, {Array::zeros(DType::Float32, {4, 5, 3}), arr(DType::UInt16, {}, {2})});
  CHECK(out[0].data<std::int64_t>()[0] == 3);
  CHECK(out[1].data<std::int64_t>()[0] == 3);
  CHECK(out[2].shape() == Shape{3, 3});
  Var rev = subtensor(m, {slice(none, none, -1)});
  ShapeVars ms = {shape_i(m, 0), shape_i(m, 1), shape_i(m, 2)};
  CHECK(rev->owner()->op().infer_shape(*rev->owner(), {ms})[0] == ms);
}

TEST_CASE("infer_shape of the other indexing ops") {
  Var x = in(DType::Float64, {-1, 3}, "x");
  Var i = in(DType::Int64, {-1}, "i");
  Var y = in(DType::Float64, {}, "y");
  ShapeVars xs = {shape_i(x, 0), shape_i(x, 1)};
  ShapeVars is = {shape_i(i, 0)};
  Var t = take(x, i);
  auto ts = t->owner()->op().infer_shape(*t->owner(), {xs, is})[0];
  CHECK(ts == ShapeVars{is[0], xs[1]});
  Var a = inc_take(x, i, y);
  CHECK(a->owner()->op().infer_shape(*a->owner(), {xs, {}, is})[0] == xs);
  Var s = set_subtensor(x, {idx(0)}, y);
  CHECK(s->owner()->op().infer_shape(*s->owner(), {xs, {}, {}})[0] == xs);
}

TEST_CASE("run-time failures name the index and the length") {
  Var x = in(DType::Float64, {-1, -1}, "x");
  Var i = in(DType::Int64, {}, "i");
  Var v = in(DType::Int64, {-1}, "v");
  Array xv = iota({3, 2});
  auto failure = [&](const VarList& ins, const Var& out, const std::vector<Array>& vals) {
    try {
      run1(ins, out, vals);
    } catch (const RuntimeFailure& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(
      contains(failure({x, i}, subtensor(x, {slice(), idx(i)}), {xv, arr(DType::Int64, {}, {-3})}),
               "index -3 is out of bounds for axis 1 with size 2"));
  CHECK(contains(
      failure({x, i}, subtensor(x, {slice(none, none, i)}), {xv, arr(DType::Int64, {}, {0})}),
      "slice step cannot be zero"));
  CHECK(contains(failure({x, v}, take(x, v), {xv, arr(DType::Int64, {2}, {1, 3})}),
                 "index 3 is out of bounds for axis 0 with size 3"));
  Var u = in(DType::UInt64, {-1}, "u");
  Array big = Array::empty(DType::UInt64, {1});
  big.data<std::uint64_t>()[0] = 18446744073709551615ull;
  CHECK(contains(failure({x, u}, take(x, u), {xv, big}),
                 "index 18446744073709551615 is out of bounds for axis 0 with size 3"));
  Var y = in(DType::Float64, {}, "y");
  CHECK(contains(failure({x, i, y}, inc_subtensor(x, {idx(i)}, y),
                         {xv, arr(DType::Int64, {}, {3}), arr(DType::Float64, {}, {1})}),
                 "index 3 is out of bounds for axis 0 with size 3"));
}

TEST_CASE("graph files: indexing nodes load, evaluate and save back") {
  Json idx_list = Json::parse(R"([{"index": "input"}, {"slice": [null, "input", "input"]}])");
  std::string text = one_node_graph("Subtensor", {{"idx_list", idx_list}},
                                    {type("float64", {3, nullptr}), type("int8", Json::array()),
                                     type("int64", Json::array()), type("uint8", Json::array())},
                                    type("float64", {nullptr}));
  FunctionGraph fg = load_graph_text(text, "");
  auto out = evaluate(fg, {iota({3, 4}), arr(DType::Int8, {}, {-1}), arr(DType::Int64, {}, {-1}),
                           arr(DType::UInt8, {}, {2})});
  CHECK(values_of(out[0]) == std::vector<double>{8, 10});
  std::string saved = save_graph_text(fg);
  CHECK(save_graph_text(load_graph_text(saved, "")) == saved);

  Json props = {{"idx_list", Json::parse(R"([{"slice": ["input", null, null]}])")},
                {"set_instead_of_inc", true},
                {"inplace", false}};
  FunctionGraph inc = load_graph_text(
      one_node_graph(
          "IncSubtensor", props,
          {type("int32", {nullptr}), type("int32", Json::array()), type("int64", Json::array())},
          type("int32", {nullptr})),
      "");
  CHECK(inc.outputs()[0]->owner()->op().str() == "SetSubtensor{start:}");
  FunctionGraph adv = load_graph_text(
      one_node_graph(
          "AdvancedIncSubtensor1", {{"set_instead_of_inc", false}, {"inplace", true}},
          {type("float32", {nullptr}), type("float32", {nullptr}), type("int64", {nullptr})},
          type("float32", {nullptr})),
      "");
  CHECK(adv.outputs()[0]->owner()->op().str() == "AdvancedIncSubtensor1{no_inplace,inc}");
  FunctionGraph take1 = load_graph_text(
      one_node_graph("AdvancedSubtensor1", nullptr, {type("bool", {2, 2}), type("int16", {5})},
                     type("bool", {5, 2})),
      "");
  CHECK(take1.outputs()[0]->type() == TensorType(DType::Bool, {5, 2}));
}

TEST_CASE("graph files: bad idx_list and props are refused at their JSON pointer") {
  const std::vector<Json> ins = {type("float64", {nullptr, nullptr}), type("int64", Json::array())};
  const Json out1 = type("float64", {nullptr});
  auto sub = [&](const Json& props) {
    return load_error(one_node_graph("Subtensor", props, ins, out1));
  };
  const Json one_index = Json::parse(R"([{"index": "input"}])");

  auto [m1, w1] = sub(Json::object());
  CHECK(contains(m1, "idx_list"));
  CHECK(w1 == "/nodes/0/props/idx_list");
  auto [m2, w2] = sub({{"idx_list", 3}});
  CHECK(contains(m2, "must be a list"));
  CHECK(w2 == "/nodes/0/props/idx_list");
  auto [m3, w3] = sub({{"idx_list", Json::parse(R"([{"index": 3}])")}});
  CHECK(contains(m3, "{\"index\": \"input\"}"));
  CHECK(w3 == "/nodes/0/props/idx_list/0/index");
  auto [m4, w4] = sub({{"idx_list", Json::parse(R"([{"slice": [null, "input"]}])")}});
  CHECK(w4 == "/nodes/0/props/idx_list/0/slice");
  auto [m5, w5] = sub({{"idx_list", Json::parse(R"([{"slice": [null, 5, null]}])")}});
  CHECK(w5 == "/nodes/0/props/idx_list/0/slice/1");
  auto [m6, w6] = sub({{"idx_list", Json::parse(R"([{"slice": [null, null, null]}, "i"])")}});
  CHECK(w6 == "/nodes/0/props/idx_list/1");
  auto [m7, w7] = sub({{"idx_list", Json::parse(R"([{"newaxis": true}])")}});
  CHECK(contains(m7, "AdvancedSubtensor only"));
  CHECK(w7 == "/nodes/0/props/idx_list/0");
  auto [m8, w8] = sub({{"idx_list", one_index}, {"view", "yes"}});
  CHECK(w8 == "/nodes/0/props/view");
  auto [m9, w9] = sub({{"idx_list", one_index}, {"set_instead_of_inc", true}});
  CHECK(contains(m9, "unknown prop"));
  CHECK(w9 == "/nodes/0/props/set_instead_of_inc");
  // Type inference failures name the node.
  auto [m10, w10] = sub({{"idx_list", Json::parse(R"([{"index": "input"}, {"index": "input"}])")}});
  CHECK(contains(m10, "takes 2 integer input(s)"));
  CHECK(w10 == "/nodes/0");
  auto [m11, w11] = load_error(
      one_node_graph("Subtensor", {{"idx_list", one_index}},
                     {type("float64", {nullptr, nullptr}), type("float64", Json::array())}, out1));
  CHECK(contains(m11, "must be a 0-d integer"));
  CHECK(w11 == "/nodes/0");
  // A declared static length that contradicts inference.
  auto [m12, w12] = load_error(
      one_node_graph("Subtensor", {{"idx_list", Json::parse(R"([{"slice": [null, null, null]}])")}},
                     {type("float64", {4})}, type("float64", {3})));
  CHECK(w12 == "/nodes/0/outputs/0");

  auto [m13, w13] = load_error(one_node_graph(
      "IncSubtensor", {{"idx_list", one_index}, {"set_instead_of_inc", 1}},
      {type("float64", {nullptr}), type("float64", Json::array()), type("int64", Json::array())},
      type("float64", {nullptr})));
  CHECK(w13 == "/nodes/0/props/set_instead_of_inc");
  auto [m14, w14] = load_error(one_node_graph(
      "AdvancedSubtensor1", {{"sparse_grad", false}},
      {type("float64", {nullptr}), type("int64", {nullptr})}, type("float64", {nullptr})));
  CHECK(contains(m14, "unknown prop"));
  CHECK(w14 == "/nodes/0/props/sparse_grad");
  auto [m15, w15] = load_error(one_node_graph(
      "AdvancedIncSubtensor1", {{"ignore_duplicates", "no"}},
      {type("float64", {nullptr}), type("float64", {nullptr}), type("int64", {nullptr})},
      type("float64", {nullptr})));
  CHECK(w15 == "/nodes/0/props/ignore_duplicates");
}
