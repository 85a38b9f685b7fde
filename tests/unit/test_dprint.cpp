// dprint: PyTensor's debugprint format (docs/pytensor_semantics.md section 5, and PyTensor's
// tests/test_printing.py), NumPy's str() of constants, and graphviz output.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>

#include <nlohmann/json.hpp>

#include "api/elementwise.h"
#include "api/graph_builder.h"
#include "dot_check.h"
#include "io/value_json.h"
#include "ir/error.h"
#include "ops/dimshuffle.h"
#include "ops/scalar/composite.h"
#include "print/dprint.h"
#include "print/numpy_str.h"

using namespace kiln;

namespace {

// A test op with two outputs (copies of its input).
class TwoOutputs : public Op {
 public:
  std::string_view name() const override { return "MyMultiOut"; }
  std::vector<TensorType> infer_types(const VarList& in) const override {
    return {in.at(0)->type(), in.at(0)->type()};
  }
  void perform(const Apply&, const std::vector<Array>& in, std::vector<Array>& out) const override {
    out[0] = in[0];
    out[1] = in[0];
  }
};

// A test op that overwrites its input (destroy_map {0: [0]}).
class InPlace : public Op {
 public:
  std::string_view name() const override { return "MyInplace"; }
  std::vector<TensorType> infer_types(const VarList& in) const override { return {in.at(0)->type()}; }
  void perform(const Apply&, const std::vector<Array>& in, std::vector<Array>& out) const override {
    out[0] = in[0];
  }
  IndexMap destroy_map() const override { return {{0, {0}}}; }
};

FunctionGraph graph_of(std::initializer_list<Var> outputs, std::initializer_list<Var> inputs) {
  return FunctionGraph(VarList(inputs), VarList(outputs), "test");
}

// PyTensor's tests/test_printing.py::test_debugprint graph: G = C + F with C = A + B named "C".
struct DebugprintGraph {
  Var A = make_input(TensorType(f64, {-1, -1}), "A");
  Var B = make_input(TensorType(f64, {-1, -1}), "B");
  Var D = make_input(TensorType(f64, {-1, -1}), "D");
  Var E = make_input(TensorType(f64, {-1, -1}), "E");
  FunctionGraph fg;
  DebugprintGraph() {
    Var C = A + B;
    C->set_name("C");
    Var F = D + E;
    fg = graph_of({C + F}, {A, B, D, E});
  }
};

DprintOptions ids(const std::string& id_type) {
  DprintOptions o;
  o.id_type = id_type;
  return o;
}

}  // namespace

TEST_CASE("dprint: a repeated subtree is printed once, then as ···") {
  GraphBuilder g;
  Var x = g.input("x", f64, {-1});
  Var e = exp(x);
  g.output(e * e + e);
  FunctionGraph fg = g.build();
  CHECK(dprint(fg) ==
        "Add [id A]\n"
        " ├─ Mul [id B]\n"
        " │  ├─ Exp [id C]\n"
        " │  │  └─ x [id D]\n"
        " │  └─ Exp [id C]\n"
        " │     └─ ···\n"
        " └─ Exp [id C]\n"
        "    └─ ···\n");

  DprintOptions typed;
  typed.print_type = true;
  CHECK(dprint(fg, typed) ==
        "Add [id A] <Vector(float64, shape=(?,))>\n"
        " ├─ Mul [id B] <Vector(float64, shape=(?,))>\n"
        " │  ├─ Exp [id C] <Vector(float64, shape=(?,))>\n"
        " │  │  └─ x [id D] <Vector(float64, shape=(?,))>\n"
        " │  └─ Exp [id C] <Vector(float64, shape=(?,))>\n"
        " │     └─ ···\n"
        " └─ Exp [id C] <Vector(float64, shape=(?,))>\n"
        "    └─ ···\n");
}

