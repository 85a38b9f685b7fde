// Factorizations: Cholesky, LU and LUFactor (with PivotToPermutations), QR — PyTensor's ops of
// those names (pytensor/tensor/linalg/decomposition/ in 3.x, slinalg in 2.26), with SciPy's
// values and PyTensor's gradients.
#pragma once

#include <string>
#include <vector>

#include "ops/linalg/linalg_common.h"

namespace kiln {

/// Cholesky{lower}: the lower (L L^T = A) or upper (U^T U = A) factor of a symmetric positive
/// definite matrix, read from that triangle of A. A matrix that is not positive definite gives
/// an all-NaN factor (3.x), or a run-time error with `on_error = "raise"` (2.26's default).
class Cholesky : public LinalgOp {
 public:
  Cholesky(bool lower, bool raise_on_error) : lower_(lower), raise_(raise_on_error) {}
  bool lower() const { return lower_; }
  bool raise_on_error() const { return raise_; }
  std::string_view name() const override { return "Cholesky"; }
  Json props() const override;
  std::string gufunc_signature(const std::vector<int>&) const override { return "(m,m)->(m,m)"; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;

 private:
  bool lower_, raise_;
};

/// LU{permute_l, p_indices}: SciPy's lu of a square matrix, A = P L U. Outputs (P, L, U); with
/// p_indices (p, L, U) where p (int32) has P[i, p[i]] = 1; with permute_l (P L, U).
class LU : public LinalgOp {
 public:
  LU(bool permute_l, bool p_indices);
  bool permute_l() const { return permute_l_; }
  bool p_indices() const { return p_indices_; }
  std::string_view name() const override { return "LU"; }
  Json props() const override { return Json{{"permute_l", permute_l_}, {"p_indices", p_indices_}}; }
  std::string gufunc_signature(const std::vector<int>&) const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;

 private:
  bool permute_l_, p_indices_;
};

/// LUFactor: SciPy's lu_factor, (packed LU, 0-based int32 pivots). An exactly singular matrix
/// gives NaN factors, as PyTensor's does.
class LUFactor : public LinalgOp {
 public:
  std::string_view name() const override { return "LUFactor"; }
  std::string gufunc_signature(const std::vector<int>&) const override { return "(m,m)->(m,m),(m)"; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
};

/// PivotToPermutations{inverse}: LAPACK-style row interchanges (0-based) applied to 0..n-1
/// (`inverse`, the default) or that permutation's inverse; int64. A pivot out of range is a
/// run-time error.
class PivotToPermutations : public LinalgOp {
 public:
  explicit PivotToPermutations(bool inverse) : inverse_(inverse) {}
  bool inverse() const { return inverse_; }
  std::string_view name() const override { return "PivotToPermutations"; }
  Json props() const override { return Json{{"inverse", inverse_}}; }
  std::string gufunc_signature(const std::vector<int>&) const override { return "(x)->(x)"; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;

 private:
  bool inverse_;
};

/// QR{mode, pivoting}: scipy.linalg.qr. Modes: "full" (Q m x m, R m x n), "economic" (Q m x k,
/// R k x n), "r" (R m x n), "raw" (H m x n, tau k, R k x n), k = min(m, n); pivoting appends
/// the int32 column permutation P with A[:, P] = Q R.
class QR : public LinalgOp {
 public:
  QR(kiln_linalg::QrMode mode, bool pivoting) : mode_(mode), pivoting_(pivoting) {}
  kiln_linalg::QrMode mode() const { return mode_; }
  bool pivoting() const { return pivoting_; }
  std::string_view name() const override { return "QR"; }
  Json props() const override;
  std::string gufunc_signature(const std::vector<int>&) const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;

 private:
  kiln_linalg::QrMode mode_;
  bool pivoting_;
};

/// The name of a QR mode as PyTensor spells it.
const char* qr_mode_name(kiln_linalg::QrMode mode);

// Builders: the core op, or a Blockwise of it over leading batch dimensions.
Var cholesky(const Var& x, bool lower = true, bool raise_on_error = false);
VarList lu(const Var& a, bool permute_l = false, bool p_indices = false);
VarList lu_factor(const Var& a);
Var pivot_to_permutation(const Var& pivots, bool inverse = false);
/// `mode` may also be NumPy's "complete" (full) or "reduced" (economic).
VarList qr(const Var& a, const std::string& mode = "full", bool pivoting = false);

OpPtr cholesky_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr lu_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr lu_factor_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr pivot_to_permutations_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr qr_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
