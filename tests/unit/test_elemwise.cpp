// Elemwise and the scalar ops: make_node refusals, the dtype rules (PyTensor's upcast table of
// docs/pytensor_semantics.md §2 and each op's output dtype), the names PyTensor prints, the
// loader's spellings and refusals (naming their JSON pointer), Composite's JSON round trip,
// the scalar functions kiln defines itself, and the C++ operators of api/elementwise.h.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "api/elementwise.h"
#include "api/graph_builder.h"
#include "eval/evaluator.h"
#include "io/graph_load.h"
#include "io/graph_save.h"
#include "ir/error.h"
#include "kiln/runtime/scalar_math.hpp"
#include "ops/array_util.h"
#include "ops/elemwise.h"
#include "ops/scalar/composite.h"

using namespace kiln;
using Json = nlohmann::json;

namespace {

Var in(DType dt, const Shape& shape = {-1}) { return make_input(TensorType(dt, shape)); }

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

const double kInf = std::numeric_limits<double>::infinity();

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

/// Applies a scalar op with make_node directly (no padding of ranks).
Var apply_op(const ScalarOp& op, const VarList& inputs) {
  return make_node(std::make_shared<Elemwise>(op), inputs)->output(0);
}
Var apply_op(ScalarOpId id, const VarList& inputs) { return apply_op(ScalarOp(id), inputs); }

DType out_dtype(ScalarOpId id, const std::vector<DType>& dts) {
  return ScalarOp(id).output_dtypes(dts)[0];
}

const Elemwise* elemwise_of(const Var& v) {
  REQUIRE(v->owner() != nullptr);
  return dynamic_cast<const Elemwise*>(&v->owner()->op());
}

/// A graph file holding one node `node` over inputs x (float64 vector) and n (int16 vector),
/// producing y of type `y_type`.
std::string one_node_graph(const Json& node, const Json& y_type) {
  Json g = {{"format", "kiln-graph"},
            {"version", 1},
            {"name", "g"},
            {"variables",
             {{{"id", "x"}, {"type", {{"dtype", "float64"}, {"shape", {nullptr}}}}},
              {{"id", "n"}, {"type", {{"dtype", "int16"}, {"shape", {nullptr}}}}},
              {{"id", "y"}, {"type", y_type}}}},
            {"nodes", {node}},
            {"inputs", {"x", "n"}},
            {"outputs", {"y"}}};
  return g.dump();
}

const Json kF64Vector = {{"dtype", "float64"}, {"shape", {nullptr}}};

/// The Elemwise node of a one-node graph file.
const Elemwise* load_one(const Json& node, const Json& y_type) {
  static std::vector<FunctionGraph> keep;  // graphs stay alive for the returned pointer
  keep.push_back(load_graph_text(one_node_graph(node, y_type), ""));
  auto nodes = keep.back().toposort();
  REQUIRE(nodes.size() == 1);
  return dynamic_cast<const Elemwise*>(&nodes[0]->op());
}

std::string load_error(const Json& node, const Json& y_type = kF64Vector) {
  return error_of([&] { load_graph_text(one_node_graph(node, y_type), ""); });
}

/// GRAPH_FORMAT.md's Composite example, log(1 + i0).
Json format_example() {
  return Json::parse(R"({"name": "Composite",
    "variables": [{"id": "i0", "dtype": "float64"}, {"id": "c0", "dtype": "float64", "value": 1.0},
                  {"id": "t0", "dtype": "float64"}, {"id": "t1", "dtype": "float64"}],
    "inputs": ["i0"],
    "nodes": [{"op": "add", "inputs": ["c0", "i0"], "outputs": ["t0"]},
              {"op": "log", "inputs": ["t0"], "outputs": ["t1"]}],
    "outputs": ["t1"]})");
}

ScalarOp composite(const Json& j) { return scalar_op_from_json(j, "/test"); }

}  // namespace

