// Sorting along an axis: SortOp (np.sort) and ArgSortOp (np.argsort), PyTensor's ops of
// pytensor/tensor/sort.py. The axis is an input (a 0-d integer, negative counts from the end).
// NaN sorts last, as in NumPy. kiln sorts stably whatever the kind, so `stable` and
// `mergesort` give NumPy's order exactly; for `quicksort` and `heapsort` NumPy leaves the
// order of equal elements unspecified (argsort of ties may differ from NumPy's).
#pragma once

#include <cmath>
#include <string>
#include <type_traits>

#include "ir/op.h"
#include "ops/props.h"

namespace kiln {

/// NumPy's sort order: NaN after every number (sort, argsort, searchsorted and unique use it).
template <typename T>
bool sorts_before(T a, T b) {
  if constexpr (kiln_scalar::is_float_v<T>)
    return a < b || (std::isnan(b) && !std::isnan(a));
  else
    return a < b;
}

/// Shared by SortOp and ArgSortOp: the `kind` prop and the (x, axis) inputs.
class SortBase : public Op {
 public:
  explicit SortBase(std::string kind) : kind_(std::move(kind)) {}
  const std::string& kind() const { return kind_; }
  Json props() const override { return Json{{"kind", kind_}}; }
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;

 protected:
  /// Checks (x, axis) and returns x's type.
  const TensorType& check_inputs(const VarList& inputs) const;

 private:
  std::string kind_;
};

/// np.sort(x, axis, kind): inputs (x, axis); output x's type.
class SortOp : public SortBase {
 public:
  using SortBase::SortBase;
  std::string_view name() const override { return "SortOp"; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  /// The cotangent gathered back through the inverse permutation (PyTensor's).
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  /// The tangent sorted by x's permutation.
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;
};

/// np.argsort(x, axis, kind): inputs (x, axis); int64 output of x's shape.
class ArgSortOp : public SortBase {
 public:
  using SortBase::SortBase;
  std::string_view name() const override { return "ArgSortOp"; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  /// An index has no gradient: zeros for x (PyTensor's), undefined for the axis.
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;
};

/// np.sort(x, axis) (axis -1 by default; kind "quicksort" as PyTensor's default).
Var sort(const Var& x, const Var& axis, const std::string& kind = "quicksort");
Var sort(const Var& x, std::int64_t axis = -1, const std::string& kind = "quicksort");
/// np.argsort(x, axis).
Var argsort(const Var& x, const Var& axis, const std::string& kind = "quicksort");
Var argsort(const Var& x, std::int64_t axis = -1, const std::string& kind = "quicksort");

/// take_along_axis(x, idx, axis): x[..., idx[..., i, ...], ...] where idx has x's shape and
/// `axis` is a 0-d integer Var (an AdvancedSubtensor with an arange index for every other
/// dimension, chosen per dimension at run time when the axis is not a constant).
Var take_along_axis(const Var& x, const Var& idx, const Var& axis);

/// Props `kind` (quicksort, mergesort, heapsort, stable) and `order` (null only, as PyTensor).
OpPtr sort_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr argsort_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
