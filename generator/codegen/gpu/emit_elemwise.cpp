// Elemwise on a GPU: one kernel per fused node with two entry points — a flat loop over
// contiguous operands (single broadcast elements read once) and a general loop that decodes
// the flat index over the output's lengths and applies every operand's strides (0 where it
// broadcasts). Both are grid-stride loops, so consecutive work-items touch consecutive
// elements (coalesced) and any grid size covers any length. The flat loop first moves four
// elements per work-item with vector loads and stores (vload4/vstore4, CUDA's aligned
// kiln_vec4) when the host found every contiguous operand aligned to the vector
// (kg::vec4_aligned), then finishes the tail (and unaligned operands) one element at a time.
// The host side computes the broadcast shape (kg::broadcast_length, as the cpp backend does)
// and picks the entry point.
#include "codegen/c_names.h"
#include "codegen/c_types.h"
#include "codegen/embedded_files.h"
#include "codegen/gpu/emitters.h"
#include "ops/elemwise.h"

namespace kiln {

const ScalarTable& gpu_scalar_table(const std::string& backend) {
  static const ScalarTable opencl = ScalarTable::parse("opencl", embedded_file("templates/gpu/scalar_ops.txt"));
  static const ScalarTable cuda = ScalarTable::parse("cuda", embedded_file("templates/gpu/scalar_ops.txt"));
  return backend == "cuda" ? cuda : opencl;
}

std::string gpu_copy_kernels(const GpuDialect& d) {
  std::string out;
  for (const char* bytes : {"1", "2", "4", "8"}) {
    const std::string type = std::string(bytes) == "1" ? "uint8_t" : std::string(bytes) == "2" ? "uint16_t"
                             : std::string(bytes) == "4" ? "uint32_t" : "uint64_t";
    TemplateData data = d.data();
    data.set("copy_name", "kiln_copy_" + std::string(bytes));
    data.set("comment", "Strided copy of " + std::string(bytes) +
                            "-byte items (rank <= 6, lengths and strides padded with leading 1s\n// and 0s): a graph "
                            "output that is an input, a constant or a view.");
    data.set("value", "src[so]");
    data.set("src_param", d.buffer_param(type, "src", true));
    data.set("dst_param", d.buffer_param(type, "dst", false));
    data.set("src_bind", d.buffer_bind(type, "src", true));
    data.set("dst_bind", d.buffer_bind(type, "dst", false));
    out += render_template("templates/gpu/copy.mustache", data);
  }
  TemplateData put = d.data();
  put.set("q_param", d.buffer_param("int64_t", "q", false));
  put.set("q_bind", d.buffer_bind("int64_t", "q", false));
  return out + render_template("templates/gpu/put.mustache", put);
}

NodeCode gpu_emit_elemwise(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  const auto& op = static_cast<const Elemwise&>(c.node().op());
  const Apply& node = c.node();
  const int nd = node.output_ptr(0)->ndim();
  const int n_in = node.num_inputs(), n_out = node.num_outputs();
  const std::string name = c.kernel_name();
  TemplateData data = d.data();
  data.set("name", name);
  data.set("comment", comment_text(op.str(), 100));

  // Kernel parameters, bindings and element reads of both entry points.
  std::vector<std::string> flat_params, strided_params, binds, flat_args, strided_args;
  TemplateData inputs{TemplateData::type::list}, dims{TemplateData::type::list};
  std::vector<std::string> args;
  std::vector<DType> arg_dtypes;
  std::string fast = "true", aligned = "true";
  std::string vec_loads, vec_decls, vec_stores;
  std::vector<std::string> lane_reads(4);  // per lane: the inputs' declarations
  for (int k = 0; k < n_in; ++k) {
    const Variable& v = c.in_var(k);
    const std::string p = "p" + std::to_string(k), ks = std::to_string(k);
    bool single = true;
    for (int dim = 0; dim < nd; ++dim) single = single && v.type().broadcastable(dim);
    const std::string param = d.buffer_param(gpu_storage_type(v.dtype()), p, true);
    flat_params.push_back(param);
    strided_params.push_back(param);
    binds.push_back(d.buffer_bind(gpu_storage_type(v.dtype()), p, true));
    flat_args.push_back(c.in(k) + ".data");
    strided_args.push_back(c.in(k) + ".data");
    std::string offset;
    for (int dim = 0; dim < nd; ++dim) {
      const std::string s = "s" + ks + "_" + std::to_string(dim);
      strided_params.push_back("const int64_t " + s);
      strided_args.push_back(c.in(k) + ".shape[" + std::to_string(dim) + "] == 1 ? 0 : " + c.in(k) + ".strides[" +
                             std::to_string(dim) + "]");
      offset += " + x" + std::to_string(dim) + " * " + s;
    }
    TemplateData in;
    in.set("k", ks);
    in.set("ctype", ctype(v.dtype()));
    in.set("flat_read", p + "[" + (single ? "0" : "e") + "]");
    in.set("strided_read", p + "[0" + offset + "]");
    inputs.push_back(in);
    const std::string storage = gpu_storage_type(v.dtype());
    if (single) {
      vec_loads += "    const " + ctype(v.dtype()) + " i" + ks + " = " + p + "[0];\n";
    } else {
      vec_loads += "    const " + d.vec4_type(storage) + " v" + ks + " = " + d.vec4_load(storage, p + " + e") + ";\n";
      for (int l = 0; l < 4; ++l)
        lane_reads[static_cast<std::size_t>(l)] +=
            "      const " + ctype(v.dtype()) + " i" + ks + " = " + d.vec4_lane("v" + ks, l) + ";\n";
      aligned += " && kg::vec4_aligned(" + c.in(k) + ".data)";
    }
    if (!single) {
      fast += " && " + c.in(k) + ".is_contiguous()";
      for (int dim = 0; dim < nd; ++dim)
        if (v.type().broadcastable(dim)) fast += " && " + c.out(0) + ".shape[" + std::to_string(dim) + "] == 1";
    }
    args.push_back("i" + ks);
    arg_dtypes.push_back(v.dtype());
  }
  int counter = 0;
  const ScalarCode code = emit_scalar_code(op.scalar_op(), args, arg_dtypes, "t", counter, gpu_scalar_table(backend));

  TemplateData outputs{TemplateData::type::list}, host_outputs{TemplateData::type::list};
  for (int k = 0; k < n_out; ++k) {
    const Variable& v = c.out_var(k);
    const std::string q = "q" + std::to_string(k), ks = std::to_string(k);
    const std::string param = d.buffer_param(gpu_storage_type(v.dtype()), q, false);
    flat_params.push_back(param);
    strided_params.push_back(param);
    binds.push_back(d.buffer_bind(gpu_storage_type(v.dtype()), q, false));
    flat_args.push_back(c.out(k) + ".data");
    strided_args.push_back(c.out(k) + ".data");
    std::string offset;
    for (int dim = 0; dim < nd; ++dim) {
      const std::string s = "r" + ks + "_" + std::to_string(dim);
      strided_params.push_back("const int64_t " + s);
      strided_args.push_back(c.out(k) + ".strides[" + std::to_string(dim) + "]");
      offset += " + x" + std::to_string(dim) + " * " + s;
    }
    const std::string storage = gpu_storage_type(v.dtype());
    vec_decls += "    " + d.vec4_type(storage) + " w" + ks + ";\n";
    vec_stores += "    " + d.vec4_store(storage, q + " + e", "w" + ks) + ";\n";
    aligned += " && kg::vec4_aligned(" + c.out(k) + ".data)";
    TemplateData o;
    o.set("flat_write", q + "[e]");
    o.set("strided_write", q + "[0" + offset + "]");
    o.set("result", code.results[static_cast<std::size_t>(k)]);
    outputs.push_back(o);
    TemplateData h;
    h.set("alloc", c.alloc(k));
    h.set("name", c.out(k));
    h.set("ndim", std::to_string(nd));
    h.set("extra", k > 0);
    host_outputs.push_back(h);
  }
  // The vector loop's body: the scalar code once per lane, each in a block of its own.
  std::string vec_body = vec_loads + vec_decls;
  for (int l = 0; l < 4; ++l) {
    vec_body += "    {\n" + lane_reads[static_cast<std::size_t>(l)] + indent_lines(code.statements, "      ");
    for (int k = 0; k < n_out; ++k)
      vec_body += "      " + d.vec4_lane("w" + std::to_string(k), l) + " = " + code.results[static_cast<std::size_t>(k)] + ";\n";
    vec_body += "    }\n";
  }
  vec_body += vec_stores;
  vec_body.pop_back();  // the template ends the line
  flat_params.push_back("const int64_t n");
  flat_params.push_back("const int64_t nv");
  strided_params.push_back("const int64_t n");
  flat_args.push_back("n");
  flat_args.push_back("nv");
  strided_args.push_back("n");
  for (int dim = 0; dim < nd; ++dim) {
    strided_params.push_back("const int64_t n" + std::to_string(dim));
    strided_args.push_back(c.out(0) + ".shape[" + std::to_string(dim) + "]");
  }
  // The flat index decomposed from the last dimension to the first.
  for (int dim = nd - 1; dim >= 0; --dim) {
    TemplateData item;
    item.set("d", std::to_string(dim));
    item.set("first", dim == 0);
    dims.push_back(item);
  }
  data.set("flat_params", join(flat_params, ", "));
  data.set("strided_params", join(strided_params, ", "));
  data.set("binds", string_list(binds));
  data.set("inputs", inputs);
  data.set("outputs", outputs);
  data.set("dims", dims);
  data.set("body", indent_lines(code.statements, "    "));
  data.set("vec_body", vec_body);

  // Host side: the broadcast shape, the outputs' memory, the launch.
  TemplateData host = c.base_data();
  TemplateData host_dims{TemplateData::type::list};
  for (int dim = 0; dim < nd; ++dim) {
    std::string lengths, bcast;
    for (int k = 0; k < n_in; ++k) {
      lengths += (k ? ", " : "") + c.in(k) + ".shape[" + std::to_string(dim) + "]";
      bcast += std::string(k ? ", " : "") + (c.in_var(k).type().broadcastable(dim) ? "true" : "false");
    }
    TemplateData item;
    item.set("d", std::to_string(dim));
    item.set("lengths", lengths);
    item.set("broadcastable", bcast);
    host_dims.push_back(item);
  }
  host.set("dims", host_dims);
  host.set("n_in", std::to_string(n_in));
  host.set("outputs", host_outputs);
  host.set("fast_path", fast);
  host.set("aligned", aligned);
  host.set("flat_kernel", d.kernel_ref(name + "_flat"));
  host.set("strided_kernel", d.kernel_ref(name + "_strided"));
  host.set("flat_args", join(flat_args, ", "));
  host.set("strided_args", join(strided_args, ", "));
  return NodeCode(render_template("templates/gpu/host/elemwise.mustache", host),
                  render_template("templates/gpu/elemwise.mustache", data));
}

}  // namespace kiln