TEST_CASE("Elemwise refuses inputs its scalar op does not accept") {
  auto refused = [](ScalarOpId id, const std::vector<DType>& dts, const std::string& part) {
    VarList ins;
    for (DType dt : dts) ins.push_back(in(dt));
    std::string msg = error_of([&] { apply_op(id, ins); });
    INFO("op " << scalar_op_info(id).name << ": " << msg);
    CHECK(contains(msg, part));
  };
  refused(ScalarOpId::Neg, {DType::Bool}, "does not accept booleans");
  refused(ScalarOpId::Sgn, {DType::Bool}, "does not accept booleans");
  refused(ScalarOpId::Sub, {DType::Bool, DType::Bool}, "only-boolean");
  refused(ScalarOpId::And, {DType::Float64, DType::Float64}, "needs bool or integer inputs");
  refused(ScalarOpId::Or, {DType::Int8, DType::Float32}, "needs bool or integer inputs");
  refused(ScalarOpId::And, {DType::Bool, DType::Int8}, "does not mix booleans and integers");
  refused(ScalarOpId::Xor, {DType::UInt64, DType::Int64}, "no integer type");
  refused(ScalarOpId::Invert, {DType::Float32}, "needs bool or integer inputs");
  refused(ScalarOpId::RoundHalfToEven, {DType::Int32}, "needs a float input");
  refused(ScalarOpId::RoundHalfAwayFromZero, {DType::Bool}, "needs a float input");
  // Arity.
  refused(ScalarOpId::Add, {DType::Float64}, "two or more inputs");
  refused(ScalarOpId::Exp, {DType::Float64, DType::Float64}, "takes 1 input, got 2");
  refused(ScalarOpId::Switch, {DType::Bool, DType::Float64}, "takes 3 inputs, got 2");
  refused(ScalarOpId::Sub, {DType::Float64, DType::Float64, DType::Float64}, "takes 2 inputs");
  // Messages name the op as PyTensor prints it.
  CHECK(contains(error_of([] { apply_op(ScalarOpId::Neg, {in(DType::Bool)}); }), "Neg"));
  // sub of bool with an integer is fine (bool - int8 -> int8).
  CHECK(apply_op(ScalarOpId::Sub, {in(DType::Bool), in(DType::Int8)})->dtype() == DType::Int8);

  SUBCASE("Composite: input dtypes must match, and so must the number of inputs") {
    ScalarOp c = composite(format_example());
    CHECK(apply_op(c, {in(DType::Float64)})->dtype() == DType::Float64);
    CHECK(contains(error_of([&] { apply_op(c, {in(DType::Float32)}); }),
                   "Composite input 0 is declared float64 but receives float32"));
    CHECK(contains(error_of([&] {
                     apply_op(c, {in(DType::Float64), in(DType::Float64)});
                   }),
                   "takes 1 input, got 2"));
    // A Composite of no inputs (constants only) is a valid scalar op, but an Elemwise needs an
    // input to take its shape from.
    ScalarOp k = composite(Json::parse(R"({"name": "Composite",
        "variables": [{"id": "c", "dtype": "int8", "value": 1}], "inputs": [], "nodes": [],
        "outputs": ["c"]})"));
    CHECK(contains(error_of([&] { apply_op(k, {}); }), "needs at least one input"));
  }
  SUBCASE("ranks must be equal and static lengths compatible") {
    CHECK(contains(
        error_of([] {
          apply_op(ScalarOpId::Add, {in(DType::Float64, {-1}), in(DType::Float64, {-1, -1})});
        }),
        "insert a DimShuffle"));
    CHECK(contains(error_of([] {
                     apply_op(ScalarOpId::Add, {in(DType::Float64, {3}), in(DType::Float64, {4})});
                   }),
                   "incompatible static lengths 3 and 4"));
    // PyTensor's broadcast_static_dim_lengths.
    auto shape_of = [](const Shape& a, const Shape& b) {
      return apply_op(ScalarOpId::Add, {in(DType::Float64, a), in(DType::Float64, b)})->shape();
    };
    CHECK(shape_of({-1, 5}, {-1, -1}) == Shape{-1, 5});
    CHECK(shape_of({1, 5}, {-1, 1}) == Shape{-1, 5});
    CHECK(shape_of({-1, 1}, {1, 1}) == Shape{-1, 1});
    CHECK(shape_of({1, 1}, {1, 1}) == Shape{1, 1});
    CHECK(shape_of({0}, {1}) == Shape{0});
  }
}

