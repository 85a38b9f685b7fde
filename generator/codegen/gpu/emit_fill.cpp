// The fill ops on a GPU: Alloc, ARange, Eye and Tri. Their output shapes come from input
// values (lengths, bounds), so the host code is the C++ backend's (the same checks and error
// messages), reading those scalars from the device (templates/gpu/prologue/device_reads.hpp);
// only the fill becomes device work: a copy kernel of the broadcast value (Alloc), a kernel
// per element from the first two values (ARange, NumPy's fill rule), and a kernel writing
// ones where the diagonal condition holds (Eye, Tri). Join is the same pattern: the C++
// backend's shape checks, then each input copied into its region by the copy kernels.
#include "codegen/c_names.h"
#include "codegen/c_types.h"
#include "codegen/cpp/emitters.h"
#include "codegen/gpu/emitters.h"
#include "ir/error.h"
#include "ops/alloc.h"
#include "ops/join.h"

namespace kiln {

namespace {

// The host's reference to kernel `name` (the dialect's kernel_ref row).
std::string kernel_ref(const GpuDialect& d, const std::string& name) {
  std::string r = d["kernel_ref"];
  return r.replace(r.find("{name}"), 6, name);
}

// Template data every fill kernel uses: names, the output buffer, the storage type.
TemplateData fill_kernel_data(const NodeEmitContext& c, const GpuDialect& d) {
  const std::string storage = gpu_storage_type(c.out_var(0).dtype());
  TemplateData data = d.data();
  data.set("name", c.kernel_name());
  data.set("comment", comment_text(std::string(c.node().op().str()), 100));
  data.set("q_param", d.buffer_param(storage, "q", false));
  data.set("q_bind", d.buffer_bind(storage, "q", false));
  data.set("stype", storage);
  return data;
}

}  // namespace

NodeCode gpu_emit_alloc(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  const int rank = c.out_var(0).ndim();
  if (rank > 6)
    throw NotImplementedError("`Alloc` of rank " + std::to_string(rank) + " has no " + backend +
                              " implementation: the device copy kernels handle rank 6 at most");
  TemplateData host = c.base_data();
  host.set("rank", std::to_string(rank));
  (void)d;
  return NodeCode(emit_alloc(c, render_template("templates/gpu/host/alloc.mustache", host)));
}

NodeCode gpu_emit_arange(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  const DType dt = c.out_var(0).dtype();
  if (!is_float(dt) && !is_integer(dt) && dt != DType::Bool)
    throw NotImplementedError("`ARange` to " + std::string(dtype_name(dt)) + " has no " + backend + " implementation");
  const bool floating = is_float(dt);
  const std::string arg = floating ? "double" : "int64_t";
  TemplateData data = fill_kernel_data(c, d);
  data.set("arange", true);
  data.set("integral", !floating);
  data.set("floating", floating);
  data.set("arg", arg);
  TemplateData host = c.base_data();
  host.set("kernel_ref", kernel_ref(d, c.kernel_name()));
  host.set("arg", arg);
  return NodeCode(emit_arange(c, render_template("templates/gpu/host/arange.mustache", host)),
                  render_template("templates/gpu/fill.mustache", data));
}

NodeCode gpu_emit_eye_like(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  (void)backend;
  const auto& op = static_cast<const EyeLike&>(c.node().op());
  TemplateData data = fill_kernel_data(c, d);
  data.set("eye", true);
  // j - i, not i + k: k may be any int64.
  data.set("condition", op.kind() == EyeLike::Kind::Eye ? "j - i == k" : "j - i <= k");
  TemplateData host = c.base_data();
  host.set("kernel_ref", kernel_ref(d, c.kernel_name()));
  return NodeCode(emit_eye_like(c, render_template("templates/gpu/host/eye.mustache", host)),
                  render_template("templates/gpu/fill.mustache", data));
}

NodeCode gpu_emit_join(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  (void)d;
  const auto& op = static_cast<const Join&>(c.node().op());
  const Variable& out = c.out_var(0);
  if (out.ndim() > 6)
    throw NotImplementedError("`Join` of rank " + std::to_string(out.ndim()) + " has no " + backend +
                              " implementation: the device copy kernels handle rank 6 at most");
  TemplateData tensors{TemplateData::type::list};
  for (int k = op.first_tensor(); k < c.node().num_inputs(); ++k) {
    if (c.in_var(k).dtype() != out.dtype())
      throw NotImplementedError("`Join` of " + std::string(dtype_name(c.in_var(k).dtype())) + " into " +
                                std::string(dtype_name(out.dtype())) + " has no " + backend +
                                " implementation: the device copies do not convert (join inputs of one dtype)");
    TemplateData item;
    item.set("name", c.in(k));
    tensors.push_back(item);
  }
  TemplateData host = c.base_data();
  host.set("tensors", tensors);
  host.set("rank", std::to_string(out.ndim()));
  return NodeCode(emit_join(c, render_template("templates/gpu/host/join.mustache", host)));
}

}  // namespace kiln
