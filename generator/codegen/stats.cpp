#include "codegen/stats.h"

#include "codegen/backend.h"
#include "codegen/lowering.h"

namespace kiln {

GraphStats graph_stats(const FunctionGraph& fg, const Backend& backend) {
  GraphStats st;
  const auto is_view = [&](const Apply& node) { return backend.is_view(node); };
  LoweredGraph lg = lower_for_backend(backend, fg, 0, true);
  st.slots = lg.num_slots;
  st.row_block_passes = static_cast<int>(lg.groups.size());
  for (Apply* node : lg.order) {
    if (lg.fused_gathers.count(node)) continue;  // computed inside its reader's loop
    (is_view(*node) ? st.views : st.kernels) += 1;
    if (node->op().name() == "Elemwise") {
      // A fused Elemwise counts the operations of its body (ir/inner_graph.h).
      std::size_t inner = 0;
      for (const InnerGraphUse& use : node->op().inner_graphs()) inner += use.is_body ? use.graph->num_nodes() : 0;
      st.fused_nodes += inner > 0 ? 1 : 0;
      st.scalar_ops += inner > 0 ? static_cast<int>(inner) : 1;
    }
    for (int o = 0; o < node->num_outputs(); ++o) {
      const LoweredVar& lv = lg.var(node->output_ptr(o));
      if (lv.kind != StorageKind::Workspace) continue;
      st.intermediates += 1;
      if (lv.inplace_of) st.inplace += 1;
      const Variable& v = *node->output_ptr(o);
      if (v.type().fully_static())
        st.static_bytes += shape_size(v.shape()) * static_cast<std::int64_t>(dtype_size(v.dtype()));
      else
        st.dynamic_intermediates += 1;
    }
  }
  return st;
}

}  // namespace kiln
