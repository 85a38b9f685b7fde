// OpFromGraph (graph format version 2): loading inner graphs with their own id scope (nested
// too), the op's type inference, perform, infer_shape, pullback and pushforward through the
// inner graph, inlining before rewriting, PyTensor's dprint of inner graphs, saving, and a
// refusal naming its JSON pointer for everything malformed.
#include <doctest/doctest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "api/elementwise.h"
#include "codegen/shape_graph.h"
#include "eval/evaluator.h"
#include "grad/grad.h"
#include "transform/vectorize.h"
#include "io/graph_load.h"
#include "io/graph_save.h"
#include "ir/error.h"
#include "ops/join.h"
#include "ops/op_from_graph.h"
#include "ops/reduce.h"
#include "print/dprint.h"
#include "rewrite/inline_op_from_graph.h"
#include "rewrite/pipeline.h"
#include "v2_test_util.h"

using namespace kiln;
using namespace kiln::testing;
using Json = nlohmann::json;

namespace {

const Json kVec = tensor_type("float64", {nullptr});

// inner(i0, i1) = (i0 + exp(i1) * 2, maximum(i0, i1)), with its own ids (which also appear
// outside: each graph object is its own scope).
Json pair_inner() {
  return graph_json(0,
                    {var("a", kVec), var("b", kVec), var("two", tensor_type("int8", Json::array()), 2),
                     var("two1", tensor_type("int8", {1})), var("e", kVec), var("m", kVec), var("s", kVec),
                     var("mx", kVec)},
                    {node("DimShuffle", {"two"}, {"two1"}, {{"input_ndim", 0}, {"new_order", {"x"}}}),
                     node("exp", {"b"}, {"e"}), node("mul", {"e", "two1"}, {"m"}), node("add", {"a", "m"}, {"s"}),
                     node("Maximum", {"a", "b"}, {"mx"})},
                    {"a", "b"}, {"s", "mx"});
}

// The top level: (s, mx) = pair(x, y); out = s * mx.
Json pair_graph(const Json& inner = pair_inner(), const Json& node_props = Json::object()) {
  Json props = {{"name", "pair"}, {"inner", inner}};
  for (auto it = node_props.begin(); it != node_props.end(); ++it) props[it.key()] = it.value();
  return graph_json(2, {var("x", kVec), var("y", kVec), var("a", kVec), var("b", kVec), var("out", kVec)},
                    {node("OpFromGraph", {"x", "y"}, {"a", "b"}, props), node("mul", {"a", "b"}, {"out"})}, {"x", "y"},
                    {"out", "a"});
}

std::vector<double> pair_values(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> out;
  for (std::size_t i = 0; i < x.size(); ++i) out.push_back((x[i] + std::exp(y[i]) * 2) * std::max(x[i], y[i]));
  return out;
}

bool has_op_from_graph(const FunctionGraph& fg) {
  for (Apply* n : fg.toposort())
    if (n->op().name() == "OpFromGraph") return true;
  return false;
}

}  // namespace

TEST_CASE("OpFromGraph: loads, evaluates its inner graph, and is inlined before rewriting") {
  FunctionGraph fg = load_graph_text(pair_graph().dump(), "");
  const Apply* ofg = fg.outputs()[1]->owner();
  REQUIRE(ofg->op().name() == "OpFromGraph");
  CHECK(ofg->op().str() == "pair{inline=False}");
  CHECK(static_cast<const OpFromGraph&>(ofg->op()).inner_graph().num_nodes() == 5);
  const std::vector<double> x = {0.5, -1, 2}, y = {1, 0.25, -3};
  auto out = evaluate(fg, {f64_array({3}, x), f64_array({3}, y)});
  std::vector<double> got = values_of(out[0]), want = pair_values(x, y);
  for (std::size_t i = 0; i < want.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-15));

  FunctionGraph inlined = fg.clone();
  RewriteStats stats = inline_op_from_graphs(inlined);
  CHECK(stats.applied["inline_op_from_graph"] == 1);
  CHECK(!has_op_from_graph(inlined));
  inlined.verify();
  CHECK(values_of(evaluate(inlined, {f64_array({3}, x), f64_array({3}, y)})[0]) == got);
  // The default pipeline inlines first; so does a pipeline excluding "inline" (code generation
  // has no OpFromGraph).
  for (const std::vector<std::string>& exclude : {std::vector<std::string>{}, std::vector<std::string>{"inline"}}) {
    FunctionGraph rewritten = fg.clone();
    PipelineOptions o;
    o.exclude = exclude;
    o.verify = true;
    run_pipeline(rewritten, o);
    CHECK(!has_op_from_graph(rewritten));
    std::vector<double> r = values_of(evaluate(rewritten, {f64_array({3}, x), f64_array({3}, y)})[0]);
    for (std::size_t i = 0; i < want.size(); ++i) CHECK(r[i] == doctest::Approx(want[i]).epsilon(1e-15));
  }
}

