// Node provenance (ir/provenance.h): the loader's origins, and how rewrites, fusion, merging,
// grad, vectorize and clone hand them on, checked on the samples and bench graphs and on hand
// checked cases; and the pipeline's record of what each pass replaced.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "grad/grad.h"
#include "transform/vectorize.h"
#include "io/graph_load.h"
#include "ir/provenance.h"
#include "print/dprint.h"
#include "rewrite/pipeline.h"

using namespace kiln;
namespace fs = std::filesystem;

namespace {

std::string source(const std::string& rel) { return std::string(KILN_SOURCE_DIR) + "/" + rel; }

// Every graph file of samples/ and bench/graphs/.
std::vector<std::string> user_graph_files() {
  std::vector<std::string> files;
  for (const char* dir : {"samples", "bench/graphs"})
    for (const auto& e : fs::recursive_directory_iterator(source(dir)))
      if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

// The file's nodes: JSON pointer -> op as written.
std::map<std::string, std::string> file_nodes(const std::string& path) {
  std::ifstream in(path);
  nlohmann::json j = nlohmann::json::parse(in);
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i < j["nodes"].size(); ++i) out["/nodes/" + std::to_string(i)] = j["nodes"][i]["op"];
  return out;
}

std::set<std::string> pointers(const Origins& o) {
  std::set<std::string> s;
  if (o)
    for (const auto& x : *o) s.insert(x.pointer);
  return s;
}

FunctionGraph pipelined(const FunctionGraph& fg, PipelineReport* report = nullptr) {
  FunctionGraph g = fg.clone();
  PipelineOptions o;
  o.verify = true;
  o.record_replacements = report != nullptr;
  PipelineReport r = run_pipeline(g, o);
  if (report) *report = r;
  return g;
}

std::vector<Apply*> nodes_named(const FunctionGraph& fg, const std::string& op) {
  std::vector<Apply*> out;
  for (Apply* n : fg.toposort())
    if (n->op().name() == op) out.push_back(n);
  return out;
}

const char* kTwoLogs = R"({"format": "kiln-graph", "version": 1, "name": "two_logs",
  "variables": [{"id": "x", "type": {"dtype": "float64", "shape": [null]}},
                {"id": "a", "type": {"dtype": "float64", "shape": [null]}},
                {"id": "b", "type": {"dtype": "float64", "shape": [null]}},
                {"id": "y", "type": {"dtype": "float64", "shape": [null]}}],
  "nodes": [{"op": "log", "inputs": ["x"], "outputs": ["a"]},
            {"op": "Elemwise", "props": {"scalar_op": "log"}, "inputs": ["x"], "outputs": ["b"]},
            {"op": "mul", "inputs": ["a", "b"], "outputs": ["y"]}],
  "inputs": ["x"], "outputs": ["y"]})";

}  // namespace

TEST_CASE("provenance: origin lists sort in file order, drop duplicates and are shared when nothing is new") {
  CHECK(pointer_less("/nodes/2", "/nodes/10"));
  CHECK_FALSE(pointer_less("/nodes/10", "/nodes/2"));
  CHECK(pointer_less("/nodes/3", "/nodes/3/props/inner/nodes/0"));
  CHECK(pointer_less("/nodes/3/props/inner/nodes/9", "/nodes/3/props/inner/nodes/10"));
  CHECK_FALSE(pointer_less("/nodes/4", "/nodes/4"));
  Origins a = make_origins({{"/nodes/10", "exp"}, {"/nodes/2", "Dot"}, {"/nodes/10", "exp"}});
  REQUIRE(a->size() == 2);
  CHECK((*a)[0].pointer == "/nodes/2");
  Origins b = make_origins({{"/nodes/2", "Dot"}});
  CHECK(merge_origins(a, b) == a);  // nothing new: the same list, no copy
  CHECK(merge_origins(b, a) == a);
  CHECK(merge_origins(nullptr, b) == b);
  Origins c = merge_origins(b, make_origins({{"/nodes/5", "log"}}));
  CHECK(origins_str(c) == "/nodes/2 Dot, /nodes/5 log");
  CHECK(make_origins({}) == nullptr);
}

