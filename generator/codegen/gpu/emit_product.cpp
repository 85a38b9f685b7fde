// Matrix products on a GPU: Dot, Dot22, Dot22Scalar, BatchedDot, Blockwise of Dot/Dot22, Gemv,
// Gemm and Ger. The host code is the C++ backend's (emit_dot.cpp's templates: the same shape
// checks, messages, batch loops and broadcasting) over device tensors; its kg::product is the
// device one (templates/gpu/prologue/device_blas.hpp): float32/float64 operands BLAS can read
// in place go to the device's BLAS (CLBlast for opencl, cuBLAS for cuda), everything else
// (integer and mixed dtypes, layouts without a leading dimension) to the node's tiled kernel
// rendered here from templates/gpu/matmul.mustache.
#include "codegen/c_names.h"
#include "codegen/c_types.h"
#include "codegen/cpp/emitters.h"
#include "codegen/gpu/emitters.h"
#include "ir/error.h"
#include "ops/blockwise.h"

namespace kiln {

namespace {

// The inputs that are the product's x and y (Gemv's A and x, Gemm's x and y, Ger's x and y).
std::pair<int, int> product_operands(const std::string& op) {
  if (op == "Gemv" || op == "CGemv" || op == "Gemm" || op == "Ger" || op == "CGer") return {2, 3};
  return {0, 1};
}

// A dtype the tiled kernel computes in, or NotImplementedError naming the node.
void check_product_dtype(const NodeEmitContext& c, DType dt, const std::string& backend) {
  if (!is_float(dt) && !is_integer(dt) && !is_bool(dt))
    throw NotImplementedError("`" + c.node().op().str() + "` with " + std::string(dtype_name(dt)) +
                              " output has no " + backend + " implementation (float, integer and bool products only)");
}

}  // namespace

NodeCode gpu_emit_product(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  const std::string op(c.node().op().name());
  if (op == "Blockwise") {
    const std::string core(static_cast<const Blockwise&>(c.node().op()).core_op().name());
    if (core != "Dot" && core != "Dot22")
      throw NotImplementedError("`" + c.node().op().str() + "` has no " + backend +
                                " implementation (Blockwise of Dot/Dot22, or of the linear algebra the GPU backends run)");
  }
  const DType out = c.out_var(0).dtype();
  check_product_dtype(c, out, backend);
  const auto [xi, yi] = product_operands(op);
  const std::string T = gpu_storage_type(out), name = c.kernel_name();
  const std::string X = gpu_storage_type(c.in_var(xi).dtype()), Y = gpu_storage_type(c.in_var(yi).dtype());
  TemplateData data = d.data();
  data.set("name", name);
  data.set("comment", comment_text(c.node().op().str(), 100));
  data.set("T", T);
  data.set("S", is_float(out) ? "double" : "int64_t");
  if (is_bool(out)) {
    // NumPy's bool product: OR of ANDs (bytes 0 and 1).
    data.set("mad", "(uint8_t)(acc | (a & b))");
    data.set("scale_acc", "(uint8_t)(alpha & acc)");
    data.set("scale_both", "(uint8_t)((beta & c[o]) | (alpha & acc))");
  } else {
    // Integers wrap: unsigned arithmetic at least 32 bits wide (narrower unsigned types
    // promote to int, whose overflow is undefined), truncated back to T.
    const std::string U = is_float(out) ? T : dtype_size(out) == 8 ? "uint64_t" : "uint32_t";
    const auto wrap = [&](const std::string& e) { return is_float(out) ? e : "(" + T + ")(" + e + ")"; };
    const auto u = [&](const std::string& v) { return is_float(out) ? v : "(" + U + ")" + v; };
    data.set("wraps", !is_float(out));
    data.set("U", U);
    data.set("mad", wrap(u("acc") + " + " + u("a") + " * " + u("b")));
    data.set("scale_acc", wrap(u("alpha") + " * " + u("acc")));
    data.set("scale_both", wrap(u("beta") + " * " + u("c[o]") + " + " + u("alpha") + " * " + u("acc")));
  }
  data.set("params", d.buffer_param(X, "x", true) + ", " + d.buffer_param(Y, "y", true) + ", " +
                         d.buffer_param(T, "c", false));
  std::string binds;
  for (const std::string& b : {d.buffer_bind(X, "x", true), d.buffer_bind(Y, "y", true), d.buffer_bind(T, "c", false)})
    if (!b.empty()) binds += (binds.empty() ? "" : "\n  ") + b;
  data.set("binds", binds);
  data.set("x_tile", d.local_array(T, "xt", 256));
  data.set("y_tile", d.local_array(T, "yt", 256));
  return NodeCode(emit_product(c, d.kernel_ref(name)), render_template("templates/gpu/matmul.mustache", data));
}

}  // namespace kiln
