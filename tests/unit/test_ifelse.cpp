// IfElse (PyTensor's lazy conditional): type inference and loading, values of both branches for
// several dtypes, multiple outputs, 0-d and zero-length values, laziness (a failing Assert or
// an enormous Alloc in the branch not taken) through the evaluator and through compiled
// libraries (as given and after the rewrite pipeline), nesting, the schedule that places
// branch-only nodes, infer_shape, and gradients by finite differences.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "api/elementwise.h"
#include "codegen/shape_graph.h"
#include "compiled.h"
#include "eval/evaluator.h"
#include "grad/grad.h"
#include "grad_check.h"
#include "io/graph_load.h"
#include "io/graph_save.h"
#include "ir/branch_schedule.h"
#include "ops/alloc.h"
#include "ops/assert.h"
#include "ops/constant.h"
#include "ops/ifelse.h"
#include "ops/reduce.h"
#include "rewrite/fusion.h"
#include "rewrite/pipeline.h"
#include "v2_test_util.h"

using namespace kiln;
using namespace kiln::testing;
using Json = nlohmann::json;

namespace {

TensorType vec(DType dt) { return TensorType(dt, {kUnknownLength}); }

Var false_const() { return scalar_constant(DType::Bool, 0); }

Array scalar_of(DType dt, double v) {
  Array a = Array::empty(dt, {});
  visit_real_dtype(dt, [&](auto t) { *a.data<decltype(t)>() = static_cast<decltype(t)>(v); });
  return a;
}

Array array_of(DType dt, const std::vector<double>& values) {
  Array a = Array::empty(dt, {static_cast<std::int64_t>(values.size())});
  visit_real_dtype(dt, [&](auto t) {
    for (std::size_t i = 0; i < values.size(); ++i) a.data<decltype(t)>()[i] = static_cast<decltype(t)>(values[i]);
  });
  return a;
}

// A graph run through the evaluator and through compiled code, as given and rewritten.
struct Subject {
  std::string name;
  std::function<FunctionGraph()> build;
};

// lazy_assert(c, x, y) = (c ? exp(2x) + y : <Assert fails "else ran">, 2x): 2x is needed by
// an output too, so it runs before the branch.
FunctionGraph lazy_assert_graph() {
  Var c = make_input(scalar_type(DType::Bool), "c");
  Var x = make_input(vec(DType::Float64), "x"), y = make_input(vec(DType::Float64), "y");
  Var shared = x * 2.0;
  Var then_v = exp(shared) + y;
  Var else_v = assert_op(y - x, {false_const()}, "else ran");
  return FunctionGraph({c, x, y}, {ifelse(c, then_v, else_v), shared});
}

// lazy_alloc(c, x) = c ? an Alloc of 2^50 float64 (8 PiB) : 3x.
FunctionGraph lazy_alloc_graph() {
  Var c = make_input(scalar_type(DType::Int64), "c");
  Var x = make_input(vec(DType::Float64), "x");
  Var huge = alloc(scalar_constant(DType::Float64, 1), IntList{std::int64_t{1} << 50});
  return FunctionGraph({c, x}, {ifelse(c, huge, x * 3.0)});
}

// nested(c1, c2, x) = c1 ? (c2 ? exp(x) : fail "inner") + 1 : fail "outer" * 2.
FunctionGraph nested_graph() {
  Var c1 = make_input(scalar_type(DType::Bool), "c1"), c2 = make_input(scalar_type(DType::Bool), "c2");
  Var x = make_input(vec(DType::Float64), "x");
  Var inner = ifelse(c2, exp(x), assert_op(x, {false_const()}, "inner else ran"));
  Var outer = ifelse(c1, inner + 1.0, assert_op(x, {false_const()}, "outer else ran") * 2.0);
  return FunctionGraph({c1, c2, x}, {outer});
}

// multi(c, a, b, s, t) = c ? (a + b, s * t, a > b) : (a - b, s - t, a < b): int32 vectors, a
// float32 0-d value and a bool vector; the condition is a float32.
FunctionGraph multi_graph() {
  Var c = make_input(scalar_type(DType::Float32), "c");
  Var a = make_input(vec(DType::Int32), "a"), b = make_input(vec(DType::Int32), "b");
  Var s = make_input(scalar_type(DType::Float32), "s"), t = make_input(scalar_type(DType::Float32), "t");
  VarList outs = ifelse(c, {a + b, s * t, gt(a, b)}, {a - b, s - t, lt(a, b)});
  return FunctionGraph({c, a, b, s, t}, outs);
}

// small(c, u, v) = c ? u : v over uint8 vectors of static length 3 and 4: the output's length
// is unknown; also a constant cond-independent value.
FunctionGraph uint8_graph() {
  Var c = make_input(scalar_type(DType::UInt8), "c");
  Var u = make_input(TensorType(DType::UInt8, {3}), "u"), v = make_input(TensorType(DType::UInt8, {4}), "v");
  return FunctionGraph({c, u, v}, {ifelse(c, u, v)});
}

const std::vector<Subject>& subjects() {
  static const std::vector<Subject> s = {{"lazy_assert", lazy_assert_graph},
                                         {"lazy_alloc", lazy_alloc_graph},
                                         {"nested", nested_graph},
                                         {"multi", multi_graph},
                                         {"uint8", uint8_graph}};
  return s;
}

// What a run gives: outputs, or the failure's message.
struct Outcome {
  bool ok = false;
  std::string error;
  std::vector<Array> outputs;
};

Outcome evaluated(const FunctionGraph& fg, const std::vector<Array>& inputs) {
  try {
    return {true, "", evaluate(fg, inputs)};
  } catch (const RuntimeFailure& e) {
    return {false, e.what(), {}};
  }
}

// Runs one expectation on every engine: the evaluator on the graph as built, and the compiled
// graph as built and rewritten (through call and call_into).
class Engines {
 public:
  Engines() {
    for (const Subject& s : subjects()) {
      graphs_.emplace(s.name, s.build());
      FunctionGraph rewritten = s.build();
      run_pipeline(rewritten);
      rewritten_.emplace(s.name, std::move(rewritten));
    }
    NamedGraphs named;
    for (const Subject& s : subjects()) {
      named.emplace_back(&graphs_.at(s.name), s.name);
      named.emplace_back(&rewritten_.at(s.name), s.name + "_rw");
    }
    GeneratedLibrary src = emit_bundle(named, "ifelse_probe", test_compile_options());
    source_ = src.source;
    BuildResult built = build_library(src, test_build_options());
    library_ = std::make_unique<Library>(built.library_path);
  }

