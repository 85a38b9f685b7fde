#include "grad/vectorize.h"

#include <algorithm>
#include <optional>

#include "api/elementwise.h"
#include "ir/error.h"
#include "ops/advanced_subtensor.h"
#include "ops/alloc.h"
#include "ops/assert.h"
#include "ops/blockwise.h"
#include "ops/cumulative.h"
#include "ops/diag.h"
#include "ops/dimshuffle.h"
#include "ops/dot.h"
#include "ops/elemwise.h"
#include "ops/extra_ops.h"
#include "ops/join.h"
#include "ops/linalg/linalg_common.h"
#include "ops/op_from_graph.h"
#include "ops/reduce.h"
#include "ops/reshape.h"
#include "ops/shape.h"
#include "ops/softmax.h"
#include "ops/sort.h"
#include "ops/subtensor.h"

namespace kiln {

namespace {

[[noreturn]] void cannot(const Apply& node, const std::string& why = "") {
  throw NotImplementedError("vectorize_graph: " + node.op().str() + " cannot be vectorized yet" +
                            (why.empty() ? "" : " (" + why + ")"));
}

// Leading batch dimensions of each new input relative to the node's own input.
std::vector<int> batch_dims(const Apply& node, const VarList& inputs) {
  std::vector<int> b;
  for (int i = 0; i < node.num_inputs(); ++i)
    b.push_back(inputs[static_cast<std::size_t>(i)]->ndim() - node.input(i)->ndim());
  return b;
}

// Only input 0 may be batched (the others are indices, lengths, axes).
int only_first_batched(const Apply& node, const std::vector<int>& b) {
  for (std::size_t i = 1; i < b.size(); ++i)
    if (b[i] != 0) cannot(node, "input " + std::to_string(i) + " has batch dimensions");
  return b[0];
}

std::vector<int> shifted(const std::vector<int>& axes, int b) {
  std::vector<int> out;
  for (int a : axes) out.push_back(a + b);
  return out;
}

std::string dot_signature(int x_ndim, int y_ndim) {
  std::string x = x_ndim == 2 ? "(m,k)" : "(k)";
  std::string y = y_ndim == 2 ? "(k,n)" : "(k)";
  std::string out = std::string("(") + (x_ndim == 2 ? "m" : "") + (x_ndim == 2 && y_ndim == 2 ? "," : "") +
                    (y_ndim == 2 ? "n" : "") + ")";
  return x + "," + y + "->" + out;
}

// Full slices over the batch dimensions in front of an index pattern.
BasicIndex with_batch_slices(const BasicIndex& index, int b) {
  std::vector<IndexEntry> entries(static_cast<std::size_t>(b), IndexEntry::slice(false, false, false));
  entries.insert(entries.end(), index.entries().begin(), index.entries().end());
  return BasicIndex(entries);
}

VarList vectorize_reduction(const Apply& node, const CAReduce& op, const Var& x, int b) {
  const int nd = node.input(0)->ndim();
  std::vector<int> axes = shifted(reduced_axes_list(op.axis(), nd), b);
  auto batched = std::make_shared<CAReduce>(op.kind(), op.scalar_op(), axes, op.dtype(), op.acc_dtype());
  return make_node(batched, {x})->outputs();
}

// Gives each of `xs` (whose batch dimension counts are `b`) all `nb` batch dimensions: missing
// ones are added in front and every batch dimension is broadcast to the common length (the
// maximum over the inputs that have it: broadcast lengths are 1 or that length).
VarList with_full_batch(const VarList& xs, const std::vector<int>& b, int nb) {
  std::vector<Var> lengths;
  for (int d = 0; d < nb; ++d) {
    Var len;
    for (std::size_t k = 0; k < xs.size(); ++k) {
      const int offset = nb - b[k];  // this input's batch dimension d - offset is global d
      if (d < offset) continue;
      Var l = shape_i(xs[k], d - offset);
      len = len ? maximum(len, l) : l;
    }
    lengths.push_back(len);
  }
  VarList out;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    Var x = b[k] < nb ? expand_dims_left(xs[k], nb - b[k]) : xs[k];
    std::vector<IntArg> full;
    for (int d = 0; d < nb; ++d) full.emplace_back(lengths[static_cast<std::size_t>(d)]);
    for (int d = nb; d < x->ndim(); ++d) full.emplace_back(shape_i(x, d));
    out.push_back(alloc(x, IntList(full)));
  }
  return out;
}

// Inserts length-1 dimensions after the `nb` batch dimensions of y so that its core part has
// `core_ndim` dimensions (NumPy aligns broadcasting from the right; batch dimensions must not
// slide into the core part).
Var pad_core(const Var& y, int nb, int core_ndim) {
  const int have = y->ndim() - nb;
  if (have >= core_ndim) return y;
  std::vector<int> order;
  for (int d = 0; d < nb; ++d) order.push_back(d);
  for (int d = 0; d < core_ndim - have; ++d) order.push_back(DimShuffle::kNewAxis);
  for (int d = 0; d < have; ++d) order.push_back(nb + d);
  return dimshuffle(y, order);
}

// The permutation that moves dimension `from` to the front (and its inverse).
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

// Ops whose first inputs are data and whose remaining inputs (indices, axes) must not be
// batched: Join, MakeVector, IncSubtensor, AdvancedSubtensor1, AdvancedIncSubtensor1.
std::optional<VarList> vectorize_structural(const Apply& node, const VarList& inputs, const std::vector<int>& b,
                                            int nb) {
  const Op& op = node.op();
  auto unbatched_from = [&](std::size_t first) {
    for (std::size_t i = first; i < b.size(); ++i)
      if (b[i] != 0) cannot(node, "input " + std::to_string(i) + " (an index or axis) has batch dimensions");
  };
  if (const auto* j = dynamic_cast<const Join*>(&op)) {
    const int first = j->first_tensor();
    if (first == 1 && b[0] != 0) cannot(node, "its axis has batch dimensions");
    std::optional<int> axis = j->static_axis_of(node);
    if (!axis) cannot(node, "its axis is not a constant");
    VarList tensors(inputs.begin() + first, inputs.end());
    std::vector<int> tb(b.begin() + first, b.end());
    return VarList{join(*axis + nb, with_full_batch(tensors, tb, nb))};
  }
  if (const auto* mv = dynamic_cast<const MakeVector*>(&op)) {
    VarList columns;
    for (const Var& s : with_full_batch(inputs, b, nb)) columns.push_back(expand_dims(cast(s, mv->dtype()), nb));
    if (columns.empty()) cannot(node, "no elements");
    return VarList{columns.size() == 1 ? columns[0] : join(nb, columns)};
  }
  if (const auto* inc = dynamic_cast<const IncSubtensor*>(&op)) {
    unbatched_from(2);
    VarList xy = with_full_batch({inputs[0], inputs[1]}, {b[0], b[1]}, nb);
    const int core = node.input(0)->ndim() - inc->index().num_dropped();
    VarList args{xy[0], pad_core(xy[1], nb, core)};
    args.insert(args.end(), inputs.begin() + 2, inputs.end());
    auto batched = std::make_shared<IncSubtensor>(with_batch_slices(inc->index(), nb), inc->set_instead_of_inc());
    return make_node(batched, args)->outputs();
  }
  if (dynamic_cast<const AdvancedSubtensor1*>(&op)) {
    unbatched_from(1);
    const int nd = inputs[0]->ndim();
    Var front = dimshuffle(inputs[0], to_front(nd, nb));
    return VarList{dimshuffle(take(front, inputs[1]), from_front(nd, nb))};
  }
  if (const auto* inc = dynamic_cast<const AdvancedIncSubtensor1*>(&op)) {
    unbatched_from(2);
    VarList xy = with_full_batch({inputs[0], inputs[1]}, {b[0], b[1]}, nb);
    const int nd = xy[0]->ndim();
    Var x = dimshuffle(xy[0], to_front(nd, nb));
    Var y = dimshuffle(pad_core(xy[1], nb, node.input(0)->ndim()), to_front(nd, nb));
    auto same = std::make_shared<AdvancedIncSubtensor1>(inc->set_instead_of_inc(), inc->ignore_duplicates());
    return VarList{dimshuffle(apply1(same, {x, y, inputs[2]}), from_front(nd, nb))};
  }
  return std::nullopt;
}

VarList vectorize_alloc(const Apply& node, const VarList& inputs, int b) {
  const Var& value = inputs[0];
  const int n = node.output(0)->ndim();
  const int vnd = node.input(0)->ndim();
  // Batch dimensions first, then length-1 dimensions up to the core rank, then the value's.
  std::vector<int> order;
  for (int d = 0; d < b; ++d) order.push_back(d);
  for (int d = 0; d < n - vnd; ++d) order.push_back(DimShuffle::kNewAxis);
  for (int d = 0; d < vnd; ++d) order.push_back(b + d);
  Var v = dimshuffle(value, order);
  VarList args{v};
  for (int d = 0; d < b; ++d) args.push_back(shape_i(value, d));
  args.insert(args.end(), inputs.begin() + 1, inputs.end());
  return make_node(node.op_ptr(), args)->outputs();
}

}  // namespace

