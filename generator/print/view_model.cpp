#include "print/view_model.h"

#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "ir/error.h"
#include "ops/elemwise.h"
#include "ops/reduce.h"
#include "ops/scalar/composite.h"
#include "print/numpy_str.h"
#include "print/view_graphviz.h"
#include "print/view_layout.h"

namespace kiln::view {

namespace {

using Json = nlohmann::json;

// Boxes are sized for the page's 12px monospace labels (view.css): 0.6em per character.
constexpr std::size_t kLabelChars = 44;
constexpr std::size_t kSubChars = 40;
constexpr std::size_t kTextChars = 2000;  // full op strings, props, constant values
constexpr std::size_t kChangeOpChars = 120;
constexpr double kCharWidth = 7.2;
constexpr double kPadding = 18;
constexpr double kLineHeight = 22;
// dot's ranking and crossing reduction grow steeply with size and long edges: 400 vertices
// and 700 edges of the browser test's generated graph take it about two seconds, 1,000 and
// 1,700 twenty, 3,000 several minutes (even with its iteration limits, view_graphviz.cpp);
// the 500 nodes that graph keeps after rewrites (wide Composites) more than thirty.
constexpr std::size_t kAutoGraphvizSize = 1200;  // vertices + edges

std::size_t utf8_length(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// At most `n` characters (code points): longer text ends in "…".
std::string clip(const std::string& s, std::size_t n) {
  if (utf8_length(s) <= n) return s;
  std::size_t count = 0, i = 0;
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && ++count == n) break;
  }
  return s.substr(0, i) + "…";
}

std::string index_map_text(const IndexMap& m) {
  std::string s;
  for (const auto& [out, ins] : m) {
    s += (s.empty() ? "" : ", ") + std::to_string(out) + ": [";
    for (std::size_t i = 0; i < ins.size(); ++i) s += (i ? ", " : "") + std::to_string(ins[i]);
    s += "]";
  }
  return "{" + s + "}";
}

// The Composite inside an op, if any: an Elemwise's or a reduction's scalar op.
// (Ops with general inner graphs — OpFromGraph, Scan — will come through the ops' inner-graph
// hook; their graphs are FunctionGraphs and go through GraphBuilder like the outer one.)
const CompositeGraph* inner_composite(const Op& op) {
  const ScalarOp* scalar = nullptr;
  if (const auto* e = dynamic_cast<const Elemwise*>(&op)) scalar = &e->scalar_op();
  if (const auto* r = dynamic_cast<const CAReduce*>(&op)) scalar = &r->scalar_op();
  if (!scalar || scalar->id() != ScalarOpId::Composite) return nullptr;
  return scalar->composite_graph().get();
}

const CompositeGraph* inner_composite(const ScalarOp& op) {
  return op.id() == ScalarOpId::Composite ? op.composite_graph().get() : nullptr;
}

// One graph of the page under construction: its vertices and edges, and the layout input.
class GraphData {
 public:
  explicit GraphData(std::string title) { json_ = {{"title", std::move(title)}}; }

  /// Adds a vertex with a label (and an optional second line); returns its index.
  int add(Json vertex, const std::string& label, const std::string& sub = {}) {
    const std::string shown = clip(label, kLabelChars);
    vertex["l"] = shown;
    if (shown != label) vertex["f"] = clip(label, kTextChars);
    double chars = static_cast<double>(utf8_length(shown));
    if (!sub.empty()) {
      vertex["s"] = clip(sub, kSubChars);
      chars = std::max(chars, static_cast<double>(utf8_length(vertex["s"].get<std::string>())));
    }
    nodes_.push_back(std::move(vertex));
    layout_.width.push_back(std::max(44.0, chars * kCharWidth + kPadding));
    layout_.height.push_back(sub.empty() ? kLineHeight + 4 : 2 * kLineHeight - 4);
    return static_cast<int>(nodes_.size()) - 1;
  }

  void edge(int from, int to) {
    if (from >= 0 && edges_.insert({from, to}).second) layout_.edges.emplace_back(from, to);
  }

  Json& vertex(int i) { return nodes_[static_cast<std::size_t>(i)]; }
  std::size_t size() const { return nodes_.size(); }