  const std::string& source() const { return source_; }
  const FunctionGraph& graph(const std::string& name) const { return graphs_.at(name); }

  /// Every engine's outcome, labelled.
  std::vector<std::pair<std::string, Outcome>> run(const std::string& name, const std::vector<Array>& inputs) const {
    std::vector<std::pair<std::string, Outcome>> out;
    out.emplace_back("evaluator", evaluated(graphs_.at(name), inputs));
    out.emplace_back("evaluator, rewritten", evaluated(rewritten_.at(name), inputs));
    for (const std::string& g : {name, name + "_rw"})
      for (bool into : {false, true}) {
        const std::string label = "compiled " + g + (into ? " call_into" : " call");
        try {
          CallResult r = call_compiled(library_->graph(g), inputs, into);
          out.emplace_back(label, Outcome{r.status == KILN_OK, r.error, r.outputs});
        } catch (const std::bad_alloc&) {
          // call_into: the outputs output_shapes asks for (the 8 PiB branch) cannot be allocated.
          out.emplace_back(label, Outcome{false, "the caller cannot allocate the outputs", {}});
        }
      }
    return out;
  }

 private:
  std::map<std::string, FunctionGraph> graphs_, rewritten_;
  std::string source_;
  std::unique_ptr<Library> library_;
};

const Engines& engines() {
  static const Engines e;
  return e;
}

void expect_values(const std::string& name, const std::vector<Array>& inputs,
                   const std::vector<std::pair<DType, std::vector<double>>>& expected) {
  for (const auto& item : engines().run(name, inputs)) {
    const auto& engine = std::get<0>(item);
    const auto& o = std::get<1>(item);
    CAPTURE(engine);
    REQUIRE_MESSAGE(o.ok, o.error);
    REQUIRE(o.outputs.size() >= expected.size());
    for (std::size_t k = 0; k < expected.size(); ++k) {
      CAPTURE(k);
      CHECK(o.outputs[k].dtype() == expected[k].first);
      const std::vector<double> got = values_of(o.outputs[k]);
      REQUIRE(got.size() == expected[k].second.size());
      for (std::size_t i = 0; i < got.size(); ++i)
        CHECK(got[i] == doctest::Approx(expected[k].second[i]).epsilon(1e-12));
    }
  }
}

void expect_failure(const std::string& name, const std::vector<Array>& inputs, const std::string& words) {
  for (const auto& item : engines().run(name, inputs)) {
    const auto& engine = std::get<0>(item);
    const auto& o = std::get<1>(item);
    CAPTURE(engine);
    CHECK_FALSE(o.ok);
    if (!words.empty()) CHECK_MESSAGE(o.error.find(words) != std::string::npos, o.error);
  }
}

}  // namespace

