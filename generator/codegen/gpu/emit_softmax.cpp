// Softmax, LogSoftmax and SoftmaxGrad on a GPU (templates/gpu/softmax.mustache): a row-block
// kernel, one work-group per row (a grid-stride loop over rows). The row is the axis, or every
// element in C order when the axis is null; rows and row elements are decoded through lengths
// and strides, so any layout is read in place. The group reduces the row's maximum and its sums
// in local memory with barriers (CUDA ends the trees with warp shuffles), with the C++
// backend's arithmetic (templates/cpp/ops/softmax*.mustache): x - max and exp in the element
// type, the sum of exponentials and SoftmaxGrad's dot product in double (only the order of the
// additions differs).
#include <algorithm>

#include "codegen/c_names.h"
#include "codegen/c_types.h"
#include "codegen/gpu/emitters.h"
#include "codegen/gpu/row_layout.h"
#include "ir/error.h"
#include "ops/softmax.h"

namespace kiln {

namespace {

// What both kernels share: names, the decode of rows and row elements, the trees, the host call.
NodeCode render_softmax(const NodeEmitContext& c, const GpuDialect& d, std::optional<int> axis, TemplateData data,
                const std::vector<std::string>& tensors, const std::vector<std::string>& host_names,
                const std::string& T, TemplateData host) {
  const std::string name = c.kernel_name();
  const int ndim = c.out_var(0).ndim();
  std::vector<int> along;
  for (int dim = 0; dim < ndim; ++dim)
    if (!axis || *axis == dim) along.push_back(dim);
  const GpuRowDims dims = gpu_row_dims(along, ndim);
  std::string params;
  std::vector<std::string> args;
  const auto length = [&](int dim) { return c.out(0) + ".shape[" + std::to_string(dim) + "]"; };
  const auto stride = [&](std::size_t t, std::size_t, int dim) {
    return host_names[t] + ".strides[" + std::to_string(dim) + "]";
  };
  gpu_dim_params(dims.across, "k", tensors, length, stride, params, args);
  gpu_dim_params(dims.row, "r", tensors, length, stride, params, args);
  data.set("name", name);
  data.set("comment", comment_text(c.node().op().str(), 100));
  data.set("T", T);
  data.set("dim_params", params);
  data.set("row_base", gpu_row_start(tensors, dims.across.size(), "    "));
  data.set("at_element", gpu_row_element(tensors, dims.row.size(), "        "));
  data.set("local_max", d.local_array(T, "red_max", 256));
  data.set("local_sum", d.local_array("double", "red_sum", 256));
  data.set("max_tree", gpu_group_tree(d, name + "_max", T, "red_max"));
  data.set("sum_tree", gpu_group_tree(d, name + "_add", "double", "red_sum"));
  host.set("kernel_ref", d.kernel_ref(name));
  host.set("dim_args", args.empty() ? "" : ", " + join(args, ", "));
  std::string rows = "1", n = "1";
  for (int dim : dims.across) rows += " * " + c.out(0) + ".shape[" + std::to_string(dim) + "]";
  for (int dim : dims.row) n += " * " + c.out(0) + ".shape[" + std::to_string(dim) + "]";
  host.set("rows", rows);
  host.set("n", n);
  host.set("rank", std::to_string(c.out_var(0).ndim()));
  return NodeCode(render_template("templates/gpu/host/softmax.mustache", host),
                  render_template("templates/gpu/softmax.mustache", data));
}

// The float element type of a softmax operand, or NotImplementedError naming the node's op.
std::string softmax_float_type(const NodeEmitContext& c, DType dt, const std::string& backend) {
  if (dt != DType::Float32 && dt != DType::Float64)
    throw NotImplementedError("`" + c.node().op().str() + "` on " + std::string(dtype_name(dt)) + " has no " + backend +
                              " implementation");
  return ctype(dt);
}

}  // namespace

NodeCode gpu_emit_softmax(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  const auto& op = static_cast<const SoftmaxBase&>(c.node().op());
  const std::string T = softmax_float_type(c, c.in_var(0).dtype(), backend);
  TemplateData data = d.data();
  data.set("log", op.name() == "LogSoftmax");
  data.set("grad", false);
  data.set("in_params", d.buffer_param(T, "x", true) + ", " + d.buffer_param(T, "y", false));
  data.set("in_binds", d.buffer_bind(T, "x", true) + "\n  " + d.buffer_bind(T, "y", false));
  TemplateData host = c.base_data();
  host.set("buffers", c.in(0) + ".data, " + c.out(0) + ".data");
  return render_softmax(c, d, op.axis(), data, {"x", "y"}, {c.in(0), c.out(0)}, T, host);
}

NodeCode gpu_emit_softmax_grad(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  const auto& op = static_cast<const SoftmaxGrad&>(c.node().op());
  const std::string G = softmax_float_type(c, c.in_var(0).dtype(), backend), S = softmax_float_type(c, c.in_var(1).dtype(), backend);
  TemplateData data = d.data();
  data.set("log", false);
  data.set("grad", true);
  data.set("G", G);
  data.set("in_params", d.buffer_param(G, "dy", true) + ", " + d.buffer_param(S, "sm", true) + ", " +
                            d.buffer_param(S, "y", false));
  data.set("in_binds", d.buffer_bind(G, "dy", true) + "\n  " + d.buffer_bind(S, "sm", true) + "\n  " +
                           d.buffer_bind(S, "y", false));
  TemplateData host = c.base_data();
  host.set("grad", true);
  host.set("buffers", c.in(0) + ".data, " + c.in(1) + ".data, " + c.out(0) + ".data");
  return render_softmax(c, d, op.axis(), data, {"dy", "sm", "y"}, {c.in(0), c.in(1), c.out(0)}, S, host);
}

}  // namespace kiln
