// Indexing: Subtensor (a view: resolved slices give the output's data pointer, shape and
// strides), IncSubtensor (a copy of x, then the indexed region incremented by or set to the
// broadcast value), AdvancedSubtensor1 (a gather of rows) and AdvancedIncSubtensor1 (a copy,
// then a scatter of rows in index order; emit_row_scatter, which AdvancedIncSubtensor's
// integer-vector form shares).
#include <cstdint>
#include <optional>

#include "codegen/c_names.h"
#include "codegen/cpp/emitters.h"
#include "ir/error.h"
#include "ops/advanced_subtensor.h"
#include "ops/array_util.h"
#include "ops/scalar/scalar_op.h"
#include "ops/subtensor.h"

namespace kiln {

std::string update_expr(DType x, DType y, bool set) {
  const std::string xt = ctype(x);
  if (set) return x == y ? "b" : "kiln_scalar::convert<" + xt + ">(b)";
  const DType w = upcast(x, y);
  auto as_w = [&](DType dt, const std::string& v) {
    return dt == w ? v : "kiln_scalar::convert<" + ctype(w) + ">(" + v + ")";
  };
  std::string sum = is_float(w) ? as_w(x, "a") + " + " + as_w(y, "b")
                                : "kiln_scalar::wrap_add(" + as_w(x, "a") + ", " + as_w(y, "b") + ")";
  return w == x ? sum : "kiln_scalar::convert<" + xt + ">(" + sum + ")";
}

namespace {

/// The value of a constant 0-d integer input as an int64 literal, if it has one.
std::optional<std::int64_t> constant_index(const NodeEmitContext& c, int i) {
  if (!c.input_is_constant(i)) return std::nullopt;
  try {
    return scalar_to_int64(c.in_var(i).value());
  } catch (const RuntimeFailure&) {
    return std::nullopt;  // a uint64 beyond int64: read (and refused) at run time
  }
}


std::string int_literal(std::int64_t v) {
  if (v == INT64_MIN) return "INT64_MIN";
  return std::to_string(v) + (v > INT32_MAX || v < INT32_MIN ? "LL" : "");
}

/// How a basic index resolves against x (input `x_input`), with the integer inputs from
/// `first_int` on: the code that reads and checks it, and per dimension of the result the
/// source dimension, its length and its step factor.
struct ResolvedIndex {
  std::string code;  ///< defines at<d> (integer entries) and sl<d> (slices), or fails
  struct Kept {
    int d;              ///< dimension of x
    std::string shape;  ///< its length in the result
    std::string step;   ///< "" or " * sl<d>.step" (multiplies x's stride)
  };
  std::vector<Kept> kept;
  std::vector<std::pair<std::string, int>> offsets;  ///< (first element, dimension of x)

