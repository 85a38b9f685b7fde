#include "io/graph_save.h"

#include <fstream>
#include <optional>
#include <set>
#include <unordered_map>

#include "io/type_json.h"
#include "io/value_json.h"
#include "ir/error.h"
#include "ops/blockwise.h"
#include "ops/elemwise.h"
#include "ops/reduce.h"
#include "ops/scalar/composite.h"
#include "ops/join.h"
#include "ops/op_from_graph.h"
#include "ops/scan.h"

namespace kiln {

using Json = nlohmann::json;
using OJson = nlohmann::ordered_json;

namespace {

// Stable ids: the file id when the variable has one (and it is still unique), else its name,
// else v<N>. Computed in variables() order, so the result depends only on the graph.
class IdTable {
 public:
  explicit IdTable(const std::vector<Variable*>& vars) {
    for (Variable* v : vars)
      if (!v->file_id().empty() && used_.insert(v->file_id()).second) ids_[v] = v->file_id();
    for (Variable* v : vars)
      if (!ids_.count(v) && !v->name().empty() && used_.insert(v->name()).second) ids_[v] = v->name();
    for (Variable* v : vars)
      if (!ids_.count(v)) ids_[v] = fresh();
  }
  const std::string& operator[](const Variable* v) const { return ids_.at(v); }
  /// An id no variable has.
  std::string fresh() {
    std::string id;
    do id = "v" + std::to_string(counter_++);
    while (used_.count(id));
    used_.insert(id);
    return id;
  }