TEST_CASE("ifelse: type inference, printing and refusals") {
  Var c = make_input(scalar_type(DType::Bool), "c");
  Var x = make_input(TensorType(DType::Float64, {3, kUnknownLength}), "x");
  Var y = make_input(TensorType(DType::Float64, {3, 5}), "y");
  Var z = ifelse(c, x, y);
  CHECK(z->type() == TensorType(DType::Float64, {3, kUnknownLength}));  // only the lengths both agree on
  CHECK(z->owner()->op().str() == "if{}");
  CHECK(IfElse(1, true, "pick").str() == "if{pick,inplace}");
  CHECK(IfElse(2, false, "pick").props() == Json{{"as_view", false}, {"n_outs", 2}, {"name", "pick"}});

  Var f32 = make_input(TensorType(DType::Float32, {kUnknownLength, kUnknownLength}), "f");
  Var v = make_input(vec(DType::Float64), "v");
  CHECK_THROWS_WITH_AS(ifelse(c, x, f32), doctest::Contains("same dtype"), UserError);
  CHECK_THROWS_WITH_AS(ifelse(c, x, v), doctest::Contains("same rank"), UserError);
  CHECK_THROWS_WITH_AS(ifelse(v, v, v), doctest::Contains("condition must be a 0-d value"), UserError);
  CHECK_THROWS_WITH_AS(make_node(std::make_shared<IfElse>(2), {c, x, y}), doctest::Contains("5 inputs"), UserError);
  CHECK_THROWS_AS(IfElse(0), UserError);
}

TEST_CASE("ifelse: loading (version 2 only) and its refusals") {
  const Json s = tensor_type("float64", Json::array());
  const Json vars = {var("c", tensor_type("bool", Json::array())), var("a", s), var("b", s), var("o", s)};
  auto graph = [&](int version, const Json& props) {
    return graph_json(version, {vars[0], vars[1], vars[2], vars[3]}, {node("IfElse", {"c", "a", "b"}, {"o"}, props)},
                      {"c", "a", "b"}, {"o"});
  };
  FunctionGraph fg = load_graph_text(graph(2, {{"n_outs", 1}, {"as_view", false}, {"name", nullptr}}).dump(), "");
  CHECK(values_of(evaluate(fg, {scalar_of(DType::Bool, 0), f64_array({}, {1}), f64_array({}, {2})})[0]) ==
        std::vector<double>{2});
  // Saved as version 2, and read back the same.
  FunctionGraph named(fg.inputs(), {ifelse(fg.inputs()[0], fg.inputs()[1], fg.inputs()[2], "pick")});
  const std::string saved = save_graph_text(named);
  CHECK(saved.find("\"version\": 2") != std::string::npos);
  FunctionGraph back = load_graph_text(saved, "");
  CHECK(back.outputs()[0]->owner()->op().props() == Json{{"as_view", false}, {"n_outs", 1}, {"name", "pick"}});
  Refusal v1 = refusal_of(graph(1, {{"n_outs", 1}}));
  CHECK(v1.where == "/nodes/0/op");
  CHECK(v1.message.find("version 2") != std::string::npos);
  Refusal count = refusal_of(graph(2, {{"n_outs", 2}}));
  CHECK(count.where.rfind("/nodes/0", 0) == 0);
  CHECK(count.message.find("5 inputs") != std::string::npos);
  Refusal zero = refusal_of(graph(2, {{"n_outs", 0}}));
  CHECK(zero.where == "/nodes/0/props/n_outs");
  Refusal missing = refusal_of(graph(2, Json::object()));
  CHECK(missing.message.find("n_outs") != std::string::npos);
  Refusal unknown = refusal_of(graph(2, {{"n_outs", 1}, {"lazy", true}}));
  CHECK(unknown.where == "/nodes/0/props/lazy");
}

