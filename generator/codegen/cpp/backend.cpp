#include "codegen/cpp/backend.h"

#include "codegen/c_names.h"
#include "codegen/cpp/emit_control_flow.h"
#include "codegen/cpp/emitters.h"
#include "ir/error.h"

namespace kiln {

std::string ctype(DType dt) {
  switch (dt) {
    case DType::Bool: return "bool";
    case DType::Int8: return "int8_t";
    case DType::Int16: return "int16_t";
    case DType::Int32: return "int32_t";
    case DType::Int64: return "int64_t";
    case DType::UInt8: return "uint8_t";
    case DType::UInt16: return "uint16_t";
    case DType::UInt32: return "uint32_t";
    case DType::UInt64: return "uint64_t";
    case DType::Float32: return "float";
    case DType::Float64: return "double";
  }
  return "void";
}

std::string dl_dtype_literal(DType dt) {
  DLDataType t = to_dlpack(dt);
  return "DLDataType{" + std::to_string(t.code) + ", " + std::to_string(t.bits) + ", 1}";
}

std::string tensor_type(const Variable& v) {
  return "kg::Tensor<" + ctype(v.dtype()) + ", " + std::to_string(v.ndim()) + ">";
}

std::string NodeEmitContext::in(int i) const { return lg_.var(node_.input(i).get()).cname; }
std::string NodeEmitContext::out(int i) const { return lg_.var(node_.output_ptr(i)).cname; }

const Apply* NodeEmitContext::fused_gather(int i) const {
  const Apply* owner = node_.input(i)->owner();
  return owner && lg_.fused_gathers.count(owner) ? owner : nullptr;
}

std::string NodeEmitContext::alloc(int i) const {
  const Variable* v = node_.output_ptr(i);
  const LoweredVar& lv = lg_.var(v);
  std::string code;
  // A declared static length the op cannot guarantee (GRAPH_FORMAT.md: trusted, checked here).
  TensorType inferred = node_.op().infer_types(node_.inputs())[static_cast<std::size_t>(i)];
  for (int d = 0; d < v->ndim(); ++d) {
    std::int64_t want = v->shape()[static_cast<std::size_t>(d)];
    if (want != kUnknownLength && inferred.shape[static_cast<std::size_t>(d)] == kUnknownLength)
      code += "KILN_TRY_AT(kg::check_static_length(ctx, " + lv.cname + ".shape[" + std::to_string(d) +
              "], " + std::to_string(want) + ", " + std::to_string(d) + "), kWhere);\n";
  }
  switch (lv.kind) {
    case StorageKind::Workspace:
      code += "KILN_TRY_AT(kg::alloc_workspace(ctx, " + std::to_string(lv.slot) + ", " + lv.cname + "), kWhere);";
      break;
    case StorageKind::Output:
      code += "KILN_TRY_AT(kg::alloc_output(ctx, sink, " + std::to_string(lv.output_index) + ", " +
              lv.cname + ", " + dl_dtype_literal(v->dtype()) + "), kWhere);";
      break;
    default:
      break;
  }
  return code;
}

int NodeEmitContext::scratch_slot() const {
  auto it = lg_.scratch_slots.find(&node_);
  KILN_INTERNAL_ASSERT(it != lg_.scratch_slots.end(), "node has no scratch slot");
  return it->second;
}

TemplateData NodeEmitContext::base_data() const {
  TemplateData d;
  for (int i = 0; i < node_.num_inputs(); ++i) d.set("in" + std::to_string(i), in(i));
  for (int i = 0; i < node_.num_outputs(); ++i) {
    d.set("out" + std::to_string(i), out(i));
    d.set("alloc" + std::to_string(i), alloc(i));
  }
  return d;
}

const std::vector<CppOpEntry>& cpp_backend_table() {
  static const std::vector<CppOpEntry> table = {
      {"Elemwise", emit_elemwise, false},
      {"DimShuffle", emit_dimshuffle, true},
      {"Shape", emit_shape, false},
      {"Shape_i", emit_shape_i, false},
      {"IfElse", emit_ifelse, false},
      {"Subtensor", emit_subtensor, true},
      {"IncSubtensor", emit_inc_subtensor, false},
      {"AdvancedSubtensor1", emit_advanced_subtensor1, false},
      {"AdvancedIncSubtensor1", emit_advanced_inc_subtensor1, false},
      {"AdvancedSubtensor", emit_advanced_subtensor, false},
      {"AdvancedIncSubtensor", emit_advanced_inc_subtensor, false},
      {"Reshape", emit_reshape, false},
      {"SpecifyShape", emit_specify_shape, true},
      {"Alloc", emit_alloc, false},
      {"AllocEmpty", emit_alloc_empty, false},
      {"MakeVector", emit_make_vector, false},
      {"Join", emit_join, false},
      {"Split", emit_split, false},
      {"ARange", emit_arange, false},
      {"Eye", emit_eye_like, false},
      {"Tri", emit_eye_like, false},
      {"ExtractDiag", emit_extract_diag, true},
      {"AllocDiag", emit_alloc_diag, false},
      {"CheckAndRaise", emit_check_and_raise, true},
      {"Assert", emit_check_and_raise, true},
      {"Sum", emit_careduce, false},
      {"Prod", emit_careduce, false},
      {"ProdWithoutZeros", emit_careduce, false},
      {"Max", emit_careduce, false},
      {"Min", emit_careduce, false},
      {"All", emit_careduce, false},
      {"Any", emit_careduce, false},
      {"CAReduce", emit_careduce, false},
      {"Argmax", emit_argmax, false},
      {"CumOp", emit_cumop, false},
      {"Softmax", emit_softmax, false},
      {"LogSoftmax", emit_softmax, false},
      {"SoftmaxGrad", emit_softmax_grad, false},
      {"SortOp", emit_sort, false},
      {"ArgSortOp", emit_sort, false},
      {"Repeat", emit_repeat, false},
      {"BroadcastTo", emit_broadcast_to, true},
      {"SearchsortedOp", emit_searchsorted, false},
      {"Nonzero", emit_nonzero, false},
      {"Unique", emit_unique, false},
      {"FillDiagonal", emit_fill_diagonal, false},
      {"FillDiagonalOffset", emit_fill_diagonal, false},
      {"Dot", emit_dot, false, true},
      {"Dot22", emit_dot, false, true},
      {"Dot22Scalar", emit_dot, false, true},
      {"BatchedDot", emit_batched_dot, false, true},
      {"Blockwise", emit_blockwise, false, true, true},
      {"Gemv", emit_gemv, false, true},
      {"CGemv", emit_gemv, false, true},
      {"Gemm", emit_gemm, false, true},
      {"Ger", emit_ger, false, true},
      {"CGer", emit_ger, false, true},
      {"Cholesky", emit_linalg, false, true, true},
      {"Solve", emit_linalg, false, true, true},
      {"SolveTriangular", emit_linalg, false, true, true},
      {"CholeskySolve", emit_linalg, false, true, true},
      {"LU", emit_linalg, false, true, true},
      {"LUFactor", emit_linalg, false, true, true},
      {"PivotToPermutations", emit_linalg, false, true, true},
      {"QR", emit_linalg, false, true, true},
      {"MatrixInverse", emit_linalg, false, true, true},
      {"MatrixPinv", emit_linalg, false, true, true},
      {"Det", emit_linalg, false, true, true},
      {"SLogDet", emit_linalg, false, true, true},
      {"Expm", emit_linalg, false, true, true},
      {"Eigh", emit_linalg, false, true, true},
      {"Eigvalsh", emit_linalg, false, true, true},
      {"SVD", emit_linalg, false, true, true},
      {"KroneckerProduct", emit_linalg, false, true, true},
      {"BlockDiagonal", emit_linalg, false, true, true},
  };
  return table;
}

const CppOpEntry& cpp_entry(const Op& op) {
  for (const auto& e : cpp_backend_table())
    if (e.op_name == op.name()) return e;
  throw NotImplementedError("`" + op.str() + "` has no cpp implementation");
}

}  // namespace kiln
