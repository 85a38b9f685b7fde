// KroneckerProduct and BlockDiagonal on a GPU, and Blockwise of them: device kernels, one
// work-item per output element (templates/gpu/structure.mustache), never reading the output.
// The host code computes what the cpp backend's (codegen/cpp/emit_linalg.cpp, describe_kron
// and describe_block_diag over templates/cpp/ops/linalg_call.mustache) does before its
// per-matrix loop — the batch lengths (static-1 dimensions broadcast, stride 0), the
// signature's checks, the output's shape — then launches instead of looping. The semantics are
// those of kiln_linalg::kron and kg::linalg::block_diag: each operand converted to the output's
// dtype (kiln_scalar::convert's rules, as the GPU dialects spell them), Kronecker products
// multiplied in that dtype (integers wrap, bools AND), any strides, 0-size operands.
//
// Kron's kernel decodes each output position over the interleaved shape (batch..., A0, B0, A1,
// B1, ...), which in C order is the output's own; its parameters are the node's dimensions, so
// any rank is one kernel. BlockDiagonal's kernels take up to kStructureBlocksPerKernel blocks each and
// write one band of rows of every matrix (those blocks' rows, all columns: a block's rows hold
// no other block's elements), so any number of blocks is a few launches of a bounded kernel.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "codegen/c_names.h"
#include "codegen/c_types.h"
#include "codegen/cpp/blockwise_emit.h"
#include "codegen/gpu/emitters.h"
#include "ir/error.h"
#include "ops/blockwise.h"

