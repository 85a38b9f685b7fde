#include "codegen/gather_fusion.h"

#include "ops/advanced_subtensor.h"

namespace kiln {

bool is_vector_gather(const Apply& node) {
  const std::string_view name = node.op().name();
  if (name != "AdvancedSubtensor1" && name != "AdvancedSubtensor") return false;
  if (node.num_inputs() != 2 || node.input(0)->ndim() != 1) return false;
  const Variable& idx = *node.input(1);
  if (idx.ndim() != 1 || !is_integer(idx.dtype())) return false;
  // AdvancedSubtensor: x[idx] exactly (no slice or newaxis entry besides the index).
  return name == "AdvancedSubtensor1" ||
         static_cast<const AdvancedSubtensor&>(node.op()).index().entries().size() == 1;
}

std::unordered_set<const Apply*> find_fused_gathers(const FunctionGraph& fg,
                                                    const std::unordered_set<const Apply*>& excluded) {
  std::unordered_set<const Variable*> outputs;
  for (const auto& out : fg.outputs()) outputs.insert(out.get());
  std::unordered_set<const Apply*> fused;
  for (Apply* node : fg.toposort()) {
    if (excluded.count(node) || !is_vector_gather(*node)) continue;
    const Variable* v = node->output_ptr(0);
    if (outputs.count(v)) continue;
    const auto& clients = fg.clients(v);
    if (clients.empty()) continue;
    const Apply* reader = clients.front().node;
    bool one_elemwise_reader = reader && reader->op().name() == "Elemwise" && !excluded.count(reader);
    for (const auto& c : clients) one_elemwise_reader = one_elemwise_reader && c.node == reader;
    if (!one_elemwise_reader) continue;
    // A reader writing in place over x or idx would overwrite what it still gathers from.
    bool overwrites_source = false;
    for (const auto& [out, ins] : reader->op().destroy_map())
      for (int i : ins)
        overwrites_source = overwrites_source || reader->input(i) == node->input(0) || reader->input(i) == node->input(1);
    if (!overwrites_source) fused.insert(node);
  }
  return fused;
}

}  // namespace kiln
