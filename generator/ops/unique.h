// Ops whose output lengths depend on the data: Nonzero (np.nonzero) and Unique (np.unique as
// NumPy 1.x returns it, PyTensor's pytensor/tensor/{basic,extra_ops}.py). Their output_shapes
// entry in compiled code computes them from the input (Nonzero counts, Unique runs).
#pragma once

#include <optional>

#include "ir/op.h"
#include "ops/props.h"

namespace kiln {

/// np.nonzero(a) for a of rank >= 1: one int64 vector per dimension of a, the coordinates of
/// its nonzero elements in row-major order.
class Nonzero : public Op {
 public:
  std::string_view name() const override { return "Nonzero"; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  /// Every output's length is the count of nonzero elements.
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
};

/// np.unique(x, return_index, return_inverse, return_counts, axis): the sorted unique
/// elements (axis null: of the flattened x; else the unique slices along axis, compared
/// lexicographically), then as asked the first index of each, the inverse (a vector, as
/// NumPy 1.x and PyTensor return it) and the counts, all int64. NaNs count as one value
/// (NumPy's equal_nan).
class Unique : public Op {
 public:
  Unique(bool return_index, bool return_inverse, bool return_counts, std::optional<std::int64_t> axis)
      : index_(return_index), inverse_(return_inverse), counts_(return_counts), axis_(axis) {}
  bool return_index() const { return index_; }
  bool return_inverse() const { return inverse_; }
  bool return_counts() const { return counts_; }
  const std::optional<std::int64_t>& axis() const { return axis_; }

  std::string_view name() const override { return "Unique"; }
  Json props() const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  /// The inverse's length is known from x; the other lengths need the op itself.
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;

 private:
  bool index_, inverse_, counts_;
  std::optional<std::int64_t> axis_;
};

/// np.nonzero(a): one index vector per dimension.
VarList nonzero(const Var& a);
/// np.unique(x, ...): the outputs in NumPy's order (unique, [index], [inverse], [counts]).
VarList unique(const Var& x, bool return_index = false, bool return_inverse = false, bool return_counts = false,
               std::optional<std::int64_t> axis = std::nullopt);

OpPtr nonzero_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr unique_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