TEST_CASE("dprint: test_debugprint's graph with CHAR, int and no ids, and stop_on_name") {
  DebugprintGraph t;
  CHECK(dprint(t.fg, ids("CHAR")) ==
        "Add [id A]\n"
        " ├─ Add [id B] 'C'\n"
        " │  ├─ A [id C]\n"
        " │  └─ B [id D]\n"
        " └─ Add [id E]\n"
        "    ├─ D [id F]\n"
        "    └─ E [id G]\n");
  CHECK(dprint(t.fg, ids("int")) ==
        "Add [id 0]\n"
        " ├─ Add [id 1] 'C'\n"
        " │  ├─ A [id 2]\n"
        " │  └─ B [id 3]\n"
        " └─ Add [id 4]\n"
        "    ├─ D [id 5]\n"
        "    └─ E [id 6]\n");
  CHECK(dprint(t.fg, ids("")) ==
        "Add\n"
        " ├─ Add 'C'\n"
        " │  ├─ A\n"
        " │  └─ B\n"
        " └─ Add\n"
        "    ├─ D\n"
        "    └─ E\n");
  DprintOptions stop;
  stop.stop_on_name = true;
  CHECK(dprint(t.fg, stop) ==
        "Add [id A]\n"
        " ├─ Add [id B] 'C'\n"
        " │  └─ ···\n"
        " └─ Add [id C]\n"
        "    ├─ D [id D]\n"
        "    └─ E [id E]\n");
  DprintOptions shallow;
  shallow.depth = 2;
  CHECK(dprint(t.fg, shallow) ==
        "Add [id A]\n"
        " ├─ Add [id B] 'C'\n"
        " └─ Add [id C]\n");
  CHECK_THROWS_AS(dprint(t.fg, ids("hex")), UserError);
}

TEST_CASE("dprint: named outputs, unnamed inputs, constants broadcast by ExpandDims") {
  GraphBuilder g;
  Var x = g.input("x", f64, {-1});
  Var u = g.input("", f64, {-1, 3});
  g.output(x * 2, "doubled");
  g.output(u + 1.5);
  FunctionGraph fg = g.build();
  CHECK(dprint(fg) ==
        "Mul [id A] 'doubled'\n"
        " ├─ x [id B]\n"
        " └─ ExpandDims{axis=0} [id C]\n"
        "    └─ 2 [id D]\n"
        "Add [id E]\n"
        " ├─ <Matrix(float64, shape=(?, 3))> [id F]\n"
        " └─ ExpandDims{axes=[0, 1]} [id G]\n"
        "    └─ 1.5 [id H]\n");
}

TEST_CASE("dprint: toposort positions, view and destroy maps (test_debugprint's compiled form)") {
  GraphBuilder g;
  Var A = g.input("A", f64, {-1, -1});
  Var J = g.input("", f64, {-1});
  Var y = apply1(std::make_shared<InPlace>(), {J});
  g.output(A + y);
  FunctionGraph fg = g.build();
  DprintOptions o;
  o.id_type = "";
  o.print_destroy_map = true;
  o.print_view_map = true;
  o.print_toposort = true;
  CHECK(dprint(fg, o) ==
        "Add 2\n"
        " ├─ A\n"
        " └─ ExpandDims{axis=0} v={0: [0]} 1\n"
        "    └─ MyInplace d={0: [0]} 0\n"
        "       └─ <Vector(float64, shape=(?,))>\n");
  // Without the flags, no maps and no positions.
  CHECK(dprint(fg, ids("")) ==
        "Add\n"
        " ├─ A\n"
        " └─ ExpandDims{axis=0}\n"
        "    └─ MyInplace\n"
        "       └─ <Vector(float64, shape=(?,))>\n");
}

TEST_CASE("dprint: a multi-output node prints .0 / .1 and is expanded once") {
  GraphBuilder g;
  Var x = g.input("x", f64, {-1});
  VarList outs = make_node(std::make_shared<TwoOutputs>(), {x})->outputs();
  g.output(outs[0] + outs[1]);
  CHECK(dprint(g.build()) ==
        "Add [id A]\n"
        " ├─ MyMultiOut.0 [id B]\n"
        " │  └─ x [id C]\n"
        " └─ MyMultiOut.1 [id B]\n"
        "    └─ ···\n");

  FunctionGraph both = graph_of({outs[0], outs[1]}, {x});
  CHECK(dprint(both) ==
        "MyMultiOut.0 [id A]\n"
        " └─ x [id B]\n"
        "MyMultiOut.1 [id A]\n"
        " └─ ···\n");
}