TEST_CASE("OpFromGraph: nested inner graphs, each its own id scope") {
  // outer(p) = pair(p, p * 3)[0] summed, as an OpFromGraph around the pair OpFromGraph.
  Json outer_inner = graph_json(
      0,
      {var("p", kVec), var("three", tensor_type("float64", {1}), Json::array({3.0})), var("q", kVec), var("a", kVec),
       var("b", kVec), var("s", tensor_type("float64", Json::array()))},
      {node("mul", {"p", "three"}, {"q"}), node("OpFromGraph", {"p", "q"}, {"a", "b"}, {{"name", "pair"}, {"inner", pair_inner()}}),
       node("Sum", {"a"}, {"s"}, {{"axis", nullptr}})},
      {"p"}, {"s"});
  Json g = graph_json(2, {var("x", kVec), var("s", tensor_type("float64", Json::array()))},
                      {node("OpFromGraph", {"x"}, {"s"}, {{"inner", outer_inner}})}, {"x"}, {"s"});
  FunctionGraph fg = load_graph_text(g.dump(), "");
  CHECK(fg.outputs()[0]->owner()->op().str() == "OpFromGraph{inline=False}");  // no name: the class name
  const std::vector<double> x = {0.5, -1, 2};
  double want = 0;
  for (double v : x) want += v + std::exp(3 * v) * 2;
  CHECK(values_of(evaluate(fg, {f64_array({3}, x)})[0])[0] == doctest::Approx(want).epsilon(1e-14));
  FunctionGraph inlined = fg.clone();
  CHECK(inline_op_from_graphs(inlined).applied["inline_op_from_graph"] == 2);
  CHECK(!has_op_from_graph(inlined));
  CHECK(values_of(evaluate(inlined, {f64_array({3}, x)})[0])[0] == doctest::Approx(want).epsilon(1e-14));
  // An error deep inside names its full pointer.
  Json bad = g;
  bad["nodes"][0]["props"]["inner"]["nodes"][1]["props"]["inner"]["nodes"][1]["inputs"][0] = "nope";
  Refusal r = refusal_of(bad);
  CHECK(r.where == "/nodes/0/props/inner/nodes/1/props/inner/nodes/1/inputs/0");
}

TEST_CASE("OpFromGraph: type inference, infer_shape and the C++ API") {
  Var a = make_input(TensorType(DType::Float64, {-1}), "a");
  Var b = make_input(TensorType(DType::Float64, {-1}), "b");
  auto inner = std::make_shared<FunctionGraph>(VarList{a, b}, VarList{join(0, {a, exp(b)}), sum(a)});
  Var x = make_input(TensorType(DType::Float64, {4}), "x");
  Var y = make_input(TensorType(DType::Float64, {-1}), "y");
  VarList outs = op_from_graph("f", inner, {x, y});
  CHECK(outs[0]->type() == TensorType(DType::Float64, {-1}));  // the inner output's type
  CHECK(outs[1]->type() == TensorType(DType::Float64, {}));
  CHECK_THROWS_WITH(op_from_graph("f", inner, {x}), doctest::Contains("takes 2 input(s)"));
  Var i = make_input(TensorType(DType::Int64, {-1}), "i");
  CHECK_THROWS_WITH(op_from_graph("f", inner, {x, i}), doctest::Contains("the inner graph's input 1 is"));
  Var m = make_input(TensorType(DType::Float64, {-1, -1}), "m");
  CHECK_THROWS_WITH(op_from_graph("f", inner, {m, y}), doctest::Contains("input 0"));

  // infer_shape, as the shape graph of generated libraries uses it: the inner graph's shapes in
  // terms of the node's inputs (here 4 + len(y)).
  FunctionGraph with_op({x, y}, outs);
  FunctionGraph shapes = build_shape_graph(with_op);
  REQUIRE(shapes.outputs().size() == 1);  // one length for outputs[0], none for the 0-d sum
  for (std::int64_t ny : {0, 1, 3}) {
    CAPTURE(ny);
    Array xv = Array::zeros(DType::Float64, {4}), yv = Array::zeros(DType::Float64, {ny});
    auto lengths = evaluate(shapes, {xv, yv});
    CHECK(values_of(lengths[0])[0] == 4 + ny);
    CHECK(evaluate(with_op, {xv, yv})[0].shape() == Shape{4 + ny});
  }
}

