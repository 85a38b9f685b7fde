// CAReduce on a GPU (Sum, Prod, ProdWithoutZeros, Max, Min, All, Any, and generic or fused
// CAReduce{Composite}): kernels from templates/gpu/reduce.mustache. The group path splits each
// output's reduced elements into `chunks` runs, one work-group per run, each work-item folding
// a strided share that the group then reduces in a tree (local memory; CUDA ends with warp
// shuffles); the finish kernel folds each output's partials in one group. Large single
// reductions thus use many groups. When each output's reduced elements are contiguous (a row
// reduction of a contiguous input) the group reads them at base + r without decoding indices.
// The lane path gives each output (and chunk of its elements) one work-item, neighbouring
// work-items on neighbouring outputs: reductions over leading axes read coalesced, many short
// rows keep every work-item busy, and a fold that may not be split (ProdWithoutZeros, some
// fused casts: codegen/reduce_fold.h) runs in order, one chunk per output. The host picks the
// path from the lengths and strides at run time. Same step, identity, accumulator and output
// dtypes as CAReduce::perform.
#include <algorithm>
#include <limits>

#include "codegen/c_names.h"
#include "codegen/c_types.h"
#include "codegen/gpu/emitters.h"
#include "codegen/reduce_fold.h"
#include "ir/error.h"
#include "ops/reduce.h"