 private:
  std::unordered_map<const Variable*, std::string> ids_;
  std::set<std::string> used_;
  int counter_ = 0;
};

OJson ordered(const Json& j) { return OJson::parse(j.dump()); }

OJson variable_json(const Variable& v, const std::string& id) {
  OJson j;
  j["id"] = id;
  if (!v.name().empty()) j["name"] = v.name();
  j["type"] = type_to_json(v.type());
  if (v.is_constant())
    j["value"] = v.type().is_tensor() ? ordered(value_to_json(v.value())) : kind_value_to_json(v.type(), v.value());
  return j;
}

// A graph object's variables and nodes as JSON, in the spelling of format `version`.
struct GraphObject {
  std::vector<OJson> variables;
  std::vector<OJson> nodes;
  OJson inputs = OJson::array();
  OJson outputs = OJson::array();
};

// Version 1 has no Join{axis} / Split{n, axis}: it writes the axis as a constant input
// (PyTensor 2.26's form), which becomes a variable of its own.
std::optional<int> axis_to_spell_as_input(const Op& op, int version) {
  if (version >= 2) return std::nullopt;
  if (const auto* j = dynamic_cast<const Join*>(&op)) return j->axis();
  if (const auto* s = dynamic_cast<const Split*>(&op)) return s->axis();
  return std::nullopt;
}

GraphObject write_graph_object(const FunctionGraph& fg, int version);

OJson node_json(const Apply& node, IdTable& ids, int version, std::vector<OJson>& extra_variables) {
  OJson j;
  j["op"] = std::string(node.op().name());
  Json props = node.op().props();
  OJson ins = OJson::array(), outs = OJson::array();
  for (const auto& in : node.inputs()) ins.push_back(ids[in.get()]);
  if (auto axis = axis_to_spell_as_input(node.op(), version)) {
    props.erase("axis");
    const std::string id = ids.fresh();
    extra_variables.push_back(OJson{{"id", id}, {"type", {{"dtype", "int64"}, {"shape", OJson::array()}}}, {"value", *axis}});
    ins.insert(node.op().name() == "Join" ? ins.begin() : ins.begin() + 1, id);
  }
  if (!props.empty()) {
    // An OpFromGraph's or a Scan's inner graph is not in its props(): written here, first.
    OJson p = OJson::object();
    if (const auto* ofg = dynamic_cast<const OpFromGraph*>(&node.op())) p["inner"] = graph_object_json(ofg->inner_graph());
    if (const Scan* scan = scan_op(&node)) p["inner"] = graph_object_json(scan->inner_graph());
    const OJson rest = ordered(props);
    for (auto it = rest.begin(); it != rest.end(); ++it) p[it.key()] = it.value();
    j["props"] = p;
  }
  for (int i = 0; i < node.num_outputs(); ++i) outs.push_back(ids[node.output_ptr(i)]);
  j["inputs"] = ins;
  j["outputs"] = outs;
  return j;
}

GraphObject write_graph_object(const FunctionGraph& fg, int version) {
  std::vector<Variable*> vars = fg.variables();
  IdTable ids(vars);
  GraphObject g;
  for (Variable* v : vars) g.variables.push_back(variable_json(*v, ids[v]));
  std::vector<OJson> extra;
  for (Apply* node : fg.toposort()) g.nodes.push_back(node_json(*node, ids, version, extra));
  g.variables.insert(g.variables.end(), extra.begin(), extra.end());
  for (const auto& in : fg.inputs()) g.inputs.push_back(ids[in.get()]);
  for (const auto& out : fg.outputs()) g.outputs.push_back(ids[out.get()]);
  return g;
}

// Whether a gufunc signature holds an integer literal dimension ("(m,3)").
bool has_literal_dimension(const GufuncSignature& sig) {
  for (const auto* args : {&sig.inputs, &sig.outputs})
    for (const auto& arg : *args)
      for (const auto& dim : arg)
        if (GufuncSignature::literal_length(dim)) return true;
  return false;
}

// Whether a scalar op is, or holds, one that only version 2 can say (a ScalarLoop).
bool has_version_2_scalar_op(const ScalarOp& op) {
  switch (op.id()) {
    case ScalarOpId::ScalarLoop:
    case ScalarOpId::Real:
    case ScalarOpId::Imag:
    case ScalarOpId::Conj:
    case ScalarOpId::Angle:
    case ScalarOpId::Complex:
      return true;
    default:
      break;
  }
  if (op.id() != ScalarOpId::Composite) return false;
  for (const auto& node : op.composite_graph()->nodes())
    if (has_version_2_scalar_op(node.op)) return true;
  return false;
}

bool is_version_2_dtype(DType dt) { return dt == DType::Float16 || is_complex(dt); }

// Whether a props object names a version-2 dtype anywhere (a cast, an accumulator, a
// Composite's inner variable).
bool names_version_2_dtype(const Json& j) {
  if (j.is_string()) {
    const auto dt = dtype_from_name(j.get_ref<const std::string&>());
    return dt && is_version_2_dtype(*dt);
  }
  if (j.is_array() || j.is_object())
    for (const auto& item : j)
      if (names_version_2_dtype(item)) return true;
  return false;
}

}  // namespace

int graph_format_version(const FunctionGraph& fg) {
  for (Variable* v : fg.variables())
    if (!v->type().is_tensor() || is_version_2_dtype(v->dtype())) return 2;
  for (Apply* node : fg.toposort()) {
    const Op& op = node->op();
    if (names_version_2_dtype(op.props())) return 2;
    if (dynamic_cast<const OpFromGraph*>(&op) || op.name() == "IfElse" || op.name() == "Scan") return 2;
    if (const auto* b = dynamic_cast<const Blockwise*>(&op); b && has_literal_dimension(b->signature())) return 2;
    if (const auto* e = dynamic_cast<const Elemwise*>(&op); e && has_version_2_scalar_op(e->scalar_op())) return 2;
    if (const auto* r = dynamic_cast<const CAReduce*>(&op); r && has_version_2_scalar_op(r->scalar_op())) return 2;
  }
  return 1;
}

OJson graph_object_json(const FunctionGraph& fg) {
  GraphObject g = write_graph_object(fg, 2);  // inner graphs live in version-2 files
  OJson j;
  j["variables"] = OJson(g.variables);
  j["nodes"] = OJson(g.nodes);
  j["inputs"] = g.inputs;
  j["outputs"] = g.outputs;
  return j;
}

std::string save_graph_text(const FunctionGraph& fg) {
  const int version = graph_format_version(fg);
  GraphObject g = write_graph_object(fg, version);
  auto list = [](const std::vector<OJson>& items) {
    if (items.empty()) return std::string("[]");
    std::string s = "[\n";
    for (std::size_t i = 0; i < items.size(); ++i) s += "    " + items[i].dump() + (i + 1 < items.size() ? ",\n" : "\n");
    return s + "  ]";
  };
  std::string text = "{\n";
  text += "  \"format\": \"kiln-graph\",\n";
  text += "  \"version\": " + std::to_string(version) + ",\n";
  text += "  \"name\": " + OJson(fg.name()).dump() + ",\n";
  text += "  \"variables\": " + list(g.variables) + ",\n";
  text += "  \"nodes\": " + list(g.nodes) + ",\n";
  text += "  \"inputs\": " + g.inputs.dump() + ",\n";
  text += "  \"outputs\": " + g.outputs.dump();
  for (const auto& [key, value] : fg.extras()) text += ",\n  " + OJson(key).dump() + ": " + value.dump();
  text += "\n}\n";
  return text;
}

void save_graph_file(const FunctionGraph& fg, const std::string& path) {
  std::string text = save_graph_text(fg);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw IoError("cannot write graph file", path);
  out << text;
  if (!out) throw UserError("error writing graph file", path);
}

}  // namespace kiln
