// CumOp (cumulative sum / product along one axis or over the flattened input):
// templates/cpp/ops/cumulative.mustache. Scans in the input's dtype and in order, with
// kiln_scalar's wrapping add/mul, exactly as CumOp::perform does.
#include <string>

#include "codegen/cpp/emitters.h"
#include "ops/cumulative.h"

namespace kiln {

std::string emit_cumop(const NodeEmitContext& c) {
  const auto& op = static_cast<const CumOp&>(c.node().op());
  const bool add = op.mode() == CumMode::Add;
  TemplateData data = c.base_data();
  data.set("T", ctype(c.in_var(0).dtype()));
  data.set("ndim", std::to_string(c.in_var(0).ndim()));
  // NumPy's complex product (kiln/runtime/complex.hpp); a complex sum is wrap_add's a + b.
  data.set("fn", add ? "wrap_add" : is_complex(c.in_var(0).dtype()) ? "c_mul" : "wrap_mul");
  data.set("mode", add ? "sum" : "product");
  data.set("bool_rule", add ? "or" : "and");
  if (op.axis()) {
    data.set("axis", std::to_string(*op.axis()));
  } else {
    data.set("axis", false);
  }
  return render_template("templates/cpp/ops/cumulative.mustache", data);
}

}  // namespace kiln