TEST_CASE("dprint: a Composite's inner graph (test_debugprint's Composite{(i0 + (i1 - i2))})") {
  auto cg = std::make_shared<CompositeGraph>();
  int i0 = cg->add_input(f64), i1 = cg->add_input(f64), i2 = cg->add_input(f64);
  int t0 = cg->add_node(ScalarOp(ScalarOpId::Sub), {i1, i2})[0];
  int t1 = cg->add_node(ScalarOp(ScalarOpId::Add), {i0, t0})[0];
  cg->add_output(t1);
  DebugprintGraph t;
  Var out = elemwise1(ScalarOp::composite(cg), {t.A, t.B, t.D});
  FunctionGraph fg = graph_of({out}, {t.A, t.B, t.D});
  REQUIRE(out->owner()->op().str() == "Composite{(i0 + (i1 - i2))}");
  CHECK(dprint(fg) ==
        "Composite{(i0 + (i1 - i2))} [id A]\n"
        " ├─ A [id B]\n"
        " ├─ B [id C]\n"
        " └─ D [id D]\n"
        "\n"
        "Inner graphs:\n"
        "\n"
        "Composite{(i0 + (i1 - i2))} [id A]\n"
        " ← add [id E]\n"
        "    ├─ i0 [id F]\n"
        "    └─ sub [id G]\n"
        "       ├─ i1 [id H]\n"
        "       └─ i2 [id I]\n");
  DprintOptions o;
  o.id_type = "";
  o.print_toposort = true;
  o.print_type = true;
  CHECK(dprint(fg, o) ==
        "Composite{(i0 + (i1 - i2))} <Matrix(float64, shape=(?, ?))> 0\n"
        " ├─ A <Matrix(float64, shape=(?, ?))>\n"
        " ├─ B <Matrix(float64, shape=(?, ?))>\n"
        " └─ D <Matrix(float64, shape=(?, ?))>\n"
        "\n"
        "Inner graphs:\n"
        "\n"
        "Composite{(i0 + (i1 - i2))}\n"
        " ← add <float64>\n"
        "    ├─ i0 <float64>\n"
        "    └─ sub <float64>\n"
        "       ├─ i1 <float64>\n"
        "       └─ i2 <float64>\n");
}

TEST_CASE("dprint: Composite inner constants, raw scalar names, several outputs, nesting") {
  Var x = make_input(TensorType(f64, {-1}), "x");
  Var y = make_input(TensorType(f64, {-1}), "y");

  SUBCASE("constants print as their value; scalar ops by their raw str (GE, Switch)") {
    auto cg = std::make_shared<CompositeGraph>();
    int i0 = cg->add_input(f64);
    Array zero = Array::empty(f64, {});
    *zero.data<double>() = 0.0;
    Array half = Array::empty(f64, {});
    *half.data<double>() = -0.5;
    int c0 = cg->add_constant(zero);
    int c1 = cg->add_constant(half);
    int ge = cg->add_node(ScalarOp(ScalarOpId::Ge), {i0, c0})[0];
    int sw = cg->add_node(ScalarOp(ScalarOpId::Switch), {ge, i0, c1})[0];
    cg->add_output(sw);
    Var out = elemwise1(ScalarOp::composite(cg), {x});
    std::string op = out->owner()->op().str();
    CHECK(dprint(graph_of({out}, {x})) ==
          op + " [id A]\n"
          " └─ x [id B]\n"
          "\n"
          "Inner graphs:\n"
          "\n" +
          op + " [id A]\n"
          " ← Switch [id C]\n"
          "    ├─ GE [id D]\n"
          "    │  ├─ i0 [id E]\n"
          "    │  └─ 0.0 [id F]\n"
          "    ├─ i0 [id E]\n"
          "    └─ -0.5 [id G]\n");
  }

  SUBCASE("a two-output Composite: one inner-graph section, one line per inner output") {
    auto cg = std::make_shared<CompositeGraph>();
    int i0 = cg->add_input(f64), i1 = cg->add_input(f64);
    cg->add_output(cg->add_node(ScalarOp(ScalarOpId::Add), {i0, i1})[0]);
    cg->add_output(cg->add_node(ScalarOp(ScalarOpId::Mul), {i0, i1})[0]);
    VarList outs = elemwise(ScalarOp::composite(cg), {x, y});
    REQUIRE(outs.size() == 2);
    std::string op = outs[0]->owner()->op().str();
    CHECK(op == "Composite{...}");
    CHECK(dprint(graph_of({outs[0], outs[1]}, {x, y})) ==
          "Composite{...}.0 [id A]\n"
          " ├─ x [id B]\n"
          " └─ y [id C]\n"
          "Composite{...}.1 [id A]\n"
          " └─ ···\n"
          "\n"
          "Inner graphs:\n"
          "\n"
          "Composite{...} [id A]\n"
          " ← add [id D]\n"
          "    ├─ i0 [id E]\n"
          "    └─ i1 [id F]\n"
          " ← mul [id G]\n"
          "    ├─ i0 [id E]\n"
          "    └─ i1 [id F]\n");
  }

  SUBCASE("a Composite inside a Composite gets its own section, after its parent") {
    auto inner = std::make_shared<CompositeGraph>();
    int a = inner->add_input(f64), b = inner->add_input(f64);
    inner->add_output(inner->add_node(ScalarOp(ScalarOpId::Mul), {a, b})[0]);
    ScalarOp inner_op = ScalarOp::composite(inner);
    auto outer = std::make_shared<CompositeGraph>();
    int i0 = outer->add_input(f64), i1 = outer->add_input(f64);
    int m = outer->add_node(inner_op, {i0, i1})[0];
    outer->add_output(outer->add_node(ScalarOp(ScalarOpId::Add), {i0, m})[0]);
    Var out = elemwise1(ScalarOp::composite(outer), {x, y});
    std::string op = out->owner()->op().str();
    CHECK(dprint(graph_of({out}, {x, y})) ==
          op + " [id A]\n"
          " ├─ x [id B]\n"
          " └─ y [id C]\n"
          "\n"
          "Inner graphs:\n"
          "\n" +
          op + " [id A]\n"
          " ← add [id D]\n"
          "    ├─ i0 [id E]\n"
          "    └─ " + inner_op.str() + " [id F]\n"
          "       ├─ i0 [id E]\n"
          "       └─ i1 [id G]\n"
          "\n" +
          inner_op.str() + " [id F]\n"
          " ← mul [id H]\n"
          "    ├─ i0 [id I]\n"
          "    └─ i1 [id J]\n");
  }
}

