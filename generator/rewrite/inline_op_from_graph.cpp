#include "rewrite/inline_op_from_graph.h"

#include "ops/op_from_graph.h"

namespace kiln {

RewriteStats inline_op_from_graphs(FunctionGraph& fg) {
  RewriteStats stats;
  // An inner graph may hold OpFromGraph nodes of its own: they join the outer graph with it,
  // and the next round inlines them (the nesting of a finite file is finite).
  for (bool again = true; again;) {
    again = false;
    for (Apply* node : fg.toposort()) {
      if (!fg.contains(node)) continue;
      const auto* ofg = dynamic_cast<const OpFromGraph*>(&node->op());
      if (!ofg) continue;
      VarList outs = apply_inner_graph(ofg->inner_graph(), node->inputs());
      std::vector<std::pair<Var, Var>> pairs;
      for (int o = 0; o < node->num_outputs(); ++o) pairs.emplace_back(node->output(o), outs[static_cast<std::size_t>(o)]);
      fg.replace_all(pairs, "inlining " + ofg->str());
      ++stats.applied["inline_op_from_graph"];
      again = true;
    }
  }
  return stats;
}

std::optional<FunctionGraph> inlined_copy(const FunctionGraph& fg) {
  bool any = false;
  for (Apply* node : fg.toposort()) any = any || dynamic_cast<const OpFromGraph*>(&node->op()) != nullptr;
  if (!any) return std::nullopt;
  FunctionGraph copy = fg.clone();
  inline_op_from_graphs(copy);
  return copy;
}

}  // namespace kiln
