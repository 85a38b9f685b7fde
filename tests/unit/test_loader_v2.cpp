// Graph format version 2 (GRAPH_FORMAT.md "Version 2", docs/GRAPH_FORMAT.md "kiln's
// readings"): PyTensor 3.x spellings normalised to one internal form, identity wrappers, the
// version gate for version-1 files, and a refusal naming its JSON pointer for everything
// malformed. The rng and none types, OpFromGraph and saving have their own files
// (test_types_v2.cpp, test_op_from_graph.cpp).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>

#include <nlohmann/json.hpp>

#include "eval/evaluator.h"
#include "io/graph_load.h"
#include "io/graph_save.h"
#include "ir/error.h"
#include "ops/join.h"
#include "v2_test_util.h"

using namespace kiln;
using namespace kiln::testing;
using Json = nlohmann::json;

// --- the version gate --------------------------------------------------------------------------

TEST_CASE("v2 loader: version 2 is read, version 3 is not") {
  Json g = graph_json(2, {var("x", tensor_type("float64", {nullptr})), var("y", tensor_type("float64", {nullptr}))},
                      {node("exp", {"x"}, {"y"})}, {"x"}, {"y"});
  CHECK_NOTHROW(load_graph_text(g.dump(), ""));
  g["version"] = 3;
  Refusal r = refusal_of(g);
  CHECK(r.where == "/version");
  CHECK(r.message.find("versions 1 and 2") != std::string::npos);
}

