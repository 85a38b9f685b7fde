// AdvancedSubtensor / AdvancedIncSubtensor and the ops of sort.py and extra_ops.py: printing,
// props and their graph-file form, type inference and its refusals, loader refusals naming
// their JSON pointer, static shapes, and infer_shape against perform (the output_shapes path of
// compiled code for lengths that depend on the data). Values are checked by the NumPy fixtures
// (families advanced_indexing and extra_ops).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/elementwise.h"
#include "codegen/shape_graph.h"
#include "eval/evaluator.h"
#include "transform/vectorize.h"
#include "io/graph_load.h"
#include "io/graph_save.h"
#include "ir/error.h"
#include "ops/advanced_subtensor.h"
#include "ops/array_util.h"
#include "ops/constant.h"
#include "ops/extra_ops.h"
#include "ops/fill_diagonal.h"
#include "ops/shape.h"
#include "ops/sort.h"
#include "ops/unique.h"

#include "v2_test_util.h"

using namespace kiln;
using Json = nlohmann::json;

namespace {

Var in(DType dt, const Shape& shape, const std::string& name = "") { return make_input(TensorType(dt, shape), name); }

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

Array bools(const Shape& shape, const std::vector<int>& values) {
  Array a = Array::empty(DType::Bool, shape);
  for (std::size_t i = 0; i < values.size(); ++i) a.data<bool>()[i] = values[i] != 0;
  return a;
}

Array int64s(const Shape& shape, const std::vector<std::int64_t>& values) {
  Array a = Array::empty(DType::Int64, shape);
  for (std::size_t i = 0; i < values.size(); ++i) a.data<std::int64_t>()[i] = values[i];
  return a;
}

Array iota(const Shape& shape) {
  Array a = Array::empty(DType::Float64, shape);
  for (std::int64_t i = 0; i < a.size(); ++i) a.data<double>()[i] = static_cast<double>(i);
  return a;
}

/// Every output's shape computed by the shape graph (what compiled code's output_shapes runs)
/// must equal the shape perform gives.
void check_shapes_agree(const VarList& inputs, const VarList& outputs, const std::vector<Array>& values) {
  FunctionGraph fg(inputs, outputs);
  std::vector<Array> results = evaluate(fg, values);
  std::vector<Array> lengths = evaluate(build_shape_graph(fg), values);
  std::size_t k = 0;
  for (std::size_t o = 0; o < results.size(); ++o) {
    Shape from_graph;
    for (int d = 0; d < results[o].ndim(); ++d) from_graph.push_back(scalar_to_int64(lengths[k++]));
    CHECK_MESSAGE(from_graph == results[o].shape(), "output " << o << ": shape graph " << shape_str(from_graph)
                                                              << " vs perform " << shape_str(results[o].shape()));
  }
}

std::string one_node_graph(const std::string& op, const Json& props, const std::vector<Json>& inputs,
                           const std::vector<Json>& outputs) {
  return testing::one_node_graph_text(op, props, inputs, outputs);
}

Json type(const std::string& dtype, const Json& shape) { return {{"dtype", dtype}, {"shape", shape}}; }

std::pair<std::string, std::string> load_error(const std::string& text) {
  try {
    load_graph_text(text, "");
  } catch (const UserError& e) {
    return {e.message(), e.where()};
  }
  return {"", ""};
}

const Json kAny = nullptr;

}  // namespace

TEST_CASE("advanced indexing: printing, props and the graph-file form of idx_list") {
  Var x = in(DType::Float64, {4, 5});
  Var i = in(DType::Int64, {3});
  Var y = advanced_subtensor(x, {slice(1), newaxis, i});
  CHECK(y->owner()->op().str() == "AdvancedSubtensor");
  CHECK(y->owner()->op().props().dump() ==
        R"({"idx_list":[{"slice":["input",null,null]},{"newaxis":true},{"index":"input"}]})");
  Var s = advanced_set_subtensor(x, in(DType::Float64, {}), {i});
  CHECK(s->owner()->op().str() == "AdvancedSetSubtensor");
  CHECK(advanced_inc_subtensor(x, in(DType::Float64, {}), {i})->owner()->op().str() == "AdvancedIncSubtensor");
  CHECK(s->owner()->op().props()["ignore_duplicates"] == false);
  CHECK(sort(x, 0)->owner()->op().props().dump() == R"({"kind":"quicksort"})");
  CHECK(repeat(x, int64_constant(2), std::nullopt)->owner()->op().props().dump() == R"({"axis":null})");
  CHECK(unique(x, true)[0]->owner()->op().props()["return_index"] == true);
}

