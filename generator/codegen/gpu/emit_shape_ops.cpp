// Shape ops and the ops of extra_ops.py that move data without sorting it, on a GPU. Shape and
// Shape_i write lengths the host knows (kg::put_int64: kernel arguments, nothing waits);
// ExtractDiag and BroadcastTo are the C++ backend's views (host metadata; BroadcastTo's lengths
// are read from the device by kg::read_int); AllocDiag is a zero fill and x copied into a
// strided view of the output's diagonal; FillDiagonal and FillDiagonalOffset a copy of x and a
// kernel writing the value along the diagonal; Repeat reads its counts to the host (the
// output's length depends on them: one read), uploads their running sums, and one work-item
// per output element finds its source. The host code is the C++ backend's template (the same
// checks and messages) with the device fills in its `device` sections. IfElse is driven from
// the host: its condition is read once per call (kg::read_condition, by the `if` that
// codegen/source.cpp opens around each branch's nodes or by the node itself), so only the
// branch taken is queued, and the node copies that branch's values to its outputs. Scan is
// driven from the host as well: the C++ backend's loop (its template, over device tensors)
// queues the step function's kernels once per step.
#include "codegen/c_names.h"
#include "codegen/c_types.h"
#include "codegen/cpp/emit_control_flow.h"
#include "codegen/cpp/emitters.h"
#include "codegen/gpu/emitters.h"
#include "ir/error.h"
#include "ops/shape.h"

namespace kiln {

namespace {

// Refuses `op` on a tensor of rank above 6 (the copy kernels pad to six dimensions).
void refuse_above_rank6(const NodeEmitContext& c, int rank, const std::string& backend) {
  if (rank > 6)
    throw NotImplementedError("`" + c.node().op().str() + "` of rank " + std::to_string(rank) + " has no " + backend +
                              " implementation: the device copy kernels handle rank 6 at most");
}

NodeCode shape_code(const NodeEmitContext& c, const std::vector<std::string>& lengths, bool vector) {
  TemplateData host = c.base_data();
  if (vector)
    host.set("rank", std::to_string(lengths.size()));
  else
    host.set("rank", false);
  if (lengths.empty())
    host.set("count", false);
  else
    host.set("count", std::to_string(lengths.size()));
  host.set("lengths", join(lengths, ", "));
  return NodeCode(render_template("templates/gpu/host/shape.mustache", host));
}

}  // namespace

NodeCode gpu_emit_shape(const NodeEmitContext& c, const GpuDialect&, const std::string&) {
  std::vector<std::string> lengths;
  for (int d = 0; d < c.in_var(0).ndim(); ++d) lengths.push_back(c.in(0) + ".shape[" + std::to_string(d) + "]");
  return shape_code(c, lengths, true);
}

NodeCode gpu_emit_shape_i(const NodeEmitContext& c, const GpuDialect&, const std::string&) {
  const auto& op = static_cast<const ShapeI&>(c.node().op());
  return shape_code(c, {c.in(0) + ".shape[" + std::to_string(op.i()) + "]"}, false);
}

NodeCode gpu_emit_alloc_diag(const NodeEmitContext& c, const GpuDialect&, const std::string& backend) {
  refuse_above_rank6(c, c.in_var(0).ndim(), backend);
  return NodeCode(emit_device_alloc_diag(c, "templates/gpu/host/alloc_diag.mustache"));
}

NodeCode gpu_emit_fill_diagonal(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  refuse_above_rank6(c, c.in_var(0).ndim(), backend);
  const DType x = c.in_var(0).dtype(), v = c.in_var(1).dtype();
  const std::string xs = gpu_storage_type(x), vs = gpu_storage_type(v);
  TemplateData k = d.data();
  k.set("diagonal", true);
  k.set("name", c.kernel_name());
  k.set("comment", comment_text(c.node().op().str(), 100));
  k.set("q_param", d.buffer_param(xs, "q", false));
  k.set("q_bind", d.buffer_bind(xs, "q", false));
  k.set("v_param", d.buffer_param(vs, "v", true));
  k.set("v_bind", d.buffer_bind(vs, "v", true));
  k.set("value", "(" + xs + ")" + convert_scalar("v[0]", v, x, gpu_scalar_table(backend)));
  return NodeCode(emit_device_fill_diagonal(c, d.kernel_ref(c.kernel_name())),
                  render_template("templates/gpu/fill.mustache", k));
}

NodeCode gpu_emit_repeat(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  refuse_above_rank6(c, c.in_var(0).ndim(), backend);
  const std::string xs = gpu_storage_type(c.in_var(0).dtype());
  TemplateData k = d.data();
  k.set("repeat", true);
  k.set("name", c.kernel_name());
  k.set("comment", comment_text(c.node().op().str(), 100));
  k.set("x_param", d.buffer_param(xs, "src", true));
  k.set("x_bind", d.buffer_bind(xs, "src", true));
  k.set("s_param", d.buffer_param("int64_t", "starts", true));
  k.set("s_bind", d.buffer_bind("int64_t", "starts", true));
  k.set("q_param", d.buffer_param(xs, "q", false));
  k.set("q_bind", d.buffer_bind(xs, "q", false));
  return NodeCode(emit_device_repeat(c, d.kernel_ref(c.kernel_name())), render_template("templates/gpu/fill.mustache", k));
}

NodeCode gpu_emit_ifelse(const NodeEmitContext& c, const GpuDialect&, const std::string& backend) {
  for (int i = 0; i < c.node().num_outputs(); ++i) refuse_above_rank6(c, c.out_var(i).ndim(), backend);
  TemplateData host = ifelse_data(c);
  return NodeCode(render_template("templates/gpu/host/ifelse.mustache", host));
}

NodeCode gpu_emit_scan(const NodeEmitContext& c, const GpuDialect&, const std::string& backend) {
  for (int i = 0; i < c.node().num_outputs(); ++i) refuse_above_rank6(c, c.out_var(i).ndim(), backend);
  // The step function without the status bracket (templates/gpu/function.mustache): the checks
  // of every step join the call's log, read once when the call ends.
  const TemplateData data = scan_data(c, "kg::DTensor", c.inner_function() + "_steps");
  return NodeCode(render_template("templates/cpp/ops/control_scan.mustache", data));
}

}  // namespace kiln
