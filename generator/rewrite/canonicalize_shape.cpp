// canonicalize, shapes and views: DimShuffle chains merged and lifted through Elemwise, shape
// queries answered from static lengths or from the producing op's infer_shape, Alloc that
// changes nothing removed (alone, or feeding an Elemwise that broadcasts anyway), Subtensor
// lifted through Elemwise (log(1+x)[0] -> log(1+x[0])), Subtensor of Subtensor merged
// (x[a:b:c][i] -> x[j]), reductions of reductions merged.
#include <algorithm>

#include "ops/alloc.h"
#include "ops/array_util.h"
#include "ops/assert.h"
#include "ops/constant.h"
#include "ops/dimshuffle.h"
#include "ops/math.h"
#include "ops/reduce.h"
#include "ops/scan.h"
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

// --- Subtensor(Subtensor(x, idx1), idx2) -> Subtensor(x, idx): PyTensor's local_subtensor_merge
// (its merge_two_slices). scan() returns an output as buffer[taps:] and the user reads [-1];
// merged, that is buffer[-1], the form scan_save_mem recognises. The merged index is exact: an
// integer past the end of the first slice still fails, lengths of empty and negative-step
// slices are kept.

using SliceParts = std::array<Var, 3>;  // start, stop, step; null when omitted

// One idx_list entry of a Subtensor node with its integer inputs.
struct IndexOf {
  bool is_slice = false;
  Var index;         // integer entries
  SliceParts parts;  // slices
  IndexItem item() const {
    return is_slice ? slice(IndexScalar(parts[0]), IndexScalar(parts[1]), IndexScalar(parts[2]))
                    : idx(IndexScalar(index));
  }
  bool whole() const { return is_slice && !parts[0] && !parts[1] && !parts[2]; }
};

std::vector<IndexOf> index_of(const Apply& node) {
  std::vector<IndexOf> out;
  std::size_t next = 1;
  for (const IndexEntry& e : static_cast<const Subtensor&>(node.op()).index().entries()) {
    IndexOf x;
    x.is_slice = e.is_slice;
    if (!e.is_slice) {
      x.index = node.input(next++);
    } else {
      const bool has[3] = {e.has_start, e.has_stop, e.has_step};
      for (std::size_t k = 0; k < 3; ++k)
        if (has[k]) x.parts[k] = node.input(next++);
    }
    out.push_back(x);
  }
  return out;
}

Var to_i64(const Var& v) { return cast(v, DType::Int64); }

// slice.indices(n) of constant parts of a constant length; nothing when any is symbolic (or the
// step is 0, which the Subtensor fails on).
std::optional<SliceRange> constant_range(const std::optional<std::int64_t>& n, const SliceParts& p) {
  if (!n) return std::nullopt;
  std::optional<std::int64_t> v[3];
  for (std::size_t k = 0; k < 3; ++k)
    if (p[k]) {
      v[k] = constant_int(p[k]);
      if (!v[k]) return std::nullopt;
    }
  if (v[2] == std::optional<std::int64_t>(0)) return std::nullopt;
  return resolve_slice(v[0], v[1], v[2], *n);
}

// A slice of a length n as a graph: element k (0 <= k < len) is at start + k * step.
struct Resolved {
  Var start, step, len;
};

Resolved resolve(const Var& n, const SliceParts& p) {
  Var step = p[2] ? to_i64(p[2]) : int64_constant(1);
  const std::optional<std::int64_t> cstep = constant_int(step);
  // A zero step fails in the Subtensor that has it; 1 in its place keeps this arithmetic
  // defined while the merged step, a product with the 0, fails the same way.
  Var safe = cstep ? step : switch_(eq(step, 0), int64_constant(1), step);
  Var len = slice_length(n, {p[0], p[1], p[2] ? safe : Var()});
  auto first = [&](bool positive) -> Var {
    if (!p[0]) return positive ? int64_constant(0) : n - int64_constant(1);
    Var w = to_i64(p[0]);
    Var wrapped = switch_(lt(w, 0), w + n, w);
    return positive ? clip(wrapped, int64_constant(0), n) : clip(wrapped, int64_constant(-1), n - int64_constant(1));
  };
  Var start = cstep ? first(*cstep > 0) : switch_(gt(safe, 0), first(true), first(false));
  return {start, step, len};
}

