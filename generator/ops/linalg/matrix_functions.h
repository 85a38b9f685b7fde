// Functions of a matrix: MatrixInverse, MatrixPinv, Det, SLogDet (NumPy's inv, pinv, det and
// slogdet, as PyTensor's ops of those names compute them) and Expm (scipy.linalg.expm).
#pragma once

#include <vector>

#include "ops/linalg/linalg_common.h"

namespace kiln {

/// MatrixInverse: np.linalg.inv. A singular matrix is a run-time error ("singular matrix"), as
/// NumPy's LinAlgError is in PyTensor.
class MatrixInverse : public LinalgOp {
 public:
  std::string_view name() const override { return "MatrixInverse"; }
  std::string gufunc_signature(const std::vector<int>&) const override { return "(m,m)->(m,m)"; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;
};

/// MatrixPinv{hermitian}: np.linalg.pinv (singular values up to 1e-15 times the largest count as
/// zero); `hermitian` takes a square matrix's lower triangle and goes through eigh.
class MatrixPinv : public LinalgOp {
 public:
  explicit MatrixPinv(bool hermitian) : hermitian_(hermitian) {}
  bool hermitian() const { return hermitian_; }
  std::string_view name() const override { return "MatrixPinv"; }
  Json props() const override { return Json{{"hermitian", hermitian_}}; }
  std::string gufunc_signature(const std::vector<int>&) const override { return "(m,n)->(n,m)"; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;

 private:
  bool hermitian_;
};

/// Det: np.linalg.det (a 0-d result; 1 for a 0 x 0 matrix).
class Det : public LinalgOp {
 public:
  std::string_view name() const override { return "Det"; }
  std::string gufunc_signature(const std::vector<int>&) const override { return "(m,m)->()"; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
};

/// SLogDet: np.linalg.slogdet, (sign, log|det|); a singular matrix gives (0, -inf).
class SLogDet : public LinalgOp {
 public:
  std::string_view name() const override { return "SLogDet"; }
  std::string gufunc_signature(const std::vector<int>&) const override { return "(m,m)->(),()"; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const override;
  /// PyTensor has none (it differentiates its naive sign/log|det| graph before rewriting);
  /// kiln's: log|det| gives inv(A)^T, the sign (piecewise constant) nothing.
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
};

/// Expm: the matrix exponential, by scaling and squaring with a Padé approximant (Higham 2005;
/// SciPy uses the 2009 refinement of the same method, which agrees to rounding).
class Expm : public LinalgOp {
 public:
  std::string_view name() const override { return "Expm"; }
  std::string gufunc_signature(const std::vector<int>&) const override { return "(m,m)->(m,m)"; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
};

// Builders: the core op, or a Blockwise of it over leading batch dimensions.
Var matrix_inverse(const Var& x);
Var pinv(const Var& x, bool hermitian = false);
Var det(const Var& x);
/// (sign, log|det|).
VarList slogdet(const Var& x);
Var expm(const Var& x);

OpPtr matrix_inverse_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr matrix_pinv_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr det_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr slogdet_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr expm_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