TEST_CASE("advanced indexing: static shapes follow NumPy's layout rules") {
  Var x = in(DType::Float64, {4, 5, 6});
  Var i = in(DType::Int64, {3});
  Var j = in(DType::Int32, {2, 1});
  // Adjacent advanced indices stay in place; a slice between them moves the block first.
  CHECK(advanced_subtensor(x, {slice(), i, i})->shape() == Shape{4, 3});
  CHECK(advanced_subtensor(x, {i, slice(), i})->shape() == Shape{3, 5});
  CHECK(advanced_subtensor(x, {j, i})->shape() == Shape{2, 3, 6});
  CHECK(advanced_subtensor(x, {slice(1, 3), newaxis, i})->shape() == Shape{2, 1, 3, 6});
  CHECK(advanced_subtensor(x, {i, newaxis, i})->shape() == Shape{3, 1, 6});
  CHECK(advanced_subtensor(x, {int64_constant(0), slice(), i})->shape() == Shape{3, 5});
  // A mask's count is known only at run time, unless it is a constant.
  Var m = in(DType::Bool, {5, 6});
  CHECK(advanced_subtensor(x, {slice(), m})->shape() == Shape{4, kUnknownLength});
  Var cm = make_constant(bools({4}, {1, 0, 1, 1}));
  CHECK(advanced_subtensor(x, {cm})->shape() == Shape{3, 5, 6});
  // Index arrays of unknown length broadcast as PyTensor's Elemwise does.
  CHECK(advanced_subtensor(x, {in(DType::Int64, {kUnknownLength}), in(DType::Int64, {1})})->shape() ==
        Shape{kUnknownLength, 6});
}

TEST_CASE("advanced indexing: type inference refuses bad indices") {
  Var x = in(DType::Float64, {4, 5});
  CHECK(contains(error_of([&] { advanced_subtensor(x, {in(DType::Float64, {2})}); }),
                 "must be an integer or boolean tensor"));
  CHECK(contains(error_of([&] { advanced_subtensor(x, {in(DType::Bool, {})}); }), "scalar boolean"));
  CHECK(contains(error_of([&] { advanced_subtensor(x, {in(DType::Int64, {2}), slice(), slice()}); }),
                 "too many indices"));
  CHECK(contains(error_of([&] { advanced_subtensor(x, {in(DType::Bool, {3})}); }),
                 "boolean index did not match indexed tensor along dimension 0"));
  CHECK(contains(error_of([&] { advanced_subtensor(x, {in(DType::Int64, {2}), in(DType::Int64, {3})}); }),
                 "could not be broadcast together"));
  CHECK(contains(error_of([&] { advanced_subtensor(x, {slice(in(DType::Int64, {1}))}); }), "must be a 0-d integer"));
  CHECK(contains(error_of([&] { advanced_set_subtensor(x, in(DType::Float64, {2, 2, 2}), {in(DType::Int64, {2})}); }),
                 "3-dimensional value into a 2-dimensional"));
  CHECK(contains(error_of([&] { sort(in(DType::Float64, {}), 0); }), "cannot sort a 0-d tensor"));
  CHECK(contains(error_of([&] { sort(x, 2); }), "out of bounds"));
  CHECK(contains(error_of([&] { repeat(x, in(DType::UInt64, {5}), 0); }), "uint64"));
  CHECK(contains(error_of([&] { repeat(x, int64_vector_constant({1, 2}), 1); }), "do not match"));
  CHECK(contains(error_of([&] { broadcast_to_view(x, {int64_constant(3)}); }), "shorter than input"));
  CHECK(contains(error_of([&] { broadcast_to_view(x, {int64_constant(4), int64_constant(3)}); }),
                 "does not broadcast"));
  CHECK(contains(error_of([&] { searchsorted(x, x); }), "must be a vector"));
  CHECK(contains(error_of([&] { nonzero(in(DType::Float64, {})); }), "non-scalar"));
  CHECK(contains(error_of([&] { unique(x, false, false, false, 2); }), "out of range"));
  CHECK(contains(error_of([&] { fill_diagonal(in(DType::Float64, {3}), in(DType::Float64, {})); }), "two dimensions"));
  CHECK(contains(error_of([&] { fill_diagonal(in(DType::Int32, {3, 3}), in(DType::Float64, {})); }), "upcast"));
}

