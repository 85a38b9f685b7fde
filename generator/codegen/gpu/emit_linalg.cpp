// Linear algebra on a GPU backend, by the host path: the node's inputs read to host memory
// (kg::to_host of device_reads.hpp, one blocking read of each input's extent), the C++ backend's LAPACK
// code (emit_linalg.cpp of the cpp backend, templates/cpp/prologue/linalg.hpp) run on those
// copies, and each output uploaded to its device memory (kg::linalg::to_device). So results,
// batching (Blockwise), shape checks, error statuses and messages (singular, not positive
// definite, on_error='nan') are the cpp backend's. The cost is a round trip through host memory
// and a wait for the device per node (docs/gpu_backends.md, "Linear algebra"). Every linear
// algebra op of the cpp backend takes this path but Eig, whose results are complex, and
// KroneckerProduct and BlockDiagonal, which have device kernels (emit_structure.cpp). The cuda
// backend runs Cholesky, Solve (assume_a='gen'), SolveTriangular, CholeskySolve, MatrixInverse,
// Det and SLogDet with float results on the device instead, through cuSOLVER and cuBLAS
// (templates/cuda/prologue/device_linalg.hpp) with the same host code around them.
#include <set>
#include <string>

#include "codegen/c_names.h"
#include "codegen/c_types.h"
#include "codegen/cpp/emitters.h"
#include "codegen/gpu/emitters.h"
#include "ir/error.h"
#include "ops/blockwise.h"
#include "ops/linalg/linalg.h"

namespace kiln {

namespace {

std::string host_tensor_type(const Variable& v) {
  return "kg::Tensor<" + ctype(v.dtype()) + ", " + std::to_string(v.ndim()) + ">";
}

// The cuda backend's ops on the device (templates/cuda/prologue/device_linalg.hpp) when their
// results are float32/float64 (cuSOLVER's and cuBLAS's real types): Solve of a general matrix
// (getrf; the structured ones stay on the host path), the others whatever their props. The rest
// takes the host path.
bool cuda_device_linalg(const NodeEmitContext& c, const std::string& backend) {
  if (backend != "cuda") return false;
  const Op& op = c.node().op();
  const Op& core = op.name() == "Blockwise" ? static_cast<const Blockwise&>(op).core_op() : op;
  for (int k = 0; k < c.node().num_outputs(); ++k)
    if (c.out_var(k).dtype() != DType::Float32 && c.out_var(k).dtype() != DType::Float64) return false;
  if (const auto* s = dynamic_cast<const Solve*>(&core)) return s->structure() == kiln_linalg::Structure::General;
  for (const char* name : {"Cholesky", "SolveTriangular", "CholeskySolve", "MatrixInverse", "Det", "SLogDet"})
    if (core.name() == name) return true;
  return false;
}

}  // namespace

const std::vector<std::string>& gpu_linalg_ops() {
  static const std::vector<std::string> ops = {
      "Cholesky", "Solve", "SolveTriangular", "CholeskySolve", "MatrixInverse", "Det", "SLogDet", "LU", "LUFactor",
      "PivotToPermutations", "QR", "MatrixPinv", "Expm", "Eigh", "Eigvalsh", "SVD"};
  return ops;
}

bool gpu_emits_linalg(const Op& op) {
  const std::string name(op.name() == "Blockwise" ? static_cast<const Blockwise&>(op).core_op().name() : op.name());
  for (const std::string& o : gpu_linalg_ops())
    if (o == name) return true;
  return false;
}

NodeCode gpu_emit_linalg(const NodeEmitContext& c, const GpuDialect&, const std::string& backend) {
  if (!gpu_emits_linalg(c.node().op()))
    throw NotImplementedError("`" + c.node().op().str() + "` has no " + backend +
                              " implementation (of linear algebra the GPU backends lack only Eig, whose results are "
                              "complex)");
  if (cuda_device_linalg(c, backend)) {
    // The C++ backend's host code over device tensors; each matrix's work queued on the stream,
    // its buffers in the node's device slot.
    LinalgSpelling sp;
    sp.mat_type = "kg::cusolver::DMat";
    sp.kernels = "kg::cusolver::";
    sp.args = "ictx, ar, " + std::to_string(c.scratch_slot()) + ", kWhere";
    sp.host_scratch = false;
    return NodeCode(emit_linalg_spelled(c, sp));
  }
  const std::string key = c.kernel_name();
  const int n_in = c.node().num_inputs(), n_out = c.node().num_outputs();
  // Outer block: the device tensors under other names; inner block: host tensors under the
  // variables' own names, which the C++ backend's code uses.
  std::string code = "{\n  // " + comment_text(c.node().op().str(), 100) + ": LAPACK on host copies\n";
  std::set<std::string> seen;
  for (int i = 0; i < n_in; ++i)
    if (seen.insert(c.in(i)).second) code += "  auto& kiln_dev_" + c.in(i) + " = " + c.in(i) + ";\n";
  for (int k = 0; k < n_out; ++k) code += "  " + host_tensor_type(c.out_var(k)) + " kiln_host_" + c.out(k) + ";\n";
  code += "  {\n";
  seen.clear();
  for (int i = 0; i < n_in; ++i) {
    const std::string v = c.in(i);
    if (!seen.insert(v).second) continue;
    code += "    " + host_tensor_type(c.in_var(i)) + " " + v + ";\n    KILN_TRY_AT(kg::to_host(ctx, kiln_dev_" + v +
            ", " + c_string_literal(key + "_in" + std::to_string(i)) + ", " + v + "), kWhere);\n";
  }
  for (int k = 0; k < n_out; ++k)
    code += "    " + host_tensor_type(c.out_var(k)) + "& " + c.out(k) + " = kiln_host_" + c.out(k) + ";\n";
  LinalgSpelling sp;
  sp.mat_type = "kg::linalg::Mat";
  sp.alloc = [&c, key](int k) {
    return "KILN_TRY_AT(kg::linalg::host_output(ctx, " + c_string_literal(key + "_out" + std::to_string(k)) + ", " +
           c.out(k) + "), kWhere);";
  };
  code += indent_lines(emit_linalg_spelled(c, sp), "    ") + "\n  }\n";
  for (int k = 0; k < n_out; ++k)
    code += "  KILN_TRY_AT(kg::linalg::to_device(ctx, kiln_host_" + c.out(k) + ", " + c.out(k) + ", [&]() -> int32_t {\n" +
            indent_lines(c.alloc(k), "    ") + "\n    return KILN_OK;\n  }), kWhere);\n";
  return NodeCode(code + "}");
}

}  // namespace kiln
