// Symmetric eigenproblems and the SVD: Eigh, Eigvalsh (scipy.linalg.eigh / eigvalsh, MRRR driver)
// and SVD (np.linalg.svd, divide and conquer). Eigenvectors and singular vectors are unique only
// up to sign; kiln returns what LAPACK computes, as SciPy and NumPy do.
#pragma once

#include <string>

#include <vector>

#include "ops/linalg/linalg_common.h"

namespace kiln {

/// Eigh{lower}: (w, v) of a symmetric matrix read from its `lower` (or upper) triangle; with a
/// second input B (positive definite), of the generalized problem A v = w B v (v^T B v = I).
/// Eigenvalues ascending. LAPACK failing to converge, or a B that is not positive definite, is a
/// run-time error.
class Eigh : public LinalgOp {
 public:
  /// `driver` is LAPACK's routine as PyTensor names it ("evr" or "evd"); kiln always runs evr
  /// (the same results to rounding) and keeps the name for printing and saving.
  explicit Eigh(bool lower, std::string driver = "evr") : lower_(lower), driver_(std::move(driver)) {}
  bool lower() const { return lower_; }
  std::string_view name() const override { return "Eigh"; }
  /// {"lower"}, and "driver" when not PyTensor's default "evr".
  Json props() const override;
  std::string gufunc_signature(const std::vector<int>& input_ranks) const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;

 private:
  bool lower_;
  std::string driver_;
};

/// Eigvalsh{lower}: Eigh's eigenvalues alone (one or two inputs, as Eigh).
class Eigvalsh : public LinalgOp {
 public:
  explicit Eigvalsh(bool lower) : lower_(lower) {}
  bool lower() const { return lower_; }
  std::string_view name() const override { return "Eigvalsh"; }
  Json props() const override { return Json{{"lower", lower_}}; }
  std::string gufunc_signature(const std::vector<int>& input_ranks) const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;

 private:
  bool lower_;
};

/// Eig: numpy.linalg.eig of a real square matrix — eigenvalues w and right eigenvectors (the
/// columns of v), complex: complex64 for float32 (and smaller) inputs, complex128 otherwise
/// (PyTensor's promote_types(x, complex64)), computed in float32 or float64 as NumPy does. A
/// non-finite element or LAPACK failing to converge is a run-time error. No gradient (PyTensor
/// has none either); complex inputs are not implemented.
class Eig : public LinalgOp {
 public:
  std::string_view name() const override { return "Eig"; }
  bool accepts_complex() const override { return true; }
  std::string gufunc_signature(const std::vector<int>& input_ranks) const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const override;
};

/// SVD{full_matrices, compute_uv}: (U, s, Vt) with A = U diag(s) Vt, or s alone; s descending.
/// U is m x m (full) or m x k, Vt n x n or k x n, k = min(m, n).
class SVD : public LinalgOp {
 public:
  SVD(bool full_matrices, bool compute_uv) : full_(full_matrices), uv_(compute_uv) {}
  bool full_matrices() const { return full_; }
  bool compute_uv() const { return uv_; }
  std::string_view name() const override { return "SVD"; }
  Json props() const override { return Json{{"full_matrices", full_}, {"compute_uv", uv_}}; }
  std::string gufunc_signature(const std::vector<int>&) const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;

 private:
  bool full_, uv_;
};

// Builders: the core op, or a Blockwise of it over leading batch dimensions. `b` (optional)
// makes the problem generalized.
VarList eigh(const Var& a, bool lower = true, const Var& b = nullptr);
Var eigvalsh(const Var& a, bool lower = true, const Var& b = nullptr);
VarList svd(const Var& a, bool full_matrices = true, bool compute_uv = true);

OpPtr eigh_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr eigvalsh_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr eig_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr svd_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