TEST_CASE("upcast follows docs/pytensor_semantics.md section 2, all 121 pairs") {
  const std::vector<DType> order = {DType::Bool,   DType::Int8,    DType::Int16,  DType::Int32,
                                    DType::Int64,  DType::UInt8,   DType::UInt16, DType::UInt32,
                                    DType::UInt64, DType::Float32, DType::Float64};
  // Rows and columns in `order`, transcribed from the table.
  const char* table[11][11] = {
      {"b", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64"},
      {"i8", "i8", "i16", "i32", "i64", "i16", "i32", "i64", "f64", "f32", "f64"},
      {"i16", "i16", "i16", "i32", "i64", "i16", "i32", "i64", "f64", "f32", "f64"},
      {"i32", "i32", "i32", "i32", "i64", "i32", "i32", "i64", "f64", "f64", "f64"},
      {"i64", "i64", "i64", "i64", "i64", "i64", "i64", "i64", "f64", "f64", "f64"},
      {"u8", "i16", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64"},
      {"u16", "i32", "i32", "i32", "i64", "u16", "u16", "u32", "u64", "f32", "f64"},
      {"u32", "i64", "i64", "i64", "i64", "u32", "u32", "u32", "u64", "f64", "f64"},
      {"u64", "f64", "f64", "f64", "f64", "u64", "u64", "u64", "u64", "f64", "f64"},
      {"f32", "f32", "f32", "f64", "f64", "f32", "f32", "f64", "f64", "f32", "f64"},
      {"f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64"},
  };
  auto parse = [&](const std::string& s) {
    const char* full[] = {"bool",   "int8",   "int16",  "int32",   "int64",  "uint8",
                          "uint16", "uint32", "uint64", "float32", "float64"};
    const char* abbr[] = {"b", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64"};
    for (int k = 0; k < 11; ++k)
      if (s == abbr[k]) return *dtype_from_name(full[k]);
    FAIL("bad table entry " << s);
    return DType::Bool;
  };
  for (std::size_t r = 0; r < 11; ++r)
    for (std::size_t c = 0; c < 11; ++c) {
      INFO(dtype_name(order[r]) << " + " << dtype_name(order[c]));
      CHECK(upcast(order[r], order[c]) == parse(table[r][c]));
      // The Elemwise add of two vectors has that dtype too.
      CHECK(apply_op(ScalarOpId::Add, {in(order[r]), in(order[c])})->dtype() == parse(table[r][c]));
    }
}

TEST_CASE("output dtypes per scalar op follow PyTensor") {
  using D = DType;
  // upgrade_to_float, unary and binary (each input upgraded, then upcast).
  CHECK(out_dtype(ScalarOpId::Exp, {D::Int8}) == D::Float32);
  CHECK(out_dtype(ScalarOpId::Exp, {D::Bool}) == D::Float32);
  CHECK(out_dtype(ScalarOpId::Log, {D::UInt16}) == D::Float32);
  CHECK(out_dtype(ScalarOpId::Sqrt, {D::Int32}) == D::Float64);
  CHECK(out_dtype(ScalarOpId::Floor, {D::Int16}) == D::Float32);
  CHECK(out_dtype(ScalarOpId::Psi, {D::UInt64}) == D::Float64);
  CHECK(out_dtype(ScalarOpId::Sigmoid, {D::Float32}) == D::Float32);
  CHECK(out_dtype(ScalarOpId::Arctan2, {D::Int8, D::Int16}) == D::Float32);
  CHECK(out_dtype(ScalarOpId::Arctan2, {D::Int16, D::UInt16}) == D::Float32);
  CHECK(out_dtype(ScalarOpId::Arctan2, {D::Int8, D::UInt16}) == D::Float32);
  CHECK(out_dtype(ScalarOpId::Arctan2, {D::Int8, D::Int32}) == D::Float64);
  CHECK(out_dtype(ScalarOpId::Arctan2, {D::UInt16, D::Float32}) == D::Float32);
  CHECK(out_dtype(ScalarOpId::Arctan2, {D::Int16, D::Float64}) == D::Float64);
  // true_div: two discrete inputs give float64 whatever their size.
  CHECK(out_dtype(ScalarOpId::TrueDiv, {D::Int8, D::Int8}) == D::Float64);
  CHECK(out_dtype(ScalarOpId::TrueDiv, {D::Bool, D::Bool}) == D::Float64);
  CHECK(out_dtype(ScalarOpId::TrueDiv, {D::Int8, D::Float32}) == D::Float32);
  CHECK(out_dtype(ScalarOpId::TrueDiv, {D::Int32, D::Float32}) == D::Float64);
  CHECK(out_dtype(ScalarOpId::TrueDiv, {D::UInt64, D::Float32}) == D::Float64);
  // Comparisons and predicates are bool.
  for (ScalarOpId id : {ScalarOpId::Eq, ScalarOpId::Neq, ScalarOpId::Lt, ScalarOpId::Le,
                        ScalarOpId::Gt, ScalarOpId::Ge})
    CHECK(out_dtype(id, {D::Float32, D::UInt64}) == D::Bool);
  CHECK(out_dtype(ScalarOpId::IsNan, {D::Int8}) == D::Bool);
  CHECK(out_dtype(ScalarOpId::IsInf, {D::Float32}) == D::Bool);
  // pow: a bool result becomes int8.
  CHECK(out_dtype(ScalarOpId::Pow, {D::Bool, D::Bool}) == D::Int8);
  CHECK(out_dtype(ScalarOpId::Pow, {D::Int8, D::UInt8}) == D::Int16);
  // Same-dtype ops, bit ops, int_div of floats, second, switch, clip, cast.
  CHECK(out_dtype(ScalarOpId::Abs, {D::Bool}) == D::Bool);
  CHECK(out_dtype(ScalarOpId::Sqr, {D::UInt8}) == D::UInt8);
  CHECK(out_dtype(ScalarOpId::Invert, {D::Bool}) == D::Bool);
  CHECK(out_dtype(ScalarOpId::And, {D::Bool, D::Bool}) == D::Bool);
  CHECK(out_dtype(ScalarOpId::And, {D::Int8, D::UInt8}) == D::Int16);
  CHECK(out_dtype(ScalarOpId::Add, {D::Bool, D::Bool}) == D::Bool);
  CHECK(out_dtype(ScalarOpId::Add, {D::Int8, D::Int16, D::Float32}) == D::Float32);
  CHECK(out_dtype(ScalarOpId::IntDiv, {D::Float32, D::Int8}) == D::Float32);
  CHECK(out_dtype(ScalarOpId::Mod, {D::UInt64, D::Int64}) == D::Float64);
  CHECK(out_dtype(ScalarOpId::Second, {D::Float64, D::Int8}) == D::Int8);
  CHECK(out_dtype(ScalarOpId::Switch, {D::Float64, D::Int8, D::UInt8}) == D::Int16);
  CHECK(out_dtype(ScalarOpId::Clip, {D::Int8, D::Int16, D::Float32}) == D::Float32);
  CHECK(ScalarOp::cast(D::UInt16).output_dtypes({D::Float64})[0] == D::UInt16);
  // Every Composite output keeps its inner dtype.
  CHECK(composite(format_example()).output_dtypes({D::Float64}) == std::vector<DType>{D::Float64});
}

TEST_CASE("Elemwise prints as PyTensor does") {
  auto printed = [](const ScalarOp& op) { return Elemwise(op).str(); };
  CHECK(printed(ScalarOp(ScalarOpId::Add)) == "Add");
  CHECK(printed(ScalarOp(ScalarOpId::Eq)) == "Eq");
  CHECK(printed(ScalarOp(ScalarOpId::Ge)) == "Ge");
  CHECK(printed(ScalarOp(ScalarOpId::TrueDiv)) == "True_div");
  CHECK(printed(ScalarOp(ScalarOpId::IntDiv)) == "Int_div");
  CHECK(printed(ScalarOp(ScalarOpId::Sgn)) == "Sign");
  CHECK(printed(ScalarOp(ScalarOpId::And)) == "And");
  CHECK(printed(ScalarOp(ScalarOpId::Log1mexp)) == "Scalar_log1mexp");
  CHECK(printed(ScalarOp(ScalarOpId::RoundHalfToEven)) == "Roundhalftoeven");
  CHECK(printed(ScalarOp(ScalarOpId::Switch)) == "Switch");
  CHECK(printed(ScalarOp::cast(DType::Int8)) == "Cast{int8}");
  CHECK(ScalarOp(ScalarOpId::Eq).str() == "EQ");
  CHECK(ScalarOp::cast(DType::Float32).str() == "Cast{float32}");

  // Composite{<pprint of the output>}: operators fully parenthesised, other ops as calls of
  // their scalar str, constants as NumPy prints them.
  CHECK(composite(format_example()).str() == "Composite{log((1.0 + i0))}");
  CHECK(printed(composite(format_example())) == "Composite{log((1.0 + i0))}");

  auto g = std::make_shared<CompositeGraph>();
  int i0 = g->add_input(DType::Float64), i1 = g->add_input(DType::Float64),
      i2 = g->add_input(DType::Float64);
  int sub = g->add_node(ScalarOp(ScalarOpId::Sub), {i1, i2})[0];
  g->add_output(g->add_node(ScalarOp(ScalarOpId::Add), {i0, sub})[0]);
  CHECK(ScalarOp::composite(g).str() == "Composite{(i0 + (i1 - i2))}");

  g = std::make_shared<CompositeGraph>();
  i0 = g->add_input(DType::Float32);
  int zero = g->add_constant(make_scalar_array(DType::Int8, 0));
  int ge = g->add_node(ScalarOp(ScalarOpId::Ge), {i0, zero})[0];
  int neg = g->add_node(ScalarOp(ScalarOpId::Neg), {i0})[0];
  int f64 = g->add_node(ScalarOp::cast(DType::Float64), {neg})[0];
  int tenth = g->add_constant(make_scalar_array(DType::Float32, 0.1));
  int prod = g->add_node(ScalarOp(ScalarOpId::Mul), {f64, tenth, f64})[0];
  int sw = g->add_node(ScalarOp(ScalarOpId::Switch), {ge, i0, prod})[0];
  g->add_output(sw);
  ScalarOp c = ScalarOp::composite(g);
  CHECK(c.str() ==
        "Composite{Switch(GE(i0, 0), i0, (Cast{float64}((-i0)) * 0.1 * Cast{float64}((-i0))))}");
  // Elemwise capitalises the whole string, as PyTensor's str(scalar_op).capitalize().
  CHECK(printed(c) ==
        "Composite{switch(ge(i0, 0), i0, (cast{float64}((-i0)) * 0.1 * cast{float64}((-i0))))}");

  // Constants: NumPy's str of the scalar.
  auto const_str = [](DType dt, double v) {
    auto h = std::make_shared<CompositeGraph>();
    int x = h->add_input(dt);
    h->add_output(
        h->add_node(ScalarOp(ScalarOpId::Add), {x, h->add_constant(make_scalar_array(dt, v))})[0]);
    std::string s = ScalarOp::composite(h).str();
    return s.substr(std::string("Composite{(i0 + ").size(),
                    s.size() - std::string("Composite{(i0 + ").size() - 2);
  };
  CHECK(const_str(DType::Float64, 1e20) == "1e+20");
  CHECK(const_str(DType::Float64, 1e16) == "1e+16");
  CHECK(const_str(DType::Float64, 1e15) == "1000000000000000.0");
  CHECK(const_str(DType::Float64, 100.0) == "100.0");
  CHECK(const_str(DType::Float64, 0.0001) == "0.0001");
  CHECK(const_str(DType::Float64, 1.5e-5) == "1.5e-05");
  CHECK(const_str(DType::Float64, -2.5) == "-2.5");
  CHECK(const_str(DType::Float64, std::nan("")) == "nan");
  CHECK(const_str(DType::Float64, -kInf) == "-inf");
  CHECK(const_str(DType::Float32, 0.1) == "0.1");
  CHECK(const_str(DType::Float32, 123456789.0) == "123456790.0");
  CHECK(const_str(DType::Float32, 0.0001) == "1e-04");
  CHECK(const_str(DType::Int16, -300) == "-300");
  CHECK(const_str(DType::Bool, 1) == "True");

  // Several outputs, or more than 10 inner nodes: Composite{...}.
  g = std::make_shared<CompositeGraph>();
  i0 = g->add_input(DType::Float64);
  int e = g->add_node(ScalarOp(ScalarOpId::Exp), {i0})[0];
  g->add_output(e);
  g->add_output(i0);
  CHECK(ScalarOp::composite(g).str() == "Composite{...}");
  g = std::make_shared<CompositeGraph>();
  int v = g->add_input(DType::Float64);
  for (int k = 0; k < 11; ++k) v = g->add_node(ScalarOp(ScalarOpId::Exp), {v})[0];
  g->add_output(v);
  CHECK(ScalarOp::composite(g).str() == "Composite{...}");
}

TEST_CASE("loader spellings of Elemwise and their refusals") {
  const Elemwise* e =
      load_one(Json::parse(R"({"op": "log", "inputs": ["x"], "outputs": ["y"]})"), kF64Vector);
  REQUIRE(e != nullptr);
  CHECK(e->scalar_op().id() == ScalarOpId::Log);
  CHECK(e->str() == "Log");

  const Json i8_vector = {{"dtype", "int8"}, {"shape", {nullptr}}};
  e = load_one(
      Json::parse(
          R"({"op": "cast", "props": {"dtype": "int8"}, "inputs": ["n"], "outputs": ["y"]})"),
      i8_vector);
  REQUIRE(e != nullptr);
  CHECK(e->scalar_op().id() == ScalarOpId::Cast);
  CHECK(e->scalar_op().cast_dtype() == DType::Int8);
  CHECK(e->props() == Json::parse(R"({"scalar_op": {"name": "cast", "dtype": "int8"}})"));

  e = load_one(
      Json::parse(R"({"op": "Elemwise", "props": {"scalar_op": {"name": "cast", "dtype": "int8"}},
                               "inputs": ["x"], "outputs": ["y"]})"),
      i8_vector);
  CHECK(e->scalar_op() == ScalarOp::cast(DType::Int8));
  e = load_one(
      Json::parse(R"({"op": "Elemwise", "props": {"scalar_op": "add", "inplace_pattern": {"0": 0}},
                               "inputs": ["x", "n", "x"], "outputs": ["y"]})"),
      kF64Vector);
  CHECK(e->scalar_op().id() == ScalarOpId::Add);

  // Refusals name the JSON pointer.
  std::string msg = load_error(Json::parse(
      R"({"op": "cast", "props": {"dtype": "int9"}, "inputs": ["n"], "outputs": ["y"]})"));
  CHECK(contains(msg, "/nodes/0/props/dtype"));
  msg = load_error(Json::parse(R"({"op": "cast", "inputs": ["n"], "outputs": ["y"]})"));
  CHECK(contains(msg, "cast needs a \"dtype\""));
  msg = load_error(
      Json::parse(R"({"op": "log", "props": {"base": 2}, "inputs": ["x"], "outputs": ["y"]})"));
  CHECK(contains(msg, "/nodes/0/props/base"));
  msg = load_error(Json::parse(
      R"({"op": "Elemwise", "props": {"scalar_op": "nosuch"}, "inputs": ["x"], "outputs": ["y"]})"));
  CHECK(contains(msg, "/nodes/0/props/scalar_op"));
  CHECK(contains(msg, "unknown scalar op \"nosuch\""));
  msg = load_error(Json::parse(
      R"({"op": "Elemwise", "props": {"scalar_op": 3}, "inputs": ["x"], "outputs": ["y"]})"));
  CHECK(contains(msg, "/nodes/0/props/scalar_op"));
  msg = load_error(Json::parse(
      R"({"op": "Elemwise", "props": {"scalar_op": "exp", "extra": 1}, "inputs": ["x"], "outputs": ["y"]})"));
  CHECK(contains(msg, "/nodes/0/props/extra"));
  msg = load_error(
      Json::parse(R"({"op": "Elemwise", "props": {"scalar_op": {"name": "exp", "dtype": "int8"}},
                                   "inputs": ["x"], "outputs": ["y"]})"));
  CHECK(contains(msg, "/nodes/0/props/scalar_op/dtype"));
  msg = load_error(Json::parse(R"({"op": "neq", "inputs": ["x", "x"], "outputs": ["y"]})"));
  CHECK(contains(msg, "declared"));  // neq gives bool, y is declared float64
  msg = load_error(Json::parse(R"({"op": "sub", "inputs": ["x", "n", "x"], "outputs": ["y"]})"));
  CHECK(contains(msg, "/nodes/0"));
  CHECK(contains(msg, "takes 2 inputs, got 3"));

  SUBCASE("Composite refusals name the place inside the Composite") {
    auto with_composite = [](const Json& c) {
      return load_error(Json{{"op", "Elemwise"},
                             {"props", {{"scalar_op", c}}},
                             {"inputs", {"x"}},
                             {"outputs", {"y"}}});
    };
    Json c = format_example();
    c["nodes"][1]["inputs"] = {"t9"};
    msg = with_composite(c);
    CHECK(contains(msg, "/nodes/0/props/scalar_op/nodes/1/inputs/0"));
    CHECK(contains(msg, "undeclared variable \"t9\""));
    c = format_example();
    c["variables"][3]["dtype"] = "float32";
    CHECK(contains(with_composite(c), "/nodes/0/props/scalar_op/nodes/1/outputs/0"));
    c = format_example();
    c["nodes"][0]["op"] = "and";
    CHECK(contains(with_composite(c), "/nodes/0/props/scalar_op/nodes/0"));
    c = format_example();
    c["variables"][1]["value"] = "one";
    CHECK(contains(with_composite(c), "/nodes/0/props/scalar_op/variables/1/value"));
    c = format_example();
    c["nodes"][0]["inputs"] = {"c0", "t1"};  // t0 needs t1 needs t0
    msg = with_composite(c);
    CHECK(contains(msg, "/nodes/0/props/scalar_op/nodes"));
    CHECK(contains(msg, "cycle"));
    c = format_example();
    c["outputs"] = Json::array();
    CHECK(contains(with_composite(c), "/nodes/0/props/scalar_op/outputs"));
    c = format_example();
    c["inputs"] = {"c0"};
    CHECK(contains(with_composite(c), "cannot be a constant"));
  }
}

TEST_CASE("Composite JSON round trip") {
  // Nested Composite, constants of several dtypes, a cast, several outputs (one an input,
  // one a constant), nodes listed out of order.
  Json inner = Json::parse(R"({"name": "Composite",
    "variables": [{"id": "a", "dtype": "float32"}, {"id": "b", "dtype": "float32"},
                  {"id": "p", "dtype": "float32"}, {"id": "q", "dtype": "bool"}],
    "inputs": ["a", "b"],
    "nodes": [{"op": "mul", "inputs": ["a", "b"], "outputs": ["p"]},
              {"op": "lt", "inputs": ["a", "b"], "outputs": ["q"]}],
    "outputs": ["p", "q"]})");
  Json outer = {
      {"name", "Composite"},
      {"variables",
       {{{"id", "x"}, {"dtype", "float32"}},
        {{"id", "n"}, {"dtype", "int8"}},
        {{"id", "k"}, {"dtype", "int8"}, {"value", -3}},
        {{"id", "h"}, {"dtype", "float64"}, {"value", "nan"}},
        {{"id", "t"}, {"dtype", "bool"}, {"value", true}},
        {{"id", "m"}, {"dtype", "int8"}},
        {{"id", "f"}, {"dtype", "float32"}},
        {{"id", "p"}, {"dtype", "float32"}},
        {{"id", "q"}, {"dtype", "bool"}},
        {{"id", "r"}, {"dtype", "bool"}}}},
      {"inputs", {"x", "n"}},
      {"nodes",
       {{{"op", inner}, {"inputs", {"x", "f"}}, {"outputs", {"p", "q"}}},
        {{"op", {{"name", "cast"}, {"dtype", "float32"}}}, {"inputs", {"m"}}, {"outputs", {"f"}}},
        {{"op", "mul"}, {"inputs", {"n", "k"}}, {"outputs", {"m"}}},
        {{"op", "and"}, {"inputs", {"q", "t"}}, {"outputs", {"r"}}}}},
      {"outputs", {"p", "r", "n", "h", "p"}}};
  ScalarOp c = composite(outer);
  CHECK(c.num_outputs() == 5);
  CHECK(
      c.output_dtypes({DType::Float32, DType::Int8}) ==
      std::vector<DType>{DType::Float32, DType::Bool, DType::Int8, DType::Float64, DType::Float32});
  Json once = c.to_json();
  ScalarOp again = composite(once);
  CHECK(again.to_json() == once);
  CHECK(again == c);
  CHECK(once["inputs"] == Json::parse(R"(["i0", "i1"])"));

  // Through a whole graph file: Elemwise(Composite) saves and reloads identically.
  GraphBuilder gb("composite_round_trip");
  Var x = gb.input("x", f32, {-1});
  Var n = gb.input("n", i8, {-1});
  VarList outs = elemwise(c, {x, n});
  for (std::size_t k = 0; k < outs.size(); ++k) gb.output(outs[k], "o" + std::to_string(k));
  FunctionGraph fg = gb.build();
  std::string text = save_graph_text(fg);
  FunctionGraph loaded = load_graph_text(text, "");
  CHECK(save_graph_text(loaded) == text);

  // Evaluate it: x * (float32)(n * -3 wrapped in int8), x < that, n, nan, and p again.
  Array xa = Array::empty(DType::Float32, {2}), na = Array::empty(DType::Int8, {2});
  xa.data<float>()[0] = 200.0f;
  xa.data<float>()[1] = -1.0f;
  na.data<std::int8_t>()[0] = 50;  // 50 * -3 = -150 wraps to 106
  na.data<std::int8_t>()[1] = -1;
  auto res = evaluate(loaded, {xa, na});
  REQUIRE(res.size() == 5);
  CHECK(res[0].data<float>()[0] == 21200.0f);
  CHECK(res[0].data<float>()[1] == -3.0f);
  CHECK(res[1].data<bool>()[0] == false);  // 200 < 106 is false
  CHECK(res[1].data<bool>()[1] == true);
  CHECK(res[2].data<std::int8_t>()[0] == 50);
  CHECK(std::isnan(res[3].data<double>()[1]));
  CHECK(res[4].data<float>()[0] == 21200.0f);
  CHECK(res[0].data<float>() != res[4].data<float>());  // outputs never share memory
}

