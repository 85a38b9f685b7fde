// PyTensor's pytensor/tensor/extra_ops.py ops that reshape or look up data: Repeat
// (np.repeat), BroadcastTo (np.broadcast_to, a view; PyTensor 2.x) and SearchsortedOp
// (np.searchsorted).
#pragma once

#include <optional>
#include <string>

#include "ir/op.h"
#include "ops/props.h"

namespace kiln {

/// np.repeat(x, repeats, axis): inputs (x, repeats), repeats a 0-d or 1-d integer (not
/// uint64, as PyTensor). axis null (2.26) repeats the flattened x; a negative axis counts from
/// the end. A vector of repeats has x's length along the axis, or length 1.
class Repeat : public Op {
 public:
  explicit Repeat(std::optional<std::int64_t> axis) : axis_(axis) {}
  const std::optional<std::int64_t>& axis() const { return axis_; }

  std::string_view name() const override { return "Repeat"; }
  Json props() const override { return Json{{"axis", axis_ ? Json(*axis_) : Json(nullptr)}}; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  /// Repeated elements' cotangents summed back (an increment at repeat(arange(n), repeats)).
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;

  /// The axis of x the repeat runs along (0 for the flattened x).
  int normalized_axis(int x_ndim) const;

 private:
  std::optional<std::int64_t> axis_;
};

/// np.broadcast_to(a, shape): inputs (a, *lengths) with 0-d integer lengths, at least as many
/// as a's rank. NumPy's rules (a length-1 dimension of a stretches). The output is a view of a.
class BroadcastTo : public Op {
 public:
  std::string_view name() const override { return "BroadcastTo"; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  /// The cotangent summed over the new and the stretched dimensions.
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;
  IndexMap view_map() const override { return {{0, {0}}}; }
};

/// np.searchsorted(x, v, side, sorter): inputs (x, v) or (x, v, sorter) with x a vector
/// (sorted ascending, or by sorter, an integer vector of positions in x). The int64 output has
/// v's shape. Values compare in upcast(x, v), NaN after every number (NumPy's order).
class SearchsortedOp : public Op {
 public:
  explicit SearchsortedOp(bool right) : right_(right) {}
  bool right() const { return right_; }

  std::string_view name() const override { return "SearchsortedOp"; }
  Json props() const override { return Json{{"side", right_ ? "right" : "left"}}; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  /// Zeros for x and v (PyTensor's: the output is piecewise constant), disconnected sorter.
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;

 private:
  bool right_;
};

/// np.repeat(x, repeats, axis) (axis nullopt: of the flattened x).
Var repeat(const Var& x, const Var& repeats, std::optional<std::int64_t> axis);
/// np.broadcast_to(a, shape) as a BroadcastTo view.
Var broadcast_to_view(const Var& a, const VarList& lengths);
/// np.searchsorted(x, v, side) with an optional sorter (null Var: none).
Var searchsorted(const Var& x, const Var& v, const std::string& side = "left", const Var& sorter = nullptr);

OpPtr repeat_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr broadcast_to_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr searchsorted_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
