// Indexing on a GPU. Subtensor is the C++ backend's view (its index scalars read from the
// device by kg::read_index); IncSubtensor is the C++ backend's index resolution, a copy of x and
// a kernel updating the region (its elements are distinct: no ordering). AdvancedSubtensor1 (and AdvancedSubtensor of one integer vector on axis
// 0, PyTensor 3's spelling of it, normalised as the C++ backend does: is_row_index) is a row
// gather kernel; AdvancedIncSubtensor1 (and AdvancedIncSubtensor of that form) is a copy of x
// then a row scatter kernel. Both check their indices on the device: an index out of range
// claims the status word (templates/gpu/prologue/device_status.hpp), and the call fails with
// the C++ backend's KILN_ERR_INDEX and NumPy's message. The host code computes shapes and runs
// the C++ backend's checks of y (emit_row_scatter_checks), so those errors read the same.
//
// The scatter is deterministic rather than atomic: one work-item per element of a row walks
// the indices in order, so a repeated index accumulates (np.add.at) or overwrites (set,
// ignore_duplicates) in NumPy's order, bit for bit the C++ backend's result. Parallelism is the
// row's length; a scatter into a 1-d x runs in one work-item.
//
// The other AdvancedSubtensor/AdvancedIncSubtensor forms (several index arrays broadcast
// together, slices and newaxes around them, NumPy's placement of the block) use the C++
// backend's resolution of shapes and slices on the host (emit_device_advanced_gather/update),
// one check kernel per index operand (launched in operand order, so the first operand's error
// wins), then templates/gpu/advanced.mustache: a gather with one work-item per output element,
// or the same deterministic update — one work-item per element of the basic dimensions walking
// the block in order (two updates of one element share their basic coordinates). A boolean mask
// (one per index) is its nonzero(): the Nonzero kernels write its true elements' coordinates
// into the node's workspace (the count read back), which then index like arrays.
#include <algorithm>
#include <functional>
#include <iterator>

#include "codegen/c_names.h"
#include "codegen/c_types.h"
#include "codegen/cpp/emitters.h"
#include "codegen/gpu/emitters.h"
#include "ir/error.h"
#include "ops/advanced_subtensor.h"
#include "ops/subtensor.h"