TEST_CASE("v2 loader: version-2 constructs in a version-1 file are refused, naming the place") {
  const Json vec = tensor_type("float64", {nullptr});
  const Json mat = tensor_type("float64", {nullptr, nullptr});
  struct Case {
    std::string what;
    Json graph;
    std::string pointer;
  };
  auto one = [&](const std::string& op, const Json& props, const Json& in_type, const Json& out_type) {
    return graph_json(1, {var("x", in_type), var("y", out_type)}, {node(op, {"x"}, {"y"}, props)}, {"x"}, {"y"});
  };
  const Json composite = {
      {"name", "Composite"},
      {"variables", Json::array({{{"id", "a"}, {"dtype", "float64"}}, {{"id", "b"}, {"dtype", "float64"}}})},
      {"inputs", Json::array({"a"})},
      {"nodes", Json::array({{{"op", "Maximum"}, {"inputs", Json::array({"a", "a"})}, {"outputs", Json::array({"b"})}}})},
      {"outputs", Json::array({"b"})}};
  std::vector<Case> cases = {
      {"rng type", graph_json(1, {var("r", {{"kind", "rng"}})}, {}, {"r"}, {"r"}), "/variables/0/type/kind"},
      {"complex dtype", graph_json(1, {var("c", tensor_type("complex64", {}))}, {}, {"c"}, {"c"}),
       "/variables/0/type/dtype"},
      {"OpFromGraph", one("OpFromGraph", {{"inner", Json::object()}}, vec, vec), "/nodes/0/op"},
      {"MatrixTranspose", one("MatrixTranspose", nullptr, mat, mat), "/nodes/0/op"},
      {"ViewOp", one("ViewOp", nullptr, vec, vec), "/nodes/0/op"},
      {"a RandomVariable", one("NormalRV", nullptr, vec, vec), "/nodes/0/op"},
      {"Maximum as an op", one("Maximum", nullptr, vec, vec), "/nodes/0/op"},
      {"Maximum as a scalar_op", one("Elemwise", {{"scalar_op", "Maximum"}}, vec, vec), "/nodes/0/props/scalar_op"},
      {"Minimum in a CAReduce", one("CAReduce", {{"scalar_op", {{"name", "Minimum"}}}, {"axis", nullptr}}, vec,
                                    tensor_type("float64", Json::array())),
       "/nodes/0/props/scalar_op/name"},
      {"Maximum in a Composite", one("Elemwise", {{"scalar_op", composite}}, vec, vec),
       "/nodes/0/props/scalar_op/nodes/0/op"},
      {"cast to float16", one("Elemwise", {{"scalar_op", {{"name", "cast"}, {"dtype", "float16"}}}}, vec, vec),
       "/nodes/0/props/scalar_op/dtype"},
      {"Join axis prop", one("Join", {{"axis", 0}}, vec, vec), "/nodes/0/props/axis"},
      {"Split axis prop", one("Split", {{"len_splits", 1}, {"axis", 0}}, vec, vec), "/nodes/0/props/axis"},
      {"ExpandDims axes", one("ExpandDims", {{"axes", {0, 1}}}, vec, vec), "/nodes/0/props/axes"},
      {"Squeeze axes", one("Squeeze", {{"axes", {0}}}, vec, vec), "/nodes/0/props/axes"},
      {"Softmax axis list", one("Softmax", {{"axis", {0}}}, vec, vec), "/nodes/0/props/axis"},
      {"destroyhandler_tolerate_aliased",
       one("IncSubtensor", {{"idx_list", Json::array()}, {"destroyhandler_tolerate_aliased", Json::array()}}, vec, vec),
       "/nodes/0/props/destroyhandler_tolerate_aliased"},
      {"inner on a known op", one("Softmax", {{"axis", 0}, {"inner", Json::object()}}, vec, vec),
       "/nodes/0/props/inner"},
      {"Blockwise signature literal",
       one("Blockwise", {{"core_op", {{"op", "Dot"}}}, {"signature", "(m,3),(3,n)->(m,n)"}}, mat, mat),
       "/nodes/0/props/signature"},
      {"Maximum in a Blockwise core op",
       one("Blockwise", {{"core_op", {{"op", "Elemwise"}, {"props", {{"scalar_op", "Maximum"}}}}}, {"signature", "()->()"}},
           vec, vec),
       "/nodes/0/props/core_op/props/scalar_op"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    Refusal r = refusal_of(c.graph);
    CHECK(r.where == c.pointer);
    CHECK(r.message.find("needs graph format version 2") != std::string::npos);
  }
}

// --- Join and Split ------------------------------------------------------------------------------

namespace {

Json join_graph(int version, const Json& axis_props, bool axis_input, const Json& axis_type = tensor_type("int8", Json::array()),
                const Json& axis_value = 1) {
  std::vector<Json> vars = {var("x", tensor_type("float64", {2, nullptr})), var("y", tensor_type("float64", {2, 3})),
                            var("z", tensor_type("float64", {2, nullptr}))};
  std::vector<std::string> ins = {"x", "y"};
  std::vector<std::string> graph_ins = {"x", "y"};
  if (axis_input) {
    Json a = var("a", axis_type);
    if (!axis_value.is_null()) a["value"] = axis_value;
    else graph_ins.push_back("a");
    vars.push_back(a);
    ins.insert(ins.begin(), "a");
  }
  return graph_json(version, vars, {node("Join", ins, {"z"}, axis_props)}, graph_ins, {"z"});
}

}  // namespace

TEST_CASE("v2 loader: Join{axis} and PyTensor 2.26's Join(axis, ...) load as one op") {
  Array x = f64_array({2, 2}, {1, 2, 3, 4}), y = f64_array({2, 3}, {5, 6, 7, 8, 9, 10});
  const std::vector<double> want = {1, 2, 5, 6, 7, 3, 4, 8, 9, 10};
  FunctionGraph v2 = load_graph_text(join_graph(2, {{"axis", 1}}, false).dump(), "");
  FunctionGraph v1 = load_graph_text(join_graph(1, nullptr, true).dump(), "");
  FunctionGraph v1_negative = load_graph_text(join_graph(1, nullptr, true, tensor_type("int64", Json::array()), -1).dump(), "");
  for (FunctionGraph* fg : {&v2, &v1, &v1_negative}) {
    const Apply* j = fg->outputs()[0]->owner();
    CHECK(j->op().str() == "Join{axis=1}");
    CHECK(j->num_inputs() == 2);
    CHECK(fg->outputs()[0]->type().shape == Shape{2, -1});
    CHECK(values_of(evaluate(*fg, {x, y})[0]) == want);
  }
  // A run-time axis keeps the input form. The output's declared length 2 is not what Join
  // proves with an unknown axis, so the loader checks it at run time behind a SpecifyShape.
  FunctionGraph dynamic = load_graph_text(join_graph(1, nullptr, true, tensor_type("int32", Json::array()), nullptr).dump(), "");
  const Apply* check = dynamic.outputs()[0]->owner();
  CHECK(check->op().str() == "SpecifyShape");
  const Apply* j = check->input(0)->owner();
  CHECK(j->op().str() == "Join");
  CHECK(j->num_inputs() == 3);
  CHECK(values_of(evaluate(dynamic, {x, y, int_scalar(DType::Int32, 1)})[0]) == want);
  // Refusals: a negative or out-of-range prop, a tensor where the axis was.
  Refusal r = refusal_of(join_graph(2, {{"axis", -1}}, false));
  CHECK(r.where == "/nodes/0/props/axis");
  r = refusal_of(join_graph(2, {{"axis", 2}}, false));
  CHECK(r.where == "/nodes/0");
  CHECK(r.message.find("out of bounds") != std::string::npos);
  r = refusal_of(join_graph(2, {{"axis", "1"}}, false));
  CHECK(r.where == "/nodes/0/props/axis");
}

TEST_CASE("v2 loader: Split{len_splits, axis}(x, splits) and 2.26's Split(x, axis, splits)") {
  auto split_graph = [](int version, const Json& props, bool axis_input) {
    std::vector<Json> vars = {var("x", tensor_type("float64", {5})),
                              var("s", tensor_type("int64", {2}), Json::array({2, 3})),
                              var("p", tensor_type("float64", {2})), var("q", tensor_type("float64", {3}))};
    std::vector<std::string> ins = {"x", "s"};
    if (axis_input) {
      vars.push_back(var("a", tensor_type("int64", Json::array()), 0));
      ins.insert(ins.begin() + 1, "a");
    }
    return graph_json(version, vars, {node("Split", ins, {"p", "q"}, props)}, {"x"}, {"p", "q"});
  };
  Array x = f64_array({5}, {1, 2, 3, 4, 5});
  FunctionGraph v2 = load_graph_text(split_graph(2, {{"len_splits", 2}, {"axis", 0}}, false).dump(), "");
  FunctionGraph v1 = load_graph_text(split_graph(1, {{"len_splits", 2}}, true).dump(), "");
  for (FunctionGraph* fg : {&v2, &v1}) {
    CHECK(fg->outputs()[0]->owner()->op().str() == "Split{len_splits=2, axis=0}");
    auto out = evaluate(*fg, {x});
    CHECK(values_of(out[0]) == std::vector<double>{1, 2});
    CHECK(values_of(out[1]) == std::vector<double>{3, 4, 5});
  }
  Refusal r = refusal_of(split_graph(2, {{"len_splits", 2}, {"axis", 1}}, false));
  CHECK(r.where == "/nodes/0");
  CHECK(r.message.find("out of bounds") != std::string::npos);
  r = refusal_of(split_graph(2, {{"len_splits", 2}, {"axis", 0}}, true));  // three inputs to the 3.x form
  CHECK(r.where == "/nodes/0");
  CHECK(r.message.find("takes 2 inputs (x, sizes)") != std::string::npos);
}

// --- Softmax, CumOp ----------------------------------------------------------------------------

TEST_CASE("v2 loader: Softmax and LogSoftmax axis lists") {
  auto softmax_graph = [](const std::string& op, const Json& axis, const Json& type) {
    return graph_json(2, {var("x", type), var("y", type)}, {node(op, {"x"}, {"y"}, {{"axis", axis}})}, {"x"}, {"y"});
  };
  const Json mat = tensor_type("float64", {2, 3});
  CHECK(load_graph_text(softmax_graph("Softmax", {1}, mat).dump(), "").outputs()[0]->owner()->op().str() ==
        "Softmax{axis=1}");
  CHECK(load_graph_text(softmax_graph("Softmax", {-1}, mat).dump(), "").outputs()[0]->owner()->op().str() ==
        "Softmax{axis=1}");
  CHECK(load_graph_text(softmax_graph("LogSoftmax", {1, 0}, mat).dump(), "").outputs()[0]->owner()->op().str() ==
        "LogSoftmax{axis=None}");
  // Over axes 0 and 2 of a 3-d tensor: PyTensor 3.x's formula, as an OpFromGraph.
  const Json t3 = tensor_type("float64", {2, 2, 2});
  for (const std::string op : {"Softmax", "LogSoftmax"}) {
    FunctionGraph fg = load_graph_text(softmax_graph(op, {2, 0}, t3).dump(), "");
    CHECK(fg.outputs()[0]->owner()->op().str() == op + "{inline=False}");
    Array x = f64_array({2, 2, 2}, {0.5, -1, 2, 0.25, 3, 1, -2, 0});
    std::vector<double> got = values_of(evaluate(fg, {x})[0]);
    for (int j = 0; j < 2; ++j) {  // axis 1 is kept: normalise over (i, k) for each j
      double total = 0;
      for (int i = 0; i < 2; ++i)
        for (int k = 0; k < 2; ++k) total += std::exp(x.data<double>()[i * 4 + j * 2 + k]);
      for (int i = 0; i < 2; ++i)
        for (int k = 0; k < 2; ++k) {
          const double e = x.data<double>()[i * 4 + j * 2 + k];
          const double want = op == "Softmax" ? std::exp(e) / total : e - std::log(total);
          CHECK(got[static_cast<std::size_t>(i * 4 + j * 2 + k)] == doctest::Approx(want).epsilon(1e-14));
        }
    }
  }
  Refusal r = refusal_of(softmax_graph("Softmax", {0, 0}, mat));
  CHECK(r.where == "/nodes/0/props/axis");
  CHECK(r.message.find("repeats axis 0") != std::string::npos);
  r = refusal_of(softmax_graph("Softmax", {2}, mat));
  CHECK(r.where == "/nodes/0/props/axis");
  r = refusal_of(softmax_graph("Softmax", {"a"}, mat));
  CHECK(r.where == "/nodes/0/props/axis/0");
  // A Softmax carrying its inner graph: kiln's own definition stands, the inner graph unread.
  Json with_inner = softmax_graph("Softmax", {1}, mat);
  with_inner["nodes"][0]["props"]["inner"] = {{"anything", 1}};
  CHECK(load_graph_text(with_inner.dump(), "").outputs()[0]->owner()->op().str() == "Softmax{axis=1}");
}

// --- DimShuffle spellings, Maximum/Minimum ---------------------------------------------------------

TEST_CASE("v2 loader: MatrixTranspose, ExpandDims{axes}, Squeeze{axes}, Maximum and Minimum") {
  auto one = [](const std::string& op, const Json& props, const Json& in, const Json& out) {
    return graph_json(2, {var("x", in), var("y", out)}, {node(op, {"x"}, {"y"}, props)}, {"x"}, {"y"});
  };
  FunctionGraph t = load_graph_text(one("MatrixTranspose", nullptr, tensor_type("float64", {4, 2, 3}),
                                        tensor_type("float64", {4, 3, 2})).dump(), "");
  CHECK(t.outputs()[0]->owner()->op().props() == Json{{"input_ndim", 3}, {"new_order", {0, 2, 1}}});
  FunctionGraph e = load_graph_text(one("ExpandDims", {{"axes", {0, 2}}}, tensor_type("float64", {3}),
                                        tensor_type("float64", {1, 3, 1})).dump(), "");
  CHECK(e.outputs()[0]->type().shape == Shape{1, 3, 1});
  FunctionGraph s = load_graph_text(one("Squeeze", {{"axes", {0, 2}}}, tensor_type("float64", {1, 3, 1}),
                                        tensor_type("float64", {3})).dump(), "");
  CHECK(s.outputs()[0]->type().shape == Shape{3});
  Refusal r = refusal_of(one("MatrixTranspose", nullptr, tensor_type("float64", {3}), tensor_type("float64", {3})));
  CHECK(r.where == "/nodes/0/inputs/0");
  r = refusal_of(one("ExpandDims", {{"axis", 0}, {"axes", {1}}}, tensor_type("float64", {3}), tensor_type("float64", {1, 3})));
  CHECK(r.where == "/nodes/0/props/axes");
  r = refusal_of(one("MatrixTranspose", {{"axes", {1, 0}}}, tensor_type("float64", {3, 3}), tensor_type("float64", {3, 3})));
  CHECK(r.where == "/nodes/0/props/axes");

  const Json vec = tensor_type("float64", {3});
  Json g = graph_json(2, {var("x", vec), var("y", vec), var("a", vec), var("b", vec)},
                      {node("Maximum", {"x", "y"}, {"a"}), node("Elemwise", {"x", "y"}, {"b"}, {{"scalar_op", "Minimum"}})},
                      {"x", "y"}, {"a", "b"});
  FunctionGraph m = load_graph_text(g.dump(), "");
  auto out = evaluate(m, {f64_array({3}, {1, 5, -2}), f64_array({3}, {4, 2, -2})});
  CHECK(values_of(out[0]) == std::vector<double>{4, 5, -2});
  CHECK(values_of(out[1]) == std::vector<double>{1, 2, -2});
  CHECK(save_graph_text(m).find("\"maximum\"") != std::string::npos);  // saved in version 1's spelling
  CHECK(graph_format_version(m) == 1);
}

// --- identity wrappers -------------------------------------------------------------------------

TEST_CASE("v2 loader: identity wrappers mean their input") {
  const Json vec = tensor_type("float64", {nullptr});
  const Json s = tensor_type("int64", Json::array());
  Json g = graph_json(
      2,
      {var("x", vec), var("v", vec), var("d", vec), var("o", vec), var("sa", vec), var("i", s), var("si", s),
       var("ts", s), var("ts1", tensor_type("int64", {1})), var("y", vec), named_var("out", vec, "result")},
      {node("ViewOp", {"x"}, {"v"}), node("DeepCopyOp", {"v"}, {"d"}), node("OutputGuard", {"d"}, {"o"}),
       node("SpecifyAssumptions", {"o"}, {"sa"}, {{"assumptions", Json::array({Json::array({"positive", 1})})}}),
       node("ScalarFromTensor", {"i"}, {"si"}), node("TensorFromScalar", {"si"}, {"ts"}),
       node("ExpandDims", {"ts"}, {"ts1"}, {{"axis", 0}}),
       node("Elemwise", {"sa", "ts1"}, {"y"}, {{"scalar_op", "mul"}}), node("ViewOp", {"y"}, {"out"})},
      {"x", "i"}, {"out", "v"});
  FunctionGraph fg = load_graph_text(g.dump(), "");
  CHECK(fg.num_nodes() == 2);  // the ExpandDims and the mul
  CHECK(fg.outputs()[1] == fg.inputs()[0]);
  CHECK(fg.output_names()[0] == "result");  // the wrapper's output name, not y's
  CHECK(fg.output_names()[1] == "v");
  auto out = evaluate(fg, {f64_array({2}, {1.5, -2}), int_scalar(DType::Int64, 3)});
  CHECK(values_of(out[0]) == std::vector<double>{4.5, -6});
  CHECK(graph_format_version(fg) == 1);
}

TEST_CASE("v2 loader: identity wrapper refusals") {
  const Json vec = tensor_type("float64", {nullptr});
  auto wrap = [&](const std::string& op, const std::vector<std::string>& ins, const std::vector<std::string>& outs,
                  const Json& props, const Json& out_type) {
    std::vector<Json> vars = {var("x", vec), var("x2", vec)};
    for (const auto& o : outs) vars.push_back(var(o, out_type));
    return graph_json(2, vars, {node(op, ins, outs, props)}, {"x", "x2"}, outs);
  };
  Refusal r = refusal_of(wrap("ViewOp", {"x", "x2"}, {"y"}, nullptr, vec));
  CHECK(r.where == "/nodes/0/inputs");
  r = refusal_of(wrap("DeepCopyOp", {"x"}, {"y", "z"}, nullptr, vec));
  CHECK(r.where == "/nodes/0/outputs");
  r = refusal_of(wrap("ViewOp", {"x"}, {"y"}, nullptr, tensor_type("float64", {3})));  // more specific
  CHECK(r.where == "/nodes/0/outputs/0");
  r = refusal_of(wrap("ViewOp", {"x"}, {"y"}, nullptr, tensor_type("float32", {nullptr})));
  CHECK(r.where == "/nodes/0/outputs/0");
  r = refusal_of(wrap("TensorFromScalar", {"x"}, {"y"}, nullptr, vec));
  CHECK(r.where == "/nodes/0/inputs/0");
  r = refusal_of(wrap("ViewOp", {"x"}, {"y"}, {{"axis", 0}}, vec));
  CHECK(r.where == "/nodes/0/props/axis");
  r = refusal_of(wrap("ViewOp", {"x"}, {"y"}, {{"assumptions", Json::array()}}, vec));
  CHECK(r.where == "/nodes/0/props/assumptions");
  r = refusal_of(wrap("SpecifyAssumptions", {"x"}, {"y"}, {{"assumptions", "positive"}}, vec));
  CHECK(r.where == "/nodes/0/props/assumptions");
}

// --- ignored props, index dtypes ------------------------------------------------------------------

TEST_CASE("v2 loader: the new ignored props are type-checked and ignored") {
  const Json mat = tensor_type("float64", {2, 2});
  auto inc = [&](const Json& props) {
    Json p = {{"idx_list", {{{"index", "input"}}}}, {"set_instead_of_inc", true}};
    for (auto it = props.begin(); it != props.end(); ++it) p[it.key()] = it.value();
    return graph_json(2, {var("x", mat), var("y", tensor_type("float64", {2})), var("i", tensor_type("uint8", Json::array())),
                          var("z", mat)},
                      {node("IncSubtensor", {"x", "y", "i"}, {"z"}, p)}, {"x", "y", "i"}, {"z"});
  };
  FunctionGraph fg = load_graph_text(inc({{"destroyhandler_tolerate_aliased", {{0, 1}}}, {"inplace", true}}).dump(), "");
  auto out = evaluate(fg, {f64_array({2, 2}, {1, 2, 3, 4}), f64_array({2}, {9, 8}), int_scalar(DType::UInt8, 1)});
  CHECK(values_of(out[0]) == std::vector<double>{1, 2, 9, 8});  // a uint8 index input
  Refusal r = refusal_of(inc({{"destroyhandler_tolerate_aliased", 3}}));
  CHECK(r.where == "/nodes/0/props/destroyhandler_tolerate_aliased");
  Json dot = graph_json(2, {var("x", mat), var("y", mat), var("z", mat)},
                        {node("Dot", {"x", "y"}, {"z"}, {{"driver", "gelsd"}, {"overwrite_c", true}})}, {"x", "y"}, {"z"});
  CHECK_NOTHROW(load_graph_text(dot.dump(), ""));
  dot["nodes"][0]["props"]["driver"] = 1;
  CHECK(refusal_of(dot).where == "/nodes/0/props/driver");
  dot["nodes"][0]["props"]["driver"] = "gelsd";
  dot["nodes"][0]["props"]["overwrite_c"] = "yes";
  CHECK(refusal_of(dot).where == "/nodes/0/props/overwrite_c");
  // A known op PyTensor 3.x defines by an inner graph may carry it: kiln's definition stands.
  Json diag = graph_json(2, {var("x", mat), var("d", tensor_type("float64", {2}))},
                         {node("ExtractDiag", {"x"}, {"d"}, {{"offset", 0}, {"axis1", 0}, {"axis2", 1}, {"inner", {{"nodes", 1}}}})},
                         {"x"}, {"d"});
  FunctionGraph with_inner = load_graph_text(diag.dump(), "");
  CHECK(values_of(evaluate(with_inner, {f64_array({2, 2}, {1, 2, 3, 4})})[0]) == std::vector<double>{1, 4});
  diag["nodes"][0]["props"]["inner"] = 3;
  CHECK(refusal_of(diag).where == "/nodes/0/props/inner");
}

// --- Blockwise signature literals -----------------------------------------------------------------

TEST_CASE("v2 loader: Blockwise signatures with integer literals fix lengths") {
  auto bw = [](const std::string& sig, const Json& xt, const Json& yt, const Json& zt) {
    return graph_json(2, {var("x", xt), var("y", yt), var("z", zt)},
                      {node("Blockwise", {"x", "y"}, {"z"}, {{"core_op", {{"op", "Dot"}}}, {"signature", sig}})},
                      {"x", "y"}, {"z"});
  };
  FunctionGraph fg = load_graph_text(bw("(m,3),(3,2)->(m,2)", tensor_type("float64", {nullptr, nullptr, nullptr}),
                                        tensor_type("float64", {nullptr, nullptr, nullptr}),
                                        tensor_type("float64", {nullptr, nullptr, nullptr}))
                                         .dump(),
                                     "");
  CHECK(fg.outputs()[0]->type().shape == Shape{-1, -1, 2});  // the literal makes it static
  CHECK(graph_format_version(fg) == 2);
  Array x = Array::zeros(DType::Float64, {1, 2, 3}), y = Array::zeros(DType::Float64, {1, 3, 2});
  CHECK(evaluate(fg, {x, y})[0].shape() == Shape{1, 2, 2});
  Array y4 = Array::zeros(DType::Float64, {1, 4, 2});
  CHECK_THROWS_WITH(evaluate(fg, {Array::zeros(DType::Float64, {1, 2, 4}), y4}),
                    doctest::Contains("core dimension '3' has length 4 in input 0 but the signature fixes it"));
  Refusal r = refusal_of(bw("(m,3),(3,n)->(m,n)", tensor_type("float64", {2, 4}), tensor_type("float64", {3, 2}),
                            tensor_type("float64", {2, 2})));
  CHECK(r.where == "/nodes/0");
  CHECK(r.message.find("core dimension '3'") != std::string::npos);
  r = refusal_of(bw("(m,3a),(3a,n)->(m,n)", tensor_type("float64", {2, 3}), tensor_type("float64", {3, 2}),
                    tensor_type("float64", {2, 2})));
  CHECK(r.message.find("a dimension is a name or an integer length") != std::string::npos);
}

// --- Blockwise over an op kiln batches by its own rule -----------------------------------------

TEST_CASE("loader: a Blockwise over Join or AdvancedSubtensor becomes the op's batched form") {
  // PyTensor's vectorize leaves Blockwise{Join} when the inputs' batch patterns differ, and
  // pads the constant axis with a unit batch dimension.
  Json axis = var("a", tensor_type("int8", {1}));
  axis["value"] = Json::array({1});
  Json join = graph_json(1,
                         {var("x", tensor_type("float64", {nullptr, 2, 3})), var("y", tensor_type("float64", {1, 2, 1})),
                          axis, var("z", tensor_type("float64", {nullptr, nullptr, nullptr}))},
                         {node("Blockwise", {"a", "x", "y"}, {"z"},
                               {{"core_op", {{"op", "Join"}}}, {"signature", "(),(i,j),(k,l)->(m,n)"}})},
                         {"x", "y"}, {"z"});
  FunctionGraph fg = load_graph_text(join.dump(), "");
  for (Apply* n : fg.toposort()) CHECK(n->op().name() != "Blockwise");
  Array x = Array::zeros(DType::Float64, {4, 2, 3}), y = Array::zeros(DType::Float64, {1, 2, 1});
  for (std::int64_t i = 0; i < x.size(); ++i) x.data<double>()[i] = static_cast<double>(i);
  y.data<double>()[0] = -1, y.data<double>()[1] = -2;
  Array z = evaluate(fg, {x, y})[0];
  REQUIRE(z.shape() == Shape{4, 2, 4});
  CHECK(z.data<double>()[0] == 0);    // z[0, 0, 0] = x[0, 0, 0]
  CHECK(z.data<double>()[3] == -1);   // z[0, 0, 3] = y[0, 0, 0], broadcast over the batch
  CHECK(z.data<double>()[28] == 21);  // z[3, 1, 0] = x[3, 1, 0]
  CHECK(z.data<double>()[31] == -2);  // z[3, 1, 3] = y[0, 1, 0]

  // Batched index arrays: out[b] = x[b][idx[b]].
  Json adv = graph_json(1,
                        {var("x", tensor_type("float64", {3, 5})), var("i", tensor_type("int64", {3, 2})),
                         var("o", tensor_type("float64", {3, 2}))},
                        {node("Blockwise", {"x", "i"}, {"o"},
                              {{"core_op", {{"op", "AdvancedSubtensor"}, {"props", {{"idx_list", Json::array({Json{{"index", "input"}}})}}}}},
                               {"signature", "(a),(k)->(k)"}})},
                        {"x", "i"}, {"o"});
  fg = load_graph_text(adv.dump(), "");
  Array xs = Array::zeros(DType::Float64, {3, 5}), is = Array::zeros(DType::Int64, {3, 2});
  for (std::int64_t i = 0; i < xs.size(); ++i) xs.data<double>()[i] = static_cast<double>(i);
  const std::int64_t idx[6] = {4, 0, -1, 2, 1, 1};
  for (int i = 0; i < 6; ++i) is.data<std::int64_t>()[i] = idx[i];
  Array o = evaluate(fg, {xs, is})[0];
  const double expected[6] = {4, 0, 9, 7, 11, 11};
  for (int i = 0; i < 6; ++i) CHECK(o.data<double>()[i] == expected[i]);

  // A basic Subtensor with a batched integer index (x[b][i[b]]) goes through the advanced
  // index rule.
  auto sub = [](const Json& entry, const std::string& sig, const Json& out_type) {
    return graph_json(1,
                      {var("x", tensor_type("float64", {3, 5})), var("i", tensor_type("int64", {3})),
                       var("o", out_type)},
                      {node("Blockwise", {"x", "i"}, {"o"},
                            {{"core_op", {{"op", "Subtensor"}, {"props", {{"idx_list", Json::array({entry})}}}}},
                             {"signature", sig}})},
                      {"x", "i"}, {"o"});
  };
  fg = load_graph_text(sub(Json{{"index", "input"}}, "(a),()->()", tensor_type("float64", {3})).dump(), "");
  Array iv = Array::zeros(DType::Int64, {3});
  iv.data<std::int64_t>()[0] = 1, iv.data<std::int64_t>()[1] = -1, iv.data<std::int64_t>()[2] = 0;
  o = evaluate(fg, {xs, iv})[0];
  CHECK(o.data<double>()[0] == 1);
  CHECK(o.data<double>()[1] == 9);
  CHECK(o.data<double>()[2] == 10);

  // The same for an increment: o[b] = x[b] with x[b][i[b]] += y[b].
  Json inc = graph_json(1,
                        {var("x", tensor_type("float64", {3, 5})), var("y", tensor_type("float64", {3})),
                         var("i", tensor_type("int64", {3})), var("o", tensor_type("float64", {3, 5}))},
                        {node("Blockwise", {"x", "y", "i"}, {"o"},
                              {{"core_op", {{"op", "IncSubtensor"},
                                            {"props", {{"idx_list", Json::array({Json{{"index", "input"}}})},
                                                       {"set_instead_of_inc", false}}}}},
                               {"signature", "(a),(),()->(a)"}})},
                        {"x", "y", "i"}, {"o"});
  fg = load_graph_text(inc.dump(), "");
  Array ys = Array::zeros(DType::Float64, {3});
  ys.data<double>()[0] = 100, ys.data<double>()[1] = 200, ys.data<double>()[2] = 300;
  o = evaluate(fg, {xs, ys, iv})[0];
  for (std::int64_t k = 0; k < 15; ++k) {
    const double added = k == 1 ? 100 : k == 9 ? 200 : k == 10 ? 300 : 0;
    CHECK(o.data<double>()[k] == static_cast<double>(k) + added);
  }

  // A core op whose rule cannot batch these inputs (a batched slice bound) is refused naming
  // the Blockwise's core op and the rule's reason.
  Refusal r = refusal_of(sub(Json{{"slice", Json::array({"input", nullptr, nullptr})}}, "(a),()->(b)",
                             tensor_type("float64", {3, nullptr})));
  CHECK(r.where == "/nodes/0/props/core_op");
  CHECK(r.message.find("its batching rule fails") != std::string::npos);
  CHECK(r.message.find("batched slice bounds") != std::string::npos);
}

// --- ops the format names that kiln lacks -----------------------------------------------------

TEST_CASE("v2 loader: Eig, the last version-2 op kiln lacked, loads in version 2 and not in version 1") {
  const Json mat = tensor_type("float64", {2, 2});
  const Json w = tensor_type("complex128", {2}), v = tensor_type("complex128", {2, 2});
  Json g = graph_json(2, {var("x", mat), var("w", w), var("v", v)}, {node("Eig", {"x"}, {"w", "v"})}, {"x"}, {"w", "v"});
  CHECK_NOTHROW(load_graph_text(g.dump(), ""));
  g["version"] = 1;
  CHECK(refusal_of(g).message.find("needs graph format version 2") != std::string::npos);
  Json unknown = graph_json(2, {var("x", mat), var("y", mat)}, {node("Frobnicate", {"x"}, {"y"})}, {"x"}, {"y"});
  CHECK(refusal_of(unknown).where == "/nodes/0/op");  // an unknown op is a UserError
}

// --- saving ------------------------------------------------------------------------------------

TEST_CASE("saving: the lowest version; Join{axis} in each version's spelling; round trips") {
  // A version-2 file whose only version-2 construct is Join{axis}: saved as version 1, with the
  // axis an int64 constant input (PyTensor 2.26's spelling), and loaded back as Join{axis}.
  FunctionGraph fg = load_graph_text(join_graph(2, {{"axis", 1}}, false).dump(), "");
  CHECK(graph_format_version(fg) == 1);
  std::string v1 = save_graph_text(fg);
  CHECK(v1.find("\"version\": 1") != std::string::npos);
  CHECK(v1.find("{\"id\":\"v0\",\"type\":{\"dtype\":\"int64\",\"shape\":[]},\"value\":1}") != std::string::npos);
  CHECK(v1.find("{\"op\":\"Join\",\"inputs\":[\"v0\",\"x\",\"y\"],\"outputs\":[\"z\"]}") != std::string::npos);
  FunctionGraph again = load_graph_text(v1, "");
  CHECK(again.outputs()[0]->owner()->op().equals(fg.outputs()[0]->owner()->op()));
  CHECK(save_graph_text(again) == v1);
  // Beside a version-2 construct (an rng input) the file is version 2 and Join keeps its prop.
  Json g = join_graph(2, {{"axis", 1}}, false);
  g["variables"].push_back(var("r", {{"kind", "rng"}}));
  g["inputs"].push_back("r");
  g["outputs"].push_back("r");
  FunctionGraph with_rng = load_graph_text(g.dump(), "");
  std::string v2 = save_graph_text(with_rng);
  CHECK(v2.find("\"version\": 2") != std::string::npos);
  CHECK(v2.find("{\"op\":\"Join\",\"props\":{\"axis\":1},\"inputs\":[\"x\",\"y\"],\"outputs\":[\"z\"]}") != std::string::npos);
  CHECK(save_graph_text(load_graph_text(v2, "")) == v2);
  // Split likewise.
  Json s = graph_json(2, {var("x", tensor_type("float64", {5})), var("n", tensor_type("int64", {2}), Json::array({2, 3})),
                          var("p", tensor_type("float64", {2})), var("q", tensor_type("float64", {3}))},
                      {node("Split", {"x", "n"}, {"p", "q"}, {{"len_splits", 2}, {"axis", 0}})}, {"x"}, {"p", "q"});
  std::string split_v1 = save_graph_text(load_graph_text(s.dump(), ""));
  CHECK(split_v1.find("\"inputs\":[\"x\",\"v0\",\"n\"]") != std::string::npos);
  CHECK(save_graph_text(load_graph_text(split_v1, "")) == split_v1);
}
