// kiln view's generator side: the layered layout, reading Graphviz's output, the page's data
// (vertices, origins, passes) and the escaping that keeps a hostile graph file's strings text.
// The page itself is tested in a real browser (tests/browser/test_view.py).
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>

#include "io/graph_load.h"
#include "print/view_graphviz.h"
#include "print/view_html.h"
#include "print/view_layout.h"
#include "print/view_model.h"
#include "rewrite/pipeline.h"

using namespace kiln;
using namespace kiln::view;
using Json = nlohmann::json;

namespace {

// A random DAG shaped like a computation: each node reads one to three earlier nodes, mostly
// recent ones, sometimes far back (long edges).
LayoutInput random_dag(int n, unsigned seed) {
  std::mt19937 rng(seed);
  LayoutInput g;
  for (int v = 0; v < n; ++v) {
    g.width.push_back(40 + static_cast<double>(rng() % 200));
    g.height.push_back(rng() % 2 ? 26 : 40);
    if (v < 4) continue;
    const int reads = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < reads; ++k) {
      int back = rng() % 10 == 0 ? static_cast<int>(rng() % static_cast<unsigned>(v)) + 1 : 1 + static_cast<int>(rng() % 4);
      g.edges.emplace_back(std::max(0, v - back), v);
    }
  }
  return g;
}

// Boxes on one row never overlap; every edge runs from the bottom of its source to the top of
// its target, downward, as 3k+1 Bézier points.
void check_layout(const LayoutInput& g, const Layout& l) {
  CHECK(l.routes);
  REQUIRE(l.center.size() == g.width.size());
  REQUIRE(l.edge_path.size() == g.edges.size());
  std::vector<std::size_t> order(g.width.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return l.center[a].y != l.center[b].y ? l.center[a].y < l.center[b].y : l.center[a].x < l.center[b].x;
  });
  for (std::size_t k = 1; k < order.size(); ++k) {
    std::size_t a = order[k - 1], b = order[k];
    if (l.center[a].y != l.center[b].y) continue;
    CHECK(l.center[a].x + g.width[a] / 2 <= l.center[b].x - g.width[b] / 2 + 1e-6);
  }
  for (std::size_t v = 0; v < g.width.size(); ++v) {
    CHECK(l.center[v].x - g.width[v] / 2 >= -1e-6);
    CHECK(l.center[v].x + g.width[v] / 2 <= l.width + 1e-6);
    CHECK(l.center[v].y + g.height[v] / 2 <= l.height + 1e-6);
  }
  for (std::size_t e = 0; e < g.edges.size(); ++e) {
    const auto [u, v] = g.edges[e];
    const auto p = bezier_through(l.edge_path[e]);
    REQUIRE(p.size() >= 4);
    CHECK((p.size() - 1) % 3 == 0);
    CHECK(l.center[static_cast<std::size_t>(u)].y < l.center[static_cast<std::size_t>(v)].y);
    CHECK(p.front().y == doctest::Approx(l.center[static_cast<std::size_t>(u)].y + g.height[static_cast<std::size_t>(u)] / 2).epsilon(0.02));
    CHECK(p.back().y == doctest::Approx(l.center[static_cast<std::size_t>(v)].y - g.height[static_cast<std::size_t>(v)] / 2).epsilon(0.02));
  }
}

std::string hostile = "</script><script>alert(1)</script>&amp;\xe2\x80\xa8<!--";

