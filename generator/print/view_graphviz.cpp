#include "print/view_graphviz.h"

#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "driver/process.h"

namespace kiln::view {

namespace {

namespace fs = std::filesystem;

constexpr double kPointsPerInch = 72;  // dot works in inches; the page in pixels (= points)

std::string inches(double pixels) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", pixels / kPointsPerInch);
  return buf;
}

// A private temporary folder, removed with its files when this goes away.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "kiln-view-XXXXXX").string();
    if (mkdtemp(pattern.data())) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

std::string graphviz_source(const LayoutInput& input) {
  std::string out =
      "digraph kiln {\n"
      // nslimit: fewer network-simplex iterations (ranking and x positions), which otherwise
      // take most of dot's time on graphs of a few hundred nodes.
      "  graph [rankdir=TB, nodesep=0.3, ranksep=0.55, splines=true, nslimit=2, nslimit1=2];\n"
      "  node [shape=box, fixedsize=true, label=\"\"];\n"
      "  edge [arrowhead=none];\n";
  for (std::size_t v = 0; v < input.width.size(); ++v)
    out += "  n" + std::to_string(v) + " [width=" + inches(input.width[v]) + ", height=" + inches(input.height[v]) + "];\n";
  std::map<std::pair<int, int>, bool> written;
  for (const auto& e : input.edges)
    if (!written[e]) {
      written[e] = true;
      out += "  n" + std::to_string(e.first) + " -> n" + std::to_string(e.second) + ";\n";
    }
  return out + "}\n";
}

std::optional<Layout> parse_graphviz_plain(const std::string& text, const LayoutInput& input) {
  std::istringstream in(text);
  const std::size_t n = input.width.size();
  double height = -1;
  Layout layout;
  layout.center.assign(n, Point{});
  std::vector<bool> seen(n, false);
  std::map<std::pair<int, int>, std::vector<Point>> routes;
  auto node_index = [&](const std::string& name) -> long {
    if (name.size() < 2 || name[0] != 'n') return -1;
    char* end = nullptr;
    long v = std::strtol(name.c_str() + 1, &end, 10);
    return *end == '\0' && v >= 0 && static_cast<std::size_t>(v) < n ? v : -1;
  };
  auto flip = [&](double x, double y) { return Point{x * kPointsPerInch, (height - y) * kPointsPerInch}; };
  for (std::string line; std::getline(in, line);) {
    std::istringstream row(line);
    std::string kind;
    row >> kind;
    if (kind == "graph") {
      double scale = 0;
      row >> scale >> layout.width >> height;
      if (!row) return std::nullopt;
      layout.width *= kPointsPerInch;
      layout.height = height * kPointsPerInch;
    } else if (kind == "node") {
      std::string name;
      double x = 0, y = 0;
      row >> name >> x >> y;
      long v = node_index(name);
      if (!row || v < 0 || height < 0) return std::nullopt;
      layout.center[static_cast<std::size_t>(v)] = flip(x, y);
      seen[static_cast<std::size_t>(v)] = true;
    } else if (kind == "edge") {
      std::string tail, head;
      int count = 0;
      row >> tail >> head >> count;
      long a = node_index(tail), b = node_index(head);
      if (!row || a < 0 || b < 0 || count < 2 || count > 100000 || height < 0) return std::nullopt;
      std::vector<Point> pts;
      for (int k = 0; k < count; ++k) {
        double x = 0, y = 0;
        row >> x >> y;
        pts.push_back(flip(x, y));
      }
      if (!row) return std::nullopt;
      routes[{static_cast<int>(a), static_cast<int>(b)}] = std::move(pts);
    } else if (kind == "stop") {
      break;
    }
  }
  for (bool s : seen)
    if (!s) return std::nullopt;
  for (const auto& e : input.edges) {
    auto it = routes.find(e);
    if (it == routes.end()) return std::nullopt;
    // dot's splines are cubic Bézier control points already (3k + 1 of them).
    std::vector<Point> path = it->second;
    if ((path.size() - 1) % 3 != 0) path = bezier_through({path.front(), path.back()});
    layout.edge_path.push_back(std::move(path));
  }
  return layout;
}

std::optional<Layout> graphviz_layout(const LayoutInput& input, double timeout_seconds, std::string& why_not) {
  TempDir dir;
  if (dir.path().empty()) {
    why_not = "no temporary folder for dot";
    return std::nullopt;
  }
  const std::string source = dir.path() + "/graph.dot", plain = dir.path() + "/graph.plain";
  {
    std::ofstream f(source, std::ios::binary);
    f << graphviz_source(input);
    if (!f) {
      why_not = "cannot write " + source;
      return std::nullopt;
    }
  }
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f", timeout_seconds);
  ProcessResult r = run_process({"timeout", "--kill-after=2", seconds, "dot", "-Tplain", "-o", plain, source});
  if (r.exit_code == 124 || r.exit_code == 128 + 9) {
    why_not = std::string("dot took longer than ") + seconds + " s";
    return std::nullopt;
  }
  if (r.exit_code == 127 || r.exit_code < 0) {
    why_not = "Graphviz's dot is not installed";
    return std::nullopt;
  }
  if (r.exit_code != 0) {
    why_not = "dot failed (exit code " + std::to_string(r.exit_code) + ")";
    return std::nullopt;
  }
  std::ifstream f(plain, std::ios::binary);
  std::stringstream text;
  text << f.rdbuf();
  auto layout = parse_graphviz_plain(text.str(), input);
  if (!layout) why_not = "dot's output could not be read";
  return layout;
}

}  // namespace kiln::view