TEST_CASE("ifelse: the schedule runs branch-only nodes inside their branch") {
  FunctionGraph fg = lazy_assert_graph();
  const BranchSchedule s = branch_schedule(fg);
  const auto paths = region_paths(s);
  int in_then = 0, in_else = 0, top = 0;
  for (Apply* node : fg.toposort()) {
    const RegionPath& p = paths.at(node);
    if (p.empty()) ++top;
    else (p[0].second == 0 ? in_then : in_else) += 1;
  }
  CHECK(in_then == 2);  // exp, add
  CHECK(in_else == 2);  // sub, Assert
  CHECK(top == 3);      // 2x (also an output), its broadcast constant 2, IfElse
  // The flattened order is a toposort with each branch's nodes right before the IfElse.
  const std::vector<Apply*> flat = s.flatten();
  CHECK(flat.size() == fg.toposort().size());
  CHECK(ifelse_op(flat.back()) != nullptr);

  FunctionGraph nested = nested_graph();
  const auto np = region_paths(branch_schedule(nested));
  int depth2 = 0;
  for (Apply* node : nested.toposort())
    if (np.at(node).size() == 2) ++depth2;
  CHECK(depth2 == 2);  // exp(x) and the inner Assert: inside the inner IfElse inside the outer one
}

TEST_CASE("ifelse: Elemwise fusion keeps branch-only work in its branch") {
  // t = x + y is read by an output and by the then-branch's exp(t) * y; fusing exp into t's
  // Composite would compute it whatever the condition.
  Var c = make_input(scalar_type(DType::Bool), "c");
  Var x = make_input(vec(DType::Float64), "x"), y = make_input(vec(DType::Float64), "y");
  Var t = x + y;
  FunctionGraph fg({c, x, y}, {ifelse(c, exp(t) * y, t - y), t * 2.0});
  fuse_elemwise(fg);
  const auto paths = region_paths(branch_schedule(fg));
  int branch_nodes = 0;
  for (Apply* node : fg.toposort()) branch_nodes += paths.at(node).empty() ? 0 : 1;
  CHECK(branch_nodes == 2);  // one fused node per branch
}

TEST_CASE("ifelse: values of both branches, laziness, through the evaluator and compiled code") {
  const std::vector<double> x = {0.5, -1, 2}, y = {1, 2, 3};
  std::vector<double> then_v, twice;
  for (std::size_t i = 0; i < x.size(); ++i) {
    then_v.push_back(std::exp(2 * x[i]) + y[i]);
    twice.push_back(2 * x[i]);
  }
  SUBCASE("a failing Assert in the branch not taken") {
    expect_values("lazy_assert", {scalar_of(DType::Bool, 1), f64_array({3}, x), f64_array({3}, y)},
                  {{DType::Float64, then_v}, {DType::Float64, twice}});
    expect_failure("lazy_assert", {scalar_of(DType::Bool, 0), f64_array({3}, x), f64_array({3}, y)}, "else ran");
    expect_values("lazy_assert", {scalar_of(DType::Bool, 1), f64_array({0}, {}), f64_array({0}, {})},
                  {{DType::Float64, {}}, {DType::Float64, {}}});
  }
  SUBCASE("an 8 PiB Alloc in the branch not taken") {
    expect_values("lazy_alloc", {scalar_of(DType::Int64, 0), f64_array({3}, x)}, {{DType::Float64, {1.5, -3, 6}}});
    expect_failure("lazy_alloc", {scalar_of(DType::Int64, -7), f64_array({3}, x)}, "");
  }
  SUBCASE("nested branches") {
    std::vector<double> e;
    for (double v : x) e.push_back(std::exp(v) + 1);
    expect_values("nested", {scalar_of(DType::Bool, 1), scalar_of(DType::Bool, 1), f64_array({3}, x)}, {{DType::Float64, e}});
    expect_failure("nested", {scalar_of(DType::Bool, 1), scalar_of(DType::Bool, 0), f64_array({3}, x)}, "inner else ran");
    expect_failure("nested", {scalar_of(DType::Bool, 0), scalar_of(DType::Bool, 1), f64_array({3}, x)}, "outer else ran");
  }
  SUBCASE("several outputs of several dtypes, 0-d and zero-length values") {
    const std::vector<double> a = {5, -2, 7, 0}, b = {3, 4, 7, -1};
    const auto in = [&](double c, const std::vector<double>& av, const std::vector<double>& bv) {
      return std::vector<Array>{scalar_of(DType::Float32, c), array_of(DType::Int32, av), array_of(DType::Int32, bv),
                                scalar_of(DType::Float32, 1.5), scalar_of(DType::Float32, 4)};
    };
    expect_values("multi", in(0.25, a, b),
                  {{DType::Int32, {8, 2, 14, -1}}, {DType::Float32, {6}}, {DType::Bool, {1, 0, 0, 1}}});
    expect_values("multi", in(0, a, b),
                  {{DType::Int32, {2, -6, 0, 1}}, {DType::Float32, {-2.5}}, {DType::Bool, {0, 1, 0, 0}}});
    expect_values("multi", in(NAN, a, b),  // NaN is true, as in Python
                  {{DType::Int32, {8, 2, 14, -1}}, {DType::Float32, {6}}, {DType::Bool, {1, 0, 0, 1}}});
    expect_values("multi", in(-0.0, {}, {}), {{DType::Int32, {}}, {DType::Float32, {-2.5}}, {DType::Bool, {}}});
  }
  SUBCASE("branches of different static lengths") {
    const std::vector<Array> in1 = {scalar_of(DType::UInt8, 255), array_of(DType::UInt8, {1, 2, 3}),
                                    array_of(DType::UInt8, {9, 8, 7, 6})};
    expect_values("uint8", in1, {{DType::UInt8, {1, 2, 3}}});
    const std::vector<Array> in0 = {scalar_of(DType::UInt8, 0), array_of(DType::UInt8, {1, 2, 3}),
                                    array_of(DType::UInt8, {9, 8, 7, 6})};
    expect_values("uint8", in0, {{DType::UInt8, {9, 8, 7, 6}}});
  }
  // The generated code opens each branch in an `if` on the condition.
  CHECK(engines().source().find("// branch 1") != std::string::npos);
}