TEST_CASE("advanced indexing: graph files, 2.26's form without idx_list, refusals at their JSON pointer") {
  // 2.26: no idx_list, every input after x is an index.
  std::string text = one_node_graph("AdvancedSubtensor", kAny,
                                    {type("float64", {nullptr, nullptr}), type("int64", {nullptr}), type("int8", {2})},
                                    {type("float64", {2})});
  FunctionGraph fg = load_graph_text(text, "");
  Array out = evaluate(fg, {iota({3, 4}), int64s({1}, {2}), astype(int64s({2}, {0, -1}), DType::Int8)})[0];
  CHECK(out.shape() == Shape{2});
  CHECK(out.data<double>()[0] == 8);
  CHECK(out.data<double>()[1] == 11);
  CHECK(contains(save_graph_text(fg), "idx_list"));

  auto [m1, w1] = load_error(one_node_graph("AdvancedSubtensor", {{"idx_list", Json::parse(R"([{"newaxis": 1}])")}},
                                            {type("float64", {nullptr})}, {type("float64", {1, nullptr})}));
  CHECK(w1 == "/nodes/0/props/idx_list/0/newaxis");
  auto [m2, w2] = load_error(one_node_graph("AdvancedIncSubtensor", {{"ignore_duplicates", 3}},
                                            {type("float64", {nullptr}), type("float64", Json::array()), type("int64", {nullptr})},
                                            {type("float64", {nullptr})}));
  CHECK(w2 == "/nodes/0/props/ignore_duplicates");
  auto [m3, w3] = load_error(one_node_graph("SortOp", {{"kind", "bogosort"}}, {type("float64", {nullptr}), type("int64", Json::array())},
                                            {type("float64", {nullptr})}));
  CHECK(contains(m3, "quicksort"));
  CHECK(w3 == "/nodes/0/props/kind");
  auto [m4, w4] = load_error(one_node_graph("ArgSortOp", {{"order", "f0"}}, {type("float64", {nullptr}), type("int64", Json::array())},
                                            {type("int64", {nullptr})}));
  CHECK(w4 == "/nodes/0/props/order");
  auto [m5, w5] = load_error(one_node_graph("SearchsortedOp", {{"side", "middle"}},
                                            {type("float64", {nullptr}), type("float64", Json::array())}, {type("int64", Json::array())}));
  CHECK(w5 == "/nodes/0/props/side");
  auto [m6, w6] = load_error(one_node_graph("Unique", {{"axis", -1}}, {type("float64", {nullptr})},
                                            {type("float64", {nullptr})}));
  CHECK(w6 == "/nodes/0/props/axis");
  auto [m7, w7] = load_error(one_node_graph("Nonzero", {{"axis", 0}}, {type("float64", {nullptr})},
                                            {type("int64", {nullptr})}));
  CHECK(w7 == "/nodes/0/props/axis");
}

