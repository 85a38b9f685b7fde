// Nonzero and Unique on a GPU: ops whose output lengths depend on the data, so a call reads one
// number back (the one place it waits for the device). Both select elements in order with the
// same three kernels (templates/gpu/select.mustache): a count of the selected elements per
// chunk (a group tree), the chunks' first output positions (a scan of a few hundred totals in
// one work-item) and the total read by the host, then, once the outputs exist, each chunk's
// selected elements written in order (a local-memory scan of each tile's flags). Nonzero
// selects x's nonzero elements (NaN counts) and writes their coordinates; Unique first sorts
// its items (x's elements, or its slices along the axis, compared lexicographically) with the
// sort kernels (templates/gpu/sort.mustache: stable, NaN last, so the first of a group is its
// first occurrence), selects the first position of each run of equal items, and a last kernel
// writes the unique items, their first indices, each item's group and the groups' sizes.
#include "codegen/c_names.h"
#include "codegen/c_types.h"
#include "codegen/gpu/emitters.h"
#include "ir/error.h"
#include "ops/unique.h"

namespace kiln {

namespace {

void select_refuse_rank(const NodeEmitContext& c, const std::string& backend) {
  const int rank = c.in_var(0).ndim();
  if (rank > 6)
    throw NotImplementedError("`" + c.node().op().str() + "` of rank " + std::to_string(rank) + " has no " + backend +
                              " implementation: the selection kernels handle rank 6 at most");
}

// The selection kernels' data: names, the tree and the local arrays; the caller adds the flag,
// the write and the parameters.
TemplateData select_data(const GpuDialect& d, const std::string& name, const std::string& comment) {
  TemplateData k = d.data();
  k.set("name", name);
  k.set("comment", comment);
  k.set("totals_param", d.buffer_param("int64_t", "totals", false));
  k.set("totals_bind", d.buffer_bind("int64_t", "totals", false));
  k.set("local_acc", d.local_array("int64_t", "acc", 256));
  k.set("local_scan", d.local_array("int64_t", "sc", 256));
  k.set("tree", gpu_group_tree(d, name + "_add", "int64_t", "acc"));
  return k;
}

// `, const int64_t <p>0, ... <p>5` for each prefix, and the setup line of arrays `<p>[6]`.
std::string padded_params(const std::vector<std::string>& prefixes) {
  std::string out;
  for (const std::string& p : prefixes)
    for (int i = 0; i < 6; ++i) out += ", const int64_t " + p + std::to_string(i);
  return out;
}
std::string padded_setup(const std::vector<std::string>& prefixes) {
  std::string out = "  const int64_t ";
  for (std::size_t k = 0; k < prefixes.size(); ++k) {
    const std::string& p = prefixes[k];
    out += (k ? ", " : "") + p + "[6] = {";
    for (int i = 0; i < 6; ++i) out += (i ? ", " : "") + p + std::to_string(i);
    out += "}";
  }
  return out + ";";
}
std::string padded_args(const std::vector<std::string>& arrays) {
  std::string out;
  for (const std::string& a : arrays)
    for (int i = 0; i < 6; ++i) out += ", " + a + "[" + std::to_string(i) + "]";
  return out;
}

}  // namespace

std::string gpu_nonzero_kernels(const GpuDialect& d, const std::string& name, const std::string& comment,
                                const std::string& T, int rank) {
  TemplateData k = select_data(d, name, comment);
  k.set("flag_note", "x's element is nonzero; NaN is");
  k.set("in_params", d.buffer_param(T, "x", true));
  k.set("in_binds", "  " + d.buffer_bind(T, "x", true));
  k.set("scalar_params", padded_params({"xl", "xs"}));
  k.set("setup", padded_setup({"xl", "xs"}));
  std::string out_params, out_binds, emit = "        if (f) {\n          int64_t r = e, at[6];\n"
                                             "          for (int d = 5; d >= 0; --d) {\n            at[d] = r % xl[d];\n"
                                             "            r /= xl[d];\n          }\n";
  for (int i = 0; i < rank; ++i) {
    const std::string y = "y" + std::to_string(i);
    out_params += ", " + d.buffer_param("int64_t", y, false);
    out_binds += "  " + d.buffer_bind("int64_t", y, false) + "\n";
    emit += "          " + y + "[pos] = at[" + std::to_string(6 - rank + i) + "];\n";
  }
  k.set("out_params", out_params);
  k.set("out_binds", out_binds);
  k.set("emit", emit + "        }");
  k.set("flag", "        {\n          int64_t r = e, o = 0;\n          for (int d = 5; d >= 0; --d) {\n"
                "            o += (r % xl[d]) * xs[d];\n            r /= xl[d];\n          }\n          f = x[o] != 0;\n"
                "        }");
  return render_template("templates/gpu/select.mustache", k);
}

NodeCode gpu_emit_nonzero(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  select_refuse_rank(c, backend);
  const int rank = c.in_var(0).ndim();
  const std::string T = gpu_storage_type(c.in_var(0).dtype());
  TemplateData host = c.base_data();
  TemplateData outputs{TemplateData::type::list};
  for (int i = 0; i < c.node().num_outputs(); ++i) {
    TemplateData item;
    item.set("name", c.out(i));
    item.set("alloc", c.alloc(i));
    outputs.push_back(item);
  }
  host.set("outputs", outputs);
  host.set("rank", std::to_string(rank));
  host.set("scratch", std::to_string(c.scratch_slot()));
  host.set("dim_args", padded_args({"xl", "xs"}));
  host.set("count_kernel", d.kernel_ref(c.kernel_name() + "_count"));
  host.set("offsets_kernel", d.kernel_ref(c.kernel_name() + "_offsets"));
  host.set("write_kernel", d.kernel_ref(c.kernel_name() + "_write"));
  return NodeCode(render_template("templates/gpu/host/nonzero.mustache", host),
                  gpu_nonzero_kernels(d, c.kernel_name(), comment_text(c.node().op().str(), 100), T, rank));
}

NodeCode gpu_emit_unique(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  select_refuse_rank(c, backend);
  const auto& op = static_cast<const Unique&>(c.node().op());
  const int rank = c.in_var(0).ndim();
  const DType dt = c.in_var(0).dtype();
  const std::string T = gpu_storage_type(dt), name = c.kernel_name(), x = c.in(0);
  // What every kernel gets to compare items: x, the item and element layouts, the width.
  const std::string extra_params = ", const int64_t width" + padded_params({"il", "is", "rl", "rs"});
  const std::string extra_setup = padded_setup({"il", "is", "rl", "rs"});
  const std::string extra_args = ", width" + padded_args({"il", "is", "rl", "rs"});
  const std::string fn_args = ", x, il, is, rl, rs, width";
  const std::string fn_params = ", " + d.global_ptr(T, true) +
                                " x, const int64_t* il, const int64_t* is, const int64_t* rl, const int64_t* rs, "
                                "const int64_t width";

  TemplateData at = d.data();
  at.set("at", true);
  at.set("name", name);
  at.set("comment", comment_text(op.str(), 100));
  std::string kernels = render_template("templates/gpu/unique.mustache", at);

  // The items sorted by their elements in order (NumPy's order, NaN last).
  TemplateData s = gpu_sort_data(d, name, comment_text(op.str(), 100), "int64_t", "int64_t");
  s.set("order_note", "items compared element by element, lexicographically");
  s.set("less_body", "  for (int64_t k = 0; k < width; ++k) {\n    const " + T + " va = x[" + name +
                         "_at(a, k, il, is, rl, rs)], vb = x[" + name + "_at(b, k, il, is, rl, rs)];\n    if (" +
                         gpu_key_less(dt, "va", "vb") + ") return 1;\n    if (" + gpu_key_less(dt, "vb", "va") +
                         ") return 0;\n  }\n  return 0;");
  s.set("fn_params", fn_params);
  s.set("fn_args", fn_args);
  s.set("extra_params", extra_params);
  s.set("extra_setup", extra_setup);
  s.set("x_param", d.buffer_param(T, "x", true));
  s.set("x_bind", d.buffer_bind(T, "x", true));
  s.set("load_key", "(int64_t)(start + i)");
  s.set("final_value", "at");
  s.set("row_params", "");
  s.set("row_start", "    int64_t bx = 0, by = 0;\n");
  kernels += render_template("templates/gpu/sort.mustache", s);

  // The first position of each run of equal items in the sorted order.
  TemplateData k = select_data(d, name, comment_text(op.str(), 100));
  k.set("flag_note", "the first of a run of equal items in the sorted order");
  k.set("in_params", d.buffer_param(T, "x", true) + ", " + d.buffer_param("int64_t", "order", true));
  k.set("in_binds", "  " + d.buffer_bind(T, "x", true) + "\n  " + d.buffer_bind("int64_t", "order", true));
  k.set("scalar_params", extra_params);
  k.set("setup", extra_setup);
  k.set("out_params", ", " + d.buffer_param("int64_t", "starts", false) + ", " + d.buffer_param("int64_t", "gid", false));
  k.set("out_binds", "  " + d.buffer_bind("int64_t", "starts", false) + "\n  " + d.buffer_bind("int64_t", "gid", false));
  k.set("flag", "        f = e == 0 || " + name + "_less(order[e - 1], order[e]" + fn_args + ");");
  k.set("emit", "        if (f) starts[pos] = e;\n        gid[e] = pos + f - 1;");
  kernels += render_template("templates/gpu/select.mustache", k);

  // The outputs.
  TemplateData f = d.data();
  f.set("finish", true);
  f.set("name", name);
  f.set("comment", comment_text(op.str(), 100));
  f.set("extra_params", extra_params);
  f.set("extra_setup", extra_setup);
  f.set("x_param", d.buffer_param(T, "x", true));
  f.set("x_bind", d.buffer_bind(T, "x", true));
  for (const char* a : {"order", "starts", "gid"}) {
    f.set(std::string(a) + "_param", d.buffer_param("int64_t", a, true));
    f.set(std::string(a) + "_bind", d.buffer_bind("int64_t", a, true));
  }
  f.set("out_param", d.buffer_param(T, "out", false));
  f.set("out_bind", d.buffer_bind(T, "out", false));
  std::string extra_outs, extra_out_binds;
  TemplateData host = c.base_data();
  int out = 1;
  for (const auto& [wanted, key, buffer] : {std::tuple{op.return_index(), "index", "first"},
                                            std::tuple{op.return_inverse(), "inverse", "inverse"},
                                            std::tuple{op.return_counts(), "counts", "counts"}}) {
    f.set(key, wanted);
    TemplateData list{TemplateData::type::list};
    if (wanted) {
      extra_outs += ", " + d.buffer_param("int64_t", buffer, false);
      extra_out_binds += "  " + d.buffer_bind("int64_t", buffer, false) + "\n";
      TemplateData item;
      item.set("out", c.out(out));
      item.set("alloc", c.alloc(out));
      list.push_back(item);
      ++out;
    }
    host.set(key, list);
  }
  f.set("extra_outs", extra_outs);
  f.set("extra_out_binds", extra_out_binds);
  kernels += render_template("templates/gpu/unique.mustache", f);

  host.set("rank", std::to_string(rank));
  host.set("by_axis", op.axis().has_value());
  if (op.axis()) host.set("axis", std::to_string(*op.axis()));
  std::string width = "1";
  if (op.axis())
    for (int dim = 0; dim < rank; ++dim)
      if (dim != *op.axis()) width += " * " + x + ".shape[" + std::to_string(dim) + "]";
  host.set("n_expr", op.axis() ? x + ".shape[" + std::to_string(*op.axis()) + "]" : x + ".size()");
  host.set("width_expr", width);
  host.set("scratch", std::to_string(c.scratch_slot()));
  host.set("extra_args", extra_args);
  for (const char* kernel : {"tile", "merge", "count", "offsets", "write", "finish"})
    host.set(std::string(kernel) + "_kernel", d.kernel_ref(name + "_" + kernel));
  return NodeCode(render_template("templates/gpu/host/unique.mustache", host), kernels);
}

}  // namespace kiln
