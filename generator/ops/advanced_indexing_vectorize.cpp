// vectorize_graph's rules for AdvancedSubtensor and AdvancedIncSubtensor (beside the ops, as
// their pullbacks are). Unbatched indices: full slices in front of the index (and, when the
// advanced indices are not adjacent, so that NumPy puts their block first, a transpose that
// moves the batch dimensions back to the front). Batched integer indices: an arange index for
// every batch dimension joins the advanced indices, so that batch element b reads x[b] at
// idx[b]; the result's block then comes first and is transposed into place. Masks and slice
// bounds cannot be batched (their lengths would differ per batch element).
#include "ops/math.h"
#include "ir/error.h"
#include "ops/advanced_subtensor.h"
#include "ops/alloc.h"
#include "ops/batching.h"
#include "ops/dimshuffle.h"
#include "ops/reshape.h"
#include "ops/shape.h"

namespace kiln {

namespace {

using Part = AdvancedLayout::Part;

/// Leading batch dimensions of inputs[i] relative to the node's input i.
int batch_of(const Apply& node, const VarList& inputs, int i) {
  return inputs[static_cast<std::size_t>(i)]->ndim() - node.input(i)->ndim();
}

/// The length of batch dimension d over `xs` (each with `b[k]` batch dimensions, aligned to
/// the right of `nb`): the largest, as broadcasting gives.
Var batch_length(const VarList& xs, const std::vector<int>& b, int nb, int d) {
  Var len;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    const int offset = nb - b[k];
    if (d < offset) continue;
    Var l = shape_i(xs[k], d - offset);
    len = len ? maximum(len, l) : l;
  }
  return len ? len : int64_constant(1);
}

/// v with `count` length-1 dimensions inserted after its first `after` dimensions.
Var insert_ones(const Var& v, int after, int count) {
  if (count <= 0) return v;
  std::vector<int> order;
  for (int d = 0; d < after; ++d) order.push_back(d);
  for (int d = 0; d < count; ++d) order.push_back(DimShuffle::kNewAxis);
  for (int d = after; d < v->ndim(); ++d) order.push_back(d);
  return dimshuffle(v, order);
}

/// The permutation putting dimensions [from, from + n) of a rank-`rank` tensor at `to`.
std::vector<int> move_block(int rank, int from, int n, int to) {
  std::vector<int> rest, order;
  for (int d = 0; d < rank; ++d)
    if (d < from || d >= from + n) rest.push_back(d);
  order.insert(order.end(), rest.begin(), rest.begin() + to);
  for (int d = from; d < from + n; ++d) order.push_back(d);
  order.insert(order.end(), rest.begin() + to, rest.end());
  return order;
}

struct Batched {
  AdvancedIndex index;
  VarList index_inputs;
  int nb;
  bool by_arange;  ///< batched indices: arange indices lead, the block comes first
};

/// The batched index of a node whose index inputs start at `first`, for an x with `nb` batch
/// dimensions (`x_full`, already given all of them when the indices are batched).
Batched batched_index_for(const Apply& node, const AdvancedIndex& index, const AdvancedLayout& lay, const VarList& inputs,
                      int first, int nb, const Var& x_full) {
  Batched out{index, {}, nb, false};
  bool batched = false;
  for (int i = first; i < node.num_inputs(); ++i) batched = batched || batch_of(node, inputs, i) > 0;
  std::vector<AdvancedEntry> entries;
  if (!batched) {
    entries.assign(static_cast<std::size_t>(nb), AdvancedEntry::slice(false, false, false));
    out.index_inputs.assign(inputs.begin() + first, inputs.end());
  } else {
    if (lay.has_mask()) cannot_vectorize(node, "a boolean mask beside batched indices");
    for (const Part& p : lay.parts)
      for (int s : p.slice_inputs)
        if (s >= 0 && batch_of(node, inputs, first + s) > 0) cannot_vectorize(node, "batched slice bounds");
    out.by_arange = true;
    entries.assign(static_cast<std::size_t>(nb), AdvancedEntry::index());
    for (int d = 0; d < nb; ++d) {
      std::vector<IntArg> shape(static_cast<std::size_t>(nb + lay.block_ndim), IntArg(1));
      Var len = shape_i(x_full, d);
      shape[static_cast<std::size_t>(d)] = len;
      out.index_inputs.push_back(reshape(arange(len, DType::Int64), IntList(shape)));
    }
    for (int i = first; i < node.num_inputs(); ++i) {
      Var v = inputs[static_cast<std::size_t>(i)];
      const int bi = batch_of(node, inputs, i);
      if (bi > 0) {
        v = expand_dims_left(v, nb - bi);
        v = insert_ones(v, nb, lay.block_ndim - node.input(i)->ndim());  // core ranks align to the block's
      }
      out.index_inputs.push_back(v);
    }
  }
  entries.insert(entries.end(), index.entries().begin(), index.entries().end());
  out.index = AdvancedIndex(entries);
  return out;
}

/// x with every one of `nb` batch dimensions at its full length (a broadcast copy when x lacks
/// some), given the batch lengths.
Var full_batch(const Var& x, int bx, int nb, const std::vector<Var>& lengths) {
  bool full = bx == nb;
  for (int d = 0; full && d < nb; ++d) full = lengths[static_cast<std::size_t>(d)].get() == nullptr;
  if (full) return x;
  Var xe = expand_dims_left(x, nb - bx);
  std::vector<IntArg> shape;
  for (int d = 0; d < nb; ++d) shape.emplace_back(lengths[static_cast<std::size_t>(d)]);
  for (int d = nb; d < xe->ndim(); ++d) shape.emplace_back(shape_i(xe, d));
  return alloc(xe, IntList(shape));
}

}  // namespace

