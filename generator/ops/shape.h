// Shape and Shape_i: the run-time shape of a tensor as an int64 vector / one int64 length.
#pragma once

#include "ir/op.h"
#include "ops/props.h"

namespace kiln {

class ShapeOp : public Op {
 public:
  std::string_view name() const override { return "Shape"; }
  bool accepts_complex() const override { return true; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;
};

class ShapeI : public Op {
 public:
  explicit ShapeI(int i) : i_(i) {}
  int i() const { return i_; }
  std::string_view name() const override { return "Shape_i"; }
  bool accepts_complex() const override { return true; }
  Json props() const override { return Json{{"i", i_}}; }
  std::string str() const override { return "Shape_i{" + std::to_string(i_) + "}"; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;

 private:
  int i_;
};

/// The shape of x as an int64 vector.
Var shape(const Var& x);
/// Length i of x as a 0-d int64 (negative i counts from the end).
Var shape_i(const Var& x, int i);

/// The output shapes of `node` from its inputs' shapes: its op's infer_shape formula, or, for
/// an op without one, Shape_i of each output (computing the node to know).
std::vector<ShapeVars> output_shapes(const Apply& node, const std::vector<ShapeVars>& input_shapes);

OpPtr shape_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr shape_i_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