namespace kiln {

namespace {

template <typename T>
std::string int_limit(bool lowest) {
  const long double v = lowest ? static_cast<long double>(std::numeric_limits<T>::lowest())
                               : static_cast<long double>(std::numeric_limits<T>::max());
  if (std::is_same_v<T, int64_t> && lowest) return "(-9223372036854775807L - 1)";
  return std::is_signed_v<T> ? std::to_string(static_cast<long long>(v)) + "L"
                             : std::to_string(static_cast<unsigned long long>(v)) + "UL";
}

// The smallest or largest value of an integer dtype as a C literal.
std::string int_bound(DType dt, bool lowest) {
  switch (dt) {
    case DType::Int8: return int_limit<int8_t>(lowest);
    case DType::Int16: return int_limit<int16_t>(lowest);
    case DType::Int32: return int_limit<int32_t>(lowest);
    case DType::Int64: return int_limit<int64_t>(lowest);
    case DType::UInt8: return int_limit<uint8_t>(lowest);
    case DType::UInt16: return int_limit<uint16_t>(lowest);
    case DType::UInt32: return int_limit<uint32_t>(lowest);
    case DType::UInt64: return int_limit<uint64_t>(lowest);
    default: return lowest ? "0" : "1";  // bool
  }
}

// The value a fold by `id` starts from, as a C expression of the accumulator dtype.
std::string identity(ScalarOpId id, DType acc) {
  const std::string A = ctype(acc);
  switch (id) {
    case ScalarOpId::Mul: return "((" + A + ")1)";
    case ScalarOpId::And: return is_bool(acc) ? "true" : "((" + A + ")~(" + A + ")0)";
    case ScalarOpId::Maximum: return "((" + A + ")(" + (is_float(acc) ? "-KILN_INF" : int_bound(acc, true)) + "))";
    case ScalarOpId::Minimum: return "((" + A + ")(" + (is_float(acc) ? "KILN_INF" : int_bound(acc, false)) + "))";
    default: return "((" + A + ")0)";  // add, or, xor
  }
}

// Statements ending in `return <result>;`, indented for a function body.
std::string returning(const ScalarCode& code, const std::string& before = "") {
  return indent_lines(before + code.statements + "return " + code.results[0] + ";", "  ");
}

// The lane kernel's step to the next reduced element: the innermost reduced index (j = n - 1)
// advances, carrying into the outer ones like an odometer, and `off` follows the strides.
std::string reduce_odometer(int j, const std::string& pad) {
  const std::string js = std::to_string(j);
  if (j < 0) return "";
  if (j == 0) return pad + "off += rs0;\n";
  return pad + "if (++i" + js + " < rn" + js + ") {\n" + pad + "  off += rs" + js + ";\n" + pad + "} else {\n" + pad +
         "  i" + js + " = 0;\n" + pad + "  off -= (rn" + js + " - 1) * rs" + js + ";\n" + reduce_odometer(j - 1, pad + "  ") +
         pad + "}\n";
}

}  // namespace

// The work-group tree over a[0, gs) into a[0] (warp shuffles for the last 32 in CUDA).
std::string gpu_group_tree(const GpuDialect& d, const std::string& combine, const std::string& A, const std::string& a) {
  const std::string barrier = d["barrier"] + ";";
  const std::string level =
      "      if (tid < s) " + a + "[tid] = " + combine + "(" + a + "[tid], " + a + "[tid + s]);\n      " + barrier + "\n";
  if (!d.has_shuffle()) return "    for (int64_t s = gs / 2; s > 0; s >>= 1) {\n" + level + "    }\n";
  std::string shfl = d["shuffle_down"];
  shfl.replace(shfl.find("{v}"), 3, "v");
  shfl.replace(shfl.find("{o}"), 3, "w");
  return "    int64_t s = gs / 2;\n    for (; s > 32; s >>= 1) {\n" + level +
         "    }\n    if (s == 32) {\n      if (tid < 32) {\n        " + A + " v = " + combine +
         "(" + a + "[tid], " + a + "[tid + 32]);\n        for (int w = 16; w > 0; w >>= 1) v = " + combine + "(v, " + shfl +
         ");\n        if (tid == 0) " + a + "[0] = v;\n      }\n      " + barrier + "\n    } else {\n      for (; s > 0; s >>= 1) {\n  " +
         level + "      }\n    }\n";
}

NodeCode gpu_emit_careduce(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  const auto& op = static_cast<const CAReduce&>(c.node().op());
  const DType in = c.in_var(0).dtype();
  const int ndim = c.in_var(0).ndim();
  const ReduceDTypes dt = op.dtypes_for(in);
  const ScalarTable& table = gpu_scalar_table(backend);
  const std::string name = c.kernel_name(), A = ctype(dt.acc);
  const std::vector<int> reduced = reduced_axes_list(op.axis(), ndim);
  std::vector<int> kept;
  for (int dim = 0; dim < ndim; ++dim)
    if (std::find(reduced.begin(), reduced.end(), dim) == reduced.end()) kept.push_back(dim);

  TemplateData data = d.data();
  data.set("name", name);
  data.set("comment", comment_text(op.str(), 100));
  data.set("A", A);
  data.set("T", ctype(in));
  const ScalarOp& scalar = op.scalar_op();
  const std::vector<DType> acc2{dt.acc, dt.acc};
  const std::string v = "const " + A + " v = " + convert_scalar("x", in, dt.acc, table) + ";\n";
  int counter = 0;
  bool combinable = true;
  ScalarOpId fold = scalar.id();
  if (op.kind() == ReduceKind::ProdWithoutZeros) {
    // Zeros are skipped and 0 stands for "no factor yet": only the in-order fold is perform's.
    const ScalarCode mul = emit_scalar_code(ScalarOp(ScalarOpId::Mul), {"a", "v"}, acc2, "t", counter, table);
    data.set("step", indent_lines(v + mul.statements + "return a == (" + A + ")0 ? v : v == (" + A + ")0 ? a : " +
                                      mul.results[0] + ";", "  "));
    data.set("combine", "  return a;  // never called: this fold is not split");
    fold = ScalarOpId::Mul;
    combinable = false;
    data.set("init", "((" + A + ")0)");
  } else if (scalar.id() == ScalarOpId::Composite) {
    const CompositeFold f = analyse_composite_fold(*scalar.composite_graph());
    if (!f.found) throw InternalError("`" + op.str() + "` has no accumulating operation");
    fold = f.op;
    combinable = f.splittable;
    data.set("step", returning(emit_scalar_code(scalar, {"a", "x"}, {dt.acc, in}, "t", counter, table)));
    counter = 0;
    data.set("combine", combinable ? returning(emit_scalar_code(ScalarOp(f.op), {"a", "b"}, acc2, "t", counter, table))
                                   : "  return a;  // never called: this fold is not split");
    data.set("init", identity(fold, dt.acc));
  } else {
    data.set("step", returning(emit_scalar_code(scalar, {"a", "v"}, acc2, "t", counter, table), v));
    counter = 0;
    data.set("combine", returning(emit_scalar_code(scalar, {"a", "b"}, acc2, "t", counter, table)));
    data.set("init", identity(fold, dt.acc));
  }
  data.set("finish", convert_scalar("acc[0]", dt.acc, dt.out, table));
  data.set("finish_a", convert_scalar("a", dt.acc, dt.out, table));
  std::string odometer = reduce_odometer(static_cast<int>(reduced.size()) - 1, "        ");
  if (!odometer.empty()) odometer.pop_back();  // the template ends the line
  data.set("odometer", odometer);
  data.set("tree", gpu_group_tree(d, name + "_combine", A, "acc"));
  data.set("local_acc", d.local_array(A, "acc", 256));

  // Kernel parameters: kept lengths and strides (last first, to decode the output index),
  // then reduced ones (last first).
  std::string dim_params;
  std::vector<std::string> dim_args;
  TemplateData kept_items{TemplateData::type::list}, red_items{TemplateData::type::list};
  for (int i = static_cast<int>(kept.size()) - 1; i >= 0; --i) {
    const std::string is = std::to_string(i), dim = std::to_string(kept[static_cast<std::size_t>(i)]);
    dim_params += ", const int64_t kn" + is + ", const int64_t ks" + is;
    dim_args.push_back(c.in(0) + ".shape[" + dim + "]");
    dim_args.push_back(c.in(0) + ".strides[" + dim + "]");
    TemplateData item;
    item.set("i", is);
    kept_items.push_back(item);
  }
  for (int j = static_cast<int>(reduced.size()) - 1; j >= 0; --j) {
    const std::string js = std::to_string(j), dim = std::to_string(reduced[static_cast<std::size_t>(j)]);
    dim_params += ", const int64_t rn" + js + ", const int64_t rs" + js;
    dim_args.push_back(c.in(0) + ".shape[" + dim + "]");
    dim_args.push_back(c.in(0) + ".strides[" + dim + "]");
    TemplateData item;
    item.set("j", js);
    red_items.push_back(item);
  }
  data.set("kept", kept_items);
  data.set("combinable", combinable);
  data.set("has_lanes", !combinable || !kept.empty());
  data.set("reduced", red_items);
  data.set("dim_params", dim_params);
  data.set("in_param", d.buffer_param(gpu_storage_type(in), "p", true));
  data.set("in_bind", d.buffer_bind(gpu_storage_type(in), "p", true));
  data.set("partial_param", d.buffer_param(A, "partial", false));
  data.set("partial_bind", d.buffer_bind(A, "partial", false));
  data.set("partial_in_param", d.buffer_param(A, "partial", true));
  data.set("partial_in_bind", d.buffer_bind(A, "partial", true));
  data.set("out_param", d.buffer_param(gpu_storage_type(dt.out), "q", false));
  data.set("out_bind", d.buffer_bind(gpu_storage_type(dt.out), "q", false));

  // Host side: the output shape, empty-axis checks for Max and Min, the two launches.
  TemplateData host = c.base_data();
  TemplateData shape{TemplateData::type::list}, checks{TemplateData::type::list};
  for (std::size_t i = 0; i < kept.size(); ++i) {
    TemplateData item;
    item.set("i", std::to_string(i));
    item.set("d", std::to_string(kept[i]));
    shape.push_back(item);
  }
  std::string n_red = "1";
  for (int dim : reduced) {
    n_red += " * " + c.in(0) + ".shape[" + std::to_string(dim) + "]";
    if (op.kind() != ReduceKind::Max && op.kind() != ReduceKind::Min) continue;
    TemplateData item;
    item.set("d", std::to_string(dim));
    item.set("message", c_string_literal(op.empty_axis_message(dim)));
    checks.push_back(item);
  }
  TemplateData red_rev{TemplateData::type::list};
  for (auto it = reduced.rbegin(); it != reduced.rend(); ++it) {
    TemplateData item;
    item.set("d", std::to_string(*it));
    red_rev.push_back(item);
  }
  host.set("reduced_last_first", red_rev);
  host.set("has_kept", !kept.empty());
  host.set("has_lanes", !combinable || !kept.empty());
  host.set("last_kept", kept.empty() ? "0" : std::to_string(kept.back()));
  host.set("lanes_kernel", d.kernel_ref(name + "_lanes"));
  host.set("shape", shape);
  host.set("checks", checks);
  host.set("n_red", n_red);
  host.set("A", A);
  host.set("combinable", combinable);
  host.set("scratch", std::to_string(c.scratch_slot()));
  host.set("partial_kernel", d.kernel_ref(name + "_partial"));
  host.set("finish_kernel", d.kernel_ref(name + "_finish"));
  host.set("dim_args", dim_args.empty() ? "" : ", " + join(dim_args, ", "));
  return NodeCode(render_template("templates/gpu/host/reduce.mustache", host),
                  render_template("templates/gpu/reduce.mustache", data));
}

}  // namespace kiln