TEST_CASE("OpFromGraph: gradients flow through the inner graph") {
  FunctionGraph fg = load_graph_text(pair_graph().dump(), "");
  Var x = fg.inputs()[0], y = fg.inputs()[1];
  Var cost = sum(fg.outputs()[0]);
  VarList g = grad(cost, {x, y});
  FunctionGraph inlined = fg.clone();
  inline_op_from_graphs(inlined);
  Var xi = inlined.inputs()[0], yi = inlined.inputs()[1];
  VarList gi = grad(sum(inlined.outputs()[0]), {xi, yi});
  const std::vector<double> xv = {0.5, -1, 2}, yv = {1, 0.25, -3};
  auto through = evaluate(FunctionGraph({x, y}, g), {f64_array({3}, xv), f64_array({3}, yv)});
  auto direct = evaluate(FunctionGraph({xi, yi}, gi), {f64_array({3}, xv), f64_array({3}, yv)});
  for (int k = 0; k < 2; ++k) {
    std::vector<double> a = values_of(through[static_cast<std::size_t>(k)]), b = values_of(direct[static_cast<std::size_t>(k)]);
    for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i] == doctest::Approx(b[i]).epsilon(1e-14));
  }
  // And against finite differences of the evaluator.
  auto f = [&](const std::vector<double>& xs, const std::vector<double>& ys) {
    double s = 0;
    for (double v : values_of(evaluate(fg, {f64_array({3}, xs), f64_array({3}, ys)})[0])) s += v;
    return s;
  };
  const double h = 1e-6;
  std::vector<double> gx = values_of(through[0]);
  for (std::size_t i = 0; i < 3; ++i) {
    std::vector<double> up = xv, down = xv;
    up[i] += h;
    down[i] -= h;
    CHECK(gx[i] == doctest::Approx((f(up, yv) - f(down, yv)) / (2 * h)).epsilon(1e-6));
  }
  // Forward mode.
  Var tx = make_input(TensorType(DType::Float64, {-1}), "tx");
  VarList jvp = Rop({fg.outputs()[0]}, {x}, {tx});
  auto jv = evaluate(FunctionGraph({x, y, tx}, jvp), {f64_array({3}, xv), f64_array({3}, yv), f64_array({3}, {1, 0, 0})});
  CHECK(values_of(jv[0])[0] == doctest::Approx(gx[0]).epsilon(1e-12));
  CHECK(values_of(jv[0])[1] == 0);
}

TEST_CASE("OpFromGraph: dprint shows the inner graph as PyTensor does") {
  // PyTensor 3.0.7: OpFromGraph([x, y], [x + exp(y) * 2], name="myop"); dprint(myop(a, b) * 3).
  Json inner = graph_json(0,
                          {var("i", kVec), var("j", kVec), var("two", tensor_type("int8", Json::array()), 2),
                           var("two1", tensor_type("int8", {1})), var("e", kVec), var("m", kVec), var("s", kVec)},
                          {node("ExpandDims", {"two"}, {"two1"}, {{"axis", 0}}), node("exp", {"j"}, {"e"}),
                           node("mul", {"e", "two1"}, {"m"}), node("add", {"i", "m"}, {"s"})},
                          {"i", "j"}, {"s"});
  Json g = graph_json(2,
                      {named_var("a", kVec, "a"), named_var("b", kVec, "b"), var("o", kVec),
                       var("three", tensor_type("int8", Json::array()), 3), var("three1", tensor_type("int8", {1})),
                       var("out", kVec)},
                      {node("OpFromGraph", {"a", "b"}, {"o"}, {{"name", "myop"}, {"inner", inner}}),
                       node("ExpandDims", {"three"}, {"three1"}, {{"axis", 0}}), node("mul", {"o", "three1"}, {"out"})},
                      {"a", "b"}, {"out"});
  FunctionGraph fg = load_graph_text(g.dump(), "");
  CHECK(dprint(fg) ==
        "Mul [id A]\n"
        " ├─ myop{inline=False} [id B]\n"
        " │  ├─ a [id C]\n"
        " │  └─ b [id D]\n"
        " └─ ExpandDims{axis=0} [id E]\n"
        "    └─ 3 [id F]\n"
        "\n"
        "Inner graphs:\n"
        "\n"
        "myop{inline=False} [id B]\n"
        " ← Add [id G]\n"
        "    ├─ i0 [id H]\n"
        "    └─ Mul [id I]\n"
        "       ├─ Exp [id J]\n"
        "       │  └─ i1 [id K]\n"
        "       └─ ExpandDims{axis=0} [id L]\n"
        "          └─ 2 [id M]\n");
}

