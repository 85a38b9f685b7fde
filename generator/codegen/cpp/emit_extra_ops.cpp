// SortOp and ArgSortOp, Repeat, BroadcastTo (a view), SearchsortedOp, Nonzero, Unique,
// FillDiagonal and FillDiagonalOffset (templates/cpp/ops/extra_*.mustache). Nonzero and
// Unique learn their output lengths from the data (Nonzero counts first; Unique sorts into
// scratch memory of its own, then allocates); sorting is std::stable_sort in NumPy's order.
#include <string>
#include <vector>

#include "codegen/cpp/emitters.h"
#include "ops/extra_ops.h"
#include "ops/scalar/scalar_op.h"
#include "ops/unique.h"

namespace kiln {

namespace {

std::string render_extra(const std::string& name, const TemplateData& data) {
  return render_op_template("extra_" + name, data);
}

// The items joined with ", ", or "0" when there are none (an array initialiser never empty).
std::string join_or_zero(const std::vector<std::string>& items) {
  std::string s;
  for (std::size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i];
  return s.empty() ? "0" : s;
}

}  // namespace

std::string emit_sort(const NodeEmitContext& c) {
  TemplateData data = c.base_data();
  const bool arg = c.node().op().name() == "ArgSortOp";
  data.set("rank", str(c.in_var(0).ndim()));
  data.set("ctype", ctype(c.in_var(0).dtype()));
  data.set("otype", ctype(c.out_var(0).dtype()));
  data.set("sort", !arg);
  data.set("argsort", arg);
  return render_extra("sort", data);
}

namespace {

std::string repeat_code(const NodeEmitContext& c, const std::string& kernel_ref) {
  const auto& op = static_cast<const Repeat&>(c.node().op());
  const int rank = c.in_var(0).ndim();
  const int axis = op.normalized_axis(rank);
  const bool scalar_repeats = c.in_var(1).ndim() == 0;
  TemplateData data = c.base_data();
  data.set("rank", str(rank));
  data.set("rank_or_1", str(rank > 0 ? rank : 1));
  data.set("axis", str(axis));
  data.set("slice_rank", str(rank - 1));
  data.set("slice_rank_or_1", str(rank > 1 ? rank - 1 : 1));
  data.set("ctype", ctype(c.in_var(0).dtype()));
  data.set("by_axis", op.axis().has_value());
  data.set("flat", !op.axis().has_value());
  data.set("n_expr", op.axis() ? c.in(0) + ".shape[" + str(axis) + "]" : c.in(0) + ".size()");
  data.set("rn_expr", scalar_repeats ? "1" : c.in(1) + ".shape[0]");
  data.set("r_index", scalar_repeats ? "0" : "i * " + c.in(1) + ".strides[0]");
  data.set("device", !kernel_ref.empty());
  data.set("kernel_ref", kernel_ref);
  if (!kernel_ref.empty()) data.set("scratch", str(c.scratch_slot()));
  return render_extra("repeat", data);
}

std::string fill_diagonal_code(const NodeEmitContext& c, const std::string& kernel_ref) {
  TemplateData data = c.base_data();
  const bool offset = c.node().op().name() == "FillDiagonalOffset";
  data.set("rank", str(c.in_var(0).ndim()));
  data.set("ctype", ctype(c.in_var(0).dtype()));
  data.set("main", !offset);
  data.set("matrix", c.in_var(0).ndim() == 2);
  data.set("offset", offset);
  data.set("device", !kernel_ref.empty());
  data.set("kernel_ref", kernel_ref);
  return render_extra("fill_diagonal", data);
}

}  // namespace

std::string emit_repeat(const NodeEmitContext& c) { return repeat_code(c, ""); }
std::string emit_device_repeat(const NodeEmitContext& c, const std::string& kernel_ref) {
  return repeat_code(c, kernel_ref);
}

std::string emit_broadcast_to(const NodeEmitContext& c) {
  const int rank = c.out_var(0).ndim();
  const int arank = c.in_var(0).ndim();
  TemplateData data = c.base_data();
  TemplateData lengths{TemplateData::type::list};
  for (int d = 0; d < rank; ++d) {
    TemplateData item;
    item.set("d", str(d));
    item.set("name", c.in(d + 1));
    lengths.push_back(item);
  }
  data.set("lengths", lengths);
  data.set("rank", str(rank));
  data.set("arank", str(arank));
  data.set("offset", str(rank - arank));
  return render_extra("broadcast_to", data);
}

std::string emit_searchsorted(const NodeEmitContext& c) {
  const auto& op = static_cast<const SearchsortedOp&>(c.node().op());
  const int vrank = c.in_var(1).ndim();
  const DType common = upcast(c.in_var(0).dtype(), c.in_var(1).dtype());
  TemplateData data = c.base_data();
  TemplateData sorter{TemplateData::type::list};
  const bool has_sorter = c.node().num_inputs() == 3;
  if (has_sorter) {
    TemplateData item;
    item.set("name", c.in(2));
    sorter.push_back(item);
  }
  data.set("sorter", sorter);
  data.set("vrank", str(vrank));
  data.set("vrank_or_1", str(vrank > 0 ? vrank : 1));
  data.set("xtype", ctype(c.in_var(0).dtype()));
  data.set("wtype", ctype(common));
  data.set("position", has_sorter ? "static_cast<int64_t>(" + c.in(2) + ".data[k * " + c.in(2) + ".strides[0]])"
                                  : std::string("k"));
  // left: past every element before the value; right: past every element not after it.
  data.set("go_right", op.right() ? "!kg::sorts_before(value, at(mid))" : "kg::sorts_before(at(mid), value)");
  return render_extra("searchsorted", data);
}

std::string emit_nonzero(const NodeEmitContext& c) {
  TemplateData data = c.base_data();
  TemplateData outputs{TemplateData::type::list};
  for (int k = 0; k < c.node().num_outputs(); ++k) {
    TemplateData item;
    item.set("d", str(k));
    item.set("name", c.out(k));
    item.set("alloc", c.alloc(k));
    outputs.push_back(item);
  }
  data.set("outputs", outputs);
  data.set("rank", str(c.in_var(0).ndim()));
  return render_extra("nonzero", data);
}

std::string emit_unique(const NodeEmitContext& c) {
  const auto& op = static_cast<const Unique&>(c.node().op());
  const int rank = c.in_var(0).ndim();
  const std::string x = c.in(0), out = c.out(0);
  TemplateData data = c.base_data();
  data.set("rank", str(rank));
  data.set("rank_or_1", str(rank > 0 ? rank : 1));
  data.set("ctype", ctype(c.in_var(0).dtype()));
  data.set("by_axis", op.axis().has_value());
  std::vector<std::string> shape, x_strides, out_strides, others;
  if (op.axis()) {
    const int axis = static_cast<int>(*op.axis());
    data.set("axis", str(axis));
    shape.push_back(x + ".shape[" + str(axis) + "]");
    x_strides.push_back(x + ".strides[" + str(axis) + "]");
    out_strides.push_back(out + ".strides[" + str(axis) + "]");
    for (int d = 0; d < rank; ++d) {
      if (d == axis) continue;
      shape.push_back(x + ".shape[" + str(d) + "]");
      x_strides.push_back(x + ".strides[" + str(d) + "]");
      out_strides.push_back(out + ".strides[" + str(d) + "]");
      others.push_back(x + ".shape[" + str(d) + "]");
    }
    data.set("n_expr", x + ".shape[" + str(axis) + "]");
    std::string width;
    for (const auto& o : others) width += (width.empty() ? "" : " * ") + o;
    data.set("width_expr", width.empty() ? "1" : width);
  } else {
    for (int d = 0; d < rank; ++d) {
      shape.push_back(x + ".shape[" + str(d) + "]");
      x_strides.push_back(x + ".strides[" + str(d) + "]");
    }
    data.set("n_expr", x + ".size()");
    data.set("width_expr", "1");
  }
  data.set("moved_shape", join_or_zero(shape));
  data.set("moved_x_strides", join_or_zero(x_strides));
  data.set("moved_out_strides", join_or_zero(out_strides));
  int k = 1;
  auto extra = [&](bool wanted, const char* key) {
    TemplateData list{TemplateData::type::list};
    if (wanted) {
      TemplateData item;
      item.set("out", c.out(k));
      item.set("alloc", c.alloc(k));
      list.push_back(item);
      ++k;
    }
    data.set(key, list);
  };
  extra(op.return_index(), "index");
  extra(op.return_inverse(), "inverse");
  extra(op.return_counts(), "counts");
  return render_extra("unique", data);
}

std::string emit_fill_diagonal(const NodeEmitContext& c) { return fill_diagonal_code(c, ""); }
std::string emit_device_fill_diagonal(const NodeEmitContext& c, const std::string& kernel_ref) {
  return fill_diagonal_code(c, kernel_ref);
}

}  // namespace kiln