  /// Lays the graph out and returns its JSON.
  Json finish(LayoutEngine engine, double timeout, std::string& note) {
    std::optional<Layout> layout;
    std::string why_not;
    if (engine == LayoutEngine::Auto && nodes_.size() + layout_.edges.size() > kAutoGraphvizSize) {
      why_not = std::to_string(nodes_.size()) + " vertices and " + std::to_string(layout_.edges.size()) +
                " edges, more than dot lays out in seconds; --layout dot insists";
    } else if (engine != LayoutEngine::Kiln) {
      layout = graphviz_layout(layout_, timeout, why_not);
      if (!layout && engine == LayoutEngine::Graphviz)
        throw UserError("--layout dot: " + why_not);
    }
    note = layout ? "Graphviz dot" : engine == LayoutEngine::Kiln ? "kiln's layered layout"
                                                                  : "kiln's layered layout (" + why_not + ")";
    if (!layout) layout = layered_layout(layout_);
    for (std::size_t v = 0; v < nodes_.size(); ++v) {
      Json& n = nodes_[v];
      n["x"] = std::lround(layout->center[v].x);
      n["y"] = std::lround(layout->center[v].y);
      n["w"] = std::lround(layout_.width[v]);
      n["h"] = std::lround(layout_.height[v]);
    }
    json_["w"] = std::lround(layout->width);
    json_["h"] = std::lround(layout->height);
    json_["nodes"] = std::move(nodes_);
    write_edges(layout->edge_path, layout->routes);
    return std::move(json_);
  }

 private:
  // Edges as rounded coordinates: Bézier control points ("p") or route points ("r"). The paths
  // of one source's long edges share their start (kiln's layout sends them down one chain of
  // bend points): that start is written once, in "trunks", and each edge names how many of its
  // numbers it takes from there ("b", "k").
  void write_edges(const std::vector<std::vector<Point>>& routes, bool route_points) {
    std::vector<std::vector<long>> paths;
    for (const auto& route : routes) {
      std::vector<long> p;
      for (const Point& q : route) {
        p.push_back(std::lround(q.x));
        p.push_back(std::lround(q.y));
      }
      paths.push_back(std::move(p));
    }
    std::map<int, std::size_t> longest;  // source -> its longest route
    for (std::size_t e = 0; e < paths.size(); ++e) {
      auto [it, fresh] = longest.emplace(layout_.edges[e].first, e);
      if (!fresh && paths[e].size() > paths[it->second].size()) it->second = e;
    }
    Json edges = Json::array(), trunks = Json::array();
    std::map<int, int> trunk_of;  // source -> trunk index
    for (std::size_t e = 0; e < paths.size(); ++e) {
      const int src = layout_.edges[e].first;
      const std::vector<long>& trunk = paths[longest[src]];
      std::size_t shared = 0;  // coordinates shared with the trunk, whole Bézier segments
      while (shared < paths[e].size() && shared < trunk.size() && paths[e][shared] == trunk[shared]) ++shared;
      // Whole points (whole Bézier segments), and not all of them: the end is the edge's own.
      shared = std::min(shared, paths[e].size() - 2);
      shared = route_points ? shared / 2 * 2 : shared >= 2 ? 2 + (shared - 2) / 6 * 6 : 0;
      Json edge = {{"s", src}, {"t", layout_.edges[e].second}};
      const char* key = route_points ? "r" : "p";
      if (shared >= (route_points ? 2 * 4 : 2 + 6 * 4)) {  // four or more points: worth sharing
        auto [it, fresh] = trunk_of.emplace(src, static_cast<int>(trunks.size()));
        if (fresh) trunks.push_back(trunk);
        edge["b"] = it->second;
        edge["k"] = shared;
        edge[key] = std::vector<long>(paths[e].begin() + static_cast<std::ptrdiff_t>(shared), paths[e].end());
      } else {
        edge[key] = paths[e];
      }
      edges.push_back(std::move(edge));
    }
    json_["edges"] = std::move(edges);
    if (!trunks.empty()) json_["trunks"] = std::move(trunks);
  }

  Json json_;
  std::vector<Json> nodes_;
  LayoutInput layout_;
  std::set<std::pair<int, int>> edges_;
};

class ModelBuilder {
 public:
  explicit ModelBuilder(const ViewOptions& options) : options_(options) {}

