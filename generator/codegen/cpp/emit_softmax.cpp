// Softmax, LogSoftmax and SoftmaxGrad along one axis or over every element
// (templates/cpp/ops/softmax*.mustache): per row, in double, with the formulas of
// SoftmaxBase::perform and SoftmaxGrad::perform; rows in parallel.
#include <algorithm>
#include <string>

#include "codegen/cpp/emitters.h"
#include "ops/softmax.h"

namespace kiln {

namespace {

// The axis as template data: its number, or false for "every element".
void set_axis(TemplateData& data, std::optional<int> axis) {
  if (axis)
    data.set("axis", std::to_string(*axis));
  else
    data.set("axis", false);
}

}  // namespace

std::string emit_softmax(const NodeEmitContext& c) {
  const auto& op = static_cast<const SoftmaxBase&>(c.node().op());
  TemplateData data = c.base_data();
  data.set("T", ctype(c.in_var(0).dtype()));
  data.set("ndim", std::to_string(c.in_var(0).ndim()));
  data.set("log", op.name() == "LogSoftmax");
  set_axis(data, op.axis());
  return render_template("templates/cpp/ops/softmax.mustache", data);
}

std::string emit_softmax_grad(const NodeEmitContext& c) {
  const auto& op = static_cast<const SoftmaxGrad&>(c.node().op());
  const int ndim = c.in_var(1).ndim();
  TemplateData data = c.base_data();
  data.set("G", ctype(c.in_var(0).dtype()));
  data.set("S", ctype(c.in_var(1).dtype()));
  data.set("ndim", std::to_string(ndim));
  data.set("ndim_or_1", std::to_string(std::max(ndim, 1)));
  set_axis(data, op.axis());
  return render_template("templates/cpp/ops/softmax_grad.mustache", data);
}

}  // namespace kiln
