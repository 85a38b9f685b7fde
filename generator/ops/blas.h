// The BLAS forms PyTensor's rewrites leave in graphs: Gemv, Gemm, Ger, Dot22, Dot22Scalar (and
// the CGemv, CGer spellings, which are the same ops and keep their spelling for printing and
// saving). Their perform is a plain loop (ops/dot's kernel), not a BLAS call.
//
// Float dtypes only. Gemm, Ger and Dot22Scalar need every input of one dtype; Gemv needs y, A, x
// of one dtype and float 0-d scalars a, b (PyTensor does not tie their dtype to y's). When b is
// 0, y (Gemv) / z (Gemm) is NOT read: PyTensor passes uninitialised AllocEmpty memory there.
// The in-place props (`inplace`, `destructive`) are accepted and ignored: kiln plans memory.
#pragma once

#include "ir/op.h"
#include "ops/props.h"

namespace kiln {

/// Whether a Gemv or Gemm node ignores its input 0 (y or z): its b (input 4) is a constant
/// equal to 0 in the output's dtype, so the initial values are never read.
bool blas_ignores_initial(const Apply& node);

/// Gemv(y, a, A, x, b) = b*y + a*A@x; y and x are vectors, A a matrix, a and b 0-d.
class Gemv : public Op {
 public:
  /// `c_spelling`: the op is called "CGemv" (PyTensor's C implementation) instead of "Gemv".
  explicit Gemv(bool c_spelling = false) : c_spelling_(c_spelling) {}
  std::string_view name() const override { return c_spelling_ ? "CGemv" : "Gemv"; }
  std::string str() const override { return std::string(name()) + "{no_inplace}"; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;

 private:
  bool c_spelling_;
};

/// Gemm(z, a, x, y, b) = b*z + a*x@y; z, x, y matrices, a and b 0-d.
class Gemm : public Op {
 public:
  std::string_view name() const override { return "Gemm"; }
  std::string str() const override { return "Gemm{no_inplace}"; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
};

/// Ger(A, a, x, y) = A + a*outer(x, y); A a matrix, x and y vectors, a 0-d.
class Ger : public Op {
 public:
  /// `c_spelling`: the op is called "CGer" instead of "Ger".
  explicit Ger(bool c_spelling = false) : c_spelling_(c_spelling) {}
  std::string_view name() const override { return c_spelling_ ? "CGer" : "Ger"; }
  std::string str() const override { return std::string(name()) + "{non-destructive}"; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;

 private:
  bool c_spelling_;
};

/// Dot22(x, y) = x@y for two matrices of one float dtype.
class Dot22 : public Op {
 public:
  std::string_view name() const override { return "Dot22"; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;
};

/// Dot22Scalar(x, y, a) = a*(x@y); a is 0-d.
class Dot22Scalar : public Op {
 public:
  std::string_view name() const override { return "Dot22Scalar"; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
};

/// b*y + a*A@x as a Gemv node (y is not read when b is 0).
Var gemv(const Var& y, const Var& a, const Var& A, const Var& x, const Var& b);
/// b*z + a*x@y as a Gemm node (z is not read when b is 0).
Var gemm(const Var& z, const Var& a, const Var& x, const Var& y, const Var& b);
/// A + a*outer(x, y) as a Ger node.
Var ger(const Var& A, const Var& a, const Var& x, const Var& y);
/// x@y as a Dot22 node.
Var dot22(const Var& x, const Var& y);
/// a*(x@y) as a Dot22Scalar node.
Var dot22scalar(const Var& x, const Var& y, const Var& a);

OpPtr gemv_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr cgemv_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr gemm_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr ger_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr cger_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr dot22_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr dot22scalar_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