  /// The element offset of the first element for a tensor `base` with x's shape ("" if 0).
  std::string offset(const std::string& base) const {
    std::string s;
    for (const auto& [start, d] : offsets)
      s += (s.empty() ? "" : " + ") + start + " * " + base + ".strides[" + std::to_string(d) + "]";
    return s;
  }
};

ResolvedIndex resolve_index(const NodeEmitContext& c, const BasicIndex& index, int x_input, int first_int) {
  ResolvedIndex r;
  const std::string x = c.in(x_input);
  TemplateData data;
  data.set("x", x);

  TemplateData ints{TemplateData::type::list};
  for (int k = 0; k < index.num_inputs(); ++k) {
    const int i = first_int + k;
    TemplateData item;
    item.set("k", std::to_string(k));
    item.set("name", c.in(i));
    const auto literal = constant_index(c, i);
    item.set("literal", literal.has_value());
    item.set("value", literal ? int_literal(*literal) : std::string());
    item.set("read", !literal);
    ints.push_back(item);
  }
  data.set("ints", ints);

  TemplateData entries{TemplateData::type::list};
  int next = 0;
  const int nd = c.in_var(x_input).ndim();
  const auto& list = index.entries();
  for (int d = 0; d < nd; ++d) {
    const std::string ds = std::to_string(d);
    if (d >= static_cast<int>(list.size())) {
      r.kept.push_back({d, x + ".shape[" + ds + "]", ""});
      continue;
    }
    const IndexEntry& e = list[static_cast<std::size_t>(d)];
    TemplateData entry;
    entry.set("d", ds);
    if (!e.is_slice) {
      TemplateData integer;
      integer.set("index", "ix" + std::to_string(next++));
      entry.set("integer", integer);
      entry.set("slice", false);
      r.offsets.push_back({"at" + ds, d});
    } else {
      auto part = [&](bool present) {
        return present ? "true, ix" + std::to_string(next++) : std::string("false, 0");
      };
      TemplateData slice;
      slice.set("start", part(e.has_start));
      slice.set("stop", part(e.has_stop));
      slice.set("step", part(e.has_step));
      entry.set("integer", false);
      entry.set("slice", slice);
      r.kept.push_back({d, "sl" + ds + ".count", e.has_step ? " * sl" + ds + ".step" : ""});
      if (e.has_start || e.has_step) r.offsets.push_back({"sl" + ds + ".start", d});
    }
    entries.push_back(entry);
  }
  data.set("entries", entries);
  r.code = render_op_template("subtensor_index", data);
  return r;
}

TemplateData kept_list(const ResolvedIndex& r) {
  TemplateData kept{TemplateData::type::list};
  for (std::size_t k = 0; k < r.kept.size(); ++k) {
    TemplateData item;
    item.set("k", std::to_string(k));
    item.set("d", std::to_string(r.kept[k].d));
    item.set("shape", r.kept[k].shape);
    item.set("step", r.kept[k].step);
    kept.push_back(item);
  }
  return kept;
}

/// The product of x's lengths after the first (elements per row), as C++.
std::string row_size(const std::string& x, int rank) {
  std::string s;
  for (int d = 1; d < rank; ++d) s += (s.empty() ? "" : " * ") + x + ".shape[" + std::to_string(d) + "]";
  return s.empty() ? "1" : s;
}

}  // namespace

std::string emit_subtensor(const NodeEmitContext& c) {
  const auto& op = static_cast<const Subtensor&>(c.node().op());
  ResolvedIndex r = resolve_index(c, op.index(), 0, 1);
  TemplateData data = c.base_data();
  data.set("resolve", r.code);
  data.set("kept", kept_list(r));
  const std::string offset = r.offset(c.in(0));
  data.set("has_offset", !offset.empty());
  data.set("offset", offset);
  return render_op_template("subtensor", data);
}

std::string emit_inc_subtensor(const NodeEmitContext& c) { return render_op_template("subtensor_inc", inc_subtensor_data(c)); }

TemplateData inc_subtensor_data(const NodeEmitContext& c) {
  const auto& op = static_cast<const IncSubtensor&>(c.node().op());
  ResolvedIndex r = resolve_index(c, op.index(), 0, 2);
  const Variable& x = c.in_var(0);
  const Variable& y = c.in_var(1);
  const int rank = static_cast<int>(r.kept.size());
  TemplateData data = c.base_data();
  data.set("resolve", r.code);
  data.set("kept", kept_list(r));
  const std::string offset = r.offset(c.out(0));
  data.set("has_offset", !offset.empty());
  data.set("offset", offset);
  data.set("xtype", ctype(x.dtype()));
  data.set("ytype", ctype(y.dtype()));
  data.set("xrank", std::to_string(x.ndim()));
  data.set("yrank", std::to_string(y.ndim()));
  data.set("rank", std::to_string(rank));
  data.set("rank_or_1", std::to_string(rank > 0 ? rank : 1));
  data.set("outer", std::to_string(rank > 0 ? rank - 1 : 0));
  data.set("outer_or_1", std::to_string(rank > 1 ? rank - 1 : 1));
  data.set("last", std::to_string(rank > 0 ? rank - 1 : 0));
  data.set("scalar_region", rank == 0);
  data.set("update", update_expr(x.dtype(), y.dtype(), op.set_instead_of_inc()));
  return data;
}

std::string emit_advanced_subtensor1(const NodeEmitContext& c) {
  const Variable& x = c.in_var(0);
  const int rank = x.ndim();
  TemplateData data = c.base_data();
  data.set("idx", c.in(1));
  data.set("ctype", ctype(x.dtype()));
  data.set("itype", ctype(c.in_var(1).dtype()));
  data.set("rank", std::to_string(rank));
  data.set("inner", std::to_string(rank - 1));
  data.set("inner_or_1", std::to_string(rank > 1 ? rank - 1 : 1));
  data.set("row_size", row_size(c.in(0), rank));
  return render_op_template("subtensor_take", data);
}

std::string emit_advanced_inc_subtensor1(const NodeEmitContext& c) {
  const auto& op = static_cast<const AdvancedIncSubtensor1&>(c.node().op());
  return emit_row_scatter(c, "AdvancedIncSubtensor1", op.set_instead_of_inc(), op.ignore_duplicates());
}

std::string emit_row_scatter(const NodeEmitContext& c, const std::string& op_name, bool set, bool ignore_duplicates) {
  const Variable& x = c.in_var(0);
  const Variable& y = c.in_var(1);
  const int rank = x.ndim();
  const bool from_x = !set && ignore_duplicates;  // NumPy's x[idx] += y reads x's rows
  TemplateData data = c.base_data();
  data.set("y", c.in(1));
  data.set("idx", c.in(2));
  data.set("xtype", ctype(x.dtype()));
  data.set("ytype", ctype(y.dtype()));
  data.set("itype", ctype(c.in_var(2).dtype()));
  data.set("rank", std::to_string(rank));
  data.set("yrank", std::to_string(y.ndim()));
  data.set("inner", std::to_string(rank - 1));
  data.set("inner_or_1", std::to_string(rank > 1 ? rank - 1 : 1));
  data.set("row_size", row_size(c.in(0), rank));
  data.set("from_x", from_x);
  data.set("src_row", from_x ? c.in(0) + ".data + j * " + c.in(0) + ".strides[0]" : std::string("dst"));
  data.set("src_stride", (from_x ? c.in(0) : c.out(0)) + ".strides[d + 1]");
  data.set("order_note", set || from_x ? std::string("the last write wins")
                                       : std::string("the increments accumulate (np.add.at)"));
  data.set("update", update_expr(x.dtype(), y.dtype(), set));
  data.set("shape_checks", emit_row_scatter_checks(c, op_name));
  return render_op_template("subtensor_inc_take", data);
}

std::string emit_row_scatter_checks(const NodeEmitContext& c, const std::string& op_name) {
  const Variable& x = c.in_var(0);
  const Variable& y = c.in_var(1);
  const int rank = x.ndim();
  TemplateData data;
  data.set("y", c.in(1));
  data.set("rank", std::to_string(rank));
  data.set("yrank", std::to_string(y.ndim()));
  data.set("numpy_value_message", op_name == "AdvancedIncSubtensor");
  // PyTensor refuses to broadcast a length-1 dimension of y that is not statically 1.
  std::string refused;
  const int off = rank - y.ndim();
  for (int d = 0; d < y.ndim(); ++d) {
    if (y.shape()[static_cast<std::size_t>(d)] == 1) continue;
    refused += std::string(refused.empty() ? "" : " ||\n    ") + "(" + c.in(1) + ".shape[" + std::to_string(d) +
               "] == 1 && target[" + std::to_string(off + d) + "] != 1)";
  }
  TemplateData checks{TemplateData::type::list};
  if (!refused.empty()) {
    TemplateData item;
    item.set("condition", refused);
    item.set("message",
             c_string_literal("Runtime broadcasting not allowed. " + op_name +
                              " was asked to broadcast the second input (y) along a dimension that was not marked "
                              "as broadcastable. If broadcasting was intended, use `specify_broadcastable` on the "
                              "relevant dimension(s)."));
    checks.push_back(item);
  }
  data.set("runtime_broadcast", checks);
  return render_op_template("subtensor_inc_take_checks", data);
}

}  // namespace kiln