// A run-time check the merged Subtensor's result passes through, for a failure the merged index
// alone would not raise (or would raise with another message).
struct Check {
  Var cond;
  const char* exc_type;
  const char* msg;
  bool on_input;  // checked before indexing x (whose own index error would come first)
};

// x[p1][i] as x[j] (the dimension of length n). The integer may add a check to `checks`.
std::optional<IndexItem> merge_slice_index(const Var& n, const SliceParts& p1, const Var& i,
                                           std::vector<Check>& checks) {
  const std::optional<std::int64_t> cn = constant_int(n), ci = constant_int(i);
  if (auto r = constant_range(cn, p1); r && ci) {
    const std::int64_t j = *ci < 0 ? *ci + r->count : *ci;
    if (j < 0 || j >= r->count) return std::nullopt;  // fails as it stands
    // Counted from the end when i is (x[1:][-1] is x[-1], the form scan_save_mem reads).
    const std::int64_t at = r->start + j * r->step;
    return idx(IndexScalar(*ci < 0 ? at - *cn : at));
  }
  const std::optional<std::int64_t> cstep = p1[2] ? constant_int(p1[2]) : std::optional<std::int64_t>(1);
  if (!p1[1] && cstep == std::optional<std::int64_t>(1) && ci && *ci < 0) {
    // x[s:][i] with i < 0 is x[i] while the slice has -i elements; the index stays a constant
    // (scan_save_mem reads it) and the length is checked beside it.
    if (p1[0]) {
      Var w = to_i64(p1[0]);
      Var first = clip(switch_(lt(w, 0), w + n, w), int64_constant(0), n);
      checks.push_back({ge(n + int64_constant(*ci), first), "IndexError",
                        "index out of bounds: x[start:][i] with i past the slice's end", false});
    }
    return idx(IndexScalar(*ci));
  }
  // In general j = start + i' * step where i' is i counted from the slice's end when negative;
  // an i outside the slice becomes n, which fails as out of bounds (PyTensor's way).
  Resolved r = resolve(n, p1);
  Var i64 = to_i64(i);
  Var k = switch_(lt(i64, 0), i64 + r.len, i64);
  Var ok = bitwise_and(ge(k, 0), lt(k, r.len));
  if (!cstep) checks.push_back({neq(r.step, 0), "ValueError", "slice step cannot be zero", true});
  return idx(IndexScalar(switch_(ok, r.start + k * r.step, n)));
}

// x[p1][p2] as x[p] (the dimension of length n).
IndexItem merge_slices(const Var& n, const SliceParts& p1, const SliceParts& p2) {
  const std::optional<std::int64_t> cn = constant_int(n);
  // The merged step matters only for two or more elements, and then it is the distance between
  // two of x's elements, less than n: with fewer it is 1, so that two huge steps never multiply
  // past int64 (x[::2**40][::2**40]).
  if (auto r1 = constant_range(cn, p1)) {
    if (auto r2 = constant_range(r1->count, p2)) {
      if (r2->count == 0) return slice(IndexScalar(0), IndexScalar(0), IndexScalar(1));
      const std::int64_t step = r2->count > 1 ? r1->step * r2->step : 1;
      const std::int64_t start = r1->start + r2->start * r1->step, stop = start + r2->count * step;
      // A negative stop would count from the end: omitted, a negative step runs to element 0.
      return slice(IndexScalar(start), stop < 0 ? IndexScalar(none) : IndexScalar(stop), IndexScalar(step));
    }
  }
  Resolved r1 = resolve(n, p1);
  Resolved r2 = resolve(r1.len, p2);
  Var start = r1.start + r2.start * r1.step;
  // Constant steps whose product is small (the usual case) stay a constant; otherwise as above,
  // with a zero step kept 0 so that the merged Subtensor fails as the original did.
  Var step;
  const std::optional<std::int64_t> c1 = constant_int(r1.step), c2 = constant_int(r2.step);
  std::int64_t product = 0;
  if (c1 && c2 && !__builtin_mul_overflow(*c1, *c2, &product) && product <= (std::int64_t{1} << 62) &&
      product >= -(std::int64_t{1} << 62)) {
    step = int64_constant(product);
  } else {
    Var zero_step = bitwise_or(eq(r1.step, 0), eq(r2.step, 0));
    step = switch_(zero_step, int64_constant(0), switch_(gt(r2.len, 1), r1.step * r2.step, int64_constant(1)));
  }
  Var stop = start + r2.len * step;
  // Below 0 (a negative step past element 0): -n - 1, which slice.indices clips to -1.
  stop = switch_(lt(stop, 0), int64_constant(-1) - n, stop);
  Var nonempty = gt(r2.len, 0);
  Var zero = int64_constant(0);
  return slice(IndexScalar(switch_(nonempty, start, zero)), IndexScalar(switch_(nonempty, stop, zero)),
               IndexScalar(step));
}

