// Every emitter of the C++ backend (one codegen/cpp/emit_<family>.cpp per op family).
#pragma once

#include <functional>

#include "codegen/cpp/backend.h"

namespace kiln {

class AdvancedIndex;
struct AdvancedLayout;

std::string emit_elemwise(const NodeEmitContext& c);
std::string emit_dimshuffle(const NodeEmitContext& c);
std::string emit_shape(const NodeEmitContext& c);
std::string emit_shape_i(const NodeEmitContext& c);
std::string emit_subtensor(const NodeEmitContext& c);
std::string emit_inc_subtensor(const NodeEmitContext& c);
/// IncSubtensor's template data (the resolved index, the region's lengths and strides, the
/// update expression in C++), which the GPU backends render with their own host code.
TemplateData inc_subtensor_data(const NodeEmitContext& c);
std::string emit_advanced_subtensor1(const NodeEmitContext& c);
std::string emit_advanced_inc_subtensor1(const NodeEmitContext& c);
/// The row scatter of AdvancedIncSubtensor1 for any node with inputs (x, y, idx) and those
/// flags; `op_name` goes into its run-time broadcasting message.
std::string emit_row_scatter(const NodeEmitContext& c, const std::string& op_name, bool set, bool ignore_duplicates);
/// A single integer vector on axis 0 with nothing else: the row gather/scatter of the
/// AdvancedSubtensor1 family serves AdvancedSubtensor and AdvancedIncSubtensor of that form
/// (same inputs: x[, y], idx).
bool is_row_index(const AdvancedIndex& index, const AdvancedLayout& lay);
/// The row scatter's host checks of y against the indexed rows (`target`, declared before
/// them): PyTensor's refusal of run-time broadcasting and NumPy's value-shape message.
std::string emit_row_scatter_checks(const NodeEmitContext& c, const std::string& op_name);
/// `a = a + b` (or `a = b`) for one element as C++: the new value of `a` (x's dtype) given `b`
/// (y's dtype), the sum in upcast(x, y) with integer wrap-around converted back to x's dtype.
std::string update_expr(DType x, DType y, bool set);
/// AdvancedSubtensor and AdvancedIncSubtensor (emit_advanced_indexing.cpp).
std::string emit_advanced_subtensor(const NodeEmitContext& c);
std::string emit_advanced_inc_subtensor(const NodeEmitContext& c);
/// Their host code over device tensors for any form but masks (the GPU backends): the same
/// resolution of shapes and slices, index values checked by a kernel per index operand
/// (`<kernel>_check<slot>`: the status word), then the gather (`<kernel>_take`) or the update
/// (`<kernel>_scatter`), each named to the host by `ref` (templates/gpu/host/advanced_*).
std::string emit_device_advanced_gather(const NodeEmitContext& c, const std::function<std::string(const std::string&)>& ref);
std::string emit_device_advanced_update(const NodeEmitContext& c, const std::function<std::string(const std::string&)>& ref);

/// Shape-building ops (emit_shape_ops.cpp).
std::string emit_reshape(const NodeEmitContext& c, const std::string& device_fill = {});
std::string emit_specify_shape(const NodeEmitContext& c);
/// Alloc, ARange, Eye/Tri, Join: `device_fill` (a GPU backend's launch code) replaces the host loops
/// that fill the output, after the same shape computation and checks.
std::string emit_alloc(const NodeEmitContext& c, const std::string& device_fill = {});
std::string emit_alloc_empty(const NodeEmitContext& c);
/// AllocEmpty and Split over device tensors (the GPU backends): the same shape code and checks,
/// the zero fill and the pieces' copies through kg::zero_fill and kg::copy_tensor(ctx, ...).
std::string emit_device_alloc_empty(const NodeEmitContext& c);
std::string emit_device_split(const NodeEmitContext& c);
/// Split computing its pieces' lengths only (a GPU backend's shape function has no data).
std::string emit_split_lengths(const NodeEmitContext& c);
std::string emit_make_vector(const NodeEmitContext& c);
std::string emit_join(const NodeEmitContext& c, const std::string& device_fill = {});
std::string emit_split(const NodeEmitContext& c);
std::string emit_arange(const NodeEmitContext& c, const std::string& device_fill = {});
std::string emit_eye_like(const NodeEmitContext& c, const std::string& device_fill = {});
std::string emit_extract_diag(const NodeEmitContext& c);
std::string emit_alloc_diag(const NodeEmitContext& c);
/// AllocDiag over device tensors (the GPU backends): the same shapes, then `device_template`
/// (rendered with the same data) fills the output.
std::string emit_device_alloc_diag(const NodeEmitContext& c, const std::string& device_template);
std::string emit_check_and_raise(const NodeEmitContext& c);
/// ZeroGrad, DisconnectedGrad, UndefinedGrad, GradClip, GradScale (left by --no-rewrite;
/// canonicalize removes them): the output is the input.
std::string emit_pass_through(const NodeEmitContext& c);

/// Sorting and the ops of extra_ops.py (emit_extra_ops.cpp): SortOp/ArgSortOp, Repeat,
/// BroadcastTo (a view), SearchsortedOp, Nonzero, Unique, FillDiagonal/FillDiagonalOffset.
std::string emit_sort(const NodeEmitContext& c);
std::string emit_repeat(const NodeEmitContext& c);
std::string emit_broadcast_to(const NodeEmitContext& c);
std::string emit_searchsorted(const NodeEmitContext& c);
std::string emit_nonzero(const NodeEmitContext& c);
std::string emit_unique(const NodeEmitContext& c);
std::string emit_fill_diagonal(const NodeEmitContext& c);
/// Repeat and FillDiagonal/FillDiagonalOffset over device tensors (the GPU backends): the same
/// shape code, checks and messages, the output filled by `kernel_ref` (a kernel of the node:
/// templates/gpu/fill.mustache); Repeat reads its counts to the host and keeps them in the
/// node's scratch slot (the output's length depends on them).
std::string emit_device_repeat(const NodeEmitContext& c, const std::string& kernel_ref);
std::string emit_device_fill_diagonal(const NodeEmitContext& c, const std::string& kernel_ref);

/// Reductions (emit_reduce.cpp): every CAReduce name, and Argmax.
NodeCode emit_careduce(const NodeEmitContext& c);
std::string emit_argmax(const NodeEmitContext& c);
/// CumOp (emit_cumulative.cpp).
std::string emit_cumop(const NodeEmitContext& c);
/// Softmax and LogSoftmax, and SoftmaxGrad (emit_softmax.cpp).
std::string emit_softmax(const NodeEmitContext& c);
std::string emit_softmax_grad(const NodeEmitContext& c);
/// Products (emit_dot.cpp): Dot, Dot22 and Dot22Scalar; BatchedDot; Blockwise of Dot/Dot22;
/// Gemv/CGemv, Gemm, Ger/CGer. They call CBLAS for float32/float64.
std::string emit_dot(const NodeEmitContext& c);
std::string emit_batched_dot(const NodeEmitContext& c);
std::string emit_blockwise(const NodeEmitContext& c);
std::string emit_gemv(const NodeEmitContext& c);
std::string emit_gemm(const NodeEmitContext& c);
std::string emit_ger(const NodeEmitContext& c);
/// Any of those products (a Blockwise of Dot/Dot22) for a GPU backend: the same host code over
/// device tensors, kg::product launching `device_kernel` (templates/gpu/matmul.mustache) for
/// what the device's BLAS does not take, copies queued on the context.
std::string emit_product(const NodeEmitContext& c, const std::string& device_kernel);

/// Linear algebra (emit_linalg.cpp): every op of ops/linalg/, and Blockwise nodes whose core op
/// is one (emit_blockwise hands those over).
std::string emit_linalg(const NodeEmitContext& c);
std::string emit_linalg_blockwise(const NodeEmitContext& c);
/// How the linear-algebra code spells what differs where it runs on host copies of device
/// tensors (the GPU backends' host path, codegen/gpu/emit_linalg.cpp): the matrix view type,
/// and the code giving output k its (host) memory instead of NodeEmitContext::alloc.
struct LinalgSpelling {
  std::string mat_type = "kg::Mat";
  std::function<std::string(int)> alloc;
  /// The namespace of the per-matrix kernels of the one-matrix ops (Cholesky, MatrixInverse,
  /// Det, SLogDet) and the solves (Solve, SolveTriangular, CholeskySolve), and their leading
  /// arguments.
  std::string kernels = "kg::linalg::";
  std::string args = "ictx, ar";
  /// Whether the kernels take their work buffers from the host scratch for_each_item hands out
  /// (false: kernels on the device, whose buffers are in the node's device slot).
  bool host_scratch = true;
};
/// A linear-algebra node (core op or Blockwise of one) in that spelling.
std::string emit_linalg_spelled(const NodeEmitContext& c, const LinalgSpelling& spelling);

/// Every RandomVariable (emit_random.cpp): NumPy's draws through runtime/.../random/variables.hpp.
std::string emit_random_variable(const NodeEmitContext& c);
/// Every RandomVariable with core dimensions (emit_random.cpp): runtime/.../random/core_variables.hpp.
std::string emit_core_random_variable(const NodeEmitContext& c);
/// PermutationRV (emit_random.cpp): NumPy's shuffles, then x's rows gathered.
std::string emit_permutation(const NodeEmitContext& c);
/// ChoiceWithoutReplacement (emit_random.cpp): NumPy's choice without replacement, then a's rows gathered.
std::string emit_choice_without_replacement(const NodeEmitContext& c);
/// A row-block group (codegen/row_block_fusion.h) as one step (emit_row_block.cpp);
/// `where(node)` is the C string literal naming a member in error messages.
std::string emit_row_block(const RowBlockGroup& group, const LoweredGraph& lg, int step,
                           const std::function<std::string(const Apply&)>& where);

}  // namespace kiln
