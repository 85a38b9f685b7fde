// Basic indexing: Subtensor (x[idx], a view of x) and IncSubtensor (a new tensor equal to x
// with x[idx] += y, or x[idx] = y). Both describe their index with the same `idx_list` (one
// entry per leading dimension: an integer or a slice whose start/stop/step are omitted or taken
// from the node's integer inputs; GRAPH_FORMAT.md), represented here by BasicIndex.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

#include "ir/op.h"
#include "ops/constant.h"
#include "ops/props.h"

namespace kiln {

/// One idx_list entry: an integer index (drops the dimension) or a slice whose parts are either
/// omitted or taken from the next integer input.
struct IndexEntry {
  bool is_slice = false;
  bool has_start = false, has_stop = false, has_step = false;  ///< slices only

  static IndexEntry integer() { return {}; }
  static IndexEntry slice(bool start, bool stop, bool step) { return {true, start, stop, step}; }
  /// How many integer inputs this entry takes.
  int num_inputs() const { return is_slice ? int(has_start) + int(has_stop) + int(has_step) : 1; }
  bool operator==(const IndexEntry& o) const {
    return is_slice == o.is_slice && has_start == o.has_start && has_stop == o.has_stop &&
           has_step == o.has_step;
  }
};

/// Which parts of an idx_list entry {"slice": [start, stop, step]} take an input (each part is
/// null or "input"); otherwise a UserError "<what>, not <entry>" at `at`/slice[/k].
std::array<bool, 3> read_slice_entry(const Json& entry, const std::string& what, const std::string& at);

/// An idx_list: the index pattern of a Subtensor / IncSubtensor, shared by both.
class BasicIndex {
 public:
  BasicIndex() = default;
  explicit BasicIndex(std::vector<IndexEntry> entries) : entries_(std::move(entries)) {}

  const std::vector<IndexEntry>& entries() const { return entries_; }
  /// Number of integer inputs the pattern takes.
  int num_inputs() const;
  /// Number of dimensions an integer entry drops.
  int num_dropped() const;

  /// The graph-file form: [{"index": "input"}, {"slice": ["input", null, null]}, ...].
  Json to_json() const;
  /// Reads the graph-file form; errors name the JSON pointer of the bad entry.
  static BasicIndex from_json(const Json& j, const PropReader& props, const std::string& key);
  /// PyTensor's printed form of the entries: "i, start:stop, ::step, j".
  std::string str() const;

  /// Checks the integer inputs (count, 0-d, integer dtypes) and the rank of x, then returns the
  /// static shape of x[idx] (a constant slice of a static length gives a static length).
  /// `who` names the op in messages.
  Shape static_shape(const Op& who, const TensorType& x, const VarList& ints) const;
  /// Symbolic shape of x[idx] from x's symbolic shape and the integer inputs.
  ShapeVars symbolic_shape(const ShapeVars& x_shape, const VarList& ints) const;
  /// x[idx] at run time: a view of x. Integer indices out of range are RuntimeFailures.
  Array apply(const Array& x, const std::vector<Array>& ints) const;

  bool operator==(const BasicIndex& o) const { return entries_ == o.entries_; }

 private:
  std::vector<IndexEntry> entries_;
};

/// x[idx]: inputs (x, integers...). Its output is a view of x.
class Subtensor : public Op {
 public:
  explicit Subtensor(BasicIndex index) : index_(std::move(index)) {}
  const BasicIndex& index() const { return index_; }

  std::string_view name() const override { return "Subtensor"; }
  bool accepts_complex() const override { return true; }
  Json props() const override { return Json{{"idx_list", index_.to_json()}}; }
  std::string str() const override { return "Subtensor{" + index_.str() + "}"; }
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
  BasicIndex index_;
};

/// A new tensor equal to x with x[idx] += y (or = y): inputs (x, y, integers...). y broadcasts
/// to the indexed shape (NumPy's rules); the result has x's type. A set casts y to x's dtype; an
/// increment refuses a y that NumPy's `+=` would not cast back "same_kind" (float into int, int
/// into bool, signed into unsigned), as PyTensor fails on those at run time.
class IncSubtensor : public Op {
 public:
  IncSubtensor(BasicIndex index, bool set_instead_of_inc)
      : index_(std::move(index)), set_(set_instead_of_inc) {}
  const BasicIndex& index() const { return index_; }
  bool set_instead_of_inc() const { return set_; }

  std::string_view name() const override { return "IncSubtensor"; }
  bool accepts_complex() const override { return true; }
  Json props() const override {
    return Json{{"idx_list", index_.to_json()}, {"set_instead_of_inc", set_}};
  }
  /// "IncSubtensor{i, start:}" or "SetSubtensor{...}", as PyTensor prints them.
  std::string str() const override {
    return std::string(set_ ? "SetSubtensor{" : "IncSubtensor{") + index_.str() + "}";
  }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;

