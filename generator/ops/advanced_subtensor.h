// Integer-vector indexing along axis 0: AdvancedSubtensor1 (x[idx], NumPy's take on axis 0) and
// AdvancedIncSubtensor1 (a new tensor equal to x with rows idx incremented by, or set to, y).
// Negative indices count from the end; an index out of range is a run-time failure.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/op.h"
#include "ops/props.h"
#include "ops/subtensor.h"

namespace kiln {

/// x[idx] for an integer vector idx: inputs (x, idx); output (len(idx), *x.shape[1:]).
class AdvancedSubtensor1 : public Op {
 public:
  std::string_view name() const override { return "AdvancedSubtensor1"; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;
};

/// Inputs (x, y, idx). Increments accumulate over repeated indices (np.add.at); with
/// ignore_duplicates they follow NumPy's `x[idx] += y` (for a repeated index the last one wins);
/// sets: the last write wins. y may have any dtype (np.add.at casts); a length-1 dimension of y
/// broadcasts only when it is statically 1 (PyTensor refuses run-time broadcasting here).
class AdvancedIncSubtensor1 : public Op {
 public:
  AdvancedIncSubtensor1(bool set_instead_of_inc, bool ignore_duplicates)
      : set_(set_instead_of_inc), ignore_duplicates_(ignore_duplicates) {}
  bool set_instead_of_inc() const { return set_; }
  bool ignore_duplicates() const { return ignore_duplicates_; }

  std::string_view name() const override { return "AdvancedIncSubtensor1"; }
  Json props() const override {
    return Json{{"set_instead_of_inc", set_}, {"ignore_duplicates", ignore_duplicates_}};
  }
  /// PyTensor's "AdvancedIncSubtensor1{no_inplace,inc}" / "{no_inplace,set}"; kiln adds
  /// ",ignore_duplicates" when that prop is set.
  std::string str() const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;

 private:
  bool set_;
  bool ignore_duplicates_;
};

/// x[idx] for an integer vector idx (AdvancedSubtensor1): rows of x, repeats allowed.
Var take(const Var& x, const Var& idx);
/// take() with constant indices (an int64 vector constant).
Var take(const Var& x, const std::vector<std::int64_t>& idx);
/// AdvancedIncSubtensor1(x, y, idx): x with rows idx incremented by (or set to) y.
Var advanced_inc_subtensor1(const Var& x, const Var& y, const Var& idx,
                            bool set_instead_of_inc = false, bool ignore_duplicates = false);
/// x with x[idx] += y, repeated indices accumulating (np.add.at), or, with ignore_duplicates,
/// NumPy's `x[idx] += y`.
Var inc_take(const Var& x, const Var& idx, const Var& y, bool ignore_duplicates = false);
/// x with x[idx] = y (the last write wins for repeated indices).
Var set_take(const Var& x, const Var& idx, const Var& y);

OpPtr advanced_subtensor1_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr advanced_inc_subtensor1_from_props(PropReader& props,
                                         const std::vector<TensorType>& input_types);

}  // namespace kiln