VarList vectorize_node(const Apply& node, const VarList& inputs) {
  const std::vector<int> b = batch_dims(node, inputs);
  const int nb = *std::max_element(b.begin(), b.end());
  for (int bi : b)
    if (bi < 0) cannot(node, "a replacement has fewer dimensions than the variable it replaces");
  if (nb == 0) return make_node(node.op_ptr(), inputs)->outputs();
  const Op& op = node.op();

  if (const auto* e = dynamic_cast<const Elemwise*>(&op)) return elemwise(e->scalar_op(), inputs);
  if (const auto* ds = dynamic_cast<const DimShuffle*>(&op)) {
    std::vector<int> order;
    for (int d = 0; d < nb; ++d) order.push_back(d);
    for (int o : ds->new_order()) order.push_back(o == DimShuffle::kNewAxis ? o : o + nb);
    return {dimshuffle(inputs[0], order)};
  }
  if (const auto* r = dynamic_cast<const CAReduce*>(&op)) return vectorize_reduction(node, *r, inputs[0], nb);
  if (const auto* a = dynamic_cast<const Argmax*>(&op)) {
    std::vector<int> axes = shifted(reduced_axes_list(a->axis(), node.input(0)->ndim()), nb);
    return {apply1(std::make_shared<Argmax>(axes), {inputs[0]})};
  }
  if (const auto* s = dynamic_cast<const ShapeI*>(&op)) return {shape_i(inputs[0], s->i() + nb)};
  if (dynamic_cast<const ShapeOp*>(&op)) return {subtensor(shape(inputs[0]), {slice(nb)})};
  if (dynamic_cast<const Dot*>(&op) || op.name() == "Dot22")
    return blockwise(node.op_ptr(), dot_signature(node.input(0)->ndim(), node.input(1)->ndim()), inputs);
  if (const auto* bw = dynamic_cast<const Blockwise*>(&op))
    return blockwise(bw->core_op_ptr(), bw->signature().str(), inputs);
  if (const auto* linalg = dynamic_cast<const LinalgOp*>(&op)) {
    std::vector<int> core_ranks;
    for (const Var& in : node.inputs()) core_ranks.push_back(in->ndim());
    return blockwise(node.op_ptr(), linalg->gufunc_signature(core_ranks), inputs);
  }
  if (dynamic_cast<const BatchedDot*>(&op))
    return blockwise(std::make_shared<Dot>(), "(m,k),(k,n)->(m,n)", inputs);
  if (dynamic_cast<const CheckAndRaise*>(&op)) return make_node(node.op_ptr(), inputs)->outputs();
  if (const auto* ofg = dynamic_cast<const OpFromGraph*>(&op)) {
    // Batched as its inner graph is: applied to the core inputs, then vectorized.
    Replacements to_batched;
    for (int i = 0; i < node.num_inputs(); ++i) to_batched.emplace_back(node.input(i), inputs[static_cast<std::size_t>(i)]);
    return vectorize_graph(apply_inner_graph(ofg->inner_graph(), node.inputs()), to_batched);
  }

  // Rules beside their ops (ops/advanced_subtensor.h, ops/sort.h, ops/extra_ops.h).
  if (dynamic_cast<const AdvancedSubtensor*>(&op)) return vectorize_advanced_subtensor(node, inputs);
  if (dynamic_cast<const AdvancedIncSubtensor*>(&op)) return vectorize_advanced_inc_subtensor(node, inputs);
  if (dynamic_cast<const SortBase*>(&op)) return vectorize_sort(node, inputs);
  if (dynamic_cast<const Repeat*>(&op)) return vectorize_repeat(node, inputs);
  if (dynamic_cast<const BroadcastTo*>(&op)) return vectorize_broadcast_to(node, inputs);
  if (dynamic_cast<const SearchsortedOp*>(&op)) return vectorize_searchsorted(node, inputs);

  if (auto structural = vectorize_structural(node, inputs, b, nb)) return *structural;

  const int b0 = only_first_batched(node, b);
  if (dynamic_cast<const Alloc*>(&op)) return vectorize_alloc(node, inputs, b0);
  if (const auto* sub = dynamic_cast<const Subtensor*>(&op)) {
    VarList args = inputs;
    return make_node(std::make_shared<Subtensor>(with_batch_slices(sub->index(), b0)), args)->outputs();
  }
  if (const auto* c = dynamic_cast<const CumOp*>(&op)) {
    if (!c->axis()) cannot(node, "a cumulative op over the flattened input");
    return {apply1(std::make_shared<CumOp>(*c->axis() + b0, c->mode()), {inputs[0]})};
  }
  if (const auto* sm = dynamic_cast<const SoftmaxBase*>(&op)) {
    if (!sm->axis()) cannot(node, "a softmax over every element");
    return {op.name() == "Softmax" ? softmax(inputs[0], *sm->axis() + b0) : log_softmax(inputs[0], *sm->axis() + b0)};
  }
  if (const auto* d = dynamic_cast<const ExtractDiag*>(&op))
    return {apply1(std::make_shared<ExtractDiag>(d->offset(), d->axis1() + b0, d->axis2() + b0), {inputs[0]})};
  if (const auto* d = dynamic_cast<const AllocDiag*>(&op))
    return {apply1(std::make_shared<AllocDiag>(d->offset(), d->axis1() + b0, d->axis2() + b0), {inputs[0]})};
  if (dynamic_cast<const Reshape*>(&op)) {
    Var batch = subtensor(shape(inputs[0]), {slice(none, b0)});
    Var target = join(0, {batch, cast(inputs[1], DType::Int64)});
    return {reshape(inputs[0], target, node.output(0)->ndim() + b0)};
  }
  if (dynamic_cast<const SpecifyShape*>(&op)) {
    VarList args{inputs[0]};
    for (int d = 0; d < b0; ++d) args.push_back(int64_constant(-1));
    args.insert(args.end(), inputs.begin() + 1, inputs.end());
    return make_node(node.op_ptr(), args)->outputs();
  }
  cannot(node);
}

VarList vectorize_graph(const VarList& outputs, const Replacements& replace) {
  for (const auto& [old_var, new_var] : replace) {
    if (!old_var || !new_var) throw UserError("vectorize_graph: a replacement pair holds a null variable");
    const TensorType& core = old_var->type();
    const TensorType& batched = new_var->type();
    const int b = batched.ndim() - core.ndim();
    bool ok = b >= 0 && batched.dtype == core.dtype;
    for (int d = 0; ok && d < core.ndim(); ++d) {
      std::int64_t c = core.shape[static_cast<std::size_t>(d)];
      std::int64_t n = batched.shape[static_cast<std::size_t>(d + b)];
      ok = c == kUnknownLength || n == kUnknownLength || c == n;
    }
    if (!ok)
      throw UserError("vectorize_graph: cannot use a variable of type " + batched.str() + " for one of type " +
                      core.str() + " (it must have the same dtype and end with the same shape)");
  }
  return rebuild_graph(outputs, replace, vectorize_node);
}

Var vectorize_graph(const Var& output, const Replacements& replace) {
  return vectorize_graph(VarList{output}, replace)[0];
}

}  // namespace kiln
