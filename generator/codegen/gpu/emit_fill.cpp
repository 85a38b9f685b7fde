// The fill ops on a GPU: Alloc, ARange, Eye and Tri. Their output shapes come from input
// values (lengths, bounds), so the host code is the C++ backend's (the same checks and error
// messages), reading those scalars from the device (templates/gpu/prologue/device_reads.hpp);
// only the fill becomes device work: a copy kernel of the broadcast value (Alloc), a kernel
// per element from the first two values (ARange, NumPy's fill rule), and a kernel writing
// ones where the diagonal condition holds (Eye, Tri). Join is the same pattern: the C++
// backend's shape checks, then each input copied into its region by the copy kernels (a
// converting copy kernel of the node for an input of another dtype); Split the C++ backend's
// checks, then each piece copied out; AllocEmpty the C++ backend's lengths, then a zero fill
// ordered on the queue/stream (kg::zero_fill); and
// Reshape: the C++ backend's checks of the requested shape (read from the device), then the
// input copied in C order by the copy kernels.
#include "codegen/c_names.h"
#include "codegen/c_types.h"
#include "codegen/cpp/emitters.h"
#include "codegen/gpu/emitters.h"
#include "ir/error.h"
#include "ops/alloc.h"
#include "ops/join.h"

namespace kiln {

namespace {

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
  host.set("kernel_ref", d.kernel_ref(c.kernel_name()));
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
  host.set("kernel_ref", d.kernel_ref(c.kernel_name()));
  return NodeCode(emit_eye_like(c, render_template("templates/gpu/host/eye.mustache", host)),
                  render_template("templates/gpu/fill.mustache", data));
}

NodeCode gpu_emit_join(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  const auto& op = static_cast<const Join&>(c.node().op());
  const Variable& out = c.out_var(0);
  if (out.ndim() > 6)
    throw NotImplementedError("`Join` of rank " + std::to_string(out.ndim()) + " has no " + backend +
                              " implementation: the device copy kernels handle rank 6 at most");
  const std::string storage = gpu_storage_type(out.dtype());
  TemplateData tensors{TemplateData::type::list};
  std::string kernels;
  for (int k = op.first_tensor(); k < c.node().num_inputs(); ++k) {
    const DType in = c.in_var(k).dtype();
    TemplateData item;
    item.set("name", c.in(k));
    item.set("same_type", in == out.dtype());
    if (in != out.dtype()) {
      // A converting copy of this input (the C++ backend's kiln_scalar::convert).
      const std::string name = c.kernel_name() + "_in" + std::to_string(k);
      TemplateData data = d.data();
      data.set("copy_name", name);
      data.set("comment", comment_text(op.str(), 60) + ": input " + std::to_string(k) + " converted from " +
                              std::string(dtype_name(in)) + " to " + std::string(dtype_name(out.dtype())));
      data.set("value", "(" + storage + ")" + convert_scalar("src[so]", in, out.dtype(), gpu_scalar_table(backend)));
      data.set("src_param", d.buffer_param(gpu_storage_type(in), "src", true));
      data.set("dst_param", d.buffer_param(storage, "dst", false));
      data.set("src_bind", d.buffer_bind(gpu_storage_type(in), "src", true));
      data.set("dst_bind", d.buffer_bind(storage, "dst", false));
      kernels += render_template("templates/gpu/copy.mustache", data);
      item.set("kernel_ref", d.kernel_ref(name));
    }
    tensors.push_back(item);
  }
  TemplateData host = c.base_data();
  host.set("tensors", tensors);
  host.set("rank", std::to_string(out.ndim()));
  return NodeCode(emit_join(c, render_template("templates/gpu/host/join.mustache", host)), kernels);
}

NodeCode gpu_emit_alloc_empty(const NodeEmitContext& c, const GpuDialect&, const std::string&) {
  return NodeCode(emit_device_alloc_empty(c));
}

NodeCode gpu_emit_split(const NodeEmitContext& c, const GpuDialect&, const std::string& backend) {
  const int rank = c.in_var(0).ndim();
  if (rank > 6)
    throw NotImplementedError("`Split` of rank " + std::to_string(rank) + " has no " + backend +
                              " implementation: the device copy kernels handle rank 6 at most");
  return NodeCode(emit_device_split(c));
}

NodeCode gpu_emit_make_vector(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  const DType out = c.out_var(0).dtype();
  TemplateData data = fill_kernel_data(c, d);
  TemplateData items{TemplateData::type::list}, host_items{TemplateData::type::list};
  for (int k = 0; k < c.node().num_inputs(); ++k) {
    const DType in = c.in_var(k).dtype();
    const std::string p = "p" + std::to_string(k);
    TemplateData item;
    item.set("k", std::to_string(k));
    item.set("param", d.buffer_param(gpu_storage_type(in), p, true));
    item.set("bind", d.buffer_bind(gpu_storage_type(in), p, true));
    item.set("value", "(" + gpu_storage_type(out) + ")" + convert_scalar(p + "[0]", in, out, gpu_scalar_table(backend)));
    items.push_back(item);
    TemplateData h;
    h.set("name", c.in(k));
    host_items.push_back(h);
  }
  data.set("make_vector", true);
  data.set("items", items);
  TemplateData host = c.base_data();
  host.set("count", std::to_string(c.node().num_inputs()));
  host.set("items", host_items);
  host.set("kernel_ref", d.kernel_ref(c.kernel_name()));
  return NodeCode(render_template("templates/gpu/host/make_vector.mustache", host),
                  render_template("templates/gpu/fill.mustache", data));
}

NodeCode gpu_emit_reshape(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  (void)d;
  const int xrank = c.in_var(0).ndim();
  if (xrank > 6)
    throw NotImplementedError("`Reshape` of an input of rank " + std::to_string(xrank) + " has no " + backend +
                              " implementation: the device copy kernels handle rank 6 at most");
  TemplateData host = c.base_data();
  host.set("xrank", std::to_string(xrank));
  host.set("ctype", ctype(c.in_var(0).dtype()));
  return NodeCode(emit_reshape(c, render_template("templates/gpu/host/reshape.mustache", host)));
}

}  // namespace kiln
