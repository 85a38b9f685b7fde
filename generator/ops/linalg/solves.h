// Linear solves: Solve (general, symmetric, positive definite, tridiagonal), SolveTriangular and
// CholeskySolve — PyTensor's SolveBase family. b is a vector (b_ndim 1) or a matrix of right-hand
// sides (b_ndim 2); the solution has b's shape. As in PyTensor 3.x, a system LAPACK reports as
// singular (or, for "pos", not positive definite) gives NaN rather than an error.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ops/linalg/linalg_common.h"

namespace kiln {

/// What the solves share: `lower` (which triangle is read), `b_ndim`, types and shapes.
class SolveBase : public LinalgOp {
 public:
  SolveBase(bool lower, int b_ndim) : lower_(lower), b_ndim_(b_ndim) {}
  bool lower() const { return lower_; }
  int b_ndim() const { return b_ndim_; }
  std::string gufunc_signature(const std::vector<int>&) const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const override;

 protected:
  /// PyTensor's SolveBase pullback (Giles): b_bar = A^{-T} x_bar (solved by `transposed`, the
  /// same solve of A^T), A_bar = -b_bar x^T.
  std::vector<GradTerm> solve_pullback(const Apply& node, const Var& b_bar) const;

  bool lower_;
  int b_ndim_;
};

/// Solve{assume_a, lower, b_ndim}: A x = b. "her" is "sym" for real matrices (kiln has no
/// complex dtypes yet); "sym", "her" and "pos" read A's `lower` (or upper) triangle,
/// "tridiagonal" its three diagonals.
class Solve : public SolveBase {
 public:
  /// `assume_a`: gen, sym, her, pos, tridiagonal (or SciPy's long names).
  Solve(const std::string& assume_a, bool lower, int b_ndim);
  const std::string& assume_a() const { return assume_a_; }
  kiln_linalg::Structure structure() const { return structure_; }
  std::string_view name() const override { return "Solve"; }
  Json props() const override;
  void perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;

 private:
  std::string assume_a_;
  kiln_linalg::Structure structure_;
};

/// SolveTriangular{lower, unit_diagonal, b_ndim, trans}: op(A) x = b for triangular A read from
/// its `lower` (or upper) triangle, op = A or (2.26's trans 1 / "T", 2 / "C") A^T. A zero on
/// the diagonal gives NaN (3.x).
class SolveTriangular : public SolveBase {
 public:
  SolveTriangular(bool lower, bool unit_diagonal, int b_ndim, bool trans = false)
      : SolveBase(lower, b_ndim), unit_diagonal_(unit_diagonal), trans_(trans) {}
  bool unit_diagonal() const { return unit_diagonal_; }
  bool trans() const { return trans_; }
  std::string_view name() const override { return "SolveTriangular"; }
  Json props() const override;
  void perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;

 private:
  bool unit_diagonal_, trans_;
};

/// CholeskySolve{lower, b_ndim}: A x = b given A's Cholesky factor c (inputs (c, b)):
/// A = c c^T for `lower`, c^T c otherwise; only that triangle of c is read.
class CholeskySolve : public SolveBase {
 public:
  using SolveBase::SolveBase;
  std::string_view name() const override { return "CholeskySolve"; }
  Json props() const override { return Json{{"lower", lower_}, {"b_ndim", b_ndim_}}; }
  void perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
};

// Builders: the core op, or a Blockwise of it. `b_ndim` defaults to PyTensor's min(b.ndim, 2).
Var solve(const Var& a, const Var& b, const std::string& assume_a = "gen", bool lower = false,
          std::optional<int> b_ndim = std::nullopt);
Var solve_triangular(const Var& a, const Var& b, bool lower = false, bool unit_diagonal = false,
                     bool trans = false, std::optional<int> b_ndim = std::nullopt);
Var cho_solve(const Var& c, const Var& b, bool lower = true, std::optional<int> b_ndim = std::nullopt);

OpPtr solve_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr solve_triangular_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr cholesky_solve_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