namespace kiln {

namespace {

constexpr int kStructureBlocksPerKernel = 8;  // keeps a kernel's parameters far below OpenCL's 1 KB minimum

std::string structure_i64(const std::string& e) { return "int64_t(" + e + ")"; }

/// The node's batch dimensions (0 for the core ops) and signature (null for the core ops).
struct StructureBatch {
  int nb = 0;
  const GufuncSignature* sig = nullptr;
};

StructureBatch structure_batch(const NodeEmitContext& c) {
  StructureBatch b;
  if (c.node().op().name() == "Blockwise") {
    const auto& op = static_cast<const Blockwise&>(c.node().op());
    b.nb = op.batch_ndim(c.node());
    b.sig = &op.signature();
  }
  return b;
}

std::string structure_core_name(const Op& op) {
  return std::string(op.name() == "Blockwise" ? static_cast<const Blockwise&>(op).core_op().name() : op.name());
}

/// The host data both ops share: batch lengths and their broadcasting, the signature's checks,
/// the output's lengths (batch, then `core`), the output's memory.
TemplateData structure_host_data(const NodeEmitContext& c, const StructureBatch& b, const std::vector<std::string>& core) {
  TemplateData host = c.base_data();
  host.set("has_batch", b.nb > 0);
  host.set("nb", str(b.nb));
  host.set("nb_plus_1", str(b.nb + 1));
  set_blockwise_batch_data(c, b.nb, host);
  set_checks(b.sig ? blockwise_core_dims(c, *b.sig, b.nb).checks : std::vector<std::pair<std::string, std::string>>{},
             host);
  TemplateData out_dims{TemplateData::type::list};
  std::vector<std::string> lens;
  for (int d = 0; d < b.nb; ++d) lens.push_back("batch[" + str(d) + "]");
  lens.insert(lens.end(), core.begin(), core.end());
  KILN_INTERNAL_ASSERT(static_cast<int>(lens.size()) == c.out_var(0).ndim(), "structure emitter: output rank");
  for (std::size_t d = 0; d < lens.size(); ++d) {
    TemplateData item;
    item.set("d", str(static_cast<std::int64_t>(d)));
    item.set("len", lens[d]);
    out_dims.push_back(item);
  }
  host.set("out_dims", out_dims);
  return host;
}

/// Input k's stride in batch dimension d as a launch argument: 0 where it broadcasts statically.
std::string structure_batch_stride(const NodeEmitContext& c, int k, int d) {
  return c.in_var(k).type().broadcastable(d) ? "0" : c.in(k) + ".strides[" + str(d) + "]";
}

NodeCode emit_kron(const NodeEmitContext& c, const GpuDialect& dl, const std::string& backend, const StructureBatch& b) {
  const DType out = c.out_var(0).dtype(), da = c.in_var(0).dtype(), db = c.in_var(1).dtype();
  const std::string T = gpu_storage_type(out);
  const int n = c.out_var(0).ndim() - b.nb;
  const int ra = c.in_var(0).ndim() - b.nb, rb = c.in_var(1).ndim() - b.nb;
  const std::string a = c.in(0), bv = c.in(1);

  // The interleaved dimensions, outermost first: (has_a, has_b, length, a stride, b stride).
  struct Dim {
    bool has_a, has_b;
    std::string len, as, bs;
  };
  std::vector<Dim> dims;
  for (int d = 0; d < b.nb; ++d) dims.push_back({true, true, "batch[" + str(d) + "]", structure_batch_stride(c, 0, d), structure_batch_stride(c, 1, d)});
  std::vector<std::string> core;
  for (int dd = 0; dd < n; ++dd) {
    const int ja = dd - (n - ra), jb = dd - (n - rb);
    const std::string la = ja < 0 ? "" : a + ".shape[" + str(b.nb + ja) + "]";
    const std::string lb = jb < 0 ? "" : bv + ".shape[" + str(b.nb + jb) + "]";
    core.push_back(ja < 0 ? lb : jb < 0 ? la : la + " * " + lb);
    if (ja >= 0) dims.push_back({true, false, la, a + ".strides[" + str(b.nb + ja) + "]", ""});
    if (jb >= 0) dims.push_back({false, true, lb, "", bv + ".strides[" + str(b.nb + jb) + "]"});
  }

  TemplateData k = dl.data();
  k.set("kron", true);
  k.set("name", c.kernel_name());
  k.set("comment", comment_text(c.node().op().str(), 100));
  k.set("stype", T);
  k.set("a_param", dl.buffer_param(gpu_storage_type(da), "pa", true));
  k.set("a_bind", dl.buffer_bind(gpu_storage_type(da), "pa", true));
  k.set("b_param", dl.buffer_param(gpu_storage_type(db), "pb", true));
  k.set("b_bind", dl.buffer_bind(gpu_storage_type(db), "pb", true));
  k.set("q_param", dl.buffer_param(T, "q", false));
  k.set("q_bind", dl.buffer_bind(T, "q", false));
  const ScalarTable& table = gpu_scalar_table(backend);
  k.set("a_value", "(" + T + ")" + convert_scalar("pa[ao]", da, out, table));
  k.set("b_value", "(" + T + ")" + convert_scalar("pb[bo]", db, out, table));
  int counter = 0;
  const ScalarCode mul = emit_scalar_code(ScalarOp(ScalarOpId::Mul), {"va", "vb"}, {out, out}, "t", counter, table);
  std::string statements = indent_lines(mul.statements, "    ");
  while (!statements.empty() && statements.back() == '\n') statements.pop_back();
  k.set("product", statements);
  k.set("result", mul.results[0]);
  std::string params, args;
  TemplateData outer{TemplateData::type::list};
  std::vector<TemplateData> inner;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    const Dim& x = dims[d];
    const std::string s = str(static_cast<std::int64_t>(d));
    params += ", const int64_t n" + s;
    args += ", " + structure_i64(x.len);
    if (x.has_a) {
      params += ", const int64_t a" + s;
      args += ", " + structure_i64(x.as);
    }
    if (x.has_b) {
      params += ", const int64_t b" + s;
      args += ", " + structure_i64(x.bs);
    }
    TemplateData item;
    item.set("d", s);
    item.set("has_a", x.has_a);
    item.set("has_b", x.has_b);
    if (d == 0)
      outer.push_back(item);
    else
      inner.push_back(item);
  }
  // The decode runs innermost first.
  TemplateData inner_rev{TemplateData::type::list};
  for (std::size_t i = inner.size(); i-- > 0;) inner_rev.push_back(inner[i]);
  k.set("inner", inner_rev);
  k.set("has_inner", !inner.empty());
  k.set("outer", outer);
  k.set("dim_params", params);

