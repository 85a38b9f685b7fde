// The index of AdvancedSubtensor and AdvancedIncSubtensor and NumPy's rules for the layout of
// x[index] (GRAPH_FORMAT.md, "idx_list"). An entry is an index input (an integer tensor of any
// rank, a 0-d integer, or a boolean mask of rank >= 1), a slice whose parts may come from 0-d
// integer inputs, or a newaxis. Every integer and boolean index is "advanced": their shapes
// (a mask counts as a vector of its true elements) broadcast to one block of dimensions, which
// takes the place of the first advanced entry when the advanced entries are adjacent and goes
// first otherwise. Dimensions of x after the last entry are kept whole.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "ir/op.h"
#include "ops/props.h"

namespace kiln {

/// One idx_list entry of an advanced index.
struct AdvancedEntry {
  enum class Kind { Index, Slice, NewAxis };
  Kind kind = Kind::Index;
  bool has_start = false, has_stop = false, has_step = false;  ///< slices only

  static AdvancedEntry index() { return {}; }
  static AdvancedEntry slice(bool start, bool stop, bool step) { return {Kind::Slice, start, stop, step}; }
  static AdvancedEntry newaxis() { return {Kind::NewAxis, false, false, false}; }
  /// How many inputs this entry takes.
  int num_inputs() const;
  bool operator==(const AdvancedEntry& o) const {
    return kind == o.kind && has_start == o.has_start && has_stop == o.has_stop && has_step == o.has_step;
  }
};

/// An idx_list of an advanced indexing op.
class AdvancedIndex {
 public:
  AdvancedIndex() = default;
  explicit AdvancedIndex(std::vector<AdvancedEntry> entries) : entries_(std::move(entries)) {}
  /// 2.26's form without idx_list: every one of `n` index inputs is an index entry.
  static AdvancedIndex all_indices(int n);

  const std::vector<AdvancedEntry>& entries() const { return entries_; }
  /// Number of index inputs the pattern takes.
  int num_inputs() const;

  /// [{"index": "input"}, {"slice": [null, "input", null]}, {"newaxis": true}, ...]
  Json to_json() const;
  /// Reads the graph-file form; errors name the JSON pointer of the bad entry.
  static AdvancedIndex from_json(const Json& j, const PropReader& props, const std::string& key);

  bool operator==(const AdvancedIndex& o) const { return entries_ == o.entries_; }

 private:
  std::vector<AdvancedEntry> entries_;
};

/// How x[index] is laid out, given the ranks and dtypes of x and of the index inputs.
struct AdvancedLayout {
  /// One piece of the index after resolving input types; trailing dimensions of x kept whole
  /// are full slices.
  struct Part {
    enum class Kind { Slice, NewAxis, Array, Mask };
    Kind kind = Kind::Slice;
    int x_dim = -1;  ///< first dimension of x it indexes (-1 for a newaxis)
    int ndim = 0;    ///< Array/Mask: the index's rank (a mask covers that many dimensions of x)
    int input = -1;  ///< Array/Mask: position among the index inputs
    std::array<int, 3> slice_inputs{{-1, -1, -1}};  ///< Slice: start/stop/step inputs or -1

    bool advanced() const { return kind == Kind::Array || kind == Kind::Mask; }
    bool full_slice() const {
      return kind == Kind::Slice && slice_inputs[0] < 0 && slice_inputs[1] < 0 && slice_inputs[2] < 0;
    }
  };
  std::vector<Part> parts;
  std::vector<int> basic;     ///< parts that are slices or newaxes, in output order
  std::vector<int> advanced;  ///< parts that are arrays or masks
  int block_pos = 0;          ///< output dimensions before the broadcast block
  int block_ndim = 0;         ///< rank of the broadcast block
  int x_ndim = 0;

  int out_ndim() const { return static_cast<int>(basic.size()) + block_ndim; }
  /// When the index is one integer array with every other dimension whole (np.take along an
  /// axis; PyTensor 3's idx_list=(0,) is axis 0): that axis, else -1.
  int take_axis() const;
  /// Whether any part is a boolean mask.
  bool has_mask() const;
};

/// Checks the index inputs against the pattern and x (count, dtypes, ranks, static mask
/// lengths) and returns the layout; refuses with type_error naming `who`.
AdvancedLayout advanced_layout(const Op& who, const AdvancedIndex& index, const TensorType& x,
                               const VarList& index_inputs);

/// Static shape of x[index] (PyTensor's make_node inference: constant slices and constant
/// masks give static lengths; static lengths of the index arrays broadcast).
Shape advanced_static_shape(const Op& who, const AdvancedLayout& layout, const TensorType& x,
                            const VarList& index_inputs);

/// Symbolic shape of x[index]: a mask counts its true elements (sum), index arrays broadcast.
ShapeVars advanced_symbolic_shape(const AdvancedLayout& layout, const ShapeVars& x_shape, const VarList& index_inputs,
                                  const std::vector<ShapeVars>& index_shapes);

/// x[index] resolved at run time: the region's shape and, for every element of it in
/// row-major order, the element offset into x. Out-of-range indices, masks of the wrong shape
/// and index arrays that do not broadcast are RuntimeFailures with NumPy's words.
class ResolvedAdvancedIndex {
 public:
  ResolvedAdvancedIndex(const AdvancedLayout& layout, const Array& x, const std::vector<Array>& index_inputs);

  const Shape& shape() const { return shape_; }
  /// Calls f(position, x_offset) for every element of the region, in row-major order
  /// (position counts from 0); offsets count elements of x (with x's strides).
  template <typename F>
  void for_each(F&& f) const;

 private:
  struct Dim {
    std::int64_t length;
    std::int64_t x_step;  ///< basic dimensions: offset added per step (0 for newaxis)
    int block_axis;       ///< block dimensions: which block axis, else -1
  };
  Shape shape_;
  std::vector<Dim> dims_;
  std::int64_t base_ = 0;                 ///< offset of slice starts
  Shape block_shape_;
  std::vector<std::int64_t> block_offsets_;  ///< per block element, offset of the advanced dims
};

template <typename F>
void ResolvedAdvancedIndex::for_each(F&& f) const {
  for (std::int64_t len : shape_)
    if (len == 0) return;
  const std::size_t nd = dims_.size();
  std::vector<std::int64_t> idx(nd, 0);
  // Row-major position within the block of the current output index.
  auto block_position = [&]() {
    std::int64_t p = 0;
    for (std::size_t d = 0; d < nd; ++d)
      if (dims_[d].block_axis >= 0) p = p * dims_[d].length + idx[d];
    return p;
  };
  for (std::int64_t pos = 0;; ++pos) {
    std::int64_t off = base_ + block_offsets_[static_cast<std::size_t>(block_position())];
    for (std::size_t d = 0; d < nd; ++d) off += idx[d] * dims_[d].x_step;
    f(pos, off);
    std::size_t k = nd;
    while (k > 0) {
      --k;
      if (++idx[k] < dims_[k].length) break;
      idx[k] = 0;
      if (k == 0) return;
    }
    if (nd == 0) return;
  }
}

}  // namespace kiln