TEST_CASE("OpFromGraph: saving writes version 2 with the inner graph, and reloads") {
  FunctionGraph fg = load_graph_text(pair_graph().dump(), "");
  CHECK(graph_format_version(fg) == 2);
  std::string text = save_graph_text(fg);
  CHECK(text.find("\"version\": 2") != std::string::npos);
  CHECK(text.find("{\"op\":\"OpFromGraph\",\"props\":{\"inner\":{\"variables\":[{\"id\":\"a\"") != std::string::npos);
  FunctionGraph again = load_graph_text(text, "");
  CHECK(save_graph_text(again) == text);
  CHECK(dprint(again) == dprint(fg));
  CHECK(again.outputs()[1]->owner()->op().equals(fg.outputs()[1]->owner()->op()));
  // Once inlined, the graph is version 1 again.
  FunctionGraph inlined = fg.clone();
  inline_op_from_graphs(inlined);
  CHECK(graph_format_version(inlined) == 1);
  CHECK(save_graph_text(inlined).find("\"version\": 1") != std::string::npos);
}

TEST_CASE("OpFromGraph: equality is the inner graph's structure, not its names") {
  auto op_of = [](const Json& inner, const char* name = "pair") {
    Json g = pair_graph(inner);
    g["nodes"][0]["props"]["name"] = name;
    FunctionGraph fg = load_graph_text(g.dump(), "");
    return fg.outputs()[1]->owner()->op_ptr();
  };
  const OpPtr base = op_of(pair_inner());
  // The same graph under other ids and variable names is the same op (merging may join them).
  Json renamed = pair_inner();
  std::string text = renamed.dump();
  for (auto [from, to] : {std::pair{"\"e\"", "\"exp_b\""}, std::pair{"\"m\"", "\"scaled\""}}) {
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + 1)) text.replace(at, std::string(from).size(), to);
  }
  CHECK(op_of(Json::parse(text))->equals(*base));
  CHECK(op_of(Json::parse(text))->hash() == base->hash());
  // Another constant, another op; another wiring, another op; another label, another op.
  Json three = pair_inner();
  for (auto& v : three["variables"])
    if (v["id"] == "two") v["value"] = 3;
  CHECK_FALSE(op_of(three)->equals(*base));
  Json swapped = pair_inner();
  swapped["nodes"][3]["inputs"] = Json::array({"m", "a"});  // m + a, not a + m
  CHECK_FALSE(op_of(swapped)->equals(*base));
  CHECK_FALSE(op_of(pair_inner(), "other")->equals(*base));
  // props() holds the label only: the graph writer writes the inner graph.
  CHECK(base->props() == Json{{"name", "pair"}});
}

TEST_CASE("OpFromGraph: an rng passes through an inner graph") {
  Json inner = graph_json(0, {var("r", {{"kind", "rng"}}), var("v", kVec), var("e", kVec)}, {node("exp", {"v"}, {"e"})},
                          {"r", "v"}, {"r", "e"});
  Json g = graph_json(2, {var("rng", {{"kind", "rng"}}), var("x", kVec), var("r2", {{"kind", "rng"}}), var("y", kVec)},
                      {node("OpFromGraph", {"rng", "x"}, {"r2", "y"}, {{"name", "f"}, {"inner", inner}})},
                      {"rng", "x"}, {"r2", "y"});
  FunctionGraph fg = load_graph_text(g.dump(), "");
  CHECK(fg.outputs()[0]->type().kind == TypeKind::Rng);
  Array words = Array::zeros(DType::UInt64, {6});
  words.data<std::uint64_t>()[3] = 7;
  auto out = evaluate(fg, {words, f64_array({1}, {0})});
  CHECK(values_of(out[0])[3] == 7);
  CHECK(values_of(out[1])[0] == 1);
  // A tensor where the inner graph takes an rng is refused.
  Json bad = g;
  bad["nodes"][0]["inputs"] = Json::array({"x", "x"});
  Refusal r = refusal_of(bad);
  CHECK(r.where == "/nodes/0");
  CHECK(r.message.find("the inner graph's input 0 is RandomGeneratorType") != std::string::npos);
}

