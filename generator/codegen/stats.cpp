#include "codegen/stats.h"

#include "codegen/lowering.h"
#include "ops/elemwise.h"
#include "ops/scalar/composite.h"

namespace kiln {

GraphStats graph_stats(const FunctionGraph& fg, const Backend& backend) {
  GraphStats st;
  const auto is_view = [&](const Apply& node) { return backend.is_view(node); };
  LoweredGraph lg = lower(fg, is_view, 0, backend.row_block ? find_row_block_groups(fg) : std::vector<RowBlockGroup>{});
  st.slots = lg.num_slots;
  st.row_block_passes = static_cast<int>(lg.groups.size());
  for (Apply* node : lg.order) {
    (is_view(*node) ? st.views : st.kernels) += 1;
    const std::string name(node->op().name());
    if (name == "Elemwise") {
      const auto& sop = static_cast<const Elemwise&>(node->op()).scalar_op();
      if (sop.id() == ScalarOpId::Composite) {
        st.fused_nodes += 1;
        st.scalar_ops += static_cast<int>(sop.composite_graph()->nodes().size());
      } else {
        st.scalar_ops += 1;
      }
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
