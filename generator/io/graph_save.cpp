#include "io/graph_save.h"

#include <fstream>
#include <set>
#include <unordered_map>

#include "io/value_json.h"
#include "ir/error.h"

namespace kiln {

using Json = nlohmann::json;
using OJson = nlohmann::ordered_json;

namespace {

// Stable ids: the file id when the variable has one (and it is still unique), else its name,
// else v<N>. Computed in variables() order, so the result depends only on the graph.
std::unordered_map<const Variable*, std::string> assign_ids(const FunctionGraph& fg,
                                                           const std::vector<Variable*>& vars) {
  std::unordered_map<const Variable*, std::string> ids;
  std::set<std::string> used;
  for (Variable* v : vars)
    if (!v->file_id().empty() && used.insert(v->file_id()).second) ids[v] = v->file_id();
  for (Variable* v : vars)
    if (!ids.count(v) && !v->name().empty() && used.insert(v->name()).second) ids[v] = v->name();
  int counter = 0;
  for (Variable* v : vars) {
    if (ids.count(v)) continue;
    std::string id;
    do id = "v" + std::to_string(counter++);
    while (used.count(id));
    used.insert(id);
    ids[v] = id;
  }
  (void)fg;
  return ids;
}

OJson type_json(const TensorType& t) {
  OJson shape = OJson::array();
  for (auto d : t.shape) {
    if (d == kUnknownLength)
      shape.push_back(nullptr);
    else
      shape.push_back(d);
  }
  return OJson{{"dtype", std::string(dtype_name(t.dtype))}, {"shape", shape}};
}

}  // namespace

std::string save_graph_text(const FunctionGraph& fg) {
  std::vector<Variable*> vars = fg.variables();
  auto ids = assign_ids(fg, vars);

  std::vector<std::string> var_lines, node_lines;
  for (Variable* v : vars) {
    OJson j;
    j["id"] = ids[v];
    if (!v->name().empty()) j["name"] = v->name();
    j["type"] = type_json(v->type());
    if (v->is_constant()) j["value"] = OJson::parse(value_to_json(v->value()).dump());
    var_lines.push_back(j.dump());
  }
  for (Apply* node : fg.toposort()) {
    OJson j;
    j["op"] = std::string(node->op().name());
    Json props = node->op().props();
    if (!props.empty()) j["props"] = OJson::parse(props.dump());
    OJson ins = OJson::array(), outs = OJson::array();
    for (const auto& in : node->inputs()) ins.push_back(ids[in.get()]);
    for (int i = 0; i < node->num_outputs(); ++i) outs.push_back(ids[node->output_ptr(i)]);
    j["inputs"] = ins;
    j["outputs"] = outs;
    node_lines.push_back(j.dump());
  }
  OJson ins = OJson::array(), outs = OJson::array();
  for (const auto& in : fg.inputs()) ins.push_back(ids[in.get()]);
  for (const auto& out : fg.outputs()) outs.push_back(ids[out.get()]);

  auto list = [](const std::vector<std::string>& lines) {
    if (lines.empty()) return std::string("[]");
    std::string s = "[\n";
    for (std::size_t i = 0; i < lines.size(); ++i) s += "    " + lines[i] + (i + 1 < lines.size() ? ",\n" : "\n");
    return s + "  ]";
  };
  std::string text = "{\n";
  text += "  \"format\": \"kiln-graph\",\n";
  text += "  \"version\": 1,\n";
  text += "  \"name\": " + OJson(fg.name()).dump() + ",\n";
  text += "  \"variables\": " + list(var_lines) + ",\n";
  text += "  \"nodes\": " + list(node_lines) + ",\n";
  text += "  \"inputs\": " + ins.dump() + ",\n";
  text += "  \"outputs\": " + outs.dump();
  for (const auto& [key, value] : fg.extras()) text += ",\n  " + OJson(key).dump() + ": " + value.dump();
  text += "\n}\n";
  return text;
}

void save_graph_file(const FunctionGraph& fg, const std::string& path) {
  std::string text = save_graph_text(fg);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw UserError("cannot write graph file", path);
  out << text;
  if (!out) throw UserError("error writing graph file", path);
}

}  // namespace kiln
