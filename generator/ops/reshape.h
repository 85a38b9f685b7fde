// Reshape{ndim}(x, shape) and SpecifyShape(x, *lengths). Both outputs are views of x.
#pragma once

#include "ir/op.h"
#include "ops/alloc.h"
#include "ops/props.h"

namespace kiln {

/// Reshape{ndim}(x, shape): np.reshape(x, shape), where `shape` is a signed-integer vector of
/// length ndim with at most one negative entry (the unknown length, usually -1). Constant
/// entries (a constant vector, or constants inside a MakeVector) give static lengths.
class Reshape : public Op {
 public:
  explicit Reshape(int ndim) : ndim_(ndim) {}
  int ndim() const { return ndim_; }
  std::string_view name() const override { return "Reshape"; }
  bool accepts_complex() const override { return true; }
  Json props() const override { return Json{{"ndim", ndim_}}; }
  std::string str() const override { return "Reshape{" + std::to_string(ndim_) + "}"; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;
  IndexMap view_map() const override { return {{0, {0}}}; }

 private:
  int ndim_;
};

/// SpecifyShape(x, *lengths): x itself, after checking at run time that its shape is
/// `lengths` (0-d integers, one per dimension). A constant -1 leaves that dimension unchecked
/// (PyTensor's NoneConst); other constants become static lengths of the output type.
class SpecifyShape : public Op {
 public:
  std::string_view name() const override { return "SpecifyShape"; }
  bool accepts_complex() const override { return true; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;
  IndexMap view_map() const override { return {{0, {0}}}; }
};

/// x reshaped to `shape` ({2, -1}, a list mixing integers and 0-d Vars, or a 1-d integer Var
/// whose length is known statically); at most one entry may be -1.
Var reshape(const Var& x, const IntList& shape);
/// x reshaped to a 1-d integer Var `shape` of run-time length `ndim`.
Var reshape(const Var& x, const Var& shape, int ndim);
/// x with its shape asserted to be `lengths` (one per dimension; -1 leaves a dimension
/// unchecked). Returns x itself when its static shape already says all of it.
Var specify_shape(const Var& x, const IntList& lengths);

/// Graph-file factories (registered in ops/op_table.cpp).
OpPtr reshape_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr specify_shape_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