  int add_function_graph(const FunctionGraph& fg, const std::string& title) {
    GraphData g(title);
    std::unordered_map<const Variable*, int> vertex_of;  // the vertex each variable comes from
    auto variable = [&](const Variable& v) {
      Json j = {{"t", type_index(v.type().str())}};
      if (!v.file_id().empty()) j["id"] = v.file_id();
      if (!v.name().empty()) j["name"] = v.name();
      return j;
    };
    auto pointer_of = [&](const Variable& v, Json& vertex) {
      auto it = options_.variable_pointers.find(v.file_id());
      if (!v.file_id().empty() && it != options_.variable_pointers.end()) vertex["p"] = it->second;
    };
    auto leaf_name = [](const Variable& v) { return !v.name().empty() ? v.name() : v.file_id(); };
    for (const Var& in : fg.inputs()) {
      Json vertex = {{"k", "in"}, {"v", Json::array({variable(*in)})}};
      pointer_of(*in, vertex);
      vertex_of[in.get()] = g.add(std::move(vertex), leaf_name(*in).empty() ? "input" : leaf_name(*in),
                                  in->type().str());
    }
    // Constants of more than one element, named ones and returned ones get a vertex; the others
    // are shown in their users' inputs.
    auto constant_vertex = [&](const Variable& c) {
      auto it = vertex_of.find(&c);
      if (it != vertex_of.end()) return it->second;
      Json vertex = {{"k", "const"}, {"v", Json::array({variable(c)})},
                     {"c", clip(constant_str(c.value()), kTextChars)}};
      pointer_of(c, vertex);
      std::string name = leaf_name(c);
      int i = g.add(std::move(vertex), name.empty() ? "constant" : name, constant_str(c.value()));
      vertex_of[&c] = i;
      return i;
    };
    std::vector<Apply*> order = fg.toposort();
    for (Apply* node : order)
      for (const Var& in : node->inputs())
        if (in->is_constant() && (in->value().size() > 1 || !in->name().empty())) constant_vertex(*in);
    for (const Var& out : fg.outputs())
      if (out->is_constant()) constant_vertex(*out);
    for (Apply* node : order) {
      Json vertex = {{"k", "op"}, {"n", std::string(node->op().name())}};
      Json outs = Json::array();
      std::string names;
      for (int k = 0; k < node->num_outputs(); ++k) {
        const Variable& o = *node->output_ptr(k);
        outs.push_back(variable(o));
        std::string name = leaf_name(o);
        if (!name.empty()) names += (names.empty() ? "" : ", ") + name;
      }
      vertex["v"] = std::move(outs);
      Json ins = Json::array();
      for (const Var& in : node->inputs()) {
        auto it = vertex_of.find(in.get());
        Json j = {{"t", type_index(in->type().str())}};
        if (it != vertex_of.end()) {
          j["s"] = it->second;
          if (in->owner()) j["o"] = in->index();
        } else {
          j["c"] = clip(constant_str(in->value(), in->name()), kTextChars);
        }
        ins.push_back(std::move(j));
      }
      vertex["i"] = std::move(ins);
      if (node->origins()) vertex["o"] = origin_list(node->origins());
      Json props = node->op().props();
      if (!props.empty()) vertex["pr"] = clip(props.dump(-1, ' ', false, Json::error_handler_t::replace), kTextChars);
      if (!node->op().destroy_map().empty()) vertex["dm"] = index_map_text(node->op().destroy_map());
      if (!node->op().view_map().empty()) vertex["vm"] = index_map_text(node->op().view_map());
      if (const CompositeGraph* inner = inner_composite(node->op())) vertex["g"] = composite(*inner);
      int v = g.add(std::move(vertex), node->op().str(), names);
      for (const Var& in : node->inputs()) {
        auto it = vertex_of.find(in.get());
        if (it != vertex_of.end()) g.edge(it->second, v);
      }
      for (int k = 0; k < node->num_outputs(); ++k) vertex_of[node->output_ptr(k)] = v;
    }
    for (std::size_t k = 0; k < fg.outputs().size(); ++k) {
      const Variable& o = *fg.outputs()[k];
      std::string name = k < fg.output_names().size() ? fg.output_names()[k] : "";
      if (name.empty()) name = leaf_name(o);
      if (name.empty()) name = "output " + std::to_string(k);
      Json vertex = {{"k", "out"}, {"v", Json::array({variable(o)})}};
      int src = vertex_of.at(&o);
      Json in = {{"t", type_index(o.type().str())}, {"s", src}};
      if (o.owner()) in["o"] = o.index();
      vertex["i"] = Json::array({std::move(in)});
      g.edge(src, g.add(std::move(vertex), name, o.type().str()));
    }
    return finish(g, options_.layout);
  }

