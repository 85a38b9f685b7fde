// Products: Dot, Dot22, Dot22Scalar (templates/cpp/ops/dot.mustache), BatchedDot and Blockwise
// over a core Dot/Dot22 (dot_batched.mustache; a Blockwise of a linear-algebra op goes to
// emit_linalg.cpp), Gemv/CGemv and Gemm (blas_gemv_gemm.mustache),
// Ger/CGer (blas_ger.mustache). Every product is one call of the runtime's kg::product (or
// kg::rank1_update) on kg::Mat views of the operands: CBLAS for float32/float64, with transposed
// views passed as CblasTrans, plain wrapping loops for other dtypes.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "codegen/c_names.h"
#include "codegen/cpp/blockwise_emit.h"
#include "codegen/cpp/emitters.h"
#include "ir/error.h"
#include "ops/array_util.h"
#include "ops/blas.h"
#include "ops/blockwise.h"

namespace kiln {

namespace {

/// How a 1-d operand takes part in a matrix product: as one row (x of vector·matrix, and its
/// output) or as one column (y of matrix·vector, and its output).
enum class VecAs { Row, Column };

/// A `kg::Mat<elem>` over dimensions [first, first + core) of tensor `t` (core 0, 1 or 2),
/// starting `offset` elements in (an expression, or "").
std::string mat_of(const std::string& elem, const std::string& t, int first, int core, VecAs as,
                   const std::string& offset = "") {
  auto shape = [&](int d) { return t + ".shape[" + str(first + d) + "]"; };
  auto stride = [&](int d) { return t + ".strides[" + str(first + d) + "]"; };
  std::string dims;
  if (core == 0)
    dims = "1, 1, 0, 0";
  else if (core == 1)
    dims = as == VecAs::Row ? "1, " + shape(0) + ", 0, " + stride(0) : shape(0) + ", 1, " + stride(0) + ", 0";
  else
    dims = shape(0) + ", " + shape(1) + ", " + stride(0) + ", " + stride(1);
  return "kg::Mat<" + elem + ">{" + t + ".data" + (offset.empty() ? "" : " + " + offset) + ", " + dims + "}";
}

/// Input i as a read-only operand of the product.
std::string in_mat(const NodeEmitContext& c, int i, int first, int core, VecAs as, const std::string& offset = "") {
  return mat_of("const " + ctype(c.in_var(i).dtype()), c.in(i), first, core, as, offset);
}

/// The output as the product's result.
std::string out_mat(const NodeEmitContext& c, int first, int core, VecAs as, const std::string& offset = "") {
  return mat_of(ctype(c.out_var(0).dtype()), c.out(0), first, core, as, offset);
}

/// `{{"x", v0.shape, 2}, ...}`: the operands named in a shape error, as kg::fail_shapes takes them.
std::string named_shapes(const NodeEmitContext& c, const std::vector<std::pair<const char*, int>>& operands) {
  std::string s;
  for (const auto& [name, i] : operands)
    s += std::string(s.empty() ? "" : ", ") + "{\"" + name + "\", " + c.in(i) + ".shape, " +
         str(c.in_var(i).ndim()) + "}";
  return "{" + s + "}";
}

TemplateData out_dim(int d, const std::string& len) {
  TemplateData item;
  item.set("d", str(d));
  item.set("len", len);
  return item;
}

/// What a GPU backend changes in the product templates: the kernel kg::product launches for
/// what its BLAS does not take, and the copy of input 0 into the output (queued on the
/// context's queue or stream, which may fail) ("" for the cpp backend: CBLAS and host loops).
void set_device(const NodeEmitContext& c, TemplateData& data, const std::string& device_kernel) {
  data.set("kernel_arg", device_kernel.empty() ? "" : device_kernel + ", ");
  const std::string operands = c.in(0) + ", " + c.out(0);
  data.set("copy_in0", device_kernel.empty() ? "kg::copy_tensor(" + operands + ");"
                                             : "KILN_TRY_AT(kg::copy_tensor(ctx, " + operands + "), kWhere);");
}

/// Input i's 0-d value converted to the output's element type: read in place on the host, or
/// (`device_kernel` set: a GPU backend) read from the device by a statement added to the
/// template's `device_reads` (one blocking read).
std::string scalar_of(const NodeEmitContext& c, int i, const std::string& device_kernel, TemplateData& data) {
  const std::string t = ctype(c.out_var(0).dtype());
  if (device_kernel.empty()) return "kiln_scalar::convert<" + t + ">(" + c.in(i) + ".data[0])";
  const std::string name = "scalar" + str(i);
  TemplateData read;
  read.set("stmt", t + " " + name + ";\nKILN_TRY_AT(kg::read_scalar(ctx, " + c.in(i) + ", " + name + "), kWhere);");
  TemplateData reads = data.get("device_reads") ? *data.get("device_reads") : new_list();
  reads.push_back(read);
  data.set("device_reads", reads);
  return name;
}

}  // namespace

static std::string dot_code(const NodeEmitContext& c, const std::string& device_kernel) {
  const int xr = c.in_var(0).ndim(), yr = c.in_var(1).ndim();
  const std::string t = ctype(c.out_var(0).dtype());
  TemplateData data = c.base_data();
  set_device(c, data, device_kernel);
  data.set("ctype", t);
  data.set("x_last", str(xr - 1));
  data.set("shapes", named_shapes(c, {{"x", 0}, {"y", 1}}));
  TemplateData dims = new_list();
  if (xr == 2) dims.push_back(out_dim(0, c.in(0) + ".shape[0]"));
  if (yr == 2) dims.push_back(out_dim(xr - 1, c.in(1) + ".shape[1]"));
  data.set("out_dims", dims);
  data.set("xmat", in_mat(c, 0, 0, xr, VecAs::Row));
  data.set("ymat", in_mat(c, 1, 0, yr, VecAs::Column));
  // A vector result is a column of matrix·vector or a row of vector·matrix.
  data.set("omat", out_mat(c, 0, c.out_var(0).ndim(), xr == 2 ? VecAs::Column : VecAs::Row));
  // Dot22Scalar's third input scales the product.
  data.set("alpha", c.node().num_inputs() == 3 ? scalar_of(c, 2, device_kernel, data) : t + "(1)");
  return render_op_template("dot", data);
}

static std::string batched_dot_code(const NodeEmitContext& c, const std::string& device_kernel) {
  const std::string t = ctype(c.out_var(0).dtype());
  const std::string x = c.in(0), y = c.in(1);
  TemplateData data = c.base_data();
  set_device(c, data, device_kernel);
  data.set("ctype", t);
  data.set("nb", "1");
  data.set("nb_or_1", "1");
  data.set("batch_dims", new_list());
  data.set("static_broadcast", new_list());
  TemplateData checks = new_list();
  const std::string shapes = named_shapes(c, {{"x", 0}, {"y", 1}});
  const std::vector<std::pair<std::string, std::string>> mismatches = {
      {x + ".shape[0] != " + y + ".shape[0]", "batch lengths differ"},
      {x + ".shape[2] != " + y + ".shape[1]", "inner dimensions do not match"}};
  for (const auto& [cond, what] : mismatches) {
    TemplateData item;
    item.set("mismatch", cond);
    item.set("failure", "kg::fail_shapes(ctx, \"" + what + "\", " + shapes + ")");
    checks.push_back(item);
  }
  data.set("checks", checks);
  TemplateData dims = new_list();
  dims.push_back(out_dim(0, x + ".shape[0]"));
  dims.push_back(out_dim(1, x + ".shape[1]"));
  dims.push_back(out_dim(2, y + ".shape[2]"));
  data.set("out_dims", dims);
  data.set("xmat", in_mat(c, 0, 1, 2, VecAs::Row, "off[0]"));
  data.set("ymat", in_mat(c, 1, 1, 2, VecAs::Column, "off[1]"));
  data.set("omat", out_mat(c, 1, 2, VecAs::Row, "off[2]"));
  if (!device_kernel.empty()) {
    data.set("batched_blas", true);
    data.set("xmat0", in_mat(c, 0, 1, 2, VecAs::Row));
    data.set("ymat0", in_mat(c, 1, 1, 2, VecAs::Column));
    data.set("omat0", out_mat(c, 1, 2, VecAs::Row));
  }
  return render_op_template("dot_batched", data);
}

static std::string blockwise_code(const NodeEmitContext& c, const std::string& device_kernel) {
  const auto& op = static_cast<const Blockwise&>(c.node().op());
  const GufuncSignature& sig = op.signature();
  const int nb = op.batch_ndim(c.node());
  TemplateData data = c.base_data();
  set_device(c, data, device_kernel);
  data.set("ctype", ctype(c.out_var(0).dtype()));
  data.set("nb", str(nb));
  data.set("nb_or_1", str(nb > 0 ? nb : 1));

  set_blockwise_batch_data(c, nb, data);
  const BlockwiseCoreDims core_dims = blockwise_core_dims(c, sig, nb);
  set_checks(core_dims.checks, data);
  const auto& first = core_dims.first;
  TemplateData dims = new_list();
  const auto& out_names = sig.outputs[0];
  for (std::size_t j = 0; j < out_names.size(); ++j) {
    const auto [i, d] = first.at(out_names[j]);  // Dot's outputs only use input names
    dims.push_back(out_dim(nb + static_cast<int>(j), c.in(i) + ".shape[" + str(d) + "]"));
  }
  data.set("out_dims", dims);

  const int xc = static_cast<int>(sig.inputs[0].size()), yc = static_cast<int>(sig.inputs[1].size());
  data.set("xmat", in_mat(c, 0, nb, xc, VecAs::Row, "off[0]"));
  data.set("ymat", in_mat(c, 1, nb, yc, VecAs::Column, "off[1]"));
  data.set("omat", out_mat(c, nb, static_cast<int>(out_names.size()), xc == 2 ? VecAs::Column : VecAs::Row,
                           "off[2]"));
  // A GPU backend with one batch dimension tries one strided-batched BLAS call first.
  if (!device_kernel.empty() && nb == 1) {
    data.set("batched_blas", true);
    data.set("xmat0", in_mat(c, 0, nb, xc, VecAs::Row));
    data.set("ymat0", in_mat(c, 1, nb, yc, VecAs::Column));
    data.set("omat0", out_mat(c, nb, static_cast<int>(out_names.size()), xc == 2 ? VecAs::Column : VecAs::Row));
  }
  return render_op_template("dot_batched", data);
}

static std::string gemv_code(const NodeEmitContext& c, const std::string& device_kernel) {
  // Gemv(y, a, A, x, b) = b*y + a*A@x.
  const std::string y = c.in(0), A = c.in(2), x = c.in(3);
  const DType dt = c.out_var(0).dtype();
  const bool b_zero = blas_ignores_initial(c.node());
  TemplateData data = c.base_data();
  set_device(c, data, device_kernel);
  data.set("ctype", ctype(dt));
  data.set("mismatch", A + ".shape[0] != " + y + ".shape[0] || " + A + ".shape[1] != " + x + ".shape[0]");
  data.set("what", c_string_literal("incompatible shapes for b*y + a*A@x"));
  data.set("shapes", named_shapes(c, {{"y", 0}, {"A", 2}, {"x", 3}}));
  TemplateData dims = new_list();
  dims.push_back(out_dim(0, y + ".shape[0]"));
  data.set("out_dims", dims);
  data.set("alpha", scalar_of(c, 1, device_kernel, data));
  data.set("beta", b_zero ? ctype(dt) + "(0)" : scalar_of(c, 4, device_kernel, data));
  data.set("reads_c", !b_zero);
  data.set("c_role", "y");
  data.set("xmat", in_mat(c, 2, 0, 2, VecAs::Row));
  data.set("ymat", in_mat(c, 3, 0, 1, VecAs::Column));
  data.set("omat", out_mat(c, 0, 1, VecAs::Column));
  return render_op_template("blas_gemv_gemm", data);
}

static std::string gemm_code(const NodeEmitContext& c, const std::string& device_kernel) {
  // Gemm(z, a, x, y, b) = b*z + a*x@y.
  const std::string z = c.in(0), x = c.in(2), y = c.in(3);
  const DType dt = c.out_var(0).dtype();
  const bool b_zero = blas_ignores_initial(c.node());
  TemplateData data = c.base_data();
  set_device(c, data, device_kernel);
  data.set("ctype", ctype(dt));
  data.set("mismatch", z + ".shape[0] != " + x + ".shape[0] || " + z + ".shape[1] != " + y + ".shape[1] || " + x +
                           ".shape[1] != " + y + ".shape[0]");
  data.set("what", c_string_literal("incompatible shapes for b*z + a*x@y"));
  data.set("shapes", named_shapes(c, {{"z", 0}, {"x", 2}, {"y", 3}}));
  TemplateData dims = new_list();
  dims.push_back(out_dim(0, z + ".shape[0]"));
  dims.push_back(out_dim(1, z + ".shape[1]"));
  data.set("out_dims", dims);
  data.set("alpha", scalar_of(c, 1, device_kernel, data));
  data.set("beta", b_zero ? ctype(dt) + "(0)" : scalar_of(c, 4, device_kernel, data));
  data.set("reads_c", !b_zero);
  data.set("c_role", "z");
  data.set("xmat", in_mat(c, 2, 0, 2, VecAs::Row));
  data.set("ymat", in_mat(c, 3, 0, 2, VecAs::Column));
  data.set("omat", out_mat(c, 0, 2, VecAs::Row));
  return render_op_template("blas_gemv_gemm", data);
}

static std::string ger_code(const NodeEmitContext& c, const std::string& device_kernel) {
  // Ger(A, a, x, y) = A + a*outer(x, y).
  const std::string A = c.in(0), x = c.in(2), y = c.in(3);
  TemplateData data = c.base_data();
  set_device(c, data, device_kernel);
  data.set("ctype", ctype(c.out_var(0).dtype()));
  data.set("mismatch", A + ".shape[0] != " + x + ".shape[0] || " + A + ".shape[1] != " + y + ".shape[0]");
  data.set("what", c_string_literal("incompatible shapes for A + a*outer(x, y)"));
  data.set("shapes", named_shapes(c, {{"A", 0}, {"x", 2}, {"y", 3}}));
  data.set("alpha", scalar_of(c, 1, device_kernel, data));
  data.set("xmat", in_mat(c, 2, 0, 1, VecAs::Column));
  data.set("ymat", in_mat(c, 3, 0, 1, VecAs::Row));
  data.set("omat", out_mat(c, 0, 2, VecAs::Row));
  return render_op_template("blas_ger", data);
}

static bool is_matrix_product_blockwise(const NodeEmitContext& c) {
  const std::string core(static_cast<const Blockwise&>(c.node().op()).core_op().name());
  return core == "Dot" || core == "Dot22";
}

std::string emit_dot(const NodeEmitContext& c) { return dot_code(c, ""); }
std::string emit_batched_dot(const NodeEmitContext& c) { return batched_dot_code(c, ""); }
std::string emit_blockwise(const NodeEmitContext& c) {
  return is_matrix_product_blockwise(c) ? blockwise_code(c, "") : emit_linalg_blockwise(c);
}
std::string emit_gemv(const NodeEmitContext& c) { return gemv_code(c, ""); }
std::string emit_gemm(const NodeEmitContext& c) { return gemm_code(c, ""); }
std::string emit_ger(const NodeEmitContext& c) { return ger_code(c, ""); }

std::string emit_product(const NodeEmitContext& c, const std::string& device_kernel) {
  const std::string op(c.node().op().name());
  if (op == "Dot" || op == "Dot22" || op == "Dot22Scalar") return dot_code(c, device_kernel);
  if (op == "BatchedDot") return batched_dot_code(c, device_kernel);
  if (op == "Blockwise") return blockwise_code(c, device_kernel);
  if (op == "Gemv" || op == "CGemv") return gemv_code(c, device_kernel);
  if (op == "Gemm") return gemm_code(c, device_kernel);
  if (op == "Ger" || op == "CGer") return ger_code(c, device_kernel);
  throw InternalError("emit_product: `" + op + "` is not a matrix product");
}

}  // namespace kiln