TEST_CASE("OpFromGraph: malformed nodes and inner graphs are refused at their place") {
  struct Case {
    std::string what;
    Json graph;
    std::string pointer;
  };
  auto with_inner = [](const std::function<void(Json&)>& change) {
    Json inner = pair_inner();
    change(inner);
    return pair_graph(inner);
  };
  Json missing_inner = pair_graph();
  missing_inner["nodes"][0]["props"].erase("inner");
  Json three_outputs = pair_graph();
  three_outputs["variables"].push_back(var("extra", kVec));
  three_outputs["nodes"][0]["outputs"] = Json::array({"a", "b", "extra"});
  Json wrong_type = pair_graph();
  wrong_type["variables"][2]["type"] = tensor_type("float32", {nullptr});
  Json one_input = pair_graph();
  one_input["nodes"][0]["inputs"] = Json::array({"x"});
  std::vector<Case> cases = {
      {"no inner", missing_inner, "/nodes/0/props"},
      {"inner not an object", pair_graph(Json::array()), "/nodes/0/props/inner"},
      {"name not a string", pair_graph(pair_inner(), {{"name", 3}}), "/nodes/0/props/name"},
      {"empty name", pair_graph(pair_inner(), {{"name", ""}}), "/nodes/0/props/name"},
      {"unknown prop", pair_graph(pair_inner(), {{"inline", false}}), "/nodes/0/props/inline"},
      {"a top-level key inside", with_inner([](Json& i) { i["version"] = 2; }), "/nodes/0/props/inner/version"},
      {"inner without outputs", with_inner([](Json& i) { i.erase("outputs"); }), "/nodes/0/props/inner"},
      {"undeclared inner id", with_inner([](Json& i) { i["nodes"][1]["inputs"][0] = "x"; }),
       "/nodes/0/props/inner/nodes/1/inputs/0"},
      {"inner cycle", with_inner([](Json& i) { i["nodes"][1]["inputs"][0] = "s"; }), "/nodes/0/props/inner/nodes/1"},
      {"bad inner type", with_inner([](Json& i) { i["variables"][0]["type"]["dtype"] = "float99"; }),
       "/nodes/0/props/inner/variables/0/type/dtype"},
      {"inner op error", with_inner([](Json& i) { i["nodes"][4]["inputs"] = Json::array({"a"}); }),
       "/nodes/0/props/inner/nodes/4"},
      {"too few node inputs", one_input, "/nodes/0"},
      {"more outputs than the inner graph", three_outputs, "/nodes/0/outputs"},
      {"declared output type", wrong_type, "/nodes/0/outputs/0"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    Refusal r = refusal_of(c.graph);
    CHECK(r.where == c.pointer);
    CHECK(r.message.find(c.pointer) != std::string::npos);
  }
}

TEST_CASE("OpFromGraph: vectorize_graph batches it as its inner graph") {
  FunctionGraph fg = load_graph_text(pair_graph().dump(), "");
  Var x = fg.inputs()[0], y = fg.inputs()[1];
  Var xb = make_input(TensorType(DType::Float64, {2, -1}), "xb");
  Var out = vectorize_graph(fg.outputs()[0], {{x, xb}});
  CHECK(out->ndim() == 2);
  const std::vector<double> rows = {0.5, -1, 2, 1.5, 0, -2}, yv = {1, 0.25, -3};
  std::vector<double> got = values_of(evaluate(FunctionGraph({xb, y}, {out}), {f64_array({2, 3}, rows), f64_array({3}, yv)})[0]);
  for (int b = 0; b < 2; ++b) {
    std::vector<double> xr(rows.begin() + 3 * b, rows.begin() + 3 * b + 3);
    std::vector<double> want = pair_values(xr, yv);
    for (int i = 0; i < 3; ++i) CHECK(got[static_cast<std::size_t>(3 * b + i)] == doctest::Approx(want[static_cast<std::size_t>(i)]));
  }
}