std::optional<VarList> AdvancedSubtensor::vectorize(const Apply& node, const VarList& inputs) const {
  const auto& op = static_cast<const AdvancedSubtensor&>(node.op());
  const AdvancedLayout lay = op.layout(node);
  int nb = 0;
  for (int i = 0; i < node.num_inputs(); ++i) nb = std::max(nb, batch_of(node, inputs, i));
  const int bx = batch_of(node, inputs, 0);
  Var x = inputs[0];
  bool batched_index = false;
  for (int i = 1; i < node.num_inputs(); ++i) batched_index = batched_index || batch_of(node, inputs, i) > 0;
  if (batched_index) x = expand_dims_left(x, nb - bx);  // length-1 batch dimensions broadcast
  Batched b = batched_index_for(node, op.index(), lay, inputs, 1, batched_index ? nb : bx, x);
  VarList args{x};
  args.insert(args.end(), b.index_inputs.begin(), b.index_inputs.end());
  Var r = apply1(std::make_shared<AdvancedSubtensor>(b.index), args);
  const int nbatch = b.nb;
  const AdvancedLayout now = static_cast<const AdvancedSubtensor&>(r->owner()->op()).layout(*r->owner());
  if (b.by_arange) {
    // r is [batch..., core block..., basic...]: the block goes back to its core position.
    const int k = lay.block_ndim;
    return VarList{dimshuffle(r, move_block(r->ndim(), nbatch, k, nbatch + lay.block_pos))};
  }
  if (now.block_pos != nbatch + lay.block_pos && !lay.advanced.empty())
    return VarList{dimshuffle(r, move_block(r->ndim(), lay.block_ndim, nbatch, 0))};  // the batch dims first
  return VarList{r};
}

std::optional<VarList> AdvancedIncSubtensor::vectorize(const Apply& node, const VarList& inputs) const {
  const auto& op = static_cast<const AdvancedIncSubtensor&>(node.op());
  const AdvancedLayout lay = op.layout(node);
  std::vector<int> b;
  int nb = 0;
  for (int i = 0; i < node.num_inputs(); ++i) {
    b.push_back(batch_of(node, inputs, i));
    nb = std::max(nb, b.back());
  }
  // x needs every batch dimension (the output has x's shape).
  std::vector<Var> lengths(static_cast<std::size_t>(nb));
  VarList batched_inputs;
  std::vector<int> batched_b;
  for (int i = 0; i < node.num_inputs(); ++i)
    if (b[static_cast<std::size_t>(i)] > 0) {
      batched_inputs.push_back(inputs[static_cast<std::size_t>(i)]);
      batched_b.push_back(b[static_cast<std::size_t>(i)]);
    }
  bool x_full = b[0] == nb;
  if (!x_full)
    for (int d = 0; d < nb; ++d) lengths[static_cast<std::size_t>(d)] = batch_length(batched_inputs, batched_b, nb, d);
  Var x = full_batch(inputs[0], b[0], nb, lengths);
  Batched bi = batched_index_for(node, op.index(), lay, inputs, 2, nb, x);
  // y: all batch dimensions (length 1 where it has none), its core part padded to the region's
  // rank, then laid out as the batched region is.
  Var y = expand_dims_left(inputs[1], nb - b[1]);
  y = insert_ones(y, nb, lay.out_ndim() - node.input(1)->ndim());
  VarList args{x, nullptr};
  args.insert(args.end(), bi.index_inputs.begin(), bi.index_inputs.end());
  if (bi.by_arange) {
    y = dimshuffle(y, move_block(y->ndim(), nb + lay.block_pos, lay.block_ndim, nb));  // [batch, block, basic]
  } else {
    AdvancedLayout now = advanced_layout(op, bi.index, x->type(), VarList(args.begin() + 2, args.end()));
    if (now.block_pos != nb + lay.block_pos && !lay.advanced.empty())
      y = dimshuffle(y, move_block(y->ndim(), nb + lay.block_pos, lay.block_ndim, 0));  // [block, batch, basic]
  }
  args[1] = y;
  return VarList{apply1(std::make_shared<AdvancedIncSubtensor>(bi.index, op.set_instead_of_inc(), op.ignore_duplicates()),
                 args)};
}

}  // namespace kiln
