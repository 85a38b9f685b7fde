// AdvancedSubtensor and AdvancedIncSubtensor (NumPy's advanced indexing in full). A single
// integer vector on axis 0 (PyTensor 3's idx_list=(0,)) uses the row gather and scatter of
// AdvancedSubtensor1/AdvancedIncSubtensor1; everything else renders advanced_gather /
// advanced_update: the index checks and the region's shape (advanced_resolve), then three
// nested walks — basic dimensions before the block, the block of broadcast index operands,
// basic dimensions after it — with the masks' true elements walked by a cursor, so no
// coordinate array is ever stored.
#include <functional>
#include <string>
#include <vector>

#include "codegen/cpp/emitters.h"
#include "ops/advanced_subtensor.h"

namespace kiln {

namespace {

using Part = AdvancedLayout::Part;

/// What the gather and update templates share: the resolve code, the operand lists and the
/// pieces of the region's walks, for x at input `x_input` and the index inputs from `first`.
struct AdvancedCode {
  TemplateData data;
  std::vector<std::string> outer_lengths, inner_lengths;
  struct BasicDim {
    int region_dim;
    int x_dim;  ///< -1 for a newaxis
  };
  std::vector<BasicDim> outer, inner;
  std::vector<int> slice_dims;  ///< x dimensions indexed by a slice that has a start or step