TEST_CASE("provenance: the loader gives every node its JSON pointer and its op as written") {
  FunctionGraph fg = load_graph_text(kTwoLogs, "");
  auto order = fg.toposort();
  REQUIRE(order.size() == 3);
  std::set<std::string> seen;
  for (Apply* n : order) {
    REQUIRE(n->origins());
    REQUIRE(n->origins()->size() == 1);
    seen.insert(origins_str(n->origins()));
  }
  CHECK(seen == std::set<std::string>{"/nodes/0 log", "/nodes/1 Elemwise", "/nodes/2 mul"});
}

TEST_CASE("provenance: after the default pipeline every node of the samples and bench graphs traces back to its file") {
  const auto files = user_graph_files();
  CHECK(files.size() >= 15);
  for (const auto& path : files) {
    CAPTURE(path);
    const auto written = file_nodes(path);
    FunctionGraph g = pipelined(load_graph_file(path));
    CHECK(g.num_nodes() > 0);
    for (Apply* n : g.toposort()) {
      CAPTURE(n->label());
      REQUIRE(n->origins());
      CHECK(!n->origins()->empty());
      for (const Origin& o : *n->origins()) {
        REQUIRE(written.count(o.pointer));
        CHECK(written.at(o.pointer) == o.op);
      }
    }
  }
}

TEST_CASE("provenance: a Gemv made from a Dot carries the Dot's origin, the fused rest the Elemwise nodes'") {
  // samples/logreg_predict.json: /nodes/0 Dot(X, w), /nodes/1 DimShuffle of b, /nodes/2 add,
  // /nodes/3 sigmoid, /nodes/4 DimShuffle of the constant 0.5, /nodes/5 gt. The Dot becomes a
  // Gemv (with an AllocEmpty of X's length for its unread y); add, sigmoid and gt fuse into a
  // two-output Composite; the constant's DimShuffle is folded away.
  FunctionGraph g = pipelined(load_graph_file(source("samples/logreg_predict.json")));
  INFO(dprint(g));
  auto gemv = nodes_named(g, "Gemv");
  REQUIRE(gemv.size() == 1);
  CHECK(origins_str(gemv[0]->origins()) == "/nodes/0 Dot");
  for (Apply* n : nodes_named(g, "AllocEmpty")) CHECK(origins_str(n->origins()) == "/nodes/0 Dot");
  bool composite = false;
  for (Apply* n : nodes_named(g, "Elemwise")) {
    if (n->op().str().rfind("Composite", 0) != 0) continue;
    composite = true;
    CHECK(origins_str(n->origins()) == "/nodes/2 Elemwise, /nodes/3 Elemwise, /nodes/5 Elemwise");
  }
  CHECK(composite);
}

TEST_CASE("provenance: a fused Composite carries the origins of every node fused into it") {
  // bench w1: y = exp(-x^2 / 2) * (1 + tanh(x)) + x... six Elemwise nodes on x, fused into one.
  const std::string path = source("bench/graphs/w1_elemwise_float64.json");
  const auto written = file_nodes(path);
  FunctionGraph g = pipelined(load_graph_file(path));
  INFO(dprint(g));
  REQUIRE(g.num_nodes() == 1);
  Apply* fused = g.toposort()[0];
  std::set<std::string> elemwise;
  for (const auto& [ptr, op] : written)
    if (op == "Elemwise") elemwise.insert(ptr);
  CHECK(elemwise.size() == 6);
  std::set<std::string> p = pointers(fused->origins());
  for (const auto& e : elemwise) CHECK(p.count(e));
}

TEST_CASE("provenance: exp(sin(x)) fuses into one Composite carrying sin and exp; the Gemv carries the Dot") {
  FunctionGraph g = pipelined(load_graph_file(source("samples/exp_sin_dot.json")));
  INFO(dprint(g, [] { DprintOptions o; o.print_origins = true; return o; }()));
  bool composite = false, gemv = false;
  for (Apply* n : g.toposort()) {
    auto p = pointers(n->origins());
    if (n->op().str().rfind("Composite", 0) == 0) {
      composite = true;
      CHECK(p == std::set<std::string>{"/nodes/0", "/nodes/1"});
    }
    if (n->op().name() == "Gemv") {
      gemv = true;
      CHECK(p.count("/nodes/4"));
    }
  }
  CHECK(composite);
  CHECK(gemv);
}

