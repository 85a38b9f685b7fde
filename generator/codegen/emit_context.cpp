#include "codegen/emit_context.h"

#include "codegen/c_types.h"
#include "ir/error.h"

namespace kiln {

std::string NodeEmitContext::in(int i) const { return lg_.var(node_.input(i).get()).cname; }
std::string NodeEmitContext::out(int i) const { return lg_.var(node_.output_ptr(i)).cname; }

const Apply* NodeEmitContext::fused_gather(int i) const {
  const Apply* owner = node_.input(i)->owner();
  return owner && lg_.fused_gathers.count(owner) ? owner : nullptr;
}

int NodeEmitContext::scratch_slot() const {
  auto it = lg_.scratch_slots.find(&node_);
  KILN_INTERNAL_ASSERT(it != lg_.scratch_slots.end(), "node has no scratch slot");
  return it->second;
}

const std::string& NodeEmitContext::inner_function(std::size_t use) const {
  auto it = lg_.inner_functions.find(&node_);
  KILN_INTERNAL_ASSERT(it != lg_.inner_functions.end() && use < it->second.size(), "node has no inner function");
  return it->second[use];
}

std::string NodeEmitContext::alloc(int i) const {
  const Variable* v = node_.output_ptr(i);
  const LoweredVar& lv = lg_.var(v);
  std::string code;
  // A declared static length the op cannot guarantee (GRAPH_FORMAT.md: trusted, checked here).
  TensorType inferred = node_.op().infer_types(node_.inputs())[static_cast<std::size_t>(i)];
  for (int d = 0; d < v->ndim(); ++d) {
    std::int64_t want = v->shape()[static_cast<std::size_t>(d)];
    if (want != kUnknownLength && inferred.shape[static_cast<std::size_t>(d)] == kUnknownLength)
      code += "KILN_TRY_AT(kg::check_static_length(ctx, " + lv.cname + ".shape[" + std::to_string(d) +
              "], " + std::to_string(want) + ", " + std::to_string(d) + "), kWhere);\n";
  }
  switch (lv.kind) {
    case StorageKind::Workspace:
      code += "KILN_TRY_AT(kg::alloc_workspace(ctx, " + std::to_string(lv.slot) + ", " + lv.cname + "), kWhere);";
      break;
    case StorageKind::Output:
      code += "KILN_TRY_AT(kg::alloc_output(ctx, sink, " + std::to_string(lv.output_index) + ", " +
              lv.cname + ", " + dl_dtype_literal(v->dtype()) + "), kWhere);";
      break;
    default:
      break;
  }
  return code;
}

TemplateData NodeEmitContext::base_data() const {
  TemplateData d;
  for (int i = 0; i < node_.num_inputs(); ++i) d.set("in" + std::to_string(i), in(i));
  for (int i = 0; i < node_.num_outputs(); ++i) {
    d.set("out" + std::to_string(i), out(i));
    d.set("alloc" + std::to_string(i), alloc(i));
  }
  return d;
}

}  // namespace kiln
