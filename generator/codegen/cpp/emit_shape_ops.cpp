// The shape-building ops: Reshape, SpecifyShape, Alloc, AllocEmpty, MakeVector, Join, Split,
// ARange, Eye, Tri, ExtractDiag, AllocDiag, CheckAndRaise and Assert
// (templates/cpp/ops/shape_ops_*.mustache). SpecifyShape, ExtractDiag and the checks are views
// of their input; the others allocate (Reshape and Split copy even where the reference evaluator
// returns views, since lowering only aliases output 0 and only when it always is a view).
#include <cstdint>
#include <optional>
#include <string>

#include "codegen/c_names.h"
#include "codegen/cpp/emitters.h"
#include "ops/blas.h"
#include "ops/alloc.h"
#include "ops/assert.h"
#include "ops/diag.h"
#include "ops/join.h"
#include "ops/reshape.h"

namespace kiln {

namespace {


// A C++ expression for any int64 value (INT64_MIN has no literal of its own).
std::string int64_literal(std::int64_t v) {
  if (v == INT64_MIN) return "(-INT64_MAX - 1)";
  return "INT64_C(" + std::to_string(v) + ")";
}

std::string render_shape_op(const std::string& name, const TemplateData& data) {
  return render_template("templates/cpp/ops/shape_ops_" + name + ".mustache", data);
}

// One item per 0-d length input from `first` on: output dimension d gets input d + first.
TemplateData length_items(const NodeEmitContext& c, int first) {
  TemplateData lengths = new_list();
  for (int i = first; i < c.node().num_inputs(); ++i) {
    TemplateData item;
    item.set("d", str(i - first));
    item.set("name", c.in(i));
    item.set("index", str(i));
    lengths.push_back(item);
  }
  return lengths;
}

}  // namespace

std::string emit_reshape(const NodeEmitContext& c, const std::string& device_fill) {
  const auto& op = static_cast<const Reshape&>(c.node().op());
  const int xrank = c.in_var(0).ndim();
  TemplateData data = c.base_data();
  data.set("ndim", str(op.ndim()));
  data.set("ndim_or_1", str(op.ndim() > 0 ? op.ndim() : 1));
  data.set("xrank", str(xrank));
  data.set("xrank_or_1", str(xrank > 0 ? xrank : 1));
  data.set("ctype", ctype(c.in_var(0).dtype()));
  data.set("device", !device_fill.empty());
  data.set("device_fill", device_fill);
  return render_shape_op("reshape", data);
}

std::string emit_specify_shape(const NodeEmitContext& c) {
  const int rank = c.in_var(0).ndim();
  TemplateData data = c.base_data();
  TemplateData checks = new_list();
  std::string checked;
  for (int d = 0; d < rank; ++d) {
    auto value = constant_int(c.node().input(d + 1));
    const bool unchecked = value && *value == -1;  // PyTensor's NoneConst
    checked += std::string(d ? ", " : "") + (unchecked ? "false" : "true");
    if (unchecked) continue;
    TemplateData item;
    item.set("d", str(d));
    item.set("name", c.in(d + 1));
    checks.push_back(item);
  }
  data.set("has_checks", !checks.is_empty_list());
  data.set("checks", checks);
  data.set("checked", checked);
  data.set("rank", str(rank));
  return render_shape_op("specify_shape", data);
}

std::string emit_alloc(const NodeEmitContext& c, const std::string& device_fill) {
  const Variable& value = c.in_var(0);
  const int rank = c.out_var(0).ndim();
  const int vrank = value.ndim();
  TemplateData data = c.base_data();
  data.set("lengths", length_items(c, 1));
  // Value dimensions not statically 1 may not stretch at run time (PyTensor's rule).
  TemplateData runtime_broadcast = new_list();
  for (int d = 0; d < vrank; ++d) {
    if (value.shape()[static_cast<std::size_t>(d)] != kUnknownLength) continue;
    TemplateData item;
    item.set("vd", str(d));
    item.set("od", str(rank - vrank + d));
    item.set("message", c_string_literal(kAllocRuntimeBroadcast));
    runtime_broadcast.push_back(item);
  }
  data.set("runtime_broadcast", runtime_broadcast);
  data.set("rank", str(rank));
  data.set("rank_or_1", str(rank > 0 ? rank : 1));
  data.set("vrank", str(vrank));
  data.set("has_rank", rank > 0);
  data.set("last", str(rank - 1));
  data.set("outer", str(rank > 0 ? rank - 1 : 0));
  data.set("outer_or_1", str(rank > 1 ? rank - 1 : 1));
  data.set("ctype", ctype(value.dtype()));
  data.set("device", !device_fill.empty());
  data.set("device_fill", device_fill);
  return render_shape_op("alloc", data);
}

namespace {

std::string alloc_empty_code(const NodeEmitContext& c, bool device) {
  TemplateData data = c.base_data();
  data.set("lengths", length_items(c, 0));
  // Zero-filling is for readers of the initial values; a Gemv/Gemm whose b is a constant 0
  // (PyTensor's usual reason for an AllocEmpty) never reads them.
  bool read = false;
  for (const Client& client : c.graph().clients(&c.out_var(0))) {
    const std::string_view op = client.node ? client.node->op().name() : "";
    const bool blas = op == "Gemv" || op == "CGemv" || op == "Gemm";
    read = read || !blas || client.index != 0 || !blas_ignores_initial(*client.node);
  }
  const std::string out = c.out(0);
  if (!read)
    data.set("zero_fill", false);
  else if (device)
    data.set("zero_fill", "KILN_TRY_AT(kg::zero_fill(ctx, " + out + "), kWhere);");
  else
    data.set("zero_fill", "if (" + out + ".size() > 0) std::memset(" + out + ".data, 0, static_cast<size_t>(" + out +
                              ".size()) * sizeof(" + ctype(c.out_var(0).dtype()) + "));");
  return render_shape_op("alloc_empty", data);
}

}  // namespace

std::string emit_alloc_empty(const NodeEmitContext& c) { return alloc_empty_code(c, false); }
std::string emit_device_alloc_empty(const NodeEmitContext& c) { return alloc_empty_code(c, true); }

std::string emit_make_vector(const NodeEmitContext& c) {
  TemplateData data = c.base_data();
  TemplateData items = new_list();
  for (int k = 0; k < c.node().num_inputs(); ++k) {
    TemplateData item;
    item.set("k", str(k));
    item.set("name", c.in(k));
    items.push_back(item);
  }
  data.set("items", items);
  data.set("count", str(c.node().num_inputs()));
  data.set("ctype", ctype(c.out_var(0).dtype()));
  return render_shape_op("make_vector", data);
}

// The axis of a Join or Split as template data: its number when the op holds it, else false
// (the template reads the run-time axis input).
void set_static_axis(TemplateData& data, std::optional<int> axis) {
  if (axis)
    data.set("static_axis", str(*axis));
  else
    data.set("static_axis", false);
}

std::string emit_join(const NodeEmitContext& c, const std::string& device_fill) {
  const auto& op = static_cast<const Join&>(c.node().op());
  const Variable& out = c.out_var(0);
  const int first = op.first_tensor();
  TemplateData data = c.base_data();
  set_static_axis(data, op.axis());
  TemplateData tensors = new_list();
  for (int k = first; k < c.node().num_inputs(); ++k) {
    TemplateData item;
    item.set("k", str(k - first));
    item.set("name", c.in(k));
    item.set("in_ctype", ctype(c.in_var(k).dtype()));
    item.set("same_type", c.in_var(k).dtype() == out.dtype());
    tensors.push_back(item);
  }
  data.set("tensors", tensors);
  data.set("first", c.in(first));
  data.set("rank", str(out.ndim()));
  data.set("ctype", ctype(out.dtype()));
  data.set("device", !device_fill.empty());
  data.set("device_fill", device_fill);
  return render_shape_op("join", data);
}

namespace {

std::string split_code(const NodeEmitContext& c, bool device, bool lengths_only) {
  const auto& op = static_cast<const Split&>(c.node().op());
  TemplateData data = c.base_data();
  data.set("device", device);
  data.set("lengths_only", lengths_only);  // a GPU shape function's: no data to copy
  TemplateData outputs = new_list();
  for (int i = 0; i < op.len_splits(); ++i) {
    TemplateData item;
    item.set("i", str(i));
    item.set("name", c.out(i));
    item.set("alloc", c.alloc(i));
    // The piece's copy out of x: none in a shape function (lengths only).
    if (lengths_only)
      item.set("copy", false);
    else
      item.set("copy", device ? "KILN_TRY_AT(kg::copy_tensor(ctx, piece, " + c.out(i) + "), kWhere);"
                              : "kg::copy_tensor(piece, " + c.out(i) + ");");
    outputs.push_back(item);
  }
  data.set("outputs", outputs);
  set_static_axis(data, op.axis());
  data.set("sizes", c.in(op.sizes_input()));
  data.set("count", str(op.len_splits()));
  data.set("rank", str(c.in_var(0).ndim()));
  data.set("ctype", ctype(c.in_var(0).dtype()));
  return render_shape_op("split", data);
}

}  // namespace

std::string emit_split(const NodeEmitContext& c) { return split_code(c, false, false); }
std::string emit_device_split(const NodeEmitContext& c) { return split_code(c, true, false); }
std::string emit_split_lengths(const NodeEmitContext& c) { return split_code(c, false, true); }

std::string emit_arange(const NodeEmitContext& c, const std::string& device_fill) {
  const DType dt = c.out_var(0).dtype();
  bool discrete = true;
  for (int i = 0; i < 3; ++i) discrete = discrete && is_discrete(c.in_var(i).dtype());
  TemplateData data = c.base_data();
  data.set("discrete", discrete);
  data.set("bool_out", dt == DType::Bool);
  data.set("integral_out", is_integer(dt));
  data.set("float_out", is_float(dt));
  data.set("ctype", ctype(dt));
  data.set("device", !device_fill.empty());
  data.set("device_fill", device_fill);
  return render_shape_op("arange", data);
}

std::string emit_eye_like(const NodeEmitContext& c, const std::string& device_fill) {
  const auto& op = static_cast<const EyeLike&>(c.node().op());
  TemplateData data = c.base_data();
  data.set("eye", op.kind() == EyeLike::Kind::Eye);
  data.set("tri", op.kind() == EyeLike::Kind::Tri);
  data.set("ctype", ctype(op.dtype()));
  data.set("device", !device_fill.empty());
  data.set("device_fill", device_fill);
  return render_shape_op("eye", data);
}

std::string emit_extract_diag(const NodeEmitContext& c) {
  const auto& op = static_cast<const ExtractDiag&>(c.node().op());
  const int rank = c.in_var(0).ndim();
  const std::int64_t offset = op.offset();
  const std::string s1 = c.in(0) + ".strides[" + str(op.axis1()) + "]";
  const std::string s2 = c.in(0) + ".strides[" + str(op.axis2()) + "]";
  TemplateData data = c.base_data();
  TemplateData kept = new_list();
  int k = 0;
  for (int d = 0; d < rank; ++d) {
    if (d == op.axis1() || d == op.axis2()) continue;
    TemplateData item;
    item.set("k", str(k++));
    item.set("d", str(d));
    kept.push_back(item);
  }
  data.set("kept", kept);
  data.set("last", str(k));
  data.set("axis1", str(op.axis1()));
  data.set("axis2", str(op.axis2()));
  // NumPy's length: clip(dim2 - offset, 0, dim1) above the main diagonal, clip(dim1 + offset,
  // 0, dim2) below it, min(dim1, dim2) on it.
  if (offset > 0) {
    data.set("length", "dim2 - " + int64_literal(offset));
    data.set("bound", "dim1");
    data.set("start", int64_literal(offset) + " * " + s2);
  } else if (offset < 0) {
    data.set("length", "dim1 + " + int64_literal(offset));
    data.set("bound", "dim2");
    data.set("start", "-" + int64_literal(offset) + " * " + s1);
  } else {
    data.set("length", "dim1");
    data.set("bound", "dim2");
    data.set("start", "0");
  }
  return render_shape_op("extract_diag", data);
}

namespace {

std::string alloc_diag_code(const NodeEmitContext& c, const std::string& device_template) {
  const auto& op = static_cast<const AllocDiag&>(c.node().op());
  const int in_rank = c.in_var(0).ndim();
  const std::int64_t offset = op.offset();
  TemplateData data = c.base_data();
  TemplateData dims = new_list(), moves = new_list();
  int next = 0;
  for (int d = 0; d <= in_rank; ++d) {
    const bool diag_axis = d == op.axis1() || d == op.axis2();
    TemplateData dim;
    dim.set("k", str(d));
    dim.set("len", diag_axis ? std::string("m") : c.in(0) + ".shape[" + str(next) + "]");
    dims.push_back(dim);
    if (diag_axis) continue;
    TemplateData move;  // input axis `next` runs along output axis d
    move.set("j", str(next++));
    move.set("k", str(d));
    moves.push_back(move);
  }
  data.set("dims", dims);
  data.set("moves", moves);
  data.set("in_rank", str(in_rank));
  data.set("last_in", str(in_rank - 1));
  data.set("axis1", str(op.axis1()));
  data.set("axis2", str(op.axis2()));
  data.set("offset", str(offset));
  data.set("abs_offset", offset < 0 ? "-" + int64_literal(offset) : int64_literal(offset));
  data.set("row0", offset < 0 ? "-" + int64_literal(offset) : std::string("0"));
  data.set("col0", offset > 0 ? int64_literal(offset) : std::string("0"));
  data.set("ctype", ctype(c.in_var(0).dtype()));
  data.set("device", !device_template.empty());
  if (!device_template.empty()) data.set("device_fill", render_template(device_template, data));
  return render_shape_op("alloc_diag", data);
}

}  // namespace

std::string emit_alloc_diag(const NodeEmitContext& c) { return alloc_diag_code(c, ""); }
std::string emit_device_alloc_diag(const NodeEmitContext& c, const std::string& device_template) {
  return alloc_diag_code(c, device_template);
}

std::string emit_pass_through(const NodeEmitContext& c) {
  return render_template("templates/cpp/ops/shape_ops_pass_through.mustache", c.base_data());
}

std::string emit_check_and_raise(const NodeEmitContext& c) {
  const auto& op = static_cast<const CheckAndRaise&>(c.node().op());
  const std::string message = op.exc_type() + (op.msg().empty() ? "" : ": " + op.msg());
  TemplateData data = c.base_data();
  TemplateData conds = new_list();
  for (int i = 1; i < c.node().num_inputs(); ++i) {
    const int rank = c.in_var(i).ndim();
    TemplateData item;
    item.set("index", str(i));
    item.set("name", c.in(i));
    item.set("rank", str(rank));
    item.set("rank_or_1", str(rank > 0 ? rank : 1));
    item.set("ctype", ctype(c.in_var(i).dtype()));
    item.set("message", c_string_literal(message));
    conds.push_back(item);
  }
  data.set("conds", conds);
  data.set("rank", str(c.in_var(0).ndim()));
  return render_shape_op("check", data);
}

}  // namespace kiln