TEST_CASE("provenance: merging two equal nodes keeps both origins") {
  FunctionGraph g = load_graph_text(kTwoLogs, "");
  PipelineOptions o;
  o.exclude = {"canonicalize", "stabilize", "specialize", "blas", "fusion", "inplace"};
  run_pipeline(g, o);
  auto logs = nodes_named(g, "Elemwise");
  REQUIRE(logs.size() == 2);  // one log (merged) and the mul
  Apply* log = logs[0]->op().str() == "Log" ? logs[0] : logs[1];
  CHECK(pointers(log->origins()) == std::set<std::string>{"/nodes/0", "/nodes/1"});
}

TEST_CASE("provenance: clone, grad and vectorize build nodes with the origins of the nodes they come from") {
  FunctionGraph fg = load_graph_file(source("samples/logistic_regression/loss.json"));
  FunctionGraph copy = fg.clone();
  auto a = fg.toposort(), b = copy.toposort();
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i]->origins() == b[i]->origins());

  // The gradient of the loss with respect to w: every node of it stands for forward nodes.
  const auto written = file_nodes(source("samples/logistic_regression/loss.json"));
  Var w;
  for (const Var& in : fg.inputs())
    if (in->name() == "w") w = in;
  REQUIRE(w);
  Var gw = grad(fg.outputs()[0], w);
  FunctionGraph gg(fg.inputs(), {gw});
  std::size_t with_origins = 0;
  for (Apply* n : gg.toposort()) {
    CAPTURE(n->label());
    CHECK(n->origins());
    with_origins += n->origins() != nullptr;
    if (n->origins())
      for (const Origin& o : *n->origins()) CHECK(written.count(o.pointer));
  }
  CHECK(with_origins == gg.num_nodes());

  // vectorize: the batched form of each node carries that node's origins.
  const Var& x = fg.inputs()[0];
  Var batched_x = make_input(TensorType(x->dtype(), [&] {
    Shape s{3};
    s.insert(s.end(), x->shape().begin(), x->shape().end());
    return s;
  }()), "Xs");
  VarList outs = vectorize_graph(VarList{fg.outputs()[0]}, {{x, batched_x}});
  VarList ins = fg.inputs();
  ins[0] = batched_x;
  FunctionGraph vg(ins, outs);
  for (Apply* n : vg.toposort()) {
    CAPTURE(n->label());
    CHECK(n->origins());
  }
}

TEST_CASE("provenance: the pipeline report says what each pass replaced") {
  PipelineReport report;
  pipelined(load_graph_file(source("samples/logreg_predict.json")), &report);
  REQUIRE(!report.replacements.empty());
  bool dot_to_gemv = false;
  for (const auto& r : report.replacements) {
    bool names_pass = false;
    for (const auto& [pass, stats] : report.passes) names_pass = names_pass || pass == r.pass;
    CHECK(names_pass);
    CHECK(!r.rule.empty());
    if (r.pass != "blas") continue;
    bool removes_dot = false, adds_gemv = false;
    for (const auto& n : r.removed) removes_dot = removes_dot || (n.op == "Dot" && pointers(n.origins).count("/nodes/0"));
    for (const auto& n : r.added) adds_gemv = adds_gemv || (n.op.rfind("Gemv", 0) == 0 && pointers(n.origins).count("/nodes/0"));
    dot_to_gemv = dot_to_gemv || (removes_dot && adds_gemv);
  }
  CHECK(dot_to_gemv);
  // Without asking, nothing is recorded.
  PipelineReport quiet = run_pipeline(*std::make_unique<FunctionGraph>(load_graph_file(source("samples/logreg_predict.json"))));
  CHECK(quiet.replacements.empty());
}

TEST_CASE("provenance: dprint prints origins when asked") {
  FunctionGraph fg = load_graph_text(kTwoLogs, "");
  DprintOptions o;
  o.print_origins = true;
  const std::string text = dprint(fg, o);
  CHECK(text.find("Mul [id A] (from /nodes/2 mul)") != std::string::npos);
  CHECK(text.find("Log [id B] (from /nodes/0 log)") != std::string::npos);
  CHECK(dprint(fg).find("from") == std::string::npos);
}
