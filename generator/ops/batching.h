// Helpers for the ops' batching rules (Op::vectorize, PyTensor's _vectorize_node): how many
// leading batch dimensions each new input has, refusing what a rule cannot batch, and giving
// inputs a common set of batch dimensions. Each op's rule lives beside the op; transform/
// vectorize.h's vectorize_graph calls them node by node.
#pragma once

#include <string>
#include <vector>

#include "ir/op.h"
#include "transform/vectorize.h"

namespace kiln {

/// The batch dimensions of each new input of `node`: its rank minus the node's input's rank.
std::vector<int> batch_dims(const Apply& node, const VarList& batched_inputs);

/// The most batch dimensions any input has.
int max_batch_dims(const std::vector<int>& batch);

/// The batch dimensions of input 0, the only input that may have some (the others are indices,
/// lengths, axes); cannot_vectorize otherwise.
int only_first_batched(const Apply& node, const VarList& batched_inputs);

/// Input indices `first`.. must have no batch dimensions (they are indices or axes).
void check_unbatched_from(const Apply& node, const std::vector<int>& batch, std::size_t first);

/// Each axis plus `b`.
std::vector<int> shifted(const std::vector<int>& axes, int b);

/// Gives each of `xs` (whose batch dimension counts are `batch`) all `nb` batch dimensions:
/// missing ones are added in front and every batch dimension is broadcast to the common length
/// (the maximum over the inputs that have it: broadcast lengths are 1 or that length).
VarList with_full_batch(const VarList& xs, const std::vector<int>& batch, int nb);

/// Inserts length-1 dimensions after the `nb` batch dimensions of y so that its core part has
/// `core_ndim` dimensions (NumPy aligns broadcasting from the right; batch dimensions must not
/// slide into the core part).
Var pad_core(const Var& y, int nb, int core_ndim);

/// The permutation that moves dimension `from` of a rank-`ndim` value to the front, and the one
/// that moves the front dimension back to `to`.
std::vector<int> to_front(int ndim, int from);
std::vector<int> from_front(int ndim, int to);

}  // namespace kiln
