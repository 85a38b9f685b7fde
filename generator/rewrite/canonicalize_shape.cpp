// canonicalize, shapes and views: DimShuffle chains merged and lifted through Elemwise, shape
// queries answered from static lengths or from the producing op's infer_shape, Alloc that
// changes nothing removed (alone, or feeding an Elemwise that broadcasts anyway), Subtensor
// lifted through Elemwise (log(1+x)[0] -> log(1+x[0])), reductions of reductions merged.
#include <algorithm>

#include "ops/alloc.h"
#include "ops/array_util.h"
#include "ops/constant.h"
#include "ops/dimshuffle.h"
#include "ops/reduce.h"
#include "ops/shape.h"
#include "ops/subtensor.h"
#include "rewrite/database.h"
#include "rewrite/rule_helpers.h"

namespace kiln {

namespace {


NodeRewrite node_rule(const std::string& name, const std::string& op_name,
                      std::function<std::optional<VarList>(const FunctionGraph&, const Apply&)> fn) {
  NodeRewrite r;
  r.name = name;
  r.tags = kCanonicalizeTags;
  r.op_name = op_name;
  r.apply = std::move(fn);
  return r;
}

const DimShuffle& as_dimshuffle(const Apply& n) { return static_cast<const DimShuffle&>(n.op()); }

// DimShuffle(DimShuffle(x)) -> one DimShuffle; the identity DimShuffle -> x.
std::optional<VarList> merge_dimshuffles(const FunctionGraph&, const Apply& node) {
  const auto& outer = as_dimshuffle(node);
  const Var& in = node.input(0);
  std::vector<int> order = outer.new_order();
  Var source = in;
  if (in->owner() && in->owner()->op().name() == "DimShuffle") {
    const auto& inner = as_dimshuffle(*in->owner());
    for (int& d : order)
      if (d != DimShuffle::kNewAxis) d = inner.new_order()[static_cast<std::size_t>(d)];
    source = in->owner()->input(0);
  } else {
    bool identity = static_cast<int>(order.size()) == in->ndim();
    for (std::size_t k = 0; k < order.size() && identity; ++k) identity = order[k] == static_cast<int>(k);
    return identity ? std::optional<VarList>(VarList{in}) : std::nullopt;
  }
  bool identity = static_cast<int>(order.size()) == source->ndim();
  for (std::size_t k = 0; k < order.size() && identity; ++k) identity = order[k] == static_cast<int>(k);
  if (identity) return VarList{source};
  return VarList{dimshuffle(source, order)};
}

// DimShuffle(Elemwise(a, b)) -> Elemwise(DimShuffle(a), DimShuffle(b)) when the Elemwise has
// no other user and nothing is dropped (views move toward the inputs, where they merge).
std::optional<VarList> lift_dimshuffle(const FunctionGraph& fg, const Apply& node) {
  const auto& ds = as_dimshuffle(node);
  const Var& in = node.input(0);
  const Elemwise* ew = elemwise_op(in->owner());
  if (!ew || !ds.dropped().empty() || in->owner()->num_outputs() != 1 || client_count(fg, in) != 1) return std::nullopt;
  VarList args;
  for (const auto& a : in->owner()->inputs()) args.push_back(dimshuffle(a, ds.new_order()));
  return VarList{elemwise1(ew->scalar_op(), args)};
}

// Shape_i of a static length is a constant; otherwise the producer's infer_shape answers it.
std::optional<VarList> shape_i_rewrite(const FunctionGraph&, const Apply& node) {
  const int i = static_cast<const ShapeI&>(node.op()).i();
  const Var& x = node.input(0);
  std::int64_t len = x->shape()[static_cast<std::size_t>(i)];
  if (len != kUnknownLength) return VarList{int64_constant(len)};
  Apply* producer = x->owner();
  if (!producer) return std::nullopt;
  std::vector<ShapeVars> in_shapes;
  for (const auto& in : producer->inputs()) {
    ShapeVars dims;
    for (int d = 0; d < in->ndim(); ++d) {
      std::int64_t l = in->shape()[static_cast<std::size_t>(d)];
      dims.push_back(l != kUnknownLength ? int64_constant(l) : shape_i(in, d));
    }
    in_shapes.push_back(dims);
  }
  Var dim = output_shapes(*producer, in_shapes)[static_cast<std::size_t>(x->index())][static_cast<std::size_t>(i)];
  // Without a formula the shape is asked of the output itself: nothing gained.
  if (dim->owner() && dim->owner()->op().name() == "Shape_i" && dim->owner()->input(0).get() == x.get()) return std::nullopt;
  return VarList{dim};
}

std::optional<VarList> static_shape(const FunctionGraph&, const Apply& node) {
  const Var& x = node.input(0);
  if (!x->type().fully_static()) return std::nullopt;
  return VarList{int64_vector_constant(x->shape())};
}

// Alloc(x, lengths) whose output type is x's type changes nothing.
std::optional<VarList> alloc_unneeded(const FunctionGraph&, const Apply& node) {
  const Var& value = node.input(0);
  const Variable& out = *node.output_ptr(0);
  if (value->type() == out.type() && out.type().fully_static()) return VarList{value};
  return std::nullopt;
}

// True when `len` (a 0-d int64) is known to equal the run-time length of dimension d of `v`
// whenever `v` is computed without error: `len` is Shape_i{d}(v) or a constant equal to v's
// static length there, or v is an Elemwise output whose inputs of that length (which the
// Elemwise checks agree) include one of length `len`. `depth` bounds the search.
bool length_proven(const Var& v, int d, const Var& len, int depth) {
  const std::int64_t fixed = v->shape()[static_cast<std::size_t>(d)];
  if (len->is_constant()) return fixed != kUnknownLength && scalar_to_int64(len->value()) == fixed;
  const Apply* q = len->owner();
  if (q && q->op().name() == "Shape_i" && q->input(0).get() == v.get() &&
      static_cast<const ShapeI&>(q->op()).i() == d)
    return true;
  const Apply* p = v->owner();
  if (depth == 0 || !elemwise_op(p) || v->type().broadcastable(d)) return false;
  for (const auto& in : p->inputs()) {
    const int e = d - (v->ndim() - in->ndim());
    if (e >= 0 && !in->type().broadcastable(e) && length_proven(in, e, len, depth - 1)) return true;
  }
  return false;
}

// Elemwise(..., Alloc(x, lengths), ...) -> Elemwise(..., x, ...) when every length the Alloc
// sets is one that another input of the Elemwise is proven to have: the Alloc only broadcast x
// to the shape the Elemwise broadcasts to anyway (PyTensor's local_elemwise_alloc). This keeps
// a `1/n` gradient scale from becoming an n-element buffer written and read back. No run-time
// check is lost: the proof makes the other input's length the Alloc's.
std::optional<VarList> elemwise_alloc(const FunctionGraph&, const Apply& node) {
  const Elemwise* ew = elemwise_op(&node);
  if (!ew || node.num_outputs() != 1) return std::nullopt;
  VarList args = node.inputs();
  bool changed = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const Apply* alloc = args[i]->owner();
    if (!alloc || alloc->op().name() != "Alloc") continue;
    const Var& value = alloc->input(0);
    const int n = args[i]->ndim();
    if (value->dtype() != args[i]->dtype() || value->ndim() > n) continue;
    bool proven = true;
    for (int d = 0; d < n && proven; ++d) {
      if (args[i]->type().broadcastable(d)) continue;  // length 1: nothing to broadcast to
      const Var& len = alloc->input(static_cast<std::size_t>(d) + 1);
      proven = false;
      for (std::size_t j = 0; j < args.size() && !proven; ++j) {
        const Var& other = node.input(j);
        const int e = d - (n - other->ndim());
        proven = j != i && e >= 0 && !other->type().broadcastable(e) && length_proven(other, e, len, 4);
      }
    }
    if (!proven) continue;
    args[i] = value->ndim() < n ? expand_dims_left(value, n - value->ndim()) : value;
    changed = true;
  }
  if (!changed) return std::nullopt;
  Var out = elemwise1(ew->scalar_op(), args);
  if (!(out->type() == node.output_ptr(0)->type())) return std::nullopt;  // a static shape would change
  return VarList{out};
}

// Subtensor(Elemwise(a, b), idx) -> Elemwise(a[idx'], b[idx']): an input broadcast along a
// dimension takes index 0 (integer entries) or the whole dimension (slices) there.
std::optional<VarList> lift_subtensor(const FunctionGraph& fg, const Apply& node) {
  const Var& in = node.input(0);
  const Elemwise* ew = elemwise_op(in->owner());
  if (!ew || in->owner()->num_outputs() != 1 || client_count(fg, in) != 1) return std::nullopt;
  const auto& op = static_cast<const Subtensor&>(node.op());
  const auto& entries = op.index().entries();
  VarList ints(node.inputs().begin() + 1, node.inputs().end());
  VarList args;
  for (const auto& a : in->owner()->inputs()) {
    std::vector<IndexItem> items;
    std::size_t next = 0;
    for (std::size_t d = 0; d < entries.size(); ++d) {
      const IndexEntry& e = entries[d];
      bool bcast = a->type().broadcastable(static_cast<int>(d)) && !in->type().broadcastable(static_cast<int>(d));
      if (!e.is_slice) {
        items.push_back(idx(bcast ? IndexScalar(0) : IndexScalar(ints[next])));
        next += 1;
        continue;
      }
      IndexScalar parts[3] = {none, none, none};
      bool has[3] = {e.has_start, e.has_stop, e.has_step};
      for (int k = 0; k < 3; ++k)
        if (has[k]) parts[k] = IndexScalar(ints[next++]);
      items.push_back(bcast ? slice() : slice(parts[0], parts[1], parts[2]));
    }
    args.push_back(subtensor(a, items));
  }
  return VarList{elemwise1(ew->scalar_op(), args)};
}

// A reduction of a reduction of the same kind is one reduction over both sets of axes.
std::optional<VarList> merge_reductions(const FunctionGraph& fg, const Apply& node) {
  const auto& outer = static_cast<const CAReduce&>(node.op());
  const Var& in = node.input(0);
  if (!in->owner() || in->owner()->op().name() != node.op().name() || client_count(fg, in) != 1) return std::nullopt;
  const auto& inner = static_cast<const CAReduce&>(in->owner()->op());
  if (outer.kind() == ReduceKind::CAReduce || outer.kind() == ReduceKind::ProdWithoutZeros) return std::nullopt;
  const Var& x = in->owner()->input(0);
  std::vector<int> inner_axes = reduced_axes_list(inner.axis(), x->ndim());
  std::vector<int> kept;
  for (int d = 0; d < x->ndim(); ++d)
    if (std::find(inner_axes.begin(), inner_axes.end(), d) == inner_axes.end()) kept.push_back(d);
  std::vector<int> axes = inner_axes;
  for (int a : reduced_axes_list(outer.axis(), in->ndim())) axes.push_back(kept[static_cast<std::size_t>(a)]);
  std::sort(axes.begin(), axes.end());
  // The merged reduction must compute in the same dtypes: the inner output dtype must be what
  // the outer reduction accumulates in.
  if (in->dtype() != outer.dtypes_for(in->dtype()).acc && outer.kind() != ReduceKind::Max &&
      outer.kind() != ReduceKind::Min)
    return std::nullopt;
  Var merged;
  switch (outer.kind()) {
    case ReduceKind::Sum: merged = sum(x, axes, outer.dtype(), outer.acc_dtype()); break;
    case ReduceKind::Prod: merged = prod(x, axes, outer.dtype(), outer.acc_dtype()); break;
    case ReduceKind::Max: merged = max(x, axes); break;
    case ReduceKind::Min: merged = min(x, axes); break;
    case ReduceKind::All: merged = all(x, axes); break;
    case ReduceKind::Any: merged = any(x, axes); break;
    default: return std::nullopt;
  }
  return VarList{merged};
}

}  // namespace

std::vector<NodeRewrite> canonicalize_shape_rules() {
  std::vector<NodeRewrite> rules;
  rules.push_back(node_rule("dimshuffle_merge", "DimShuffle", merge_dimshuffles));
  rules.push_back(node_rule("dimshuffle_lift", "DimShuffle", lift_dimshuffle));
  rules.push_back(node_rule("shape_i", "Shape_i", shape_i_rewrite));
  rules.push_back(node_rule("shape_static", "Shape", static_shape));
  rules.push_back(node_rule("alloc_unneeded", "Alloc", alloc_unneeded));
  rules.push_back(node_rule("elemwise_alloc", "Elemwise", elemwise_alloc));
  rules.push_back(node_rule("subtensor_lift", "Subtensor", lift_subtensor));
  for (const char* kind : {"Sum", "Prod", "Max", "Min", "All", "Any"})
    rules.push_back(node_rule(std::string("reduce_of_reduce_") + kind, kind, merge_reductions));
  return rules;
}

}  // namespace kiln