namespace kiln {

namespace {

// Refuses x of rank above 6 (the kernels pad lengths and strides to six dimensions).
void check_rank(const NodeEmitContext& c, const std::string& backend) {
  const int rank = c.in_var(0).ndim();
  if (rank > 6)
    throw NotImplementedError("`" + c.node().op().str() + "` of rank " + std::to_string(rank) + " has no " + backend +
                              " implementation: the indexing kernels handle rank 6 at most");
}

// Template data both indexing kernels share: names, x, the indices, the output, the status word.
TemplateData indexing_kernel_data(const NodeEmitContext& c, const GpuDialect& d, int idx_input) {
  const DType it = c.in_var(idx_input).dtype();
  const std::string xs = gpu_storage_type(c.in_var(0).dtype()), is = gpu_storage_type(it);
  TemplateData k = d.data();
  k.set("name", c.kernel_name());
  k.set("comment", comment_text(c.node().op().str(), 100));
  k.set("stype", xs);
  k.set("itype", is);
  k.set("huge", it == DType::UInt64 ? "raw > (uint64_t)0x7fffffffffffffffUL || " : "");
  k.set("x_param", d.buffer_param(xs, "p", true));
  k.set("x_bind", d.buffer_bind(xs, "p", true));
  k.set("i_param", d.buffer_param(is, "ip", true));
  k.set("i_bind", d.buffer_bind(is, "ip", true));
  k.set("q_param", d.buffer_param(xs, "q", false));
  k.set("q_bind", d.buffer_bind(xs, "q", false));
  k.set("st_param", d.buffer_param("int32_t", "st", false));
  k.set("st_bind", d.buffer_bind("int32_t", "st", false));
  return k;
}

// x + y (or y) for one element as the GPU dialects spell it, in x's dtype: the sum in
// upcast(x, y), integers wrapping (update_expr's rules for the C++ backend).
std::string gpu_update_expr(DType x, DType y, bool set, const ScalarTable& table) {
  if (set) return convert_scalar("b", y, x, table);
  const DType w = upcast(x, y);
  const std::string a = convert_scalar("a", x, w, table), b = convert_scalar("b", y, w, table);
  const std::string sum = is_float(w)  ? "(" + a + " + " + b + ")"
                          : is_bool(w) ? "(" + a + " || " + b + ")"
                                       : "kiln_wrap_add_" + ctype(w) + "(" + a + ", " + b + ")";
  return convert_scalar(sum, w, x, table);
}

// x + y or y, in the GPU dialect, with both kernels' parameters for y.
void set_update(TemplateData& k, const NodeEmitContext& c, const GpuDialect& d, const std::string& backend, bool set) {
  const DType x = c.in_var(0).dtype(), y = c.in_var(1).dtype();
  const std::string ys = gpu_storage_type(y);
  k.set("xtype", gpu_storage_type(x));
  k.set("ytype", ys);
  k.set("y_param", d.buffer_param(ys, "y", true));
  k.set("y_bind", d.buffer_bind(ys, "y", true));
  k.set("verb", set ? "=" : "+=");
  k.set("update", gpu_update_expr(x, y, set, gpu_scalar_table(backend)));
}

NodeCode emit_take(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  check_rank(c, backend);
  TemplateData k = indexing_kernel_data(c, d, 1);
  k.set("take", true);
  TemplateData host = c.base_data();
  host.set("idx", c.in(1));
  host.set("rank", std::to_string(c.in_var(0).ndim()));
  host.set("unsigned_index", c.in_var(1).dtype() == DType::UInt64 ? "true" : "false");
  host.set("kernel_ref", d.kernel_ref(c.kernel_name()));
  return NodeCode(render_template("templates/gpu/host/take.mustache", host),
                  render_template("templates/gpu/indexing.mustache", k));
}

// Whether x[idx] += y may also run as the accumulating kernel (scatter_atomic): an add (not
// set, not ignore_duplicates, whose last write must win) computed in x's own dtype (so adding
// y converted to it is the same sum) of a type with atomic adds on both dialects.
bool has_atomic_scatter(DType x, DType y, bool set, bool ignore_duplicates) {
  static const DType atomic_types[] = {DType::Float32, DType::Float64, DType::Int32, DType::UInt32, DType::Int64, DType::UInt64};
  return !set && !ignore_duplicates && upcast(x, y) == x &&
         std::find(std::begin(atomic_types), std::end(atomic_types), x) != std::end(atomic_types);
}

NodeCode emit_scatter(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend,
                      const std::string& op_name, bool set, bool ignore_duplicates) {
  check_rank(c, backend);
  const bool from_x = !set && ignore_duplicates;  // NumPy's x[idx] += y reads x's rows
  TemplateData k = indexing_kernel_data(c, d, 2);
  k.set("scatter", true);
  set_update(k, c, d, backend, set);
  const DType xt = c.in_var(0).dtype(), yt = c.in_var(1).dtype();
  const bool atomic = has_atomic_scatter(xt, yt, set, ignore_duplicates);
  k.set("scatter_atomic", atomic);
  if (atomic) k.set("atomic_value", convert_scalar("b", yt, xt, gpu_scalar_table(backend)));
  k.set("a_source", from_x ? "p[j * xs + xo]" : "q[j * qs + qo]");
  k.set("order_note", set || from_x ? "the last write to an element wins" : "repeated indices accumulate");
  TemplateData host = c.base_data();
  host.set("y", c.in(1));
  host.set("idx", c.in(2));
  host.set("rank", std::to_string(c.in_var(0).ndim()));
  host.set("yrank", std::to_string(c.in_var(1).ndim()));
  host.set("shape_checks", emit_row_scatter_checks(c, op_name));
  host.set("unsigned_index", c.in_var(2).dtype() == DType::UInt64 ? "true" : "false");
  host.set("kernel_ref", d.kernel_ref(c.kernel_name()));
  host.set("atomic", atomic);
  host.set("atomic_kernel_ref", d.kernel_ref(c.kernel_name() + "_atomic"));
  // Integer adds commute exactly: their atomic kernel gives the deterministic result, always.
  host.set("atomic_always", is_integer(xt) ? "true" : "false");
  host.set("atomic_64", dtype_size(xt) == 8 ? "true" : "false");
  return NodeCode(render_template("templates/gpu/host/scatter.mustache", host),
                  render_template("templates/gpu/indexing.mustache", k));
}

// The general forms: index arrays broadcast together, slices and newaxes around them (NumPy's
// placement of the block). One boolean mask at most; the kernels pad ranks to 6.
TemplateData advanced_kernel_data(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend,
                                  const AdvancedLayout& lay, int first) {
  std::size_t basic = lay.basic.size();
  int masks = 0;
  for (int a : lay.advanced) {
    const AdvancedLayout::Part& p = lay.parts[static_cast<std::size_t>(a)];
    if (p.kind == AdvancedLayout::Part::Kind::Mask && ++masks > 1)
      throw NotImplementedError("`" + c.node().op().str() + "` has no " + backend +
                                " implementation: the GPU kernels take one boolean mask per index (docs/gpu_backends.md)");
    if (p.ndim > 6)
      throw NotImplementedError("`" + c.node().op().str() + "` has no " + backend +
                                " implementation: index arrays of rank above 6");
  }
  if (lay.out_ndim() > 6 || lay.block_ndim > 6 || basic > 6 || c.in_var(0).ndim() > 6)
    throw NotImplementedError("`" + c.node().op().str() + "` has no " + backend +
                              " implementation: the advanced indexing kernels handle rank 6 at most");
  const std::string xs = gpu_storage_type(c.in_var(0).dtype());
  TemplateData k = d.data();
  k.set("name", c.kernel_name());
  k.set("comment", comment_text(c.node().op().str(), 100));
  k.set("stype", xs);
  k.set("x_param", d.buffer_param(xs, "p", true));
  k.set("x_bind", d.buffer_bind(xs, "p", true));
  k.set("q_param", d.buffer_param(xs, "q", false));
  k.set("q_bind", d.buffer_bind(xs, "q", false));
  // The kernels' index operands: the arrays (checked by kernels of their own), then each mask's
  // true-element coordinates (int64, always in range), in the order the host passes them.
  TemplateData arrays{TemplateData::type::list};
  const auto add = [&](const std::string& slot, DType it, bool checked) {
    const std::string is = gpu_storage_type(it), name = "i" + slot;
    TemplateData item;
    item.set("slot", slot);
    item.set("checked", checked);
    item.set("itype", is);
    item.set("huge", it == DType::UInt64 ? "raw > (uint64_t)0x7fffffffffffffffUL || " : "");
    item.set("i_param", d.buffer_param(is, name, true));
    item.set("i_bind", d.buffer_bind(is, name, true));
    item.set("st_param", d.buffer_param("int32_t", "st", false));
    item.set("st_bind", d.buffer_bind("int32_t", "st", false));
    arrays.push_back(item);
  };
  std::string mask_kernels;
  for (int pass = 0; pass < 2; ++pass) {
    int slot = 0;
    for (int a : lay.advanced) {
      const AdvancedLayout::Part& p = lay.parts[static_cast<std::size_t>(a)];
      const std::string s = std::to_string(slot++);
      const bool mask = p.kind == AdvancedLayout::Part::Kind::Mask;
      if (pass == 0 && !mask) add(s, c.in_var(first + p.input).dtype(), true);
      if (pass == 1 && mask) {
        for (int j = 0; j < p.ndim; ++j) add("m" + s + "_" + std::to_string(j), DType::Int64, false);
        mask_kernels += gpu_nonzero_kernels(d, c.kernel_name() + "_mask" + s, comment_text(c.node().op().str(), 100) +
                                            ": mask operand " + s, gpu_storage_type(c.in_var(first + p.input).dtype()), p.ndim);
      }
    }
  }
  k.set("arrays", arrays);
  k.set("mask_kernels", mask_kernels);
  return k;
}

std::function<std::string(const std::string&)> kernel_refs(const GpuDialect& d) {
  return [&d](const std::string& name) { return d.kernel_ref(name); };
}

}  // namespace

NodeCode gpu_emit_inc_subtensor(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  check_rank(c, backend);
  const auto& op = static_cast<const IncSubtensor&>(c.node().op());
  TemplateData host = inc_subtensor_data(c);
  host.set("kernel_ref", d.kernel_ref(c.kernel_name()));
  const std::string xs = gpu_storage_type(c.in_var(0).dtype());
  TemplateData k = d.data();
  k.set("name", c.kernel_name());
  k.set("comment", comment_text(op.str(), 100));
  k.set("region", true);
  k.set("q_param", d.buffer_param(xs, "q", false));
  k.set("q_bind", d.buffer_bind(xs, "q", false));
  set_update(k, c, d, backend, op.set_instead_of_inc());
  return NodeCode(render_template("templates/gpu/host/subtensor_inc.mustache", host),
                  render_template("templates/gpu/indexing.mustache", k));
}

NodeCode gpu_emit_advanced_subtensor1(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  return emit_take(c, d, backend);
}

NodeCode gpu_emit_advanced_subtensor(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  const auto& op = static_cast<const AdvancedSubtensor&>(c.node().op());
  const AdvancedLayout lay = op.layout(c.node());
  if (is_row_index(op.index(), lay)) return emit_take(c, d, backend);
  TemplateData k = advanced_kernel_data(c, d, backend, lay, 1);
  k.set("take", true);
  return NodeCode(emit_device_advanced_gather(c, kernel_refs(d)), render_template("templates/gpu/advanced.mustache", k));
}

NodeCode gpu_emit_advanced_inc_subtensor1(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  const auto& op = static_cast<const AdvancedIncSubtensor1&>(c.node().op());
  return emit_scatter(c, d, backend, "AdvancedIncSubtensor1", op.set_instead_of_inc(), op.ignore_duplicates());
}

NodeCode gpu_emit_advanced_inc_subtensor(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  const auto& op = static_cast<const AdvancedIncSubtensor&>(c.node().op());
  const AdvancedLayout lay = op.layout(c.node());
  if (is_row_index(op.index(), lay))
    return emit_scatter(c, d, backend, "AdvancedIncSubtensor", op.set_instead_of_inc(), op.ignore_duplicates());
  const bool set = op.set_instead_of_inc(), from_x = !set && op.ignore_duplicates();  // x[index] += y reads x
  TemplateData k = advanced_kernel_data(c, d, backend, lay, 2);
  k.set("scatter", true);
  set_update(k, c, d, backend, set);
  k.set("a_source", from_x ? "p[xt]" : "q[qt]");
  k.set("order_note", set || from_x ? "the last write to an element wins" : "repeated positions accumulate (np.add.at)");
  return NodeCode(emit_device_advanced_update(c, kernel_refs(d)), render_template("templates/gpu/advanced.mustache", k));
}

}  // namespace kiln
