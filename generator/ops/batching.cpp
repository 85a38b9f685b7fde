#include "ops/batching.h"

#include <algorithm>

#include "ir/error.h"
#include "ops/alloc.h"
#include "ops/dimshuffle.h"
#include "ops/math.h"
#include "ops/shape.h"

namespace kiln {

std::vector<int> batch_dims(const Apply& node, const VarList& batched_inputs) {
  std::vector<int> b;
  for (int i = 0; i < node.num_inputs(); ++i)
    b.push_back(batched_inputs[static_cast<std::size_t>(i)]->ndim() - node.input(i)->ndim());
  return b;
}

int max_batch_dims(const std::vector<int>& batch) {
  return batch.empty() ? 0 : *std::max_element(batch.begin(), batch.end());
}

void check_unbatched_from(const Apply& node, const std::vector<int>& batch, std::size_t first) {
  for (std::size_t i = first; i < batch.size(); ++i)
    if (batch[i] != 0) cannot_vectorize(node, "input " + std::to_string(i) + " (an index or axis) has batch dimensions");
}

int only_first_batched(const Apply& node, const VarList& batched_inputs) {
  const std::vector<int> b = batch_dims(node, batched_inputs);
  for (std::size_t i = 1; i < b.size(); ++i)
    if (b[i] != 0) cannot_vectorize(node, "input " + std::to_string(i) + " has batch dimensions");
  return b[0];
}

std::vector<int> shifted(const std::vector<int>& axes, int b) {
  std::vector<int> out;
  for (int a : axes) out.push_back(a + b);
  return out;
}

VarList with_full_batch(const VarList& xs, const std::vector<int>& batch, int nb) {
  std::vector<Var> lengths;
  for (int d = 0; d < nb; ++d) {
    Var len;
    for (std::size_t k = 0; k < xs.size(); ++k) {
      const int offset = nb - batch[k];  // this input's batch dimension d - offset is global d
      if (d < offset) continue;
      Var l = shape_i(xs[k], d - offset);
      len = len ? maximum(len, l) : l;
    }
    lengths.push_back(len);
  }
  VarList out;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    Var x = batch[k] < nb ? expand_dims_left(xs[k], nb - batch[k]) : xs[k];
    std::vector<IntArg> full;
    for (int d = 0; d < nb; ++d) full.emplace_back(lengths[static_cast<std::size_t>(d)]);
    for (int d = nb; d < x->ndim(); ++d) full.emplace_back(shape_i(x, d));
    out.push_back(alloc(x, IntList(full)));
  }
  return out;
}

Var pad_core(const Var& y, int nb, int core_ndim) {
  const int have = y->ndim() - nb;
  if (have >= core_ndim) return y;
  std::vector<int> order;
  for (int d = 0; d < nb; ++d) order.push_back(d);
  for (int d = 0; d < core_ndim - have; ++d) order.push_back(DimShuffle::kNewAxis);
  for (int d = 0; d < have; ++d) order.push_back(nb + d);
  return dimshuffle(y, order);
}

std::vector<int> to_front(int ndim, int from) {
  std::vector<int> order{from};
  for (int d = 0; d < ndim; ++d)
    if (d != from) order.push_back(d);
  return order;
}

std::vector<int> from_front(int ndim, int to) {
  std::vector<int> order;
  for (int d = 1; d <= to; ++d) order.push_back(d);
  order.push_back(0);
  for (int d = to + 1; d < ndim; ++d) order.push_back(d);
  return order;
}

}  // namespace kiln