TEST_CASE("ifelse: infer_shape is an IfElse of the branches' lengths, and stays lazy") {
  FunctionGraph fg = lazy_alloc_graph();
  FunctionGraph shapes = build_shape_graph(fg);
  std::vector<Array> out = evaluate(shapes, {scalar_of(DType::Int64, 0), f64_array({4}, {1, 2, 3, 4})});
  REQUIRE(out.size() == 1);
  CHECK(values_of(out[0]) == std::vector<double>{4});
  out = evaluate(shapes, {scalar_of(DType::Int64, 1), f64_array({4}, {1, 2, 3, 4})});
  CHECK(values_of(out[0]) == std::vector<double>{static_cast<double>(std::int64_t{1} << 50)});
}

TEST_CASE("ifelse: gradients by finite differences") {
  for (bool take_then : {true, false}) {
    CAPTURE(take_then);
    const Var cond = scalar_constant(DType::Bool, take_then ? 1 : 0);
    // One output.
    verify_grad([&](const VarList& v) { return ifelse(cond, v[0] * v[1], exp(v[0])); }, {{3}, {3}});
    // Two outputs used together, and 0-d values.
    verify_grad(
        [&](const VarList& v) {
          VarList o = ifelse(cond, {v[0] * v[1], v[2]}, {exp(v[0]), v[2] * v[2]});
          return o[0] * o[1];
        },
        {{2}, {2}, {}});
    // Only one output of two reaches the cost (the other's cotangent is null).
    verify_grad([&](const VarList& v) { return ifelse(cond, {v[0] * 3.0, v[1]}, {v[1], v[0]})[0]; }, {{2}, {2}});
  }
  // The condition's gradient is zero (it is taken to pick the same branch nearby).
  Var c = make_input(scalar_type(DType::Float64), "c");
  Var x = make_input(vec(DType::Float64), "x");
  Var cost = sum(ifelse(c, x * c, exp(x)));
  VarList g = grad(cost, {c, x});
  FunctionGraph gf({c, x}, g);
  std::vector<Array> r = evaluate(gf, {scalar_of(DType::Float64, 0), f64_array({2}, {0, 1})});
  CHECK(values_of(r[0]) == std::vector<double>{0});
  CHECK(values_of(r[1]) == std::vector<double>{1, std::exp(1.0)});
}

TEST_CASE("ifelse: a constant condition or identical branches drop the IfElse") {
  Var x = make_input(vec(DType::Float64), "x");
  for (int c : {0, 1}) {
    CAPTURE(c);
    FunctionGraph fg({x}, {ifelse(scalar_constant(DType::Int8, c), exp(x), assert_op(x, {false_const()}, "no"))});
    rewrite_graph(fg, {"canonicalize"});
    bool any_ifelse = false, any_assert = false;
    for (Apply* node : fg.toposort()) {
      any_ifelse = any_ifelse || ifelse_op(node);
      any_assert = any_assert || node->op().name() == "Assert";
    }
    CHECK_FALSE(any_ifelse);
    CHECK(any_assert == (c == 0));  // the branch not taken is gone
  }
  Var c = make_input(scalar_type(DType::Bool), "c");
  Var e = exp(x);
  FunctionGraph same({c, x}, {ifelse(c, e, e)});
  rewrite_graph(same, {"canonicalize"});
  for (Apply* node : same.toposort()) CHECK(ifelse_op(node) == nullptr);
}