TEST_CASE("dprint: ids past Z continue BA, BB, ...") {
  GraphBuilder g;
  Var v = g.input("x", f64, {});
  for (int i = 0; i < 30; ++i) v = exp(v);
  g.output(v);
  std::string text = dprint(g.build());
  CHECK(text.rfind("Exp [id A]\n", 0) == 0);
  CHECK(text.find("Exp [id Z]\n") != std::string::npos);
  CHECK(text.find("Exp [id BD]\n") != std::string::npos);
  CHECK(text.find("x [id BE]\n") != std::string::npos);
}

TEST_CASE("dprint: a deep chain prints without recursion, and --depth stops it") {
  GraphBuilder g;
  Var v = g.input("x", f64, {-1});
  Var x = v;
  for (int i = 0; i < 2000; ++i) v = v + x;
  g.output(v);
  FunctionGraph fg = g.build();
  std::string text = dprint(fg, ids(""));
  CHECK(std::count(text.begin(), text.end(), '\n') == 4001);
  std::string deepest;
  for (int i = 0; i < 1999; ++i) deepest += " │ ";  // the first Add is 1999 levels down
  CHECK(text.find("\n" + deepest + " └─ x\n") != std::string::npos);
  const std::string last_line = "\n └─ x\n";
  CHECK(text.compare(text.size() - last_line.size(), last_line.size(), last_line) == 0);
  DprintOptions shallow = ids("");
  shallow.depth = 3;
  CHECK(dprint(fg, shallow) ==
        "Add\n"
        " ├─ Add\n"
        " │  ├─ Add\n"
        " │  └─ x\n"
        " └─ x\n");
}

TEST_CASE("dprint: constants, named constants, long values abbreviated") {
  Array big = Array::empty(i64, {2000});
  for (int i = 0; i < 2000; ++i) big.data<std::int64_t>()[i] = i;
  Var c = make_constant(big);
  Array h = Array::empty(f64, {});
  *h.data<double>() = -0.5;
  Var named = make_constant(h, "c");
  Var x = make_input(TensorType(i64, {2000}), "x");
  Var out = x + c + named;
  std::string text = dprint(graph_of({out}, {x}));
  CHECK(text.find(" │  └─ [   0    1 ... 1998 1999] [id D]\n") != std::string::npos);
  CHECK(text.find("└─ c{-0.5} [id") != std::string::npos);
}