// The length of dimension d of x as a graph. A Scan's mit-sot or sit-sot output is its final
// buffer (Scan.perform), so its length is the buffer input's, which canonicalize traces back to
// scan()'s AllocEmpty(taps + n_steps): a Shape_i of the output itself would be one more reader
// of it and keep scan_save_mem away. Not for a while loop, whose output is shorter when it
// stops early.
Var dim_length(const Var& x, int d) {
  const std::int64_t fixed = x->shape()[static_cast<std::size_t>(d)];
  if (fixed != kUnknownLength) return int64_constant(fixed);
  if (const Apply* p = x->owner(); p && p->op().name() == "Scan") {
    const ScanInfo& info = static_cast<const Scan&>(p->op()).info();
    const int k = x->index();
    if (!info.as_while && k >= info.n_mit_mot() && k < info.n_tap_outs())
      return shape_i(p->input(static_cast<std::size_t>(info.tap_buffers_begin() + k)), d);
  }
  return shape_i(x, d);
}

std::optional<VarList> merge_subtensors(const FunctionGraph&, const Apply& node) {
  const Var& mid = node.input(0);
  const Apply* inner = mid->owner();
  if (!inner || inner->op().name() != "Subtensor") return std::nullopt;
  const Var& x = inner->input(0);
  const std::vector<IndexOf> first = index_of(*inner), second = index_of(node);
  std::vector<IndexItem> items;
  std::vector<Check> checks;
  std::size_t o = 0;  // the next entry of `second`: it indexes the dimensions `first` keeps
  for (std::size_t d = 0; d < first.size(); ++d) {
    const IndexOf& a = first[d];
    if (!a.is_slice || o >= second.size()) {
      items.push_back(a.item());
      continue;
    }
    const IndexOf& b = second[o++];
    if (a.whole() || b.whole()) {
      items.push_back(a.whole() ? b.item() : a.item());
      continue;
    }
    Var n = dim_length(x, static_cast<int>(d));
    if (b.is_slice) {
      items.push_back(merge_slices(n, a.parts, b.parts));
    } else if (auto item = merge_slice_index(n, a.parts, b.index, checks)) {
      items.push_back(*item);
    } else {
      return std::nullopt;
    }
  }
  for (; o < second.size(); ++o) items.push_back(second[o].item());
  Var source = x;
  for (const Check& c : checks)
    if (c.on_input) source = check_and_raise(source, {c.cond}, c.msg, c.exc_type);
  Var out = subtensor(source, items);
  for (const Check& c : checks)
    if (!c.on_input) out = check_and_raise(out, {c.cond}, c.msg, c.exc_type);
  return VarList{out};
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
  rules.push_back(node_rule("subtensor_merge", "Subtensor", merge_subtensors));
  for (const char* kind : {"Sum", "Prod", "Max", "Min", "All", "Any"})
    rules.push_back(node_rule(std::string("reduce_of_reduce_") + kind, kind, merge_reductions));
  // pytensor.gradient's ops only matter to differentiation, which comes before rewriting:
  // their output is their input (PyTensor's local_view_op).
  for (const char* op : {"ZeroGrad", "DisconnectedGrad", "UndefinedGrad", "GradClip", "GradScale"})
    rules.push_back(node_rule(std::string("remove_") + op, op, [](const FunctionGraph&, const Apply& node) {
      return std::optional<VarList>(VarList{node.input(0)});
    }));
  return rules;
}

}  // namespace kiln