TEST_CASE("advanced indexing: infer_shape agrees with perform, masks and data-dependent lengths included") {
  Var x = in(DType::Float64, {kUnknownLength, kUnknownLength, kUnknownLength});
  Var m = in(DType::Bool, {kUnknownLength});
  Var m2 = in(DType::Bool, {kUnknownLength, kUnknownLength});
  Var i = in(DType::Int64, {kUnknownLength, kUnknownLength});
  Var s = in(DType::Int64, {});
  const Array xv = iota({4, 3, 5});
  const Array mv = bools({4}, {1, 0, 1, 1});
  const Array m2v = bools({3, 5}, {1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 1});
  const Array iv = int64s({2, 1}, {1, -1});
  const Array sv = int64s({}, {-2});
  check_shapes_agree({x, m}, {advanced_subtensor(x, {m})}, {xv, mv});
  check_shapes_agree({x, m}, {advanced_subtensor(x, {m, slice(1), int64_constant(2)})}, {xv, mv});
  check_shapes_agree({x, m2}, {advanced_subtensor(x, {slice(), m2})}, {xv, m2v});
  check_shapes_agree({x, m, i}, {advanced_subtensor(x, {m, i})}, {xv, mv, iv});
  check_shapes_agree({x, i, s}, {advanced_subtensor(x, {slice(s), newaxis, i, slice(none, none, s)})}, {xv, iv, sv});
  check_shapes_agree({x, i}, {advanced_subtensor(x, {i, slice(), i})}, {xv, iv});
  Var r = in(DType::Int8, {kUnknownLength});
  check_shapes_agree({x, r}, {repeat(x, r, 1)}, {xv, astype(int64s({3}, {2, 0, 1}), DType::Int8)});
  check_shapes_agree({x, r}, {repeat(x, r, 1)}, {xv, astype(int64s({1}, {3}), DType::Int8)});
  check_shapes_agree({x, s}, {repeat(x, s, std::nullopt)}, {xv, int64s({}, {2})});
  check_shapes_agree({x}, nonzero(x - 3), {xv});
  check_shapes_agree({x}, unique(x, true, true, true), {xv});
  check_shapes_agree({x}, unique(x, true, true, true, 1), {xv});
  check_shapes_agree({m, s}, {broadcast_to_view(m, {s + 4, int64_constant(4)})}, {mv, int64s({}, {-1})});
}

namespace {

/// One input of a vectorize check: the core variable, and the value of its replacement —
/// with a leading batch dimension of length `kBatch` when `batched`.
struct BatchInput {
  Var core;
  Array value;
  bool batched;
};
constexpr std::int64_t kBatch = 3;

/// vectorize_graph of `out` computes, for every batch element b, what the core graph gives on
/// the inputs' element b.
void check_vectorized(const std::vector<BatchInput>& ins, const Var& out) {
  Replacements replace;
  VarList core, batched;
  std::vector<Array> values;
  for (const BatchInput& in : ins) {
    core.push_back(in.core);
    Var b = in.core;
    if (in.batched) {
      Shape shape{kBatch};
      shape.insert(shape.end(), in.core->shape().begin(), in.core->shape().end());
      b = make_input(TensorType(in.core->dtype(), shape), "b");
      replace.emplace_back(in.core, b);
    }
    batched.push_back(b);
    values.push_back(in.value);
  }
  Var ob = vectorize_graph(out, replace);
  Array got = evaluate(FunctionGraph(batched, {ob}), values)[0];
  REQUIRE(got.shape().size() == static_cast<std::size_t>(out->ndim() + 1));
  CHECK(got.shape(0) == kBatch);
  FunctionGraph core_fg(core, {out});
  for (std::int64_t b = 0; b < kBatch; ++b) {
    std::vector<Array> row;
    for (const BatchInput& in : ins) {
      if (!in.batched) {
        row.push_back(in.value);
        continue;
      }
      Shape shape(in.value.shape().begin() + 1, in.value.shape().end());
      Shape strides(in.value.strides().begin() + 1, in.value.strides().end());
      row.push_back(in.value.view(shape, strides, b * in.value.strides()[0]).copy());
    }
    Array want = evaluate(core_fg, row)[0];
    Shape shape(got.shape().begin() + 1, got.shape().end());
    Shape strides(got.strides().begin() + 1, got.strides().end());
    Array slice = got.view(shape, strides, b * got.strides()[0]);
    REQUIRE(slice.shape() == want.shape());
    std::vector<double> g, w;
    slice.for_each_index([&](const std::int64_t* at) { g.push_back(element_as_double(slice, at)); });
    want.for_each_index([&](const std::int64_t* at) { w.push_back(element_as_double(want, at)); });
    for (std::size_t k = 0; k < g.size(); ++k)
      CHECK_MESSAGE(g[k] == doctest::Approx(w[k]), "batch " << b << " element " << k);
  }
}

}  // namespace

