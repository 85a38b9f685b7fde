// Structure ops that build a bigger matrix from smaller ones: KroneckerProduct (np.kron, an
// OpFromGraph in PyTensor 3.x that kiln computes directly) and BlockDiagonal
// (scipy.linalg.block_diag).
#pragma once

#include <vector>

#include "ops/linalg/linalg_common.h"

namespace kiln {

/// KroneckerProduct(a, b): np.kron. The operands' shapes are padded with leading ones to the
/// larger rank (their ranks must add up to 3 or more, as in PyTensor); dtype upcast(a, b) (as
/// PyTensor's a * b), integers wrap.
class KroneckerProduct : public LinalgOp {
 public:
  std::string_view name() const override { return "KroneckerProduct"; }
  std::string gufunc_signature(const std::vector<int>& input_ranks) const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;
};

/// BlockDiagonal{n_inputs}: the n_inputs matrices along the diagonal of a zero matrix; dtype the
/// upcast of the inputs.
class BlockDiagonal : public LinalgOp {
 public:
  explicit BlockDiagonal(int n_inputs);
  int n_inputs() const { return n_inputs_; }
  std::string_view name() const override { return "BlockDiagonal"; }
  Json props() const override { return Json{{"n_inputs", n_inputs_}}; }
  std::string gufunc_signature(const std::vector<int>&) const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;

 private:
  int n_inputs_;
};

/// np.kron(a, b) over all dimensions (the core op; PyTensor does not batch kron).
Var kron(const Var& a, const Var& b);
/// scipy.linalg.block_diag of matrices (a single matrix is returned as is); leading dimensions
/// are batch dimensions.
Var block_diag(const VarList& matrices);

OpPtr kronecker_product_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr block_diagonal_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
