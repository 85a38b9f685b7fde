#include "ops/op_table.h"

#include "ir/error.h"
#include "ops/dimshuffle.h"
#include "ops/elemwise.h"
#include "ops/shape.h"

namespace kiln {

namespace {

// For op kinds the format names but kiln does not implement yet: the graph loads as far as
// the format goes, then stops here with a clear message naming the op.
OpPtr not_implemented_yet(PropReader& props, const std::vector<TensorType>&) {
  std::string node = props.where("");
  node = node.substr(0, node.rfind("/props"));
  throw NotImplementedError(props.op_name() + " is not implemented yet in kiln", node);
}

}  // namespace

const std::vector<OpEntry>& op_table() {
  static const std::vector<OpEntry> table = {
      // --- elementwise and dimension shuffles (ops/elemwise, ops/dimshuffle)
      {"Elemwise", elemwise_from_props},
      {"DimShuffle", dimshuffle_from_props},
      {"ExpandDims", expand_dims_from_props},
      {"Squeeze", squeeze_from_props},
      {"Transpose", transpose_from_props},
      // --- shapes (ops/shape)
      {"Shape", shape_from_props},
      {"Shape_i", shape_i_from_props},
      // --- reductions, cumulative ops, softmax (ops/reduce, ops/cumulative, ops/softmax)
      {"CAReduce", not_implemented_yet},
      {"Sum", not_implemented_yet},
      {"Prod", not_implemented_yet},
      {"Max", not_implemented_yet},
      {"Min", not_implemented_yet},
      {"All", not_implemented_yet},
      {"Any", not_implemented_yet},
      {"ProdWithoutZeros", not_implemented_yet},
      {"Argmax", not_implemented_yet},
      {"CumOp", not_implemented_yet},
      {"Softmax", not_implemented_yet},
      {"LogSoftmax", not_implemented_yet},
      {"SoftmaxGrad", not_implemented_yet},
      // --- shape-building and checking ops (ops/reshape, ops/alloc, ops/join, ops/ranges, ...)
      {"Reshape", not_implemented_yet},
      {"SpecifyShape", not_implemented_yet},
      {"Alloc", not_implemented_yet},
      {"AllocEmpty", not_implemented_yet},
      {"MakeVector", not_implemented_yet},
      {"Join", not_implemented_yet},
      {"Split", not_implemented_yet},
      {"ARange", not_implemented_yet},
      {"Eye", not_implemented_yet},
      {"Tri", not_implemented_yet},
      {"ExtractDiag", not_implemented_yet},
      {"AllocDiag", not_implemented_yet},
      {"CheckAndRaise", not_implemented_yet},
      {"Assert", not_implemented_yet},
      // --- indexing (ops/subtensor, ops/advanced_subtensor)
      {"Subtensor", not_implemented_yet},
      {"IncSubtensor", not_implemented_yet},
      {"AdvancedSubtensor1", not_implemented_yet},
      {"AdvancedIncSubtensor1", not_implemented_yet},
      {"AdvancedSubtensor", not_implemented_yet},
      {"AdvancedIncSubtensor", not_implemented_yet},
      // --- products and BLAS forms (ops/dot, ops/blas, ops/blockwise)
      {"Dot", not_implemented_yet},
      {"Gemv", not_implemented_yet},
      {"CGemv", not_implemented_yet},
      {"Gemm", not_implemented_yet},
      {"Ger", not_implemented_yet},
      {"CGer", not_implemented_yet},
      {"Dot22", not_implemented_yet},
      {"Dot22Scalar", not_implemented_yet},
      {"BatchedDot", not_implemented_yet},
      {"Blockwise", not_implemented_yet},
      // --- linear algebra (a later issue)
      {"Cholesky", not_implemented_yet},
      {"Solve", not_implemented_yet},
      {"SolveTriangular", not_implemented_yet},
      {"MatrixInverse", not_implemented_yet},
      {"Det", not_implemented_yet},
      {"SLogDet", not_implemented_yet},
      {"Eigh", not_implemented_yet},
      {"SVD", not_implemented_yet},
  };
  return table;
}

const OpEntry* find_op(std::string_view name) {
  for (const auto& e : op_table())
    if (e.name == name) return &e;
  return nullptr;
}

}  // namespace kiln