TEST_CASE("numpy_str matches NumPy's str() (cases printed by NumPy 1.24)") {
  struct Case {
    const char* dtype;
    const char* shape;
    const char* values;
    const char* expected;
  };
  const Case cases[] = {
      {"float64", "[3]", "[1.0,2.5,3.0]", "[1.  2.5 3. ]"},
      {"float64", "[3]", "[0.1,0.2,0.30000000000000004]", "[0.1 0.2 0.3]"},
      {"float64", "[2]", "[0.3333333333333333,0.6666666666666666]", "[0.33333333 0.66666667]"},
      {"float64", "[2]", "[1e-05,1.0]", "[1.e-05 1.e+00]"},
      {"float64", "[2]", "[100000000.0,1.0]", "[1.e+08 1.e+00]"},
      {"float64", "[3]", "[1e-05,\"nan\",\"-inf\"]", "[1.e-05    nan   -inf]"},
      {"float64", "[2]", "[\"nan\",\"inf\"]", "[nan inf]"},
      {"float64", "[2]", "[\"nan\",\"-inf\"]", "[ nan -inf]"},
      {"float64", "[2]", "[0.0,-0.0]", "[ 0. -0.]"},
      {"float64", "[3]", "[1.5,-2.25,1000.0]", "[   1.5    -2.25 1000.  ]"},
      {"float64", "[2]", "[123456.789,0.5]", "[1.23456789e+05 5.00000000e-01]"},
      {"float64", "[2]", "[1e+100,-1e-100]", "[ 1.e+100 -1.e-100]"},
      {"float64", "[2]", "[1.0,1001.0]", "[1.000e+00 1.001e+03]"},
      {"float64", "[2, 2]", "[1.0,2.0,3.0,4.0]", "[[1. 2.]\n [3. 4.]]"},
      {"float64", "[2, 2, 2]", "[1.0,2.0,3.0,4.0,5.0,6.0,7.0,8.0]", "[[[1. 2.]\n  [3. 4.]]\n\n [[5. 6.]\n  [7. 8.]]]"},
      {"float32", "[2]", "[0.10000000149011612,0.20000000298023224]", "[0.1 0.2]"},
      {"float32", "[2]", "[1.0,1.0000000116860974e-07]", "[1.e+00 1.e-07]"},
      {"float32", "[2]", "[3.4028234663852886e+38,1.0]", "[3.4028235e+38 1.0000000e+00]"},
      {"int64", "[3]", "[1,-20,300]", "[  1 -20 300]"},
      {"int8", "[2, 2]", "[1,2,3,4]", "[[1 2]\n [3 4]]"},
      {"uint64", "[2]", "[18446744073709551615,0]", "[18446744073709551615                    0]"},
      {"bool", "[2]", "[true,false]", "[ True False]"},
      {"bool", "[1]", "[true]", "[ True]"},
      {"bool", "[2, 2]", "[false,false,true,false]", "[[False False]\n [ True False]]"},
      {"float64", "[30]", "[0.0,1.5,3.0,4.5,6.0,7.5,9.0,10.5,12.0,13.5,15.0,16.5,18.0,19.5,21.0,22.5,24.0,25.5,27.0,28.5,30.0,31.5,33.0,34.5,36.0,37.5,39.0,40.5,42.0,43.5]", "[ 0.   1.5  3.   4.5  6.   7.5  9.  10.5 12.  13.5 15.  16.5 18.  19.5\n 21.  22.5 24.  25.5 27.  28.5 30.  31.5 33.  34.5 36.  37.5 39.  40.5\n 42.  43.5]"},
      {"int64", "[40]", "[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39]", "[ 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23\n 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39]"},
      {"float64", "[3, 12]", "[0.0,0.25,0.5,0.75,1.0,1.25,1.5,1.75,2.0,2.25,2.5,2.75,1.0,1.25,1.5,1.75,2.0,2.25,2.5,2.75,3.0,3.25,3.5,3.75,2.0,2.25,2.5,2.75,3.0,3.25,3.5,3.75,4.0,4.25,4.5,4.75]", "[[0.   0.25 0.5  0.75 1.   1.25 1.5  1.75 2.   2.25 2.5  2.75]\n [1.   1.25 1.5  1.75 2.   2.25 2.5  2.75 3.   3.25 3.5  3.75]\n [2.   2.25 2.5  2.75 3.   3.25 3.5  3.75 4.   4.25 4.5  4.75]]"},
      {"float64", "[2]", "[0.001953125,1.0]", "[0.00195312 1.        ]"},
      {"float64", "[]", "1.0", "1.0"},
      {"float64", "[]", "0.1", "0.1"},
      {"float64", "[]", "1e+16", "1e+16"},
      {"float64", "[]", "1000000000000000.0", "1000000000000000.0"},
      {"float64", "[]", "1e-05", "1e-05"},
      {"float64", "[]", "0.0001", "0.0001"},
      {"float64", "[]", "-0.5", "-0.5"},
      {"float64", "[]", "\"nan\"", "nan"},
      {"float64", "[]", "\"-inf\"", "-inf"},
      {"float64", "[]", "-0.0", "-0.0"},
      {"float64", "[]", "123456789.123", "123456789.123"},
      {"float32", "[]", "0.10000000149011612", "0.1"},
      {"float32", "[]", "9.999999747378752e-06", "1e-05"},
      {"float32", "[]", "3.4028234663852886e+38", "3.4028235e+38"},
      {"float32", "[]", "16777216.0", "16777216.0"},
      {"int8", "[]", "2", "2"},
      {"bool", "[]", "true", "True"},
      {"uint64", "[]", "18446744073709551615", "18446744073709551615"},
      {"float64", "[]", "5e-324", "5e-324"},
      {"float64", "[]", "1.7976931348623157e+308", "1.7976931348623157e+308"},
      {"float64", "[]", "2.5e-05", "2.5e-05"},
  };
  for (const Case& c : cases) {
    Shape shape = nlohmann::json::parse(c.shape).get<Shape>();
    auto flat = nlohmann::json::parse(c.values);
    // Nest the flat values row-major so parse_value reads them.
    std::function<nlohmann::json(std::size_t, std::size_t&)> nest = [&](std::size_t d, std::size_t& pos) {
      if (d == shape.size()) return shape.empty() ? flat : flat[pos++];
      nlohmann::json arr = nlohmann::json::array();
      for (std::int64_t i = 0; i < shape[d]; ++i) arr.push_back(nest(d + 1, pos));
      return arr;
    };
    std::size_t pos = 0;
    Array a = parse_value(nest(0, pos), TensorType(*dtype_from_name(c.dtype), shape), "");
    CAPTURE(c.values);
    CHECK(numpy_str(a) == c.expected);
  }

  // Summarised arrays (more than 1000 elements).
  Array r = Array::empty(i64, {2000});
  for (int i = 0; i < 2000; ++i) r.data<std::int64_t>()[i] = i;
  CHECK(numpy_str(r) == "[   0    1    2 ... 1997 1998 1999]");
  Array l = Array::empty(f64, {1500});
  for (int i = 0; i < 1500; ++i) l.data<double>()[i] = i * (1.0 / 1499);
  l.data<double>()[1499] = 1.0;
  CHECK(numpy_str(l) == "[0.00000000e+00 6.67111408e-04 1.33422282e-03 ... 9.98665777e-01\n"
                        " 9.99332889e-01 1.00000000e+00]");
  Array m = Array::empty(i32, {30, 50});
  for (int j = 0; j < 30; ++j)
    for (int i = 0; i < 50; ++i) m.data<std::int32_t>()[j * 50 + i] = i * 7 + j;
  CHECK(numpy_str(m) ==
        "[[  0   7  14 ... 329 336 343]\n [  1   8  15 ... 330 337 344]\n [  2   9  16 ... 331 338 345]\n"
        " ...\n [ 27  34  41 ... 356 363 370]\n [ 28  35  42 ... 357 364 371]\n [ 29  36  43 ... 358 365 372]]");
  CHECK(numpy_str(Array::empty(f64, {0, 3})) == "[]");

  // PyTensor's Constant.__str__: newlines dropped, first 10 ... last 10 past 20 characters.
  CHECK(constant_str(r) == "[   0    1 ... 1998 1999]");
  CHECK(constant_str(l) == "[0.0000000 ... 00000e+00]");
  CHECK(constant_str(m.view({2, 2}, {50, 1})) == "[[0 7] [1 8]]");
  Array half = Array::empty(f64, {});
  *half.data<double>() = -0.5;
  CHECK(constant_str(half, "c") == "c{-0.5}");
  CHECK(constant_str(half) == "-0.5");
}
