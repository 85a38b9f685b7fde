// IfElse. The nodes of each branch run before it, inside an `if` on the same condition
// (codegen/source.cpp opens them from LoweredGraph::regions); the node itself copies the values of the
// branch taken into its outputs.
#include "codegen/cpp/emit_control_flow.h"
#include "ops/ifelse.h"

namespace kiln {

TemplateData ifelse_data(const NodeEmitContext& c) {
  const auto& op = static_cast<const IfElse&>(c.node().op());
  TemplateData data = c.base_data();
  data.set("cond", c.in(0));
  for (int branch = 0; branch < 2; ++branch) {
    TemplateData copies{TemplateData::type::list};
    for (int i = 0; i < op.n_outs(); ++i) {
      TemplateData item;
      item.set("ndim", std::to_string(c.out_var(i).ndim()));
      item.set("out", c.out(i));
      item.set("src", c.in(op.branch_input(branch, i)));
      item.set("alloc", c.alloc(i));
      copies.push_back(item);
    }
    data.set(branch == 0 ? "then" : "else", copies);
  }
  return data;
}

std::string emit_ifelse(const NodeEmitContext& c) {
  TemplateData data = ifelse_data(c);
  return render_template("templates/cpp/ops/control_ifelse.mustache", data);
}

}  // namespace kiln
