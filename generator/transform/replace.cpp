#include "transform/replace.h"

#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "ir/error.h"

namespace kiln {

namespace {

std::string var_text(const Var& v) {
  if (!v->name().empty()) return v->name();
  return "<" + v->type().str() + ">";
}

// PyTensor's TensorType.filter_variable refusal.
void check_replacement(const Var& old_var, const Var& new_var) {
  const TensorType& want = old_var->type();
  const TensorType& got = new_var->type();
  if (got.compatible_with(want)) return;
  throw UserError("Cannot convert Type " + got.str() + " (of Variable " + var_text(new_var) +
                  ") into Type " + want.str() + ". You can try to manually convert " +
                  var_text(new_var) + " into a " + want.str() + ".");
}

// Apply nodes above `outputs`, inputs before users (iterative DFS, deterministic).
std::vector<Apply*> nodes_above(const VarList& outputs) {
  std::vector<Apply*> order;
  std::unordered_set<const Apply*> seen;
  std::vector<std::pair<Apply*, int>> stack;
  for (const Var& o : outputs) {
    if (!o || !o->owner() || seen.count(o->owner())) continue;
    stack.emplace_back(o->owner(), 0);
    seen.insert(o->owner());
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->num_inputs()) {
        Apply* child = node->input(next++)->owner();
        if (child && !seen.count(child)) {
          seen.insert(child);
          stack.emplace_back(child, 0);
        }
      } else {
        order.push_back(node);
        stack.pop_back();
      }
    }
  }
  return order;
}

}  // namespace

VarList rebuild_graph(const VarList& outputs, const Replacements& start,
                      const std::function<VarList(const Apply&, const VarList&)>& rebuild) {
  std::unordered_map<const Variable*, Var> map;
  for (const auto& [o, n] : start) map[o.get()] = n;
  auto lookup = [&](const Var& v) {
    auto it = map.find(v.get());
    return it == map.end() ? v : it->second;
  };
  for (Apply* node : nodes_above(outputs)) {
    bool any_output_replaced = false;
    for (int j = 0; j < node->num_outputs(); ++j)
      if (map.count(node->output_ptr(j))) any_output_replaced = true;
    if (any_output_replaced) continue;  // replaced from outside: the graph above is cut off
    VarList inputs;
    bool changed = false;
    for (const Var& in : node->inputs()) {
      inputs.push_back(lookup(in));
      changed = changed || inputs.back() != in;
    }
    if (!changed) continue;
    VarList outs;
    {
      OriginScope scope(node->origins());  // the rebuilt nodes stand for this one
      outs = rebuild(*node, inputs);
    }
    KILN_INTERNAL_ASSERT(static_cast<int>(outs.size()) == node->num_outputs(),
                         "rebuild of " + node->op().str() + " returned the wrong number of outputs");
    for (int j = 0; j < node->num_outputs(); ++j) {
      if (!outs[static_cast<std::size_t>(j)]->name().empty() || node->output_ptr(j)->name().empty()) continue;
      outs[static_cast<std::size_t>(j)]->set_name(node->output_ptr(j)->name());
    }
    for (int j = 0; j < node->num_outputs(); ++j) map[node->output_ptr(j)] = outs[static_cast<std::size_t>(j)];
  }
  VarList result;
  for (const Var& o : outputs) result.push_back(o ? lookup(o) : o);
  return result;
}

VarList graph_replace(const VarList& outputs, const Replacements& replace, bool strict) {
  std::unordered_set<const Variable*> above;
  for (Apply* node : nodes_above(outputs)) {
    for (const Var& in : node->inputs()) above.insert(in.get());
    for (int j = 0; j < node->num_outputs(); ++j) above.insert(node->output_ptr(j));
  }
  for (const Var& o : outputs) above.insert(o.get());
  for (const auto& [old_var, new_var] : replace) {
    if (!old_var || !new_var) throw UserError("graph_replace: a replacement pair holds a null variable");
    check_replacement(old_var, new_var);
    if (strict && !above.count(old_var.get()))
      throw UserError("graph_replace: " + var_text(old_var) +
                      " is not part of the graph of the given outputs");
  }
  return rebuild_graph(outputs, replace, [](const Apply& node, const VarList& inputs) {
    return make_node(node.op_ptr(), inputs)->outputs();
  });
}

Var graph_replace(const Var& output, const Replacements& replace, bool strict) {
  return graph_replace(VarList{output}, replace, strict)[0];
}

}  // namespace kiln
