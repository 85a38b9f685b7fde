#include "rewrite/scan_inner.h"

#include "ir/graph_key.h"
#include "ops/scan.h"

namespace kiln {

RewriteStats rewrite_scan_inner_graphs(FunctionGraph& fg, const std::function<void(FunctionGraph&)>& rewrite) {
  RewriteStats stats;
  for (Apply* node : fg.toposort()) {
    const Scan* scan = scan_op(node);
    if (!scan) continue;
    FunctionGraph inner = scan->inner_graph().clone();
    rewrite(inner);
    if (structural_key(inner) == structural_key(scan->inner_graph())) continue;
    auto op = std::make_shared<Scan>(scan->info(), std::make_shared<const FunctionGraph>(std::move(inner)),
                                     scan->truncate_gradient(), scan->label());
    ApplyPtr replacement = make_node(op, node->inputs());
    std::vector<std::pair<Var, Var>> pairs;
    for (int o = 0; o < node->num_outputs(); ++o) {
      Var v = replacement->output(o);
      if (node->output_ptr(o)->type().compatible_with(v->type())) v->refine_type(node->output_ptr(o)->type());
      pairs.emplace_back(node->output(o), v);
    }
    fg.replace_all(pairs, "scan_inner_graph");
    stats.applied["scan_inner_graph"] += 1;
  }
  return stats;
}

}  // namespace kiln