TEST_CASE("kiln's own scalar definitions") {
  namespace ks = kiln_scalar;
  // Integer division and modulo: floor semantics, x // 0 = x % 0 = 0, INT_MIN // -1 wraps.
  CHECK(ks::int_div<std::int8_t>(-7, 2) == -4);
  CHECK(ks::int_div<std::int8_t>(7, -2) == -4);
  CHECK(ks::mod<std::int8_t>(-7, 3) == 2);
  CHECK(ks::mod<std::int8_t>(7, -3) == -2);
  CHECK(ks::int_div<std::int32_t>(5, 0) == 0);
  CHECK(ks::mod<std::uint16_t>(5, 0) == 0);
  CHECK(ks::int_div<std::int8_t>(-128, -1) == -128);
  CHECK(ks::mod<std::int64_t>(std::numeric_limits<std::int64_t>::min(), -1) == 0);
  CHECK(ks::mod(-7.5, 2.0) == 0.5);
  CHECK(std::signbit(ks::mod(4.0, -2.0)));
  CHECK(ks::int_div(-5.0, kInf) == -1.0);
  // Saturating float -> int conversion, NaN -> 0; nonzero (and NaN) -> true.
  CHECK(ks::convert<std::int8_t>(1e10) == 127);
  CHECK(ks::convert<std::uint8_t>(-3.5) == 0);
  CHECK(ks::convert<std::int32_t>(std::nan("")) == 0);
  CHECK(ks::convert<std::int64_t>(-1e300) == std::numeric_limits<std::int64_t>::min());
  CHECK(ks::convert<std::uint64_t>(1.8446744073709552e19) ==
        std::numeric_limits<std::uint64_t>::max());
  CHECK(ks::convert<bool>(std::nan("")) == true);
  CHECK(ks::convert<bool>(-0.0) == false);
  // Integer pow: wraps; negative exponents truncate (1, +-1 or 0).
  CHECK(ks::pow<std::int8_t>(3, 5) == -13);
  CHECK(ks::pow<std::int32_t>(2, -1) == 0);
  CHECK(ks::pow<std::int32_t>(-1, -3) == -1);
  CHECK(ks::pow<bool>(false, false) == true);
  // psi: scipy's values at zero and at the poles.
  CHECK(ks::psi(0.0) == -kInf);
  CHECK(ks::psi(-0.0) == kInf);
  CHECK(std::isnan(ks::psi(-3.0)));
  CHECK(std::isnan(ks::psi(-kInf)));
  CHECK(ks::psi(1.0) == doctest::Approx(-0.5772156649015329).epsilon(1e-15));
  // tri_gamma: scipy's polygamma(1, x) special values; pi^2/6 at 1, pi^2/2 + 4 at -1/2.
  CHECK(ks::trigamma(0.0) == kInf);
  CHECK(ks::trigamma(-0.0) == kInf);
  CHECK(ks::trigamma(-3.0) == kInf);
  CHECK(std::isnan(ks::trigamma(-kInf)));
  CHECK(ks::trigamma(kInf) == 0.0);
  CHECK(ks::trigamma(1.0) == doctest::Approx(1.6449340668482264).epsilon(1e-15));
  CHECK(ks::trigamma(-0.5) == doctest::Approx(8.934802200544679).epsilon(1e-15));
  // erfinv to full precision next to 1 (the inverse of erfc there).
  CHECK(ks::erfinv(1.0 - std::ldexp(1.0, -53)) ==
        doctest::Approx(5.8635847487551676).epsilon(1e-15));
  CHECK(std::signbit(ks::erfinv(-0.0)));
  // sigmoid keeps subnormal results.
  CHECK(ks::sigmoid(-745.0) > 0.0);
  CHECK(ks::sigmoid(-800.0) == 0.0);
}

