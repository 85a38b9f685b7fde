// PyTensor's gradient ops (pytensor.gradient): views of their input in the forward pass that
// change only what flows back through them — ZeroGrad (a zero gradient), DisconnectedGrad (no
// gradient: the input is treated as a constant), UndefinedGrad (differentiating through it is
// an error), GradClip (the gradient clipped to [lower, upper]) and GradScale (the gradient
// times a constant). canonicalize removes them, as PyTensor's local_view_op does, so they
// cost nothing in compiled code; a graph compiled without rewrites gets a view.
#pragma once

#include "ir/op.h"
#include "ops/props.h"

namespace kiln {

class GradientOp : public Op {
 public:
  enum class Kind { Zero, Disconnected, Undefined, Clip, Scale };

  /// `a`, `b`: GradClip's lower and upper bounds (a <= b); GradScale's multiplier is `a`.
  explicit GradientOp(Kind kind, double a = 0, double b = 0);
  Kind kind() const { return kind_; }

  /// PyTensor's class names: "ZeroGrad", "DisconnectedGrad", "UndefinedGrad", "GradClip", "GradScale".
  std::string_view name() const override;
  /// GradClip: {"clip_lower_bound", "clip_upper_bound"}; GradScale: {"multiplier"}; else none.
  Json props() const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  /// As PyTensor's pushforwards: ZeroGrad, DisconnectedGrad and UndefinedGrad pass no tangent;
  /// GradClip and GradScale pass it unchanged (their forward pass is the identity).
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;
  IndexMap view_map() const override { return {{0, {0}}}; }

 private:
  Kind kind_;
  double a_, b_;
};

/// Builders: pytensor.gradient's zero_grad, disconnected_grad, undefined_grad, grad_clip, grad_scale.
Var zero_grad(const Var& x);
Var disconnected_grad(const Var& x);
Var undefined_grad(const Var& x);
Var grad_clip(const Var& x, double lower, double upper);
Var grad_scale(const Var& x, double multiplier);

/// Graph-file factories (ops/op_table.cpp).
OpPtr zero_grad_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr disconnected_grad_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr undefined_grad_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr grad_clip_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr grad_scale_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