TEST_CASE("vectorize_graph: advanced indexing with batched tensors and batched indices") {
  Var x = in(DType::Float64, {4, 5});
  Var x3 = in(DType::Float64, {4, 3, 5});
  Var i = in(DType::Int64, {2});
  Var j = in(DType::Int32, {2});
  const Array xb = iota({kBatch, 4, 5});
  const Array x3b = iota({kBatch, 4, 3, 5});
  const Array iv = int64s({2}, {3, -1});
  const Array ib = int64s({kBatch, 2}, {0, 1, 2, 3, -1, 0});
  const Array jv = astype(int64s({2}, {4, 0}), DType::Int32);
  const Array jb = astype(int64s({kBatch, 2}, {1, 1, 0, 4, 2, 3}), DType::Int32);
  SUBCASE("batched x, unbatched indices: adjacent, not adjacent, masks") {
    check_vectorized({{x, xb, true}, {i, iv, false}}, advanced_subtensor(x, {slice(1), i}));
    check_vectorized({{x3, x3b, true}, {i, iv, false}, {j, jv, false}},
                     advanced_subtensor(x3, {i, slice(), j}));  // the block goes first
    check_vectorized({{x, xb, true}}, advanced_subtensor(x, {make_constant(bools({4}, {1, 0, 0, 1})), newaxis}));
  }
  SUBCASE("batched indices: with and without a batched x") {
    check_vectorized({{x, xb.view({4, 5}, {5, 1}).copy(), false}, {i, ib, true}}, advanced_subtensor(x, {slice(), i}));
    check_vectorized({{x, xb, true}, {i, ib, true}, {j, jv, false}}, advanced_subtensor(x, {i, j}));
    check_vectorized({{x3, x3b, true}, {i, iv, false}, {j, jb, true}}, advanced_subtensor(x3, {i, slice(), j}));
  }
  SUBCASE("increments and sets") {
    Var y = in(DType::Float64, {2});
    Var y2 = in(DType::Float64, {2, 5});
    const Array yb = iota({kBatch, 2});
    check_vectorized({{x, xb, true}, {y2, iota({2, 5}), false}, {i, iv, false}}, advanced_inc_subtensor(x, y2, {i}));
    check_vectorized({{x, xb, true}, {y, yb, true}, {i, ib, true}, {j, jv, false}},
                     advanced_set_subtensor(x, y, {i, j}));
    check_vectorized({{x, xb.view({4, 5}, {5, 1}).copy(), false}, {y, yb, true}, {j, jb, true}},
                     advanced_inc_subtensor(x, y, {slice(1, 3), j}, true));
    Var y23 = in(DType::Float64, {2, 3});  // x3[i, :, j] is (2, 3): the block goes first
    check_vectorized({{x3, x3b, true}, {y23, iota({kBatch, 2, 3}), true}, {i, iv, false}, {j, jv, false}},
                     advanced_inc_subtensor(x3, y23, {i, slice(), j}));
    check_vectorized({{x3, x3b, true}, {y23, iota({2, 3}), false}, {i, ib, true}, {j, jv, false}},
                     advanced_set_subtensor(x3, y23, {i, slice(), j}));
  }
  SUBCASE("sort, argsort, repeat, broadcast_to, searchsorted") {
    check_vectorized({{x, xb, true}}, sort(x * -1.5, -1));
    check_vectorized({{x, xb, true}}, argsort(x * -1.5, shape_i(x, 0) - 4));
    check_vectorized({{x, xb, true}}, repeat(x, int64_vector_constant({1, 0, 2, 1}), 0));
    check_vectorized({{i, ib, true}}, broadcast_to_view(i, {int64_constant(2), int64_constant(2)}));
    Var v = in(DType::Float64, {2});
    check_vectorized({{v, iota({kBatch, 2}), true}}, searchsorted(make_constant(iota({6})), v * 2.5, "right"));
  }
}
