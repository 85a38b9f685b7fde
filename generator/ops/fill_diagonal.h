// Writing a diagonal: FillDiagonal (np.fill_diagonal on a copy) and FillDiagonalOffset
// (PyTensor's: an offset diagonal of a matrix), ops of pytensor/tensor/extra_ops.py.
#pragma once

#include "ir/op.h"
#include "ops/array_util.h"
#include "ops/props.h"

namespace kiln {

/// A copy of a (rank >= 2) with a[i, i, ..., i] = val. For a matrix, the main diagonal of the
/// rectangle (min(rows, cols) elements, not NumPy's wrapping); a higher rank needs equal
/// lengths (NumPy's ValueError otherwise). val is 0-d, of a's dtype or one that upcasts to it.
class FillDiagonal : public Op {
 public:
  std::string_view name() const override { return "FillDiagonal"; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  /// a: the cotangent with the diagonal zeroed; val: the sum of its diagonal.
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;
};

/// A copy of the matrix a with its offset diagonal (offset > 0 above the main one) set to val:
/// inputs (a, val, offset), offset a 0-d integer. The elements written are PyTensor's
/// (offset_diagonal below), quirks included.
class FillDiagonalOffset : public Op {
 public:
  std::string_view name() const override { return "FillDiagonalOffset"; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;
};

/// np.fill_diagonal(a.copy(), val).
Var fill_diagonal(const Var& a, const Var& val);
/// PyTensor's fill_diagonal_offset(a, val, offset).
Var fill_diagonal_offset(const Var& a, const Var& val, const Var& offset);

/// The elements of an (h, w) matrix FillDiagonalOffset writes, as PyTensor's perform does:
/// a.flat[start : start + (w + 1) * num : w + 1] with start = offset (offset >= 0) or
/// -offset * w, num = min(h, w, w - offset) or min(h, w, h + offset), and Python's slice
/// rules (so an offset past the matrix gives a negative stop, counted from the end).
SliceRange offset_diagonal(std::int64_t h, std::int64_t w, std::int64_t offset);

OpPtr fill_diagonal_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr fill_diagonal_offset_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