 private:
  BasicIndex index_;
  bool set_;
};

// --- helpers shared with the advanced indexing ops --------------------------------------------

/// target += value elementwise, computed in upcast(target, value) and converted back to the
/// target's dtype (NumPy's `+=`; integers wrap). `value` has target's shape (already broadcast).
void increment_into(Array target, const Array& value);
/// target = value converted to the target's dtype; `value` has target's shape.
void assign_into(Array target, const Array& value);
/// Type-checks y against the static shape it is written into (y may have fewer dimensions and
/// broadcast, NumPy's rules); refuses with type_error naming `who`.
void check_value_type(const Op& who, const TensorType& y, const Shape& target);
/// Sums a cotangent of an indexed region back to the shape of the value y written into it.
/// y broadcasts with NumPy's rules, so a dimension of y whose length is known only at run time
/// may be 1 and broadcast: that case is decided at run time.
Var sum_to_value(const Var& g, const Var& y);
/// len(range(*slice(start, stop, step).indices(n))) as a graph of the length n (0-d int64)
/// and the slice parts (0-d integers; null parts are omitted).
Var slice_length(const Var& n, const std::array<Var, 3>& parts);
/// "index 5 is out of bounds for axis 0 with size 3" (NumPy's words), as a RuntimeFailure.
[[noreturn]] void index_out_of_bounds(std::int64_t index, int axis, std::int64_t size);

// --- C++ builder API --------------------------------------------------------------------------

/// Marks an omitted slice part, as Python's None in x[1::2] (std::nullopt works too).
struct NoneIndex {};
inline constexpr NoneIndex none{};

/// An integer of an index expression: an integer literal (an int64 constant), a 0-d integer
/// Var, or omitted (`none`).
class IndexScalar {
 public:
  IndexScalar(NoneIndex) {}               // NOLINT: implicit by design
  IndexScalar(std::nullopt_t) {}          // NOLINT
  IndexScalar(const Var& v) : var_(v) {}  // NOLINT
  template <typename T,
            typename = std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>>
  IndexScalar(T v) : var_(int64_constant(static_cast<std::int64_t>(v))) {}  // NOLINT
  bool omitted() const { return !var_; }
  const Var& var() const { return var_; }

 private:
  Var var_;
};

/// One entry of a basic index expression: an integer (drops that dimension) or a slice.
class IndexItem {
 public:
  /// x[i]
  static IndexItem integer(IndexScalar i);
  /// x[start:stop:step]
  static IndexItem range(IndexScalar start, IndexScalar stop, IndexScalar step);
  bool is_slice() const { return is_slice_; }
  const std::vector<IndexScalar>& parts() const { return parts_; }

 private:
  bool is_slice_ = false;
  std::vector<IndexScalar> parts_;  ///< the integer, or start, stop, step
};

/// The integer entry `i` of an index expression: subtensor(x, {idx(0), slice(1, none, 2)}).
inline IndexItem idx(IndexScalar i) { return IndexItem::integer(std::move(i)); }
/// The slice entry start:stop:step (each part may be `none`).
inline IndexItem slice(IndexScalar start = none, IndexScalar stop = none, IndexScalar step = none) {
  return IndexItem::range(std::move(start), std::move(stop), std::move(step));
}

/// x[index] (a Subtensor): leading dimensions indexed, the rest kept whole.
Var subtensor(const Var& x, const std::vector<IndexItem>& index);

/// The UserError of a builder function `fn` given a null Var for `what` ("the tensor").
void require_var(const Var& v, const char* fn, const char* what);
/// x[i] along the first dimension.
Var at(const Var& x, IndexScalar i);
/// x with x[index] += y (an IncSubtensor; x itself is unchanged).
Var inc_subtensor(const Var& x, const std::vector<IndexItem>& index, const Var& y);
/// x with x[index] = y (an IncSubtensor with set_instead_of_inc).
Var set_subtensor(const Var& x, const std::vector<IndexItem>& index, const Var& y);

/// A number as a value operand, with PyTensor's autocasting of Python literals (an integer
/// becomes the smallest of int8..int64 holding it; a float is float32 when exact).
template <typename T,
          typename = std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, bool>>>
Var index_value_literal(T v) {
  if constexpr (std::is_integral_v<T>)
    return autocast_int_constant(static_cast<std::int64_t>(v));
  else
    return autocast_float_constant(static_cast<double>(v));
}
template <typename T,
          typename = std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, bool>>>
Var inc_subtensor(const Var& x, const std::vector<IndexItem>& index, T y) {
  return inc_subtensor(x, index, index_value_literal(y));
}
template <typename T,
          typename = std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, bool>>>
Var set_subtensor(const Var& x, const std::vector<IndexItem>& index, T y) {
  return set_subtensor(x, index, index_value_literal(y));
}

OpPtr subtensor_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr inc_subtensor_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
