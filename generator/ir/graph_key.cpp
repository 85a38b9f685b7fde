#include "ir/graph_key.h"

#include <unordered_map>

namespace kiln {

std::string constant_key(const Variable& constant) {
  const Array& a = constant.value();
  std::string key(type_kind_name(constant.type().kind));
  key += dtype_name(a.dtype());
  key += shape_str(a.shape());
  key.append(static_cast<const char*>(a.data()), a.nbytes());
  return key;
}

std::string structural_key(const FunctionGraph& fg) {
  // Each variable is named by its position: "i<k>" (input k), "n<k>.<o>" (output o of the k-th
  // node in toposort order); a constant by its key, length-prefixed so no text can fake
  // another's boundary.
  std::unordered_map<const Variable*, std::string> names;
  std::string key = "(";
  for (std::size_t k = 0; k < fg.inputs().size(); ++k) {
    names[fg.inputs()[k].get()] = "i" + std::to_string(k);
    key += fg.inputs()[k]->type().str() + ";";
  }
  key += ")";
  auto name_of = [&](const Var& v) -> std::string {
    auto it = names.find(v.get());
    if (it != names.end()) return it->second;
    if (v->is_constant()) {
      std::string c = constant_key(*v);
      return "c" + std::to_string(c.size()) + ":" + c;
    }
    return "?";  // not reachable in a valid FunctionGraph (every variable has a producer)
  };
  std::size_t index = 0;
  for (Apply* node : fg.toposort()) {
    const std::string& op = node->op().key();
    key += "[" + std::to_string(op.size()) + ":" + op + "(";
    for (const auto& in : node->inputs()) key += name_of(in) + ",";
    key += ")]";
    for (int o = 0; o < node->num_outputs(); ++o) names[node->output_ptr(o)] = "n" + std::to_string(index) + "." + std::to_string(o);
    ++index;
  }
  key += "->";
  for (const auto& out : fg.outputs()) key += name_of(out) + ",";
  return key;
}

}  // namespace kiln
