// Join (np.concatenate) and Split (np.split by sizes; its outputs are views of x), each in two
// forms: PyTensor 3.x's, with the axis a prop — Join{axis}(*tensors), Split{len_splits,
// axis}(x, sizes), the canonical form whenever the axis is known — and PyTensor 2.26's, with
// the axis an input — Join(axis, *tensors), Split{len_splits}(x, axis, sizes) — kept only for
// an axis computed at run time. The loader turns a 2.26 node with a constant axis into the
// 3.x form, and the builders make it (io/graph_load_v2.cpp, GRAPH_FORMAT.md "kiln's readings").
#pragma once

#include "ir/op.h"
#include "ops/alloc.h"
#include "ops/props.h"

namespace kiln {

/// Join{axis}(*tensors): the tensors (equal rank >= 1) concatenated along `axis` (>= 0).
/// Join(axis, *tensors), without the prop: the axis is input 0, a 0-d signed integer computed
/// at run time (negative counts from the end). dtype = upcast of the tensors.
class Join : public Op {
 public:
  /// The run-time axis form (2.26).
  Join() = default;
  /// The static form (3.x); `axis` >= 0.
  explicit Join(int axis);
  /// The static axis, or nullopt for the run-time form.
  std::optional<int> axis() const { return axis_; }
  /// Index of the first tensor input (1 in the run-time form, else 0).
  int first_tensor() const { return axis_ ? 0 : 1; }
  /// The joined axis of a node, normalised: the prop, or a constant axis input; else nullopt.
  std::optional<int> static_axis_of(const Apply& node) const;
  std::string_view name() const override { return "Join"; }
  bool accepts_complex() const override { return true; }
  Json props() const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;

 private:
  std::optional<int> axis_;
};

/// Split{len_splits, axis}(x, sizes): len_splits consecutive pieces of x along `axis` (>= 0),
/// of the lengths in `sizes` (an integer vector that must add up to x's length).
/// Split{len_splits}(x, axis, sizes): the same with the axis a 0-d integer input.
class Split : public Op {
 public:
  /// The run-time axis form (2.26).
  explicit Split(int len_splits) : len_splits_(len_splits) {}
  /// The static form (3.x); `axis` >= 0.
  Split(int len_splits, int axis);
  int len_splits() const { return len_splits_; }
  /// The static axis, or nullopt for the run-time form.
  std::optional<int> axis() const { return axis_; }
  /// Index of the sizes input (1 in the static form, 2 in the run-time form).
  int sizes_input() const { return axis_ ? 1 : 2; }
  /// The split axis of a node, normalised: the prop, or a constant axis input; else nullopt.
  std::optional<int> static_axis_of(const Apply& node) const;
  std::string_view name() const override { return "Split"; }
  Json props() const override;
  std::string str() const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;
  IndexMap view_map() const override;

 private:
  int len_splits_;
  std::optional<int> axis_;
};

/// np.concatenate(tensors, axis) as a Join; a single tensor is returned as is (PyTensor's
/// join). A literal or constant axis makes Join{axis} (normalised against the tensors' rank);
/// an axis computed at run time, the run-time form.
Var join(const IntArg& axis, const VarList& tensors);
/// join(axis, tensors) with NumPy's argument order.
Var concatenate(const VarList& tensors, const IntArg& axis = 0);
/// Splits x along `axis` into pieces of the given sizes ({2, 3}, or a 1-d integer Var whose
/// length is known statically). A literal or constant axis makes Split{len_splits, axis}.
VarList split(const Var& x, const IntList& sizes, const IntArg& axis = 0);

/// Graph-file factories (registered in ops/op_table.cpp).
OpPtr join_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr split_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
