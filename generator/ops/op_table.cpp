#include "ops/op_table.h"

#include "ir/error.h"
#include "ops/advanced_subtensor.h"
#include "ops/alloc.h"
#include "ops/assert.h"
#include "ops/gradient_ops.h"
#include "ops/blas.h"
#include "ops/blockwise.h"
#include "ops/cumulative.h"
#include "ops/diag.h"
#include "ops/dimshuffle.h"
#include "ops/dot.h"
#include "ops/elemwise.h"
#include "ops/extra_ops.h"
#include "ops/fill_diagonal.h"
#include "ops/ifelse.h"
#include "ops/join.h"
#include "ops/linalg/linalg.h"
#include "ops/op_from_graph.h"
#include "ops/random.h"
#include "ops/random_core.h"
#include "ops/random_choice.h"
#include "ops/random_permutation.h"
#include "ops/reduce.h"
#include "ops/reshape.h"
#include "ops/scan.h"
#include "ops/shape.h"
#include "ops/softmax.h"
#include "ops/sort.h"
#include "ops/subtensor.h"
#include "ops/unique.h"

namespace kiln {

namespace {

// For op kinds the format names but kiln does not implement yet: the graph loads as far as
// the format goes, then stops here with a clear message naming the op.
[[maybe_unused]] OpPtr not_implemented_yet(PropReader& props, const std::vector<TensorType>&) {
  std::string node = props.where("");
  node = node.substr(0, node.rfind("/props"));
  throw NotImplementedError(props.op_name() + " is not implemented yet in kiln", node);
}

// The table plus one entry per RandomVariable class (ops/random; the factory reads the class
// from the node's op name).
std::vector<OpEntry> with_random_variables(std::vector<OpEntry> table) {
  for (const auto& d : rv_distributions()) table.push_back({d.op, random_variable_from_props});
  for (const auto& d : rv_core_distributions()) table.push_back({d.op, core_random_variable_from_props});
  table.push_back({"PermutationRV", permutation_from_props});
  table.push_back({"ChoiceWithoutReplacement", choice_without_replacement_from_props});
  return table;
}

}  // namespace

const std::vector<OpEntry>& op_table() {
  static const std::vector<OpEntry> table = with_random_variables({
      // --- elementwise and dimension shuffles (ops/elemwise, ops/dimshuffle)
      {"Elemwise", elemwise_from_props},
      {"DimShuffle", dimshuffle_from_props},
      {"ExpandDims", expand_dims_from_props, "DimShuffle"},
      {"Squeeze", squeeze_from_props, "DimShuffle"},
      {"Transpose", transpose_from_props, "DimShuffle"},
      {"MatrixTranspose", matrix_transpose_from_props, "DimShuffle"},
      // --- shapes (ops/shape)
      {"Shape", shape_from_props},
      {"Shape_i", shape_i_from_props},
      // --- reductions, cumulative ops, softmax (ops/reduce, ops/cumulative, ops/softmax)
      {"CAReduce", careduce_from_props},
      {"Sum", sum_from_props},
      {"Prod", prod_from_props},
      {"Max", max_from_props},
      {"Min", min_from_props},
      {"All", all_from_props},
      {"Any", any_from_props},
      {"ProdWithoutZeros", prod_without_zeros_from_props},
      {"Argmax", argmax_from_props},
      {"CumOp", cumop_from_props},
      {"Softmax", softmax_from_props},
      {"LogSoftmax", log_softmax_from_props},
      {"SoftmaxGrad", softmax_grad_from_props},
      // --- shape-building and checking ops (ops/reshape, ops/alloc, ops/join, ops/ranges, ...)
      {"Reshape", reshape_from_props},
      {"SpecifyShape", specify_shape_from_props},
      {"Alloc", alloc_from_props},
      {"AllocEmpty", alloc_empty_from_props},
      {"MakeVector", make_vector_from_props},
      {"Join", join_from_props},
      {"Split", split_from_props},
      {"ARange", arange_from_props},
      {"Eye", eye_from_props},
      {"Tri", tri_from_props},
      {"ExtractDiag", extract_diag_from_props},
      {"AllocDiag", alloc_diag_from_props},
      {"CheckAndRaise", check_and_raise_from_props},
      {"Assert", assert_from_props},
      // pytensor.gradient's ops: views that change only the gradient (ops/gradient_ops)
      {"ZeroGrad", zero_grad_from_props},
      {"DisconnectedGrad", disconnected_grad_from_props},
      {"UndefinedGrad", undefined_grad_from_props},
      {"GradClip", grad_clip_from_props},
      {"GradScale", grad_scale_from_props},
      // --- indexing (ops/subtensor, ops/advanced_subtensor)
      {"Subtensor", subtensor_from_props},
      {"IncSubtensor", inc_subtensor_from_props},
      {"AdvancedSubtensor1", advanced_subtensor1_from_props},
      {"AdvancedIncSubtensor1", advanced_inc_subtensor1_from_props},
      {"AdvancedSubtensor", advanced_subtensor_from_props},
      {"AdvancedIncSubtensor", advanced_inc_subtensor_from_props},
      // --- sorting and the other ops of extra_ops.py (ops/sort, ops/extra_ops, ops/unique, ...)
      {"SortOp", sort_from_props},
      {"ArgSortOp", argsort_from_props},
      {"Repeat", repeat_from_props},
      {"BroadcastTo", broadcast_to_from_props},
      {"SearchsortedOp", searchsorted_from_props},
      {"Nonzero", nonzero_from_props},
      {"Unique", unique_from_props},
      {"FillDiagonal", fill_diagonal_from_props},
      {"FillDiagonalOffset", fill_diagonal_offset_from_props},
      // --- products and BLAS forms (ops/dot, ops/blas, ops/blockwise)
      {"Dot", dot_from_props},
      {"Gemv", gemv_from_props},
      {"CGemv", cgemv_from_props},
      {"Gemm", gemm_from_props},
      {"Ger", ger_from_props},
      {"CGer", cger_from_props},
      {"Dot22", dot22_from_props},
      {"Dot22Scalar", dot22scalar_from_props},
      {"BatchedDot", batched_dot_from_props},
      {"Blockwise", blockwise_from_props},
      // --- ops defined by an inner graph (ops/op_from_graph; inlined before rewriting)
      {"OpFromGraph", op_from_graph_from_props},
      // --- control flow (ops/ifelse; lazy: ir/branch_schedule.h)
      {"IfElse", ifelse_from_props},
      // --- loops (ops/scan; the step function runs once per step)
      {"Scan", scan_from_props},
      // --- linear algebra (ops/linalg/)
      {"Cholesky", cholesky_from_props},
      {"Solve", solve_from_props},
      {"SolveTriangular", solve_triangular_from_props},
      {"CholeskySolve", cholesky_solve_from_props},
      {"LU", lu_from_props},
      {"LUFactor", lu_factor_from_props},
      {"PivotToPermutations", pivot_to_permutations_from_props},
      {"QR", qr_from_props},
      {"MatrixInverse", matrix_inverse_from_props},
      {"MatrixPinv", matrix_pinv_from_props},
      {"Det", det_from_props},
      {"SLogDet", slogdet_from_props},
      {"Expm", expm_from_props},
      {"Eig", eig_from_props},
      {"Eigh", eigh_from_props},
      {"Eigvalsh", eigvalsh_from_props},
      {"SVD", svd_from_props},
      {"KroneckerProduct", kronecker_product_from_props},
      {"BlockDiagonal", block_diagonal_from_props},
  });
  return table;
}

bool OpEntry::implemented() const { return make != not_implemented_yet; }

const OpEntry* find_op(std::string_view name) {
  for (const auto& e : op_table())
    if (e.name == name) return &e;
  return nullptr;
}

}  // namespace kiln
