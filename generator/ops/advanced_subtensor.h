// Advanced indexing. AdvancedSubtensor1 (x[idx], NumPy's take on axis 0) and
// AdvancedIncSubtensor1 (a new tensor equal to x with rows idx incremented by, or set to, y);
// AdvancedSubtensor and AdvancedIncSubtensor: NumPy's advanced indexing in full (integer and
// boolean index tensors of any rank mixed with slices and newaxes; ops/advanced_index.h).
// Negative indices count from the end; an index out of range is a run-time failure.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/op.h"
#include "ops/advanced_index.h"
#include "ops/props.h"
#include "ops/subtensor.h"

namespace kiln {

/// x[idx] for an integer vector idx: inputs (x, idx); output (len(idx), *x.shape[1:]).
class AdvancedSubtensor1 : public Op {
 public:
  std::string_view name() const override { return "AdvancedSubtensor1"; }
  bool accepts_complex() const override { return true; }
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
  bool accepts_complex() const override { return true; }
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

/// x[index] with NumPy's advanced indexing: inputs (x, index inputs...) as the idx_list says.
/// The output is a new array (never a view); a mask makes its length known only at run time.
class AdvancedSubtensor : public Op {
 public:
  explicit AdvancedSubtensor(AdvancedIndex index) : index_(std::move(index)) {}
  const AdvancedIndex& index() const { return index_; }
  /// The layout of a node of this op (its index inputs' types decide it).
  AdvancedLayout layout(const Apply& node) const;

  std::string_view name() const override { return "AdvancedSubtensor"; }
  bool accepts_complex() const override { return true; }
  Json props() const override { return Json{{"idx_list", index_.to_json()}}; }
  std::string str() const override { return "AdvancedSubtensor"; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;

 private:
  AdvancedIndex index_;
};

/// A new tensor equal to x with x[index] incremented by y (repeated positions accumulate, as
/// np.add.at; with ignore_duplicates as NumPy's `x[index] += y`, where the last one wins) or
/// set to y (the last write wins). Inputs (x, y, index inputs...); y broadcasts to the shape
/// of x[index] with NumPy's rules, except that for a single integer vector index
/// (idx_list=(0,)) a length-1 dimension of y broadcasts only when it is statically 1, as
/// PyTensor checks.
class AdvancedIncSubtensor : public Op {
 public:
  AdvancedIncSubtensor(AdvancedIndex index, bool set_instead_of_inc, bool ignore_duplicates)
      : index_(std::move(index)), set_(set_instead_of_inc), ignore_duplicates_(ignore_duplicates) {}
  const AdvancedIndex& index() const { return index_; }
  bool set_instead_of_inc() const { return set_; }
  bool ignore_duplicates() const { return ignore_duplicates_; }
  /// The layout of x[index] for a node of this op.
  AdvancedLayout layout(const Apply& node) const;

  std::string_view name() const override { return "AdvancedIncSubtensor"; }
  Json props() const override {
    return Json{{"idx_list", index_.to_json()}, {"set_instead_of_inc", set_}, {"ignore_duplicates", ignore_duplicates_}};
  }
  /// "AdvancedIncSubtensor" or "AdvancedSetSubtensor", as PyTensor prints them.
  std::string str() const override { return set_ ? "AdvancedSetSubtensor" : "AdvancedIncSubtensor"; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;

 private:
  AdvancedIndex index_;
  bool set_;
  bool ignore_duplicates_;
};

/// One entry of an advanced index expression: an index tensor (integer of any rank, or a
/// boolean mask), a slice (from slice(...), as for subtensor) or `newaxis`.
class AdvancedItem {
 public:
  AdvancedItem(const Var& index) : index_(index) {}  // NOLINT: implicit by design
  AdvancedItem(IndexItem slice);                     // NOLINT: slice(...)
  static AdvancedItem new_axis() { return AdvancedItem(); }

  /// The idx_list entry and the inputs it takes.
  AdvancedEntry entry() const { return entry_; }
  VarList inputs() const;

 private:
  AdvancedItem() : entry_(AdvancedEntry::newaxis()) {}
  AdvancedEntry entry_;
  Var index_;
  std::vector<IndexScalar> parts_;
};

/// The newaxis entry (None in NumPy): advanced_subtensor(x, {newaxis, idx}).
inline const AdvancedItem newaxis = AdvancedItem::new_axis();

/// x[index] (an AdvancedSubtensor).
Var advanced_subtensor(const Var& x, const std::vector<AdvancedItem>& index);
/// x with x[index] += y (an AdvancedIncSubtensor; repeated positions accumulate unless
/// ignore_duplicates).
Var advanced_inc_subtensor(const Var& x, const Var& y, const std::vector<AdvancedItem>& index,
                           bool ignore_duplicates = false);
/// x with x[index] = y (an AdvancedIncSubtensor with set_instead_of_inc).
Var advanced_set_subtensor(const Var& x, const Var& y, const std::vector<AdvancedItem>& index);

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
/// idx_list optional (2.26: every input after x is an index); errors name the JSON pointer.
OpPtr advanced_subtensor_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr advanced_inc_subtensor_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr advanced_inc_subtensor1_from_props(PropReader& props,
                                         const std::vector<TensorType>& input_types);

}  // namespace kiln