  Json origins_table() const { return origins_; }
  Json types_table() const { return types_; }
  Json graphs() const { return graphs_; }

  // The model's "passes": each pass's rule counts, time and replacements.
  Json passes(const PipelineReport& report) {
    Json out = Json::array();
    std::unordered_map<std::string, std::size_t> index;
    for (std::size_t p = 0; p < report.passes.size(); ++p) {
      const auto& [name, stats] = report.passes[p];
      Json pass = {{"name", name}, {"applied", stats.applied}, {"changes", Json::array()}};
      if (p < report.seconds.size()) pass["seconds"] = report.seconds[p];
      index.emplace(name, out.size());
      out.push_back(std::move(pass));
    }
    auto nodes = [&](const std::vector<ReplacementRecord::Node>& list) {
      Json j = Json::array();
      for (const auto& n : list) j.push_back({{"op", clip(n.op, kChangeOpChars)}, {"o", origin_list(n.origins)}});
      return j;
    };
    for (const ReplacementRecord& r : report.replacements) {
      auto it = index.find(r.pass);
      if (it == index.end()) continue;
      out[it->second]["changes"].push_back({{"r", r.rule}, {"rm", nodes(r.removed)}, {"add", nodes(r.added)}});
    }
    return out;
  }

  std::string layout_note() const { return note_; }

 private:
  // Types are written once each (a graph has few distinct ones) and referred to by index.
  int type_index(const std::string& type) {
    auto [it, fresh] = type_index_.emplace(type, types_.size());
    if (fresh) types_.push_back(type);
    return static_cast<int>(it->second);
  }

  Json origin_list(const Origins& origins) {
    Json list = Json::array();
    if (!origins) return list;
    for (const Origin& o : *origins) {
      auto [it, fresh] = origin_index_.emplace(o.pointer + '\n' + o.op, origins_.size());
      if (fresh) origins_.push_back(Json::array({o.pointer, o.op}));
      list.push_back(it->second);
    }
    return list;
  }

