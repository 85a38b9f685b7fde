// DimShuffle: transpose, drop dimensions of length 1, and insert length-1 ("x") dimensions.
// ExpandDims{axis}, Squeeze{axis} and Transpose{axes} are spellings of it. Its output is a
// view of its input.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/op.h"
#include "ops/props.h"

namespace kiln {

class DimShuffle : public Op {
 public:
  /// new_order: input dimension indices, and kNewAxis for an inserted length-1 dimension.
  static constexpr int kNewAxis = -1;
  DimShuffle(int input_ndim, std::vector<int> new_order);

  int input_ndim() const { return input_ndim_; }
  const std::vector<int>& new_order() const { return new_order_; }
  /// Input dimensions that are dropped (must have length 1).
  const std::vector<int>& dropped() const { return dropped_; }
  bool is_transpose() const;       ///< a permutation, nothing added or dropped
  bool is_expand_dims() const;     ///< only "x" insertions, input order kept
  bool is_squeeze() const;         ///< only drops, input order kept

  std::string_view name() const override { return "DimShuffle"; }
  bool accepts_complex() const override { return true; }
  Json props() const override;
  std::string str() const override;
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
  int input_ndim_;
  std::vector<int> new_order_;
  std::vector<int> dropped_;
};

/// General DimShuffle; `order` uses DimShuffle::kNewAxis for "x".
Var dimshuffle(const Var& x, const std::vector<int>& order);
/// Adds n leading length-1 dimensions.
Var expand_dims_left(const Var& x, int n);
/// Inserts a length-1 dimension at output position `axis` (negative counts from the end).
Var expand_dims(const Var& x, int axis);
/// Removes the given dimensions (each must have length 1); all static-1 dims when empty.
Var squeeze(const Var& x, std::vector<int> axes = {});
/// Permutes dimensions; reverses them when `axes` is empty.
Var transpose(const Var& x, std::vector<int> axes = {});
/// np.moveaxis(x, from, to): dimension `from` moved to position `to`, the others in order.
Var move_axis(const Var& x, int from, int to);

OpPtr dimshuffle_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr expand_dims_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr squeeze_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr matrix_transpose_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr transpose_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