  /// Steps of the outer/inner walks for a tensor `t` laid out like x.
  std::string steps(const std::vector<BasicDim>& dims, const std::string& t) const {
    std::vector<std::string> s;
    for (const BasicDim& b : dims)
      s.push_back(b.x_dim < 0 ? "0" : "sl" + str(b.x_dim) + ".step * " + t + ".strides[" + str(b.x_dim) + "]");
    return s.empty() ? "0" : join(s);
  }
  /// Steps of the walks over a region-shaped operand with strides `rs`.
  static std::string region_steps(const std::vector<BasicDim>& dims, const std::string& rs) {
    std::vector<std::string> s;
    for (const BasicDim& b : dims) s.push_back(rs + "[" + str(b.region_dim) + "]");
    return s.empty() ? "0" : join(s);
  }
  /// The offset of the first selected element in a tensor `t` laid out like x.
  std::string base(const std::string& t) const {
    std::vector<std::string> s;
    for (int d : slice_dims)
      s.push_back("(sl" + str(d) + ".count > 0 ? sl" + str(d) + ".start * " + t + ".strides[" + str(d) + "] : 0)");
    return s.empty() ? "0" : join(s, " + ");
  }
};

AdvancedCode advanced_code(const NodeEmitContext& c, const AdvancedLayout& lay, int x_input, int first,
                           bool device = false) {
  AdvancedCode code;
  TemplateData& data = code.data;
  const std::string x = c.in(x_input);
  data.set("x", x);
  // Index operands: arrays and masks, numbered in the order of their parts.
  TemplateData arrays{TemplateData::type::list}, masks{TemplateData::type::list};
  int slot = 0;
  for (int a : lay.advanced) {
    const Part& p = lay.parts[static_cast<std::size_t>(a)];
    TemplateData item;
    item.set("x", x);
    item.set("name", c.in(first + p.input));
    item.set("rank", str(p.ndim));
    item.set("d", str(p.x_dim));
    item.set("slot", str(slot++));
    item.set("unsigned_index", c.in_var(first + p.input).dtype() == DType::UInt64 ? "true" : "false");
    if (p.kind == Part::Kind::Array) {
      arrays.push_back(item);
      continue;
    }
    std::vector<std::string> xc, oc;
    for (int j = 0; j < p.ndim; ++j) {
      xc.push_back("c[" + str(j) + "] * " + x + ".strides[" + str(p.x_dim + j) + "]");
      oc.push_back("c[" + str(j) + "] * " + c.out(0) + ".strides[" + str(p.x_dim + j) + "]");
    }
    item.set("x_coords", join(xc, " + "));
    item.set("out_coords", join(oc, " + "));
    masks.push_back(item);
  }
  const int nops = slot;
  data.set("arrays", arrays);
  // A device backend checks index values in kernels of its own (they are not on the host).
  data.set("checked_arrays", device ? TemplateData{TemplateData::type::list} : arrays);
  data.set("masks", masks);
  // ... and counts a mask's true elements on the device too (templates/gpu/host/advanced_checks).
  data.set("host_masks", device ? TemplateData{TemplateData::type::list} : masks);
  data.set("count", str(nops));
  data.set("nops_or_1", str(nops > 0 ? nops : 1));
  data.set("nops_y", str(nops + 1));
  data.set("y_slot", str(nops));
  data.set("nb", str(lay.block_ndim));
  data.set("nb_or_1", str(lay.block_ndim > 0 ? lay.block_ndim : 1));
  data.set("block_pos", str(lay.block_pos));

  // Slices and the region: basic dimensions around the block.
  TemplateData slices{TemplateData::type::list}, region{TemplateData::type::list};
  int r = 0;
  auto add_region = [&](const std::string& length) {
    TemplateData item;
    item.set("r", str(r++));
    item.set("length", length);
    region.push_back(item);
  };
  for (std::size_t b = 0; b <= lay.basic.size(); ++b) {
    if (static_cast<int>(b) == lay.block_pos)
      for (int d = 0; d < lay.block_ndim; ++d) add_region("block[" + str(d) + "]");
    if (b == lay.basic.size()) break;
    const Part& p = lay.parts[static_cast<std::size_t>(lay.basic[b])];
    AdvancedCode::BasicDim dim{r, p.kind == Part::Kind::NewAxis ? -1 : p.x_dim};
    (static_cast<int>(b) < lay.block_pos ? code.outer : code.inner).push_back(dim);
    if (p.kind == Part::Kind::NewAxis) {
      add_region("1");
      continue;
    }
    const std::string d = str(p.x_dim);
    TemplateData slice;
    slice.set("x", x);
    slice.set("d", d);
    TemplateData parts{TemplateData::type::list};
    const char* flags[3] = {"has_start", "has_stop", "has_step"};
    for (int k = 0; k < 3; ++k) {
      slice.set(flags[k], p.slice_inputs[static_cast<std::size_t>(k)] >= 0 ? "true" : "false");
      if (p.slice_inputs[static_cast<std::size_t>(k)] < 0) continue;
      TemplateData part;
      part.set("name", c.in(first + p.slice_inputs[static_cast<std::size_t>(k)]));
      part.set("p", str(k));
      parts.push_back(part);
    }
    slice.set("parts", parts);
    slices.push_back(slice);
    if (p.slice_inputs[0] >= 0 || p.slice_inputs[2] >= 0) code.slice_dims.push_back(p.x_dim);
    add_region("sl" + d + ".count");
  }
  data.set("slices", slices);
  data.set("region", region);
  const int rank = lay.out_ndim();
  data.set("rank", str(rank));
  data.set("rank_or_1", str(rank > 0 ? rank : 1));
  auto lengths = [](const std::vector<AdvancedCode::BasicDim>& dims) {
    std::vector<std::string> s;
    for (const auto& b : dims) s.push_back("region[" + str(b.region_dim) + "]");
    return s.empty() ? std::string("0") : join(s);
  };
  data.set("no", str(code.outer.size()));
  data.set("no_or_1", str(code.outer.empty() ? 1 : code.outer.size()));
  data.set("ni", str(code.inner.size()));
  data.set("ni_or_1", str(code.inner.empty() ? 1 : code.inner.size()));
  data.set("outer_lengths", lengths(code.outer));
  data.set("inner_lengths", lengths(code.inner));
  data.set("resolve", render_op_template("advanced_resolve", data));
  return code;
}

}  // namespace

bool is_row_index(const AdvancedIndex& index, const AdvancedLayout& lay) {
  return index.entries().size() == 1 && lay.take_axis() == 0 &&
         lay.parts[static_cast<std::size_t>(lay.advanced[0])].ndim == 1;
}

std::string emit_advanced_subtensor(const NodeEmitContext& c) {
  const auto& op = static_cast<const AdvancedSubtensor&>(c.node().op());
  const AdvancedLayout lay = op.layout(c.node());
  if (is_row_index(op.index(), lay)) return emit_advanced_subtensor1(c);
  AdvancedCode code = advanced_code(c, lay, 0, 1);
  TemplateData data = c.base_data();
  for (const char* key : {"resolve", "arrays", "masks", "x", "rank", "no", "no_or_1", "ni", "ni_or_1", "nb",
                          "nb_or_1", "nops_or_1", "outer_lengths", "inner_lengths"})
    data.set(key, *code.data.get(key));
  data.set("ctype", ctype(c.in_var(0).dtype()));
  data.set("base", code.base(c.in(0)));
  data.set("outer_steps", code.steps(code.outer, c.in(0)));
  data.set("inner_steps", code.steps(code.inner, c.in(0)));
  return render_op_template("advanced_gather", data);
}

std::string emit_advanced_inc_subtensor(const NodeEmitContext& c) {
  const auto& op = static_cast<const AdvancedIncSubtensor&>(c.node().op());
  const AdvancedLayout lay = op.layout(c.node());
  const bool set = op.set_instead_of_inc();
  if (is_row_index(op.index(), lay))
    return emit_row_scatter(c, "AdvancedIncSubtensor", set, op.ignore_duplicates());
  AdvancedCode code = advanced_code(c, lay, 0, 2);
  TemplateData data = c.base_data();
  for (const char* key : {"resolve", "arrays", "masks", "x", "rank", "rank_or_1", "no", "no_or_1", "ni", "ni_or_1",
                          "nb", "nb_or_1", "nops_y", "y_slot", "block_pos", "outer_lengths", "inner_lengths"})
    data.set(key, *code.data.get(key));
  const Variable& x = c.in_var(0);
  const Variable& y = c.in_var(1);
  const std::string xs = c.in(0), os = c.out(0);
  const bool from_x = !set && op.ignore_duplicates();  // NumPy's x[index] += y reads x
  data.set("y", c.in(1));
  data.set("xtype", ctype(x.dtype()));
  data.set("ytype", ctype(y.dtype()));
  data.set("xrank", str(x.ndim()));
  data.set("yrank", str(y.ndim()));
  data.set("x_base", code.base(xs));
  data.set("out_base", code.base(os));
  data.set("outer_x_steps", code.steps(code.outer, xs));
  data.set("outer_out_steps", code.steps(code.outer, os));
  data.set("outer_y_steps", AdvancedCode::region_steps(code.outer, "ys"));
  data.set("inner_x_steps", code.steps(code.inner, xs));
  data.set("inner_out_steps", code.steps(code.inner, os));
  data.set("inner_y_steps", AdvancedCode::region_steps(code.inner, "ys"));
  data.set("a_source", from_x ? "xp[xo + oi[0]]" : "q[qo + oi[1]]");
  data.set("order_note", set || from_x ? std::string("the last write wins")
                                       : std::string("the increments accumulate (np.add.at)"));
  data.set("update", update_expr(x.dtype(), y.dtype(), set));
  data.set("fits", render_op_template("advanced_fits", data));
  return render_op_template("advanced_update", data);
}

namespace {

// What the device forms of the gather and the update share: the resolution (index values
// unchecked: kernels check them), the check kernels' launches, the index operands' strides over
// the block placed at the block's region dimensions, and `x.data + base`.
TemplateData device_advanced_data(const NodeEmitContext& c, const AdvancedCode& code, const AdvancedLayout& lay,
                                  const std::string& name, const std::function<std::string(const std::string&)>& ref) {
  TemplateData data = c.base_data();
  for (const char* key : {"resolve", "masks", "x", "rank", "rank_or_1", "nb", "nb_or_1", "nops_or_1", "block_pos"})
    data.set(key, *code.data.get(key));
  data.set("out_rank", *code.data.get("rank"));
  TemplateData arrays{TemplateData::type::list};
  for (const auto& item : code.data.get("arrays")->list_value()) {
    TemplateData a = item;
    const std::string slot = item.get("slot")->string_value();
    a.set("check_kernel", ref(name + "_check" + slot));
    a.set("out_rank", *code.data.get("rank"));
    a.set("nb", *code.data.get("nb"));
    a.set("block_pos", *code.data.get("block_pos"));
    arrays.push_back(a);
  }
  data.set("arrays", arrays);
  // Masks: the true elements' coordinates (one int64 vector per dimension the mask covers) are
  // written by Nonzero's kernels into the node's workspace, then index like arrays along the
  // block's last dimension.
  TemplateData masks{TemplateData::type::list};
  for (const auto& item : code.data.get("masks")->list_value()) {
    TemplateData m = item;
    const std::string slot = item.get("slot")->string_value();
    const int rank = std::stoi(item.get("rank")->string_value()), d = std::stoi(item.get("d")->string_value());
    for (const char* k : {"count", "offsets", "write"}) m.set(std::string(k) + "_kernel", ref(name + "_mask" + slot + "_" + k));
    m.set("scratch", str(c.scratch_slot()));
    m.set("out_rank", *code.data.get("rank"));
    m.set("nb", *code.data.get("nb"));
    m.set("block_pos", *code.data.get("block_pos"));
    TemplateData coords{TemplateData::type::list};
    std::string outs;
    for (int j = 0; j < rank; ++j) {
      TemplateData cj;
      cj.set("j", str(j));
      cj.set("xd", str(d + j));
      coords.push_back(cj);
      outs += ", coords" + slot + " + " + str(j) + " * size" + slot;
    }
    m.set("coords", coords);
    m.set("coord_outputs", outs);
    masks.push_back(m);
  }
  data.set("mask_items", masks);
  data.set("checks", render_template("templates/gpu/host/advanced_checks.mustache", data));
  (void)lay;
  return data;
}

// `r = expression` items for the x (or out) step of each basic region dimension.
TemplateData basic_steps(const AdvancedCode& code, const std::string& x, const std::string& out,
                         const std::string& ys) {
  TemplateData steps{TemplateData::type::list};
  int k = 0;
  for (const auto* dims : {&code.outer, &code.inner})
    for (const AdvancedCode::BasicDim& b : *dims) {
      TemplateData item;
      item.set("r", str(b.region_dim));
      item.set("k", str(k++));
      const std::string d = str(b.x_dim);
      item.set("x_step", b.x_dim < 0 ? "0" : "sl" + d + ".step * " + x + ".strides[" + d + "]");
      item.set("out_step", b.x_dim < 0 || out.empty() ? "0" : "sl" + d + ".step * " + out + ".strides[" + d + "]");
      item.set("y_step", ys.empty() ? "0" : ys + "[" + str(b.region_dim) + "]");
      steps.push_back(item);
    }
  return steps;
}

}  // namespace

std::string emit_device_advanced_gather(const NodeEmitContext& c, const std::function<std::string(const std::string&)>& ref) {
  const auto& op = static_cast<const AdvancedSubtensor&>(c.node().op());
  const AdvancedLayout lay = op.layout(c.node());
  AdvancedCode code = advanced_code(c, lay, 0, 1, true);
  TemplateData data = device_advanced_data(c, code, lay, c.kernel_name(), ref);
  data.set("base", code.base(c.in(0)));
  data.set("steps", basic_steps(code, c.in(0), "", ""));
  data.set("take_kernel", ref(c.kernel_name() + "_take"));
  return render_template("templates/gpu/host/advanced_take.mustache", data);
}

std::string emit_device_advanced_update(const NodeEmitContext& c, const std::function<std::string(const std::string&)>& ref) {
  const auto& op = static_cast<const AdvancedIncSubtensor&>(c.node().op());
  const AdvancedLayout lay = op.layout(c.node());
  AdvancedCode code = advanced_code(c, lay, 0, 2, true);
  TemplateData data = device_advanced_data(c, code, lay, c.kernel_name(), ref);
  const std::string xs = c.in(0), os = c.out(0);
  data.set("y", c.in(1));
  data.set("xrank", str(c.in_var(0).ndim()));
  data.set("yrank", str(c.in_var(1).ndim()));
  data.set("fits", render_op_template("advanced_fits", data));
  data.set("x_base", code.base(xs));
  data.set("out_base", code.base(os));
  data.set("steps", basic_steps(code, xs, os, "ys"));
  data.set("basic", str(code.outer.size() + code.inner.size()));
  data.set("scatter_kernel", ref(c.kernel_name() + "_scatter"));
  return render_template("templates/gpu/host/advanced_update.mustache", data);
}

}  // namespace kiln