  // A Composite's scalar graph as a graph of the page (once per distinct Composite).
  int composite(const CompositeGraph& cg) {
    auto known = composites_.find(&cg);
    if (known != composites_.end()) return known->second;
    GraphData g("Composite{" + clip(cg.expression(), kSubChars) + "}");
    std::vector<std::pair<int, int>> source(cg.values().size(), {-1, 0});  // value -> (vertex, output)
    for (int k = 0; k < cg.num_inputs(); ++k) {
      const std::string dt(dtype_name(cg.values()[static_cast<std::size_t>(k)].dtype));
      Json vertex = {{"k", "in"}, {"v", Json::array({Json{{"t", type_index(dt)}}})}};
      source[static_cast<std::size_t>(k)] = {g.add(std::move(vertex), "i" + std::to_string(k), dt), 0};
    }
    for (const auto& node : cg.nodes()) {
      Json vertex = {{"k", "op"}, {"n", node.op.str()}};
      Json ins = Json::array(), outs = Json::array();
      for (int in : node.inputs) {
        const auto& value = cg.values()[static_cast<std::size_t>(in)];
        Json j = {{"t", type_index(std::string(dtype_name(value.dtype)))}};
        if (value.is_constant()) {
          j["c"] = constant_str(value.constant);
        } else {
          j["s"] = source[static_cast<std::size_t>(in)].first;
          j["o"] = source[static_cast<std::size_t>(in)].second;
        }
        ins.push_back(std::move(j));
      }
      for (int o : node.outputs) outs.push_back(Json{{"t", type_index(std::string(dtype_name(cg.values()[static_cast<std::size_t>(o)].dtype)))}});
      vertex["i"] = std::move(ins);
      vertex["v"] = std::move(outs);
      if (const CompositeGraph* inner = inner_composite(node.op)) vertex["g"] = composite(*inner);
      int v = g.add(std::move(vertex), node.op.str());
      for (int in : node.inputs) g.edge(source[static_cast<std::size_t>(in)].first, v);
      for (std::size_t k = 0; k < node.outputs.size(); ++k) source[static_cast<std::size_t>(node.outputs[k])] = {v, static_cast<int>(k)};
    }
    for (std::size_t k = 0; k < cg.outputs().size(); ++k) {
      const int value = cg.outputs()[k];
      const std::string dt(dtype_name(cg.values()[static_cast<std::size_t>(value)].dtype));
      Json in = {{"t", type_index(dt)}};
      const auto [src, index] = source[static_cast<std::size_t>(value)];
      if (src >= 0) {
        in["s"] = src;
        in["o"] = index;
      } else {
        in["c"] = constant_str(cg.values()[static_cast<std::size_t>(value)].constant);
      }
      Json vertex = {{"k", "out"}, {"v", Json::array({Json{{"t", type_index(dt)}}})}, {"i", Json::array({std::move(in)})}};
      int v = g.add(std::move(vertex), "o" + std::to_string(k), dt);
      g.edge(src, v);
    }
    int index = finish(g, LayoutEngine::Kiln);  // small graphs: no dot process for each
    composites_[&cg] = index;
    return index;
  }

  // Lays `g` out and adds it to the page's graphs (inner graphs, built while their outer graph
  // is, come before it). The note records the outer graphs' engine.
  int finish(GraphData& g, LayoutEngine engine) {
    std::string note;
    Json json = g.finish(engine, options_.graphviz_timeout, note);
    if (engine != LayoutEngine::Kiln || note_.empty()) note_ = note;
    graphs_.push_back(std::move(json));
    return static_cast<int>(graphs_.size()) - 1;
  }

  const ViewOptions& options_;
  Json graphs_ = Json::array();
  Json origins_ = Json::array();
  Json types_ = Json::array();
  std::unordered_map<std::string, std::size_t> type_index_;
  std::unordered_map<std::string, std::size_t> origin_index_;
  std::unordered_map<const CompositeGraph*, int> composites_;
  std::string note_;
};

}  // namespace

Json view_model(const ViewGraphs& graphs, const ViewOptions& options, std::string& layout_note) {
  KILN_INTERNAL_ASSERT(graphs.written, "view_model needs the graph as written");
  ModelBuilder b(options);
  Json panes = Json::array();
  panes.push_back({{"title", "as written"}, {"graph", b.add_function_graph(*graphs.written, "as written")}});
  std::string written_note = b.layout_note();
  if (graphs.rewritten)
    panes.push_back({{"title", "after rewrites"}, {"graph", b.add_function_graph(*graphs.rewritten, "after rewrites")}});
  layout_note = b.layout_note();
  if (written_note != layout_note) layout_note = written_note + "; after rewrites: " + layout_note;
  Json model = {{"format", "kiln-view"}, {"version", 1},   {"title", options.title},
                {"source", options.source}, {"layout", layout_note}, {"panes", std::move(panes)}};
  if (graphs.rewritten && graphs.report) model["passes"] = b.passes(*graphs.report);
  model["graphs"] = b.graphs();
  model["origins"] = b.origins_table();
  model["types"] = b.types_table();
  return model;
}

std::map<std::string, std::string> variable_pointers(const std::string& graph_text) {
  std::map<std::string, std::string> out;
  Json root = Json::parse(graph_text, nullptr, false);
  if (!root.is_object() || !root.contains("variables") || !root["variables"].is_array()) return out;
  const Json& vars = root["variables"];
  for (std::size_t i = 0; i < vars.size(); ++i)
    if (vars[i].is_object() && vars[i].contains("id") && vars[i]["id"].is_string())
      out.emplace(vars[i]["id"].get<std::string>(), "/variables/" + std::to_string(i));
  return out;
}

}  // namespace kiln::view