std::string hostile_graph() {
  Json name = hostile;
  Json g = {{"format", "kiln-graph"}, {"version", 1}, {"name", hostile},
            {"variables", Json::array({
                {{"id", hostile}, {"name", hostile}, {"type", {{"dtype", "float64"}, {"shape", Json::array({nullptr})}}}},
                {{"id", "y\"'<b>"}, {"name", "<img src=x onerror=alert(2)>"}, {"type", {{"dtype", "float64"}, {"shape", Json::array({nullptr})}}}},
            })},
            {"nodes", Json::array({{{"op", "exp"}, {"inputs", Json::array({hostile})}, {"outputs", Json::array({"y\"'<b>"})}}})},
            {"inputs", Json::array({hostile})},
            {"outputs", Json::array({"y\"'<b>"})}};
  return g.dump();
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("view layout: layers, no overlaps and downward edges on small and large DAGs") {
  for (int n : {1, 2, 7, 60, 600}) {
    CAPTURE(n);
    LayoutInput g = random_dag(n, static_cast<unsigned>(n));
    check_layout(g, layered_layout(g));
  }
  // A diamond with a long edge (0 -> 3 skips two layers) and a duplicate edge.
  LayoutInput d{{50, 50, 50, 50}, {26, 26, 26, 26}, {{0, 1}, {1, 2}, {2, 3}, {0, 3}, {0, 3}}};
  Layout l = layered_layout(d);
  check_layout(d, l);
  CHECK(l.center[0].y < l.center[1].y);
  CHECK(l.center[1].y < l.center[2].y);
  CHECK(l.edge_path[3].size() > 2);  // routed past the middle layers, not straight through them
}

TEST_CASE("view layout: 5,000 nodes are laid out (bounded bend points, no overlaps)") {
  LayoutInput g = random_dag(5000, 7);
  Layout l = layered_layout(g);
  check_layout(g, l);
}

TEST_CASE("view layout: a cycle (never in a loaded graph) is tolerated") {
  LayoutInput g{{40, 40, 40}, {26, 26, 26}, {{0, 1}, {1, 2}, {2, 0}}};
  Layout l = layered_layout(g);
  REQUIRE(l.edge_path.size() == 3);
  for (const auto& p : l.edge_path) CHECK(p.size() >= 2);
}

TEST_CASE("view graphviz: dot's plain output is read back, flipped to y-down pixels") {
  LayoutInput g{{72, 72}, {36, 36}, {{0, 1}, {0, 1}}};
  const std::string src = graphviz_source(g);
  CHECK(src.find("n0 -> n1;") != std::string::npos);
  CHECK(count(src, "->") == 1);  // duplicate edges are drawn once
  const std::string plain =
      "graph 1 2 3\n"
      "node n0 1 2.5 1 0.5 \"\" solid box black lightgrey\n"
      "node n1 1 0.5 1 0.5 \"\" solid box black lightgrey\n"
      "edge n0 n1 4 1 2.25 1 1.75 1 1.25 1 0.75 solid black\n"
      "stop\n";
  auto l = parse_graphviz_plain(plain, g);
  REQUIRE(l);
  CHECK(l->width == doctest::Approx(144));
  CHECK(l->center[0].y == doctest::Approx(36));
  CHECK(l->center[1].y == doctest::Approx(180));
  REQUIRE(l->edge_path.size() == 2);
  CHECK(l->edge_path[1].front().y == doctest::Approx(54));
  CHECK_FALSE(parse_graphviz_plain("graph 1 2 3\nnode n0 1 1 1 1\nstop\n", g));  // n1 missing
  CHECK_FALSE(parse_graphviz_plain("graph 1 2 3\nnode n7 1 1 1 1\n", g));         // unknown node
}

TEST_CASE("view graphviz: dot lays a graph out when it is installed") {
  LayoutInput g = random_dag(40, 3);
  std::string why;
  auto l = graphviz_layout(g, 20, why);
  if (!l) {
    MESSAGE("Graphviz layout not tested: " << why);
    return;
  }
  REQUIRE(l->center.size() == 40);
  for (std::size_t e = 0; e < g.edges.size(); ++e)
    CHECK(l->center[static_cast<std::size_t>(g.edges[e].first)].y < l->center[static_cast<std::size_t>(g.edges[e].second)].y);
}

TEST_CASE("view: script_json keeps any string text inside a <script> element") {
  Json j = {{"name", hostile}, {"bad", std::string("a\xff" "b")}};
  const std::string s = script_json(j);
  CHECK(s.find('<') == std::string::npos);
  CHECK(s.find('>') == std::string::npos);
  CHECK(s.find('&') == std::string::npos);
  for (unsigned char c : s) CHECK(c < 0x80);  // U+2028 and U+2029 are escapes too
  CHECK(s.find("\\u2028") != std::string::npos);
  Json back = Json::parse(s);
  CHECK(back["name"] == hostile);
  CHECK(back["bad"] == "a\xef\xbf\xbd" "b");  // invalid UTF-8 becomes U+FFFD
  CHECK(html_text("<a href=\"x\">'&'</a>") == "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
}

TEST_CASE("view: a page of a hostile graph has its strings only as escaped data") {
  FunctionGraph fg = load_graph_text(hostile_graph(), "");
  ViewOptions o;
  o.title = fg.name();
  o.layout = LayoutEngine::Kiln;
  std::string note;
  const std::string page = view_html(view_model({&fg, nullptr, nullptr}, o, note));
  CHECK(count(page, "<script") == 2);  // the data and the page's code, nothing else
  CHECK(count(page, "</script") == 2);
  CHECK(page.find("<img") == std::string::npos);
  CHECK(page.find("<!--") == std::string::npos);
  CHECK(page.find("<title>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&amp;amp;") != std::string::npos);
  const std::string open = "<script type=\"application/json\" id=\"kiln-data\">";
  auto a = page.find(open);
  REQUIRE(a != std::string::npos);
  a += open.size();
  auto b = page.find("</script>", a);
  Json data = Json::parse(page.substr(a, b - a));
  CHECK(data["title"] == hostile);
  CHECK(data["graphs"][0]["nodes"][0]["l"] == hostile);
}

TEST_CASE("view: the data of a rewritten graph links nodes to their origins and lists each pass's replacements") {
  const std::string path = std::string(KILN_SOURCE_DIR) + "/samples/logreg_predict.json";
  FunctionGraph fg = load_graph_file(path);
  FunctionGraph after = fg.clone();
  PipelineOptions po;
  po.record_replacements = true;
  PipelineReport report = run_pipeline(after, po);
  ViewOptions o;
  o.title = fg.name();
  o.layout = LayoutEngine::Kiln;
  o.variable_pointers = variable_pointers(read_graph_file(path));
  std::string note;
  Json m = view_model({&fg, &after, &report}, o, note);
  CHECK(note == "kiln's layered layout");
  REQUIRE(m["panes"].size() == 2);
  const Json& origins = m["origins"];
  auto origin_pointers = [&](const Json& v) {
    std::set<std::string> s;
    for (const auto& o : v.value("o", Json::array())) s.insert(origins[o.get<std::size_t>()][0].get<std::string>());
    return s;
  };
  const Json& before = m["graphs"][m["panes"][0]["graph"].get<std::size_t>()];
  const Json& rewritten = m["graphs"][m["panes"][1]["graph"].get<std::size_t>()];
  for (const Json* g : {&before, &rewritten}) {
    for (const auto& e : (*g)["edges"]) CHECK(e["s"].get<int>() < e["t"].get<int>());  // topological order
    for (const auto& v : (*g)["nodes"]) {
      if (v["k"] == "op") CHECK(!origin_pointers(v).empty());
      if (v["k"] == "in") CHECK(v.contains("p"));
    }
  }
  // The Dot as written is /nodes/0; after rewrites a Gemv stands for it.
  bool dot = false, gemv = false;
  for (const auto& v : before["nodes"]) dot = dot || (v["l"] == "Dot" && origin_pointers(v) == std::set<std::string>{"/nodes/0"});
  for (const auto& v : rewritten["nodes"]) gemv = gemv || (v.value("n", "") == "Gemv" && origin_pointers(v).count("/nodes/0"));
  CHECK(dot);
  CHECK(gemv);
  bool blas_change = false;
  for (const auto& p : m["passes"])
    if (p["name"] == "blas")
      for (const auto& c : p["changes"])
        for (const auto& n : c["rm"]) blas_change = blas_change || n["op"] == "Dot";
  CHECK(blas_change);
  // The input X is /variables/0 of the file.
  CHECK(before["nodes"][0]["p"] == "/variables/0");
}

TEST_CASE("view: long edges of one source share their start once (trunks) and still run box to box") {
  // x feeds every second node of a 40-node chain: its edges run down one chain of bend points.
  Json vars = Json::array({{{"id", "x"}, {"type", {{"dtype", "float64"}, {"shape", Json::array({nullptr})}}}}});
  Json nodes = Json::array();
  std::string prev = "x";
  for (int k = 0; k < 40; ++k) {
    const std::string id = "v" + std::to_string(k);
    vars.push_back({{"id", id}, {"type", {{"dtype", "float64"}, {"shape", Json::array({nullptr})}}}});
    if (k % 2) nodes.push_back({{"op", "add"}, {"inputs", {prev, "x"}}, {"outputs", {id}}});
    else nodes.push_back({{"op", "exp"}, {"inputs", {prev}}, {"outputs", {id}}});
    prev = id;
  }
  Json file = {{"format", "kiln-graph"}, {"version", 1}, {"variables", vars}, {"nodes", nodes},
               {"inputs", {"x"}}, {"outputs", {prev}}};
  FunctionGraph fg = load_graph_text(file.dump(), "");
  ViewOptions o;
  o.layout = LayoutEngine::Kiln;
  std::string note;
  Json m = view_model({&fg, nullptr, nullptr}, o, note);
  const Json& g = m["graphs"][0];
  REQUIRE(g.contains("trunks"));
  int shared = 0;
  for (const auto& e : g["edges"]) {
    std::vector<long> p;
    if (e.contains("b")) {
      ++shared;
      const Json& t = g["trunks"][e["b"].get<std::size_t>()];
      for (std::size_t k = 0; k < e["k"].get<std::size_t>(); ++k) p.push_back(t[k].get<long>());
    }
    REQUIRE(e.contains("r"));  // kiln's layout: route points
    for (const auto& x : e["r"]) p.push_back(x.get<long>());
    REQUIRE(p.size() >= 4);
    CHECK(p.size() % 2 == 0);
    const Json& s = g["nodes"][e["s"].get<std::size_t>()];
    const Json& t = g["nodes"][e["t"].get<std::size_t>()];
    CHECK(std::abs(p[1] - (s["y"].get<long>() + s["h"].get<long>() / 2)) <= 1);
    CHECK(std::abs(p.back() - (t["y"].get<long>() - t["h"].get<long>() / 2)) <= 1);
  }
  CHECK(shared >= 10);
}
