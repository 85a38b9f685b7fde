#include "ops/grad_util.h"

#include <algorithm>

#include "ops/math.h"
#include "ir/error.h"
#include "ops/alloc.h"
#include "ops/array_util.h"
#include "ops/dimshuffle.h"
#include "ops/reduce.h"
#include "ops/shape.h"

namespace kiln {

DType grad_dtype(DType dt) { return is_float(dt) ? dt : DType::Float64; }

Var const_like(const Var& like, double v) { return scalar_constant(grad_dtype(like->dtype()), v); }

std::vector<Var> lengths_of(const Var& x) {
  std::vector<Var> out;
  for (int d = 0; d < x->ndim(); ++d) {
    std::int64_t len = x->shape()[static_cast<std::size_t>(d)];
    out.push_back(len != kUnknownLength ? int64_constant(len) : shape_i(x, d));
  }
  return out;
}

Var fill_like(const Var& x, const Var& value) {
  if (x->ndim() == 0 && value->ndim() == 0) return value;
  std::vector<IntArg> lengths;
  for (const Var& l : lengths_of(x)) lengths.emplace_back(l);
  return alloc(value, IntList(lengths));
}

Var zeros_like(const Var& x, std::optional<DType> dt) {
  return fill_like(x, scalar_constant(dt.value_or(grad_dtype(x->dtype())), 0));
}

Var ones_like(const Var& x, std::optional<DType> dt) {
  return fill_like(x, scalar_constant(dt.value_or(grad_dtype(x->dtype())), 1));
}

namespace {

bool constant_all(const Var& v, double value) {
  if (!v->is_constant()) return false;
  const Array& a = v->value();
  bool all = true;
  a.for_each_index([&](const std::int64_t* idx) { all = all && element_as_double(a, idx) == value; });
  return all;
}

// Follows the ops that only spread one value around: Alloc, DimShuffle, `second`, casts.
Var spread_source(const Var& v) {
  Var cur = v;
  while (cur->owner()) {
    const Apply* n = cur->owner();
    const std::string_view name = n->op().name();
    if (name == "Alloc" || name == "DimShuffle") {
      cur = n->input(0);
    } else if (const auto* e = dynamic_cast<const Elemwise*>(&n->op());
               e && e->scalar_op().id() == ScalarOpId::Second) {
      cur = n->input(1);
    } else {
      break;
    }
  }
  return cur;
}

}  // namespace

bool is_ones(const Var& v) { return constant_all(spread_source(v), 1.0); }
bool is_zeros(const Var& v) { return constant_all(spread_source(v), 0.0); }

Var broadcast_like(const Var& v, const Var& ref) {
  if (v->ndim() == ref->ndim()) {
    bool same = true;
    for (int d = 0; d < v->ndim(); ++d) {
      std::int64_t a = v->shape()[static_cast<std::size_t>(d)];
      std::int64_t b = ref->shape()[static_cast<std::size_t>(d)];
      // An unknown length of v equals ref's at run time when v comes from ref's computation;
      // only a static 1 against something else needs a broadcast.
      if ((a == 1) != (b == 1)) same = false;
      if (a != kUnknownLength && b != kUnknownLength && a != b) same = false;
    }
    if (same) return v;
  }
  std::vector<IntArg> lengths;
  for (const Var& l : lengths_of(ref)) lengths.emplace_back(l);
  return alloc(v, IntList(lengths));
}

Var cast_grad(const Var& g, DType t_dtype) { return cast(g, grad_dtype(t_dtype)); }

Var sum_to_type(const Var& g, const TensorType& t) {
  Var r = g;
  const int extra = r->ndim() - t.ndim();
  KILN_INTERNAL_ASSERT(extra >= 0, "sum_to_type: cotangent of rank " + std::to_string(r->ndim()) +
                                       " for an input of rank " + std::to_string(t.ndim()));
  if (extra > 0) {
    std::vector<int> lead;
    for (int d = 0; d < extra; ++d) lead.push_back(d);
    r = sum(r, lead);
  }
  std::vector<int> axes;
  for (int d = 0; d < t.ndim(); ++d)
    if (t.broadcastable(d) && !r->type().broadcastable(d)) axes.push_back(d);
  if (!axes.empty()) r = expand_reduced(sum(r, axes), t.ndim(), axes);
  return cast_grad(r, t.dtype);
}

Var expand_reduced(const Var& g, int ndim, const std::vector<int>& axes) {
  if (axes.empty()) return g;
  std::vector<int> order;
  int k = 0;
  for (int d = 0; d < ndim; ++d)
    order.push_back(std::find(axes.begin(), axes.end(), d) != axes.end() ? DimShuffle::kNewAxis
                                                                         : k++);
  return dimshuffle(g, order);
}

Var grad_mul(const Var& gz, const Var& d, const Var& out) {
  if (is_ones(gz)) return broadcast_like(d, out);
  if (is_ones(d)) return broadcast_like(gz, out);
  if (constant_all(d, -1.0)) return broadcast_like(neg(gz), out);
  return broadcast_like(gz * d, out);
}

Var add_terms(const VarList& terms) {
  KILN_INTERNAL_ASSERT(!terms.empty(), "add_terms of nothing");
  if (terms.size() == 1) return terms[0];
  return elemwise1(ScalarOp(ScalarOpId::Add), terms);
}

std::vector<GradTerm> linear_pushforward(const Apply& node, const VarList& tangents,
                                         const std::vector<int>& linear) {
  VarList inputs = node.inputs();
  bool any = false;
  for (int i : linear) {
    const Var& t = tangents[static_cast<std::size_t>(i)];
    const Var& x = node.input(i);
    if (t) any = true;
    inputs[static_cast<std::size_t>(i)] = t ? cast(t, x->dtype()) : zeros_like(x, x->dtype());
  }
  std::vector<GradTerm> out(static_cast<std::size_t>(node.num_outputs()), GradTerm::disconnected());
  if (!any) return out;
  VarList results = make_node(node.op_ptr(), inputs)->outputs();
  for (std::size_t k = 0; k < results.size(); ++k)
    if (is_float(results[k]->dtype())) out[k] = GradTerm::of(results[k]);
  return out;
}

std::vector<GradTerm> repeat_term(std::size_t n, const GradTerm& term) {
  return std::vector<GradTerm>(n, term);
}

}  // namespace kiln