TEST_CASE("branch-free sigmoid and softplus across PyTensor's switch points and the extremes") {
  namespace ks = kiln_scalar;
  // Within 2 ULP of a long double evaluation, around where PyTensor's piecewise softplus
  // switches form (x < -37: exp(x); x > 33.3: x) and out to where the results over- or
  // underflow; NaN stays NaN, ±inf give the limits.
  // |got - want| in units of the last place of want, rounded to got's type.
  const auto ulps = [](auto got, long double want) {
    using T = decltype(got);
    const T w = static_cast<T>(want);
    if (got == w) return 0.0;
    const T inf = std::numeric_limits<T>::infinity();
    return static_cast<double>(std::fabs(got - w) / (std::nextafter(std::fabs(w), inf) - std::fabs(w)));
  };
  for (double x : {-800.0, -745.0, -700.0, -100.0, -37.5, -37.0, -36.5, -20.0, -1.0, -1e-300, 0.0, 1e-300, 1.0,
                   20.0, 33.0, 33.3, 33.5, 40.0, 100.0, 700.0, 710.0, 1e300}) {
    INFO("x = " << x);
    const long double lx = x;
    const long double sig = 1.0L / (1.0L + std::exp(-lx));
    const long double sp = lx > 0 ? lx + std::log1p(std::exp(-lx)) : std::log1p(std::exp(lx));
    CHECK(ulps(ks::sigmoid(x), sig) <= 2);
    CHECK(ulps(ks::softplus(x), sp) <= 2);
    if (std::fabs(x) < 1e38) {
      CHECK(ulps(ks::sigmoid(static_cast<float>(x)), sig) <= 2);
      CHECK(ulps(ks::softplus(static_cast<float>(x)), sp) <= 2);
    }
  }
  CHECK(std::isnan(ks::sigmoid(std::nan(""))));
  CHECK(std::isnan(ks::softplus(std::nan(""))));
  CHECK(ks::sigmoid(kInf) == 1.0);
  CHECK(ks::sigmoid(-kInf) == 0.0);
  CHECK(ks::softplus(kInf) == kInf);
  CHECK(ks::softplus(-kInf) == 0.0);
}

