#include "rewrite/inplace.h"

#include <set>

#include "ops/elemwise.h"
#include "rewrite/rule_helpers.h"

namespace kiln {

namespace {

bool is_graph_output(const FunctionGraph& fg, const Variable* v) {
  for (const auto& out : fg.outputs())
    if (out.get() == v) return true;
  return false;
}

// `in` may be overwritten by `node`'s output `out`: it is computed into its own buffer, only
// `node` reads it, and it has the output's exact type (so no broadcasting happens in between).
bool can_overwrite(const FunctionGraph& fg, const Apply& node, const Var& in, const Variable& out) {
  if (!in->owner() || in->is_constant()) return false;
  const Op& producer = in->owner()->op();
  if (!producer.view_map().empty()) return false;
  if (client_count(fg, in) != 1 || is_graph_output(fg, in.get())) return false;
  if (in->type() != out.type()) return false;
  int uses = 0;
  for (const auto& x : node.inputs()) uses += x == in ? 1 : 0;
  return uses == 1;
}

}  // namespace

RewriteStats make_inplace(FunctionGraph& fg) {
  RewriteStats stats;
  for (Apply* node : fg.toposort()) {
    const Elemwise* op = elemwise_op(node);
    if (!op || !op->inplace_pattern().empty()) continue;
    IndexMap pattern;
    std::set<int> used;
    for (int o = 0; o < node->num_outputs(); ++o) {
      const Variable& out = *node->output_ptr(o);
      if (is_graph_output(fg, &out)) continue;
      for (int i = 0; i < node->num_inputs(); ++i) {
        if (used.count(i) || !can_overwrite(fg, *node, node->input(i), out)) continue;
        pattern[o] = {i};
        used.insert(i);
        break;
      }
    }
    if (pattern.empty()) continue;
    ApplyPtr inplace = make_node(std::make_shared<Elemwise>(op->scalar_op(), pattern), node->inputs());
    std::vector<std::pair<Var, Var>> pairs;
    for (int o = 0; o < node->num_outputs(); ++o) {
      Var v = inplace->output(o);
      v->refine_type(node->output_ptr(o)->type());
      pairs.emplace_back(node->output(o), v);
    }
    fg.replace_all(pairs, "inplace");
    stats.applied["inplace"] += 1;
  }
  return stats;
}

}  // namespace kiln
