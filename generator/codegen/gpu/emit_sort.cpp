// SortOp, ArgSortOp and SearchsortedOp on a GPU (templates/gpu/sort.mustache,
// searchsorted.mustache). Sorting is a real parallel sort of every row along the axis (read
// from the device at run time, as the C++ backend does): tiles of up to 1024 elements sorted
// by a bitonic network in local memory, one work-group per tile, then merge passes that double
// the sorted runs, each element placed by a binary search of the other run. Keys are compared
// in NumPy's order (NaN last) and equal keys by position, a total order: the result is the
// stable sort (NumPy's "stable"/"mergesort", and what the C++ backend's std::stable_sort gives
// for every kind), bit for bit, on any layout. Searchsorted is one work-item per value doing
// the C++ backend's binary search; a sorter's entries are checked by a kernel of their own
// through the device status word (KILN_ERR_VALUE, NumPy's message).
#include "codegen/c_names.h"
#include "codegen/c_types.h"
#include "codegen/gpu/emitters.h"
#include "codegen/gpu/row_layout.h"
#include "ir/error.h"
#include "ops/extra_ops.h"

namespace kiln {

std::string gpu_key_less(DType dt, const std::string& a, const std::string& b) {
  if (is_float(dt)) return "(" + a + " < " + b + " || (isnan(" + b + ") && !isnan(" + a + ")))";
  return "(" + a + " < " + b + ")";
}

TemplateData gpu_sort_data(const GpuDialect& d, const std::string& name, const std::string& comment,
                           const std::string& key, const std::string& out_type) {
  TemplateData k = d.data();
  k.set("name", name);
  k.set("comment", comment);
  k.set("KEY", key);
  k.set("keys_param", d.buffer_param(key, "keys", false));
  k.set("keys_bind", d.buffer_bind(key, "keys", false));
  k.set("pos_param", d.buffer_param("int64_t", "pos", false));
  k.set("pos_bind", d.buffer_bind("int64_t", "pos", false));
  k.set("keys_out_param", d.buffer_param(key, "keys_out", false));
  k.set("keys_out_bind", d.buffer_bind(key, "keys_out", false));
  k.set("pos_out_param", d.buffer_param("int64_t", "pos_out", false));
  k.set("pos_out_bind", d.buffer_bind("int64_t", "pos_out", false));
  k.set("y_param", d.buffer_param(out_type, "y", false));
  k.set("y_bind", d.buffer_bind(out_type, "y", false));
  k.set("local_keys", d.local_array(key, "lk", 1024));
  k.set("local_index", d.local_array("int32_t", "lp", 1024));
  k.set("fn_params", "");
  k.set("fn_args", "");
  k.set("extra_params", "");
  k.set("extra_setup", "");
  return k;
}

NodeCode gpu_emit_sort(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  const bool arg = c.node().op().name() == "ArgSortOp";
  const int rank = c.in_var(0).ndim();
  if (rank < 1 || rank > 6)
    throw NotImplementedError("`" + c.node().op().str() + "` of rank " + std::to_string(rank) + " has no " + backend +
                              " implementation: the sort kernels handle ranks 1 to 6");
  const DType dt = c.in_var(0).dtype();
  const std::string T = gpu_storage_type(dt), name = c.kernel_name();
  TemplateData k = gpu_sort_data(d, name, comment_text(c.node().op().str(), 100), T, arg ? "int64_t" : T);
  k.set("order_note", is_float(dt) ? "NaN after every number" : "the element type's order");
  k.set("less_body", "  return " + gpu_key_less(dt, "a", "b") + ";");
  k.set("x_param", d.buffer_param(T, "x", true));
  k.set("x_bind", d.buffer_bind(T, "x", true));
  k.set("load_key", "x[bx + (start + i) * xa]");
  k.set("final_value", arg ? "at" : "key");
  // The rows: x's other dimensions in C order, lengths and strides (x's, y's) from the host.
  std::string row_params;
  std::vector<std::string> args;
  for (int i = 0; i + 1 < rank; ++i) {
    const std::string s = std::to_string(i);
    row_params += ", const int64_t kn" + s + ", const int64_t kx" + s + ", const int64_t ky" + s;
    for (const char* a : {"kn", "kx", "ky"}) args.push_back(std::string(a) + "[" + s + "]");
  }
  k.set("row_params", row_params);
  k.set("row_start", gpu_row_start({"x", "y"}, static_cast<std::size_t>(rank - 1), "    "));

  TemplateData host = c.base_data();
  host.set("rank", std::to_string(rank));
  host.set("across_or_1", std::to_string(rank > 1 ? rank - 1 : 1));
  host.set("key_ctype", ctype(dt));
  host.set("scratch", std::to_string(c.scratch_slot()));
  host.set("tile_kernel", d.kernel_ref(name + "_tile"));
  host.set("merge_kernel", d.kernel_ref(name + "_merge"));
  host.set("dim_args", args.empty() ? "" : ", " + join(args, ", "));
  return NodeCode(render_template("templates/gpu/host/sort.mustache", host),
                  render_template("templates/gpu/sort.mustache", k));
}

NodeCode gpu_emit_searchsorted(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  const auto& op = static_cast<const SearchsortedOp&>(c.node().op());
  const int vrank = c.in_var(1).ndim();
  if (vrank > 6)
    throw NotImplementedError("`" + op.str() + "` of values of rank " + std::to_string(vrank) + " has no " + backend +
                              " implementation: the kernel handles rank 6 at most");
  const DType x = c.in_var(0).dtype(), v = c.in_var(1).dtype(), w = upcast(x, v);
  const ScalarTable& table = gpu_scalar_table(backend);
  const bool has_sorter = c.node().num_inputs() == 3;
  const std::string xs = gpu_storage_type(x), vs = gpu_storage_type(v), W = ctype(w);
  TemplateData k = d.data();
  k.set("name", c.kernel_name());
  k.set("comment", comment_text(op.str(), 100));
  k.set("W", W);
  k.set("x_param", d.buffer_param(xs, "x", true));
  k.set("x_bind", d.buffer_bind(xs, "x", true));
  k.set("v_param", d.buffer_param(vs, "v", true));
  k.set("v_bind", d.buffer_bind(vs, "v", true));
  k.set("q_param", d.buffer_param("int64_t", "q", false));
  k.set("q_bind", d.buffer_bind("int64_t", "q", false));
  k.set("value", convert_scalar("v[vo]", v, w, table));
  k.set("at", convert_scalar("x[k * xs]", x, w, table));
  // left: past every element before the value; right: past every element not after it.
  k.set("go_right", op.right() ? "!" + gpu_key_less(w, "value", "at") : gpu_key_less(w, "at", "value"));
  TemplateData host = c.base_data();
  TemplateData sorter{TemplateData::type::list};
  if (has_sorter) {
    const std::string ss = gpu_storage_type(c.in_var(2).dtype());
    TemplateData ks;
    ks.set("s_param", d.buffer_param(ss, "sorter", true));
    ks.set("s_bind", d.buffer_bind(ss, "sorter", true));
    ks.set("st_param", d.buffer_param("int32_t", "st", false));
    ks.set("st_bind", d.buffer_bind("int32_t", "st", false));
    sorter.push_back(ks);
    TemplateData hs;
    hs.set("name", c.in(2));
    host.set("sorter", hs);
    host.set("sorter_stride", c.in(2) + ".strides[0]");
  } else {
    host.set("sorter", false);
    host.set("sorter_stride", "int64_t{0}");
  }
  k.set("sorter", sorter);
  host.set("vrank", std::to_string(vrank));
  host.set("kernel_ref", d.kernel_ref(c.kernel_name()));
  host.set("check_kernel", d.kernel_ref(c.kernel_name() + "_check"));
  return NodeCode(render_template("templates/gpu/host/searchsorted.mustache", host),
                  render_template("templates/gpu/searchsorted.mustache", k));
}

}  // namespace kiln