TEST_CASE("C++ operators build Elemwise nodes with PyTensor's literal autocasting") {
  GraphBuilder g("ops");
  Var x = g.input("x", f32, {-1});
  Var y = g.input("y", f32, {-1});
  Var b = g.input("b", i8, {3});

  Var s = 1 + x;
  CHECK(s->dtype() == DType::Float32);
  REQUIRE(elemwise_of(s) != nullptr);
  CHECK(elemwise_of(s)->scalar_op().id() == ScalarOpId::Add);
  // The literal became an int8 constant, expanded to rank 1 by a DimShuffle.
  Var lit = s->owner()->input(0);
  REQUIRE(lit->owner() != nullptr);
  CHECK(lit->owner()->op().name() == "DimShuffle");
  CHECK(lit->owner()->input(0)->is_constant());
  CHECK(lit->owner()->input(0)->dtype() == DType::Int8);

  CHECK((x * 0.5)->dtype() == DType::Float32);  // 0.5 is exact in float32
  CHECK((x * 0.1)->dtype() == DType::Float64);  // 0.1 is not
  CHECK((0.25 - x)->dtype() == DType::Float32);
  CHECK((x / 2)->dtype() == DType::Float32);
  CHECK((b / 2)->dtype() == DType::Float64);  // true_div of integers
  CHECK((b + 1)->dtype() == DType::Int8);
  CHECK((b + 1000)->dtype() == DType::Int16);  // 1000 needs int16
  CHECK((b * 100000)->dtype() == DType::Int32);
  CHECK((b % 3)->dtype() == DType::Int8);
  CHECK((b + 1)->shape() == Shape{3});

  Var lt = x < y;
  CHECK(lt->dtype() == DType::Bool);
  CHECK(elemwise_of(lt)->scalar_op().id() == ScalarOpId::Lt);
  CHECK(elemwise_of(x <= 1)->scalar_op().id() == ScalarOpId::Le);
  CHECK(elemwise_of(2.5 > x)->scalar_op().id() == ScalarOpId::Gt);
  CHECK(elemwise_of(x >= y)->scalar_op().id() == ScalarOpId::Ge);
  CHECK(elemwise_of(eq(x, y))->scalar_op().id() == ScalarOpId::Eq);
  CHECK(elemwise_of(neq(x, 0))->scalar_op().id() == ScalarOpId::Neq);
  CHECK(elemwise_of(-x)->scalar_op().id() == ScalarOpId::Neg);
  CHECK(elemwise_of(~b)->scalar_op().id() == ScalarOpId::Invert);
  CHECK(elemwise_of(lt & (x > y))->scalar_op().id() == ScalarOpId::And);
  CHECK(contains(error_of([&] { return x & y; }), "needs bool or integer inputs"));

  // == and != compare identity (as in PyTensor); they build nothing.
  static_assert(std::is_same_v<decltype(x == y), bool>);
  CHECK(x == x);
  CHECK_FALSE(x == y);
  CHECK(x != y);

  // cast returns the variable itself when the dtype already matches.
  CHECK(cast(x, f32) == x);
  CHECK(elemwise_of(cast(x, i8))->scalar_op() == ScalarOp::cast(DType::Int8));
  CHECK(elemwise_of(where(lt, x, 0))->scalar_op().id() == ScalarOpId::Switch);
  CHECK(clip(b, 0, 5.5)->dtype() == DType::Float32);

  // Evaluate one expression end to end.
  g.output(where(x < y, x * 0.5, y) + 1, "z");
  FunctionGraph fg = g.build();
  Array xa = Array::empty(DType::Float32, {2}), ya = Array::empty(DType::Float32, {2});
  xa.data<float>()[0] = 1.0f;
  xa.data<float>()[1] = 4.0f;
  ya.data<float>()[0] = 3.0f;
  ya.data<float>()[1] = 2.0f;
  Array ba = Array::zeros(DType::Int8, {3});
  auto out = evaluate(fg, {xa, ya, ba});
  REQUIRE(out.size() == 1);
  CHECK(out[0].dtype() == DType::Float32);
  CHECK(out[0].data<float>()[0] == 1.5f);
  CHECK(out[0].data<float>()[1] == 3.0f);
}
