// Scan (graph format version 2, "Control flow"): loading ScanInfo and the step function, refusals
// of malformed info / arities / tap types at their JSON pointer, saving and reloading, and the
// reference evaluator's run-time checks (negative n_steps, short sequences, buffers too short for
// their taps, a step that changes an output's shape). PyTensor's own results are the fixtures of
// tests/fixtures/cases/scan (tests/fixtures/pytensor3/export_scan_cases.py).
#include <doctest/doctest.h>

#include <functional>

#include <nlohmann/json.hpp>

#include "codegen/shape_graph.h"
#include "compiled.h"
#include "eval/evaluator.h"
#include "fixtures.h"
#include "grad/grad.h"
#include "io/graph_load.h"
#include "io/graph_save.h"
#include "ir/error.h"
#include "ops/elemwise.h"
#include "ops/reduce.h"
#include "ops/scan.h"
#include "print/dprint.h"
#include "rewrite/database.h"
#include "rewrite/pipeline.h"
#include "v2_test_util.h"

using namespace kiln;
using namespace kiln::testing;
using Json = nlohmann::json;

namespace {

const Json kScalar = tensor_type("float64", Json::array());
const Json kVec = tensor_type("float64", {nullptr});
const Json kInt = tensor_type("int64", Json::array());

// The step of an AR(2)-like filter with a sequence: x_t = c * x_{t-2} + x_{t-1} + e_t.
Json ar2_inner() {
  return graph_json(0, {var("e", kScalar), var("xm2", kScalar), var("xm1", kScalar), var("c", kScalar),
                        var("p", kScalar), var("q", kScalar), var("x", kScalar)},
                    {node("mul", {"c", "xm2"}, {"p"}), node("add", {"p", "xm1"}, {"q"}), node("add", {"q", "e"}, {"x"})},
                    {"e", "xm2", "xm1", "c"}, {"x"});
}

Json ar2_info() {
  return {{"n_seqs", 1},     {"mit_mot_in_slices", Json::array()}, {"mit_mot_out_slices", Json::array()},
          {"mit_sot_in_slices", {{-2, -1}}}, {"sit_sot_in_slices", Json::array()},
          {"n_nit_sot", 0},  {"n_untraced_sit_sot", 0},             {"n_non_seqs", 1},
          {"as_while", false}};
}

// out = Scan(n, eps, buf, c): the whole buffer (initial taps included).
Json ar2_graph(const Json& info = ar2_info(), const Json& inner = ar2_inner(), const Json& extra_props = Json::object()) {
  Json props = {{"info", info}, {"truncate_gradient", -1}, {"name", "ar2"}, {"mode", nullptr}, {"inner", inner}};
  for (auto it = extra_props.begin(); it != extra_props.end(); ++it) props[it.key()] = it.value();
  return graph_json(2, {var("n", kInt), var("eps", kVec), var("buf", kVec), var("c", kScalar), var("out", kVec)},
                    {node("Scan", {"n", "eps", "buf", "c"}, {"out"}, props)}, {"n", "eps", "buf", "c"}, {"out"});
}

Array i64(std::int64_t v) {
  Array a = Array::empty(DType::Int64, {});
  *a.data<std::int64_t>() = v;
  return a;
}

std::string failure_of(const FunctionGraph& fg, const std::vector<Array>& inputs) {
  try {
    evaluate(fg, inputs);
  } catch (const RuntimeFailure& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("Scan: a mit-sot with taps [-2, -1] runs as PyTensor's perform, buffer included") {
  FunctionGraph fg = load_graph_text(ar2_graph().dump(), "");
  CHECK(graph_format_version(fg) == 2);
  // Buffer of 2 + 4 rows: the taps, then the 4 steps.
  auto out = evaluate(fg, {i64(4), f64_array({4}, {1, 2, 3, 4}), f64_array({6}, {0.5, 1, 0, 0, 0, 0}),
                           f64_array({}, {2})});
  std::vector<double> expect = {0.5, 1};
  for (int t = 0; t < 4; ++t) expect.push_back(2 * expect[expect.size() - 2] + expect.back() + (t + 1));
  CHECK(values_of(out[0]) == expect);
  // A buffer of exactly the two taps is circular: it ends holding the last two values, oldest first.
  auto small = evaluate(fg, {i64(4), f64_array({4}, {1, 2, 3, 4}), f64_array({2}, {0.5, 1}), f64_array({}, {2})});
  CHECK(values_of(small[0]) == std::vector<double>{expect[4], expect[5]});
  // No steps: the buffer as given.
  auto none = evaluate(fg, {i64(0), f64_array({0}, {}), f64_array({2}, {0.5, 1}), f64_array({}, {2})});
  CHECK(values_of(none[0]) == std::vector<double>{0.5, 1});
}

TEST_CASE("Scan: run-time failures name what is wrong instead of reading out of bounds") {
  FunctionGraph fg = load_graph_text(ar2_graph().dump(), "");
  const Array c = f64_array({}, {2});
  CHECK(failure_of(fg, {i64(-1), f64_array({0}, {}), f64_array({2}, {0, 0}), c}).find("negative number of steps (-1)") !=
        std::string::npos);
  CHECK(failure_of(fg, {i64(3), f64_array({2}, {1, 2}), f64_array({5}, {0, 0, 0, 0, 0}), c})
            .find("sequence 0 has 2 rows but the scan runs 3 steps") != std::string::npos);
  CHECK(failure_of(fg, {i64(2), f64_array({2}, {1, 2}), f64_array({1}, {0}), c})
            .find("has 1 rows but must hold at least 2 (its oldest tap is -2)") != std::string::npos);
}

TEST_CASE("Scan: saving writes the info, the step function and the props; reloading gives the same op") {
  Json g = ar2_graph();
  g["nodes"][0]["props"]["info"].erase("n_untraced_sit_sot");
  g["nodes"][0]["props"]["info"]["n_shared_outs"] = 0;  // PyTensor 2.x's name
  FunctionGraph fg = load_graph_text(g.dump(), "");
  std::string text = save_graph_text(fg);
  CHECK(text.find("\"n_untraced_sit_sot\":0") != std::string::npos);
  CHECK(text.find("\"mit_sot_in_slices\":[[-2,-1]]") != std::string::npos);
  FunctionGraph again = load_graph_text(text, "");
  CHECK(save_graph_text(again) == text);
  CHECK(again.outputs()[0]->owner()->op().equals(fg.outputs()[0]->owner()->op()));
  CHECK(fg.outputs()[0]->owner()->op().str() == "Scan{ar2, while_loop=False, inplace=none}");
  CHECK(dprint(fg).find("Scan{ar2, while_loop=False, inplace=none}") != std::string::npos);
}

TEST_CASE("Scan: malformed info, arities and step functions are refused at their place") {
  struct Case {
    std::string what;
    Json graph;
    std::string pointer;
    std::string words;
  };
  auto with_info = [](const std::function<void(Json&)>& change) {
    Json info = ar2_info();
    change(info);
    return ar2_graph(info);
  };
  Json inner_wrong_dtype = ar2_inner();
  inner_wrong_dtype["variables"][1]["type"] = tensor_type("float32", Json::array());
  Json short_inputs = ar2_graph();
  short_inputs["nodes"][0]["inputs"] = Json::array({"n", "eps", "buf"});
  Json matrix_buffer = ar2_graph();
  matrix_buffer["variables"][2]["type"] = tensor_type("float64", {nullptr, nullptr});
  Json float_steps = ar2_graph();
  float_steps["variables"][0]["type"] = kScalar;
  std::vector<Case> cases = {
      {"info not an object", ar2_graph(Json::array()), "/nodes/0/props/info", "must be an object"},
      {"missing field", with_info([](Json& i) { i.erase("n_seqs"); }), "/nodes/0/props/info", "needs the field \"n_seqs\""},
      {"unknown field", with_info([](Json& i) { i["n_steps"] = 1; }), "/nodes/0/props/info/n_steps", "not a field"},
      {"negative count", with_info([](Json& i) { i["n_nit_sot"] = -1; }), "/nodes/0/props/info/n_nit_sot", "count"},
      {"taps not lists", with_info([](Json& i) { i["mit_sot_in_slices"] = {-2}; }),
       "/nodes/0/props/info/mit_sot_in_slices/0", "list of integer taps"},
      {"a non-negative mit-sot tap", with_info([](Json& i) { i["mit_sot_in_slices"] = {{-1, 0}}; }),
       "/nodes/0/props/info/mit_sot_in_slices/0", "negative taps only"},
      {"a repeated tap", with_info([](Json& i) { i["mit_sot_in_slices"] = {{-1, -1}}; }),
       "/nodes/0/props/info/mit_sot_in_slices/0", "repeats a tap"},
      {"no taps", with_info([](Json& i) { i["mit_sot_in_slices"] = {Json::array()}; }),
       "/nodes/0/props/info/mit_sot_in_slices/0", "at least one tap"},
      {"both untraced names", with_info([](Json& i) { i["n_shared_outs"] = 0; }),
       "/nodes/0/props/info/n_shared_outs", "give one of them"},
      {"mit-mot slices unpaired", with_info([](Json& i) { i["mit_mot_in_slices"] = {{-1}}; }),
       "/nodes/0/props/info/mit_mot_out_slices", "one tap list per mit-mot"},
      {"as_while not a bool", with_info([](Json& i) { i["as_while"] = 1; }), "/nodes/0/props/info/as_while",
       "true or false"},
      {"too few inner inputs", with_info([](Json& i) { i["mit_sot_in_slices"] = {{-3, -2, -1}}; }),
       "/nodes/0/props/inner", "the inner graph has 4 input(s) but the info needs 5"},
      {"a while loop without a condition", with_info([](Json& i) { i["as_while"] = true; }), "/nodes/0/props/inner",
       "1 output(s) but the info needs 2"},
      {"taps of one buffer with two dtypes", ar2_graph(ar2_info(), inner_wrong_dtype), "/nodes/0/props/inner",
       "are taps of one buffer"},
      {"unknown prop", ar2_graph(ar2_info(), ar2_inner(), {{"gpua", false}}), "/nodes/0/props/gpua", ""},
      {"too few node inputs", short_inputs, "/nodes/0", "takes 4 inputs"},
      {"a buffer of the wrong rank", matrix_buffer, "/nodes/0", "reads its taps as"},
      {"float n_steps", float_steps, "/nodes/0", "n_steps (input 0) must be a 0-d integer"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    Refusal r = refusal_of(c.graph);
    CHECK(r.where == c.pointer);
    CHECK(r.message.find(c.words) != std::string::npos);
  }
}

TEST_CASE("Scan: PyTensor's scans give PyTensor's results after kiln's rewrite pipeline too") {
  // The rewrites treat Scan as opaque; its inputs (buffers built with AllocEmpty/SetSubtensor)
  // and the Subtensors on its outputs are rewritten around it.
  const auto cases = list_fixture_cases("scan/");
  CHECK(cases.size() >= 15);
  for (const auto& dir : cases) {
    CAPTURE(dir);
    FixtureCase c = load_fixture_case(dir);
    FunctionGraph fg = c.graph.clone();
    run_pipeline(fg);
    std::vector<Array> out = evaluate(fg, c.inputs);
    REQUIRE(out.size() == c.expected.size());
    for (std::size_t k = 0; k < out.size(); ++k) {
      auto diff = compare_arrays(out[k], c.expected[k], c.rtol, c.atol);
      CHECK_MESSAGE(!diff, "output " << k << ": " << diff.value_or(""));
    }
  }
}

TEST_CASE("Scan: compiled, the loop agrees with the evaluator, fails where it fails, and never reads out of bounds") {
  FunctionGraph fg = load_graph_text(ar2_graph().dump(), "");
  BuildResult built = build_bundle({{&fg, "ar2"}}, "scan_ar2");
  Library so(built.library_path);
  const kiln_graph_info& info = so.graph("ar2");
  const Array c = f64_array({}, {2});
  // Buffers longer than, equal to and (circular) shorter than the taps plus the steps.
  for (const Array& buf : {f64_array({6}, {0.5, 1, 0, 0, 0, 0}), f64_array({2}, {0.5, 1}), f64_array({3}, {0.5, 1, 7}),
                           f64_array({9}, {0.5, 1, 0, 0, 0, 0, 0, 0, 0})}) {
    const std::vector<Array> inputs = {i64(4), f64_array({4}, {1, 2, 3, 4}), buf, c};
    for (bool into : {false, true}) {
      CallResult r = call_compiled(info, inputs, into);
      REQUIRE_MESSAGE(r.status == KILN_OK, r.error);
      CHECK(values_of(r.outputs[0]) == values_of(evaluate(fg, inputs)[0]));
    }
  }
  struct Bad {
    std::vector<Array> inputs;
    std::string words;
  };
  const std::vector<Bad> bad = {
      {{i64(-1), f64_array({0}, {}), f64_array({2}, {0, 0}), c}, "negative number of steps (-1)"},
      {{i64(3), f64_array({2}, {1, 2}), f64_array({5}, {0, 0, 0, 0, 0}), c}, "sequence 0 has 2 rows but the scan runs 3 steps"},
      {{i64(2), f64_array({2}, {1, 2}), f64_array({1}, {0}), c}, "has 1 rows but must hold at least 2 (its oldest tap is -2)"},
  };
  for (const Bad& b : bad) {
    CAPTURE(b.words);
    CHECK(failure_of(fg, b.inputs).find(b.words) != std::string::npos);
    CallResult r = call_compiled(info, b.inputs);
    CHECK(r.status == KILN_ERR_VALUE);
    CHECK(r.error.find(b.words) != std::string::npos);
  }
}

namespace {

// last = Scan(n, eps, buf, c)[-1], the buffer built as scan() builds it:
// SetSubtensor{:2}(AllocEmpty(extra + n), init) with the two initial taps. extra = 2 is what
// scan() writes; another extra makes a buffer longer than the loop fills.
Json ar2_last_graph(std::int64_t extra, bool whole_buffer_too) {
  Json set_props = {{"idx_list", {{{"slice", {nullptr, "input", nullptr}}}}}, {"set_instead_of_inc", true}};
  Json scan_props = {{"info", ar2_info()}, {"truncate_gradient", -1}, {"name", "ar2"}, {"mode", nullptr},
                     {"inner", ar2_inner()}};
  std::vector<std::string> outputs = {"last"};
  if (whole_buffer_too) outputs.push_back("out");
  return graph_json(2,
                    {var("n", kInt), var("eps", kVec), var("init", tensor_type("float64", {2})), var("c", kScalar),
                     var("extra", kInt, extra), var("two", kInt, 2), var("minus1", kInt, -1), var("len", kInt),
                     var("empty", kVec), var("buf", kVec), var("out", kVec), var("last", kScalar)},
                    {node("add", {"extra", "n"}, {"len"}), node("AllocEmpty", {"len"}, {"empty"}, {{"dtype", "float64"}}),
                     node("IncSubtensor", {"empty", "init", "two"}, {"buf"}, set_props),
                     node("Scan", {"n", "eps", "buf", "c"}, {"out"}, scan_props),
                     node("Subtensor", {"out", "minus1"}, {"last"}, {{"idx_list", {{{"index", "input"}}}}})},
                    {"n", "eps", "init", "c"}, outputs);
}

int save_mem_count(const PipelineReport& report) {
  int n = 0;
  for (const auto& [pass, stats] : report.passes) {
    auto it = stats.applied.find("scan_save_mem");
    if (it != stats.applied.end()) n += it->second;
  }
  return n;
}

}  // namespace

TEST_CASE("Scan: an output read only as out[-1] keeps only its taps' rows (scan_save_mem), with the same values") {
  const Array init = f64_array({2}, {0.5, 1}), c = f64_array({}, {2});
  auto inputs_for = [&](std::int64_t n) {
    std::vector<double> eps;
    for (std::int64_t t = 0; t < n; ++t) eps.push_back(0.25 * static_cast<double>(t + 1));
    return std::vector<Array>{i64(n), f64_array({n}, eps), init, c};
  };
  FunctionGraph original = load_graph_text(ar2_last_graph(2, false).dump(), "");
  FunctionGraph rewritten = original.clone();
  CHECK(save_mem_count(run_pipeline(rewritten)) == 1);
  BuildResult built = build_bundle({{&original, "last"}}, "scan_save_mem");
  Library so(built.library_path);
  for (std::int64_t n : {0, 1, 2, 3, 7}) {
    CAPTURE(n);
    const std::vector<Array> inputs = inputs_for(n);
    const std::vector<double> want = values_of(evaluate(original, inputs)[0]);
    CHECK(values_of(evaluate(rewritten, inputs)[0]) == want);
    CallResult r = call_compiled(so.graph("last"), inputs);
    REQUIRE_MESSAGE(r.status == KILN_OK, r.error);
    CHECK(values_of(r.outputs[0]) == want);
  }
  // Not when the buffer is longer than taps + n_steps (out[-1] is then a row the loop never
  // wrote), nor when the whole buffer is an output too.
  for (const Json& g : {ar2_last_graph(3, false), ar2_last_graph(2, true)}) {
    FunctionGraph fg = load_graph_text(g.dump(), "");
    CHECK(save_mem_count(run_pipeline(fg)) == 0);
  }
  // PyTensor's own scans: whichever fixtures have the pattern agree with PyTensor (the test
  // above runs them all through the pipeline); at least one has it.
  int fired = 0;
  for (const auto& dir : list_fixture_cases("scan/")) {
    FunctionGraph fg = load_fixture_case(dir).graph.clone();
    fired += save_mem_count(run_pipeline(fg));
  }
  CHECK(fired >= 1);
}

TEST_CASE("Scan: PyTensor's graph as built reads out[taps:][-1]; merged (subtensor_merge), scan_save_mem keeps the taps' rows") {
  // pytensor.scan returns the buffer's [taps:] and the user reads [-1]: canonicalize merges the
  // two Subtensors into the Scan output's [-1] (checked to lie in [taps:]), which scan_save_mem
  // then reads. Exported from PyTensor 3.0 without its rewrites; values are pytensor.function's.
  const std::vector<std::pair<std::string, std::int64_t>> cases = {{"scan/sit_sot_last_of_slice", 1},
                                                                   {"scan/mit_sot_last_of_slice", 2}};
  std::vector<FixtureCase> fixtures;
  for (const auto& [name, taps] : cases) {
    CAPTURE(name);
    fixtures.push_back(load_fixture_case(list_fixture_cases(name).at(0)));
    const FixtureCase& c = fixtures.back();
    FunctionGraph fg = c.graph.clone();
    CHECK(save_mem_count(run_pipeline(fg)) == 1);
    const Apply* scan = nullptr;
    for (Apply* n : fg.toposort())
      if (n->op().name() == "Scan") scan = n;
    REQUIRE(scan);
    const ScanInfo& info = static_cast<const Scan&>(scan->op()).info();
    CHECK(scan->input(static_cast<std::size_t>(info.tap_buffers_begin()))->shape()[0] == taps);
    std::vector<Array> out = evaluate(fg, c.inputs);
    auto diff = compare_arrays(out.at(0), c.expected.at(0), c.rtol, c.atol);
    CHECK_MESSAGE(!diff, diff.value_or(""));
    // No steps: [taps:] is empty and [-1] fails, before and after the rewrites.
    std::vector<Array> none = c.inputs;
    none[0] = f64_array({0}, {});
    CHECK(failure_of(c.graph, none).find("out of bounds") != std::string::npos);
    CHECK(failure_of(fg, none).find("out of bounds") != std::string::npos);
  }
  BuildResult built = build_bundle({{&fixtures[0].graph, "sit"}, {&fixtures[1].graph, "mit"}}, "scan_last_of_slice");
  Library so(built.library_path);
  for (std::size_t k = 0; k < fixtures.size(); ++k) {
    CallResult r = call_compiled(so.graph(k == 0 ? "sit" : "mit"), fixtures[k].inputs);
    REQUIRE_MESSAGE(r.status == KILN_OK, r.error);
    auto diff = compare_arrays(r.outputs.at(0), fixtures[k].expected.at(0), fixtures[k].rtol, fixtures[k].atol);
    CHECK_MESSAGE(!diff, diff.value_or(""));
  }
}

namespace {

// W11's step (bench/graphs/make_scan_graphs.py): acc_t = acc_{t-1} - 0.5 ((y_t - phi y_{t-1}) / sigma)^2,
// sequences y[1:] and y[:-1], one sit-sot, non-sequences phi and sigma. As a while loop it also
// returns acc_t > -1e300 (always true here).
Json ar1_inner(bool as_while) {
  std::vector<Json> vars = {var("yt", kScalar),     var("yp", kScalar),  var("acc", kScalar), var("phi", kScalar),
                            var("sigma", kScalar),  var("m", kScalar),   var("d", kScalar),   var("z", kScalar),
                            var("half", kScalar, 0.5), var("hz", kScalar), var("sq", kScalar), var("next", kScalar)};
  std::vector<Json> nodes = {node("mul", {"phi", "yp"}, {"m"}),    node("sub", {"yt", "m"}, {"d"}),
                             node("true_div", {"d", "sigma"}, {"z"}), node("mul", {"half", "z"}, {"hz"}),
                             node("mul", {"hz", "z"}, {"sq"}),     node("sub", {"acc", "sq"}, {"next"})};
  std::vector<std::string> outputs = {"next"};
  if (as_while) {
    vars.push_back(var("low", kScalar, -1e300));
    vars.push_back(var("go", tensor_type("bool", Json::array())));
    nodes.push_back(node("gt", {"next", "low"}, {"go"}));
    outputs.push_back("go");
  }
  return graph_json(0, vars, nodes, {"yt", "yp", "acc", "phi", "sigma"}, outputs);
}

// out = Scan(n, y1, y0, buf, phi, sigma): the sit-sot's whole buffer.
Json ar1_graph(bool as_while) {
  Json info = {{"n_seqs", 2},          {"mit_mot_in_slices", Json::array()}, {"mit_mot_out_slices", Json::array()},
               {"mit_sot_in_slices", Json::array()}, {"sit_sot_in_slices", {{-1}}}, {"n_nit_sot", 0},
               {"n_untraced_sit_sot", 0}, {"n_non_seqs", 2}, {"as_while", as_while}};
  Json props = {{"info", info}, {"truncate_gradient", -1}, {"name", "ar1"}, {"mode", nullptr}, {"inner", ar1_inner(as_while)}};
  return graph_json(2,
                    {var("n", kInt), var("y1", kVec), var("y0", kVec), var("buf", kVec), var("phi", kScalar),
                     var("sigma", kScalar), var("out", kVec)},
                    {node("Scan", {"n", "y1", "y0", "buf", "phi", "sigma"}, {"out"}, props)},
                    {"n", "y1", "y0", "buf", "phi", "sigma"}, {"out"});
}

int applied_count(const PipelineReport& report, const std::string& rule) {
  int n = 0;
  for (const auto& [pass, stats] : report.passes) {
    auto it = stats.applied.find(rule);
    if (it != stats.applied.end()) n += it->second;
  }
  return n;
}

const Apply* only_scan(const FunctionGraph& fg) {
  const Apply* scan = nullptr;
  for (Apply* n : fg.toposort())
    if (scan_op(n)) {
      REQUIRE(!scan);
      scan = n;
    }
  REQUIRE(scan);
  return scan;
}

const NodeRewrite& push_out_rule() {
  for (const NodeRewrite& r : all_node_rewrites())
    if (r.name == "scan_push_out_seq") return r;
  FAIL("no rule scan_push_out_seq");
  throw 0;
}

}  // namespace

TEST_CASE("Scan: elementwise work on sequences leaves the step (scan_push_out_seq), with the same values") {
  FunctionGraph original = load_graph_text(ar1_graph(false).dump(), "");
  FunctionGraph rewritten = original.clone();
  CHECK(applied_count(run_pipeline(rewritten), "scan_push_out_seq") == 1);
  // W11's shape: the residual term is one new sequence, the step keeps acc - w[t].
  const Apply* scan = only_scan(rewritten);
  const Scan& op = static_cast<const Scan&>(scan->op());
  CHECK(op.info().n_seqs == 3);
  const std::vector<Apply*> step = op.inner_graph().toposort();
  REQUIRE(step.size() == 1);
  CHECK(step[0]->op().str() == "Sub");

  BuildResult built = build_bundle({{&original, "ar1"}}, "scan_push_out_seq");
  Library so(built.library_path);
  const Array phi = f64_array({}, {0.7}), sigma = f64_array({}, {1.3});
  // (steps, rows): no steps at all, one, several, and sequences longer than the loop runs.
  for (auto [n, rows] : std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 0}, {0, 3}, {1, 1}, {5, 5}, {3, 6}}) {
    CAPTURE(n);
    CAPTURE(rows);
    std::vector<double> y1, y0;
    for (std::int64_t t = 0; t < rows; ++t) {
      y1.push_back(0.5 * static_cast<double>(t) - 1.25);
      y0.push_back(1.0 / static_cast<double>(t + 3));
    }
    std::vector<double> buf(static_cast<std::size_t>(n + 1), 0.0);
    buf[0] = 0.25;
    const std::vector<Array> inputs = {i64(n), f64_array({rows}, y1), f64_array({rows}, y0), f64_array({n + 1}, buf), phi, sigma};
    const Array want = evaluate(original, inputs)[0];
    REQUIRE(want.shape()[0] == n + 1);
    auto diff = compare_arrays(evaluate(rewritten, inputs)[0], want, 1e-14, 0);
    CHECK_MESSAGE(!diff, diff.value_or(""));
    CallResult r = call_compiled(so.graph("ar1"), inputs);
    REQUIRE_MESSAGE(r.status == KILN_OK, r.error);
    diff = compare_arrays(r.outputs[0], want, 1e-14, 0);
    CHECK_MESSAGE(!diff, diff.value_or(""));
  }
  // The loop's own checks still name the original sequence and the negative step count.
  const Array buf = f64_array({4}, {0.25, 0, 0, 0});
  const std::vector<std::pair<std::vector<Array>, std::string>> bad = {
      {{i64(-1), f64_array({0}, {}), f64_array({0}, {}), buf, phi, sigma}, "negative number of steps (-1)"},
      {{i64(3), f64_array({2}, {1, 2}), f64_array({3}, {1, 2, 3}), buf, phi, sigma},
       "sequence 0 has 2 rows but the scan runs 3 steps"},
  };
  for (const auto& [inputs, words] : bad) {
    CAPTURE(words);
    CHECK(failure_of(rewritten, inputs).find(words) != std::string::npos);
    CallResult r = call_compiled(so.graph("ar1"), inputs);
    CHECK(r.status == KILN_ERR_VALUE);
    CHECK(r.error.find(words) != std::string::npos);
  }
}

TEST_CASE("Scan: scan_push_out_seq leaves while loops and in-place nodes in the step") {
  // A while loop may stop before rows computed ahead would be read.
  FunctionGraph loop = load_graph_text(ar1_graph(true).dump(), "");
  CHECK(applied_count(run_pipeline(loop), "scan_push_out_seq") == 0);
  CHECK(static_cast<const Scan&>(only_scan(loop)->op()).info().n_seqs == 2);

  // d = y - yp, next = acc - d: d is pushed out unless its node overwrites an input.
  for (bool in_place : {false, true}) {
    CAPTURE(in_place);
    const TensorType scalar(DType::Float64, {}), vector(DType::Float64, {kUnknownLength});
    Var y = make_input(scalar, "y"), yp = make_input(scalar, "yp"), acc = make_input(scalar, "acc");
    const ScalarOp sub(ScalarOpId::Sub);
    auto sub_op = in_place ? std::make_shared<Elemwise>(sub, IndexMap{{0, {0}}}) : std::make_shared<Elemwise>(sub);
    Var d = make_node(sub_op, {y, yp})->output(0);
    Var next = make_node(std::make_shared<Elemwise>(sub), {acc, d})->output(0);
    ScanInfo info;
    info.n_seqs = 2;
    info.sit_sot_in_slices = {{-1}};
    auto scan = std::make_shared<Scan>(info, std::make_shared<FunctionGraph>(VarList{y, yp, acc}, VarList{next}), -1, "s");
    Var n = make_input(TensorType(DType::Int64, {}), "n");
    Var ys = make_input(vector, "ys"), yps = make_input(vector, "yps"), buf = make_input(vector, "buf");
    ApplyPtr node = make_node(scan, {n, ys, yps, buf});
    FunctionGraph fg({n, ys, yps, buf}, {node->output(0)});
    CHECK(push_out_rule().apply(fg, *node).has_value() == !in_place);
  }
}

TEST_CASE("Scan: output shapes come without running the loop, except a while loop's") {
  // The shape graph's lengths against the evaluated outputs' shapes.
  const auto check_lengths = [](const FunctionGraph& graph, const FunctionGraph& shapes, const std::vector<Array>& inputs) {
    const std::vector<Array> lengths = evaluate(shapes, inputs);
    const std::vector<Array> outputs = evaluate(graph, inputs);
    std::size_t k = 0;
    for (const Array& out : outputs)
      for (int d = 0; d < out.ndim(); ++d) {
        REQUIRE(k < lengths.size());
        CHECK(*lengths[k++].data<std::int64_t>() == out.shape()[static_cast<std::size_t>(d)]);
      }
    CHECK(k == lengths.size());
  };
  // Every non-while form: the shape graph (what NAME_output_shapes computes, and what a GPU
  // library computes on the host) has no Scan; a while loop's lengths are known only by running it.
  for (const std::string name : {"scan/ar2_filter", "scan/nit_sot_affine", "scan/nit_and_sit_float32", "scan/cumsum_empty",
                                 "scan/untraced_sit_sot_rewritten", "scan/sit_sot_last_row", "scan/newton_while"}) {
    CAPTURE(name);
    const std::vector<std::string> dirs = list_fixture_cases(name);
    REQUIRE(!dirs.empty());
    const FixtureCase c = load_fixture_case(dirs[0]);
    const FunctionGraph shapes = build_shape_graph(c.graph);
    bool runs_scan = false;
    for (const Apply* n : shapes.toposort()) runs_scan = runs_scan || n->op().name() == "Scan";
    CHECK(runs_scan == (name == "scan/newton_while"));
    check_lengths(c.graph, shapes, c.inputs);
  }
  // No steps: a nit-sot is empty whatever length it was given.
  FixtureCase c = load_fixture_case(list_fixture_cases("scan/nit_sot_affine").at(0));
  bool set = false;
  for (std::size_t i = 0; i < c.graph.inputs().size(); ++i)
    if (c.graph.inputs()[i]->name() == "n") {
      *c.inputs[i].data<std::int64_t>() = 0;
      set = true;
    }
  REQUIRE(set);
  check_lengths(c.graph, build_shape_graph(c.graph), c.inputs);
}

TEST_CASE("Scan: compiled mit-mot buffers (PyTensor's backward scans) agree with the evaluator and fail where it fails") {
  // m[t + 1] = m[t] + 0.5 * m[t + 1] + e[t]: a mit-mot read at taps [0, 1], written at tap 1 —
  // the row a step writes is one it reads, as in pytensor.grad's backward scans.
  const Json inner = graph_json(0, {var("e", kScalar), var("m0", kScalar), var("m1", kScalar), var("h", kScalar),
                                    var("half", kScalar, 0.5), var("p", kScalar), var("q", kScalar)},
                                {node("mul", {"half", "m1"}, {"h"}), node("add", {"m0", "h"}, {"p"}),
                                 node("add", {"p", "e"}, {"q"})},
                                {"e", "m0", "m1"}, {"q"});
  const Json info = {{"n_seqs", 1},      {"mit_mot_in_slices", {{0, 1}}}, {"mit_mot_out_slices", {{1}}},
                     {"mit_sot_in_slices", Json::array()}, {"sit_sot_in_slices", Json::array()},
                     {"n_nit_sot", 0},   {"n_untraced_sit_sot", 0},        {"n_non_seqs", 0},
                     {"as_while", false}};
  const Json props = {{"info", info}, {"truncate_gradient", -1}, {"name", "mm"}, {"mode", nullptr}, {"inner", inner}};
  FunctionGraph fg = load_graph_text(
      graph_json(2, {var("n", kInt), var("eps", kVec), var("buf", kVec), var("out", kVec)},
                 {node("Scan", {"n", "eps", "buf"}, {"out"}, props)}, {"n", "eps", "buf"}, {"out"})
          .dump(),
      "");
  BuildResult built = build_bundle({{&fg, "mm"}}, "scan_mit_mot");
  Library so(built.library_path);
  const kiln_graph_info& info_abi = so.graph("mm");
  // A buffer one row longer than the steps (what pytensor.grad builds), a longer one, no steps.
  for (const std::vector<Array>& inputs :
       {std::vector<Array>{i64(4), f64_array({4}, {1, 2, 3, 4}), f64_array({5}, {0.5, 1, 2, 3, 4})},
        std::vector<Array>{i64(3), f64_array({4}, {1, 2, 3, 4}), f64_array({6}, {1, -1, 2, -2, 3, -3})},
        std::vector<Array>{i64(0), f64_array({0}, {}), f64_array({2}, {0.5, 1})}}) {
    const std::vector<double> expect = values_of(evaluate(fg, inputs)[0]);
    for (bool into : {false, true}) {
      CallResult r = call_compiled(info_abi, inputs, into);
      REQUIRE_MESSAGE(r.status == KILN_OK, r.error);
      CHECK(values_of(r.outputs[0]) == expect);
    }
  }
  // By hand for the first: m = [0.5, 1, 2, 3, 4] -> m[t+1] = m[t] + 0.5 m[t+1] + e[t].
  const std::vector<double> m = values_of(evaluate(fg, {i64(4), f64_array({4}, {1, 2, 3, 4}),
                                                         f64_array({5}, {0.5, 1, 2, 3, 4})})[0]);
  std::vector<double> hand = {0.5, 1, 2, 3, 4};
  for (int t = 0; t < 4; ++t) hand[t + 1] = hand[t] + 0.5 * hand[t + 1] + (t + 1);
  CHECK(m == hand);
  // A buffer as long as the steps: the last step would write past its end.
  const std::vector<Array> short_buf = {i64(4), f64_array({4}, {1, 2, 3, 4}), f64_array({4}, {0, 0, 0, 0})};
  const std::string words = "mit-mot 0 writes tap 1 at step 3, past the end of its buffer of 4 rows";
  CHECK(failure_of(fg, short_buf).find(words) != std::string::npos);
  CallResult r = call_compiled(info_abi, short_buf);
  CHECK(r.status == KILN_ERR_VALUE);
  CHECK_MESSAGE(r.error.find(words) != std::string::npos, r.error);
}
