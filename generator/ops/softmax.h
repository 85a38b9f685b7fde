// Softmax, LogSoftmax and SoftmaxGrad (PyTensor's special.py) along one axis, or over every
// element when the axis is null. Float inputs only (PyTensor's C code refuses others); the
// output has the input's type. Computed stably (the maximum is subtracted first), in double.
#pragma once

#include <optional>

#include "ir/op.h"
#include "ops/props.h"

namespace kiln {

/// What Softmax and LogSoftmax share: the axis, type inference and shapes.
class SoftmaxBase : public Op {
 public:
  /// `axis`: non-negative, or nullopt for every element.
  std::optional<int> axis() const { return axis_; }
  Json props() const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;

 protected:
  explicit SoftmaxBase(std::optional<int> axis) : axis_(axis) {}
  /// Writes the result for one contiguous row of `len` values.
  virtual void compute_row(const double* in, double* out, std::int64_t len) const = 0;

 private:
  std::optional<int> axis_;
};

/// exp(x - max) / sum(exp(x - max)).
class Softmax final : public SoftmaxBase {
 public:
  explicit Softmax(std::optional<int> axis) : SoftmaxBase(axis) {}
  std::string_view name() const override { return "Softmax"; }
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;

 protected:
  void compute_row(const double* in, double* out, std::int64_t len) const override;
};

/// (x - max) - log(sum(exp(x - max))).
class LogSoftmax final : public SoftmaxBase {
 public:
  explicit LogSoftmax(std::optional<int> axis) : SoftmaxBase(axis) {}
  std::string_view name() const override { return "LogSoftmax"; }
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;

 protected:
  void compute_row(const double* in, double* out, std::int64_t len) const override;
};

/// The gradient of softmax: inputs (dy, sm), output (dy - sum(dy * sm, axis, keepdims)) * sm,
/// of sm's type.
class SoftmaxGrad final : public Op {
 public:
  explicit SoftmaxGrad(std::optional<int> axis) : axis_(axis) {}
  std::optional<int> axis() const { return axis_; }
  std::string_view name() const override { return "SoftmaxGrad"; }
  Json props() const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  /// Second derivatives of softmax (graphs from PyTensor carry SoftmaxGrad).
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;

 private:
  std::optional<int> axis_;
};

/// Softmax along `axis` (negative counts from the end), over every element when nullopt.
Var softmax(const Var& x, std::optional<int> axis = std::nullopt);
/// Log of softmax, computed stably.
Var log_softmax(const Var& x, std::optional<int> axis = std::nullopt);
/// The gradient of softmax given the output cotangent `dy` and softmax's output `sm`.
Var softmax_grad(const Var& dy, const Var& sm, std::optional<int> axis = std::nullopt);

OpPtr softmax_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr log_softmax_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr softmax_grad_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