  TemplateData host = structure_host_data(c, b, core);
  host.set("kron", true);
  host.set("kernel_ref", dl.kernel_ref(c.kernel_name()));
  host.set("args", args);
  return NodeCode(render_template("templates/gpu/host/structure.mustache", host),
                  render_template("templates/gpu/structure.mustache", k));
}

NodeCode emit_block_diag(const NodeEmitContext& c, const GpuDialect& dl, const std::string& backend, const StructureBatch& b) {
  const DType out = c.out_var(0).dtype();
  const std::string T = gpu_storage_type(out);
  const int n_in = c.node().num_inputs();
  const ScalarTable& table = gpu_scalar_table(backend);
  auto len = [&](int k, int j) { return c.in(k) + ".shape[" + str(b.nb + j) + "]"; };

  std::string rows, cols;
  for (int k = 0; k < n_in; ++k) {
    rows += (k ? " + " : "") + len(k, 0);
    cols += (k ? " + " : "") + len(k, 1);
  }
  std::string batch_params, matrices = "int64_t(1)";
  TemplateData batch_inner{TemplateData::type::list}, batch_outer{TemplateData::type::list};
  for (int d = b.nb - 1; d >= 0; --d) {
    TemplateData item;
    item.set("d", str(d));
    if (d == 0)
      batch_outer.push_back(item);
    else
      batch_inner.push_back(item);
  }
  for (int d = 0; d < b.nb; ++d) {
    batch_params += ", const int64_t n" + str(d);
    matrices += " * batch[" + str(d) + "]";
  }

  std::string kernels;
  TemplateData chunks{TemplateData::type::list};
  for (int first = 0; first < n_in; first += kStructureBlocksPerKernel) {
    const int last = std::min(n_in, first + kStructureBlocksPerKernel) - 1;
    const std::string name = c.kernel_name() + "_b" + str(first);
    TemplateData k = dl.data();
    k.set("block_diag", true);
    k.set("name", name);
    k.set("comment", comment_text(c.node().op().str(), 100));
    k.set("first", str(first));
    k.set("last", str(last));
    k.set("stype", T);
    k.set("q_param", dl.buffer_param(T, "q", false));
    k.set("q_bind", dl.buffer_bind(T, "q", false));
    k.set("batch_params", batch_params);
    k.set("batch_inner", batch_inner);
    k.set("batch_outer", batch_outer);
    TemplateData blocks{TemplateData::type::list};
    std::string buffers, args, chunk_rows, chunk_cols, run_rows = "row0", run_cols = "col0";
    for (int d = 0; d < b.nb; ++d) args += ", batch[" + str(d) + "]";
    for (int i = first; i <= last; ++i) {
      const DType dt = c.in_var(i).dtype();
      const std::string p = "p" + str(i), s = str(i);
      TemplateData item;
      item.set("k", s);
      item.set("param", dl.buffer_param(gpu_storage_type(dt), p, true));
      item.set("bind", dl.buffer_bind(gpu_storage_type(dt), p, true));
      item.set("else", i == first ? "" : "else ");
      item.set("col_start", i == first ? "col0" : "c" + str(i - 1));
      std::string scalars = ", const int64_t r" + s + ", const int64_t c" + s + ", const int64_t rs" + s +
                            ", const int64_t cs" + s;
      std::string off = "(i - " + std::string(i == first ? "row0" : "r" + str(i - 1)) + ") * rs" + s + " + (j - " +
                        (i == first ? "col0" : "c" + str(i - 1)) + ") * cs" + s;
      for (int d = 0; d < b.nb; ++d) {
        scalars += ", const int64_t s" + s + "_" + str(d);
        off += " + i" + str(d) + " * s" + s + "_" + str(d);
      }
      item.set("scalars", scalars);
      item.set("value", "(" + T + ")" + convert_scalar(p + "[" + off + "]", dt, out, table));
      blocks.push_back(item);

      buffers += c.in(i) + ".data, ";
      chunk_rows += " + " + len(i, 0);
      chunk_cols += " + " + len(i, 1);
      run_rows += " + " + len(i, 0);
      run_cols += " + " + len(i, 1);
      args += ", " + structure_i64(run_rows) + ", " + structure_i64(run_cols) + ", " + structure_i64(c.in(i) + ".strides[" + str(b.nb) + "]") + ", " +
              structure_i64(c.in(i) + ".strides[" + str(b.nb + 1) + "]");
      for (int d = 0; d < b.nb; ++d) args += ", " + structure_i64(structure_batch_stride(c, i, d));
    }
    k.set("blocks", blocks);
    kernels += render_template("templates/gpu/structure.mustache", k);
    TemplateData chunk;
    chunk.set("kernel_ref", dl.kernel_ref(name));
    chunk.set("rows", chunk_rows);
    chunk.set("cols", chunk_cols);
    chunk.set("buffers", buffers);
    chunk.set("args", args);
    chunks.push_back(chunk);
  }

  TemplateData host = structure_host_data(c, b, {rows, cols});
  host.set("block_diag", true);
  host.set("matrices", matrices);
  host.set("chunks", chunks);
  return NodeCode(render_template("templates/gpu/host/structure.mustache", host), kernels);
}

}  // namespace

bool gpu_emits_structure(const Op& op) {
  const std::string name = structure_core_name(op);
  return name == "KroneckerProduct" || name == "BlockDiagonal";
}

NodeCode gpu_emit_structure(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  const std::string name = structure_core_name(c.node().op());
  const StructureBatch b = structure_batch(c);
  if (name == "KroneckerProduct") return emit_kron(c, d, backend, b);
  if (name == "BlockDiagonal") return emit_block_diag(c, d, backend, b);
  throw NotImplementedError("`" + c.node().op().str() + "` has no " + backend + " implementation");
}

}  // namespace kiln
