#include "ops/extra_ops.h"

#include <algorithm>
#include <cmath>

#include "ops/math.h"
#include "ops/batching.h"
#include "ops/grad_util.h"
#include "ir/error.h"
#include "ops/advanced_subtensor.h"
#include "ops/alloc.h"
#include "ops/array_util.h"
#include "ops/constant.h"
#include "ops/dimshuffle.h"
#include "ops/reduce.h"
#include "ops/reshape.h"
#include "ops/shape.h"
#include "ops/sort.h"
#include "ops/subtensor.h"

namespace kiln {

namespace {

/// x as a C-contiguous vector of its elements (row-major), a view when it already is one.
Array flattened(const Array& x) {
  Array c = x.contiguous();
  return c.view({c.size()}, {1});
}

/// Slice i of `a` along `axis` (that dimension dropped), a view.
Array slice_at(const Array& a, int axis, std::int64_t i) {
  Shape shape = a.shape(), strides = a.strides();
  const std::int64_t stride = strides[static_cast<std::size_t>(axis)];
  shape.erase(shape.begin() + axis);
  strides.erase(strides.begin() + axis);
  return a.view(shape, strides, i * stride);
}

}  // namespace

// --- Repeat --------------------------------------------------------------------------------------

int Repeat::normalized_axis(int x_ndim) const {
  if (!axis_) return 0;
  return static_cast<int>(*axis_ < 0 ? *axis_ + x_ndim : *axis_);
}

std::vector<TensorType> Repeat::infer_types(const VarList& inputs) const {
  if (inputs.size() != 2) type_error(*this, "takes 2 inputs (x, repeats), got " + std::to_string(inputs.size()));
  const TensorType& x = inputs[0]->type();
  const TensorType& r = inputs[1]->type();
  if (!is_integer(r.dtype) || r.ndim() > 1)
    type_error(*this, "repeats (" + inputs[1]->label() + ") must be a 0-d or 1-d integer, got " + r.str());
  if (r.dtype == DType::UInt64) type_error(*this, "repeats of dtype uint64 are not supported (as by numpy.repeat)");
  if (axis_ && (*axis_ >= x.ndim() || *axis_ < -x.ndim()))
    type_error(*this, "axis " + std::to_string(*axis_) + " is out of bounds for a tensor of rank " +
                          std::to_string(x.ndim()));
  // The length repeated: x's along the axis, or its size when flattened.
  std::int64_t n = 1;
  if (axis_) {
    n = x.shape[static_cast<std::size_t>(normalized_axis(x.ndim()))];
  } else {
    for (std::int64_t l : x.shape) n = (n == kUnknownLength || l == kUnknownLength) ? kUnknownLength : n * l;
  }
  if (r.ndim() == 1 && n != kUnknownLength && r.shape[0] != kUnknownLength && r.shape[0] != 1 && r.shape[0] != n)
    type_error(*this, "repeats of length " + std::to_string(r.shape[0]) + " do not match the " + std::to_string(n) +
                          " elements repeated");
  std::int64_t out_len = kUnknownLength;
  if (inputs[1]->is_constant() && n != kUnknownLength) {
    Array values = astype(inputs[1]->value(), DType::Int64);
    std::int64_t total = 0;
    for (std::int64_t i = 0; i < values.size(); ++i) {
      const std::int64_t v = values.data<std::int64_t>()[i];
      if (v < 0) type_error(*this, "repeats may not contain negative values");
      if (__builtin_add_overflow(total, v, &total)) type_error(*this, "the repeated length overflows int64");
    }
    if ((r.ndim() == 0 || r.shape[0] == 1) && __builtin_mul_overflow(total, n, &total))
      type_error(*this, "the repeated length overflows int64");
    out_len = total;
  }
  if (!axis_) return {TensorType(x.dtype, {out_len})};
  Shape shape = x.shape;
  shape[static_cast<std::size_t>(normalized_axis(x.ndim()))] = out_len;
  return {TensorType(x.dtype, shape)};
}

void Repeat::perform(const Apply&, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  const Array x = axis_ ? inputs[0] : flattened(inputs[0]);
  const int axis = normalized_axis(inputs[0].ndim());
  const std::int64_t n = x.shape(axis);
  Array r = astype(inputs[1], DType::Int64);
  if (r.ndim() == 1 && r.size() != 1 && r.size() != n)
    throw RuntimeFailure("operands could not be broadcast together with shape (" + std::to_string(n) + ",) (" +
                         std::to_string(r.size()) + ",)");
  std::vector<std::int64_t> reps(static_cast<std::size_t>(n));
  std::int64_t total = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t v = r.data<std::int64_t>()[r.size() == 1 ? 0 : i];
    if (v < 0) throw RuntimeFailure("repeats may not contain negative values.");
    reps[static_cast<std::size_t>(i)] = v;
    if (__builtin_add_overflow(total, v, &total)) throw RuntimeFailure("the repeated length overflows int64");
  }
  Shape shape = x.shape();
  shape[static_cast<std::size_t>(axis)] = total;
  Array out = Array::empty(x.dtype(), shape);
  std::int64_t pos = 0;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t k = 0; k < reps[static_cast<std::size_t>(i)]; ++k) {
      Array dst = slice_at(out, axis, pos++);
      slice_at(x, axis, i).copy_into(dst);
    }
  outputs[0] = out;
}

std::vector<ShapeVars> Repeat::infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const {
  const Var& repeats = node.input(1);
  const ShapeVars& xs = input_shapes[0];
  const int axis = normalized_axis(node.input(0)->ndim());
  Var n = int64_constant(1);
  if (axis_) {
    n = xs[static_cast<std::size_t>(axis)];
  } else {
    for (const Var& l : xs) n = n * l;
  }
  Var total = to_int64(sum(repeats));
  // A single repeat count (0-d, or a vector of length 1) applies to each of the n elements.
  if (repeats->ndim() == 0)
    total = n * total;
  else if (repeats->shape()[0] != kUnknownLength)
    total = repeats->shape()[0] == 1 ? n * total : total;
  else
    total = total * switch_(eq(input_shapes[1][0], 1), n, int64_constant(1));
  if (!axis_) return {{total}};
  ShapeVars out = xs;
  out[static_cast<std::size_t>(axis)] = total;
  return {out};
}

std::vector<GradTerm> Repeat::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& x = node.input(0);
  std::vector<GradTerm> terms{GradTerm::disconnected(), GradTerm::disconnected()};
  if (!is_float(x->dtype())) return terms;
  Var g = cast(output_grads[0], x->dtype());
  // Output element k along the axis came from element repeat(arange(n), repeats)[k].
  const int nd = x->ndim();
  const int axis = normalized_axis(nd);
  Var flat_x = axis_ ? x : reshape(x, IntList(std::vector<IntArg>{IntArg(-1)}));
  Var n = lengths_of(flat_x)[static_cast<std::size_t>(axis)];
  Var sources = repeat(arange(n, DType::Int64), node.input(1), 0);
  if (!axis_) {
    Var gflat = inc_take(zeros_like(flat_x, x->dtype()), sources, g);
    std::vector<IntArg> lengths;
    for (const Var& l : lengths_of(x)) lengths.emplace_back(l);
    terms[0] = GradTerm::of(reshape(gflat, IntList(lengths)));
    return terms;
  }
  Var x_front = move_axis(x, axis, 0);
  Var gx_front = inc_take(zeros_like(x_front, x->dtype()), sources, move_axis(g, axis, 0));
  terms[0] = GradTerm::of(move_axis(gx_front, 0, axis));
  return terms;
}

std::vector<GradTerm> Repeat::pushforward(const Apply& node, const VarList& input_tangents) const {
  return linear_pushforward(node, input_tangents, {0});
}

// --- BroadcastTo ---------------------------------------------------------------------------------

std::vector<TensorType> BroadcastTo::infer_types(const VarList& inputs) const {
  if (inputs.empty()) type_error(*this, "needs the tensor to broadcast");
  const TensorType& a = inputs[0]->type();
  const int n = static_cast<int>(inputs.size()) - 1;
  if (n < a.ndim())
    type_error(*this, "Broadcast target shape has " + std::to_string(n) + " dims, which is shorter than input with " +
                          std::to_string(a.ndim()) + " dims");
  Shape shape;
  for (int d = 0; d < n; ++d) {
    std::int64_t len = check_length_input(*this, inputs[static_cast<std::size_t>(d + 1)], "length " + std::to_string(d));
    const int ad = d - (n - a.ndim());
    if (ad >= 0) {
      const std::int64_t la = a.shape[static_cast<std::size_t>(ad)];
      if (la != kUnknownLength && la != 1 && len != kUnknownLength && la != len)
        type_error(*this, "a tensor of shape " + a.shape_str() + " does not broadcast to length " +
                              std::to_string(len) + " in dimension " + std::to_string(d));
    }
    shape.push_back(len);
  }
  return {TensorType(a.dtype, shape)};
}

void BroadcastTo::perform(const Apply&, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  const Array& a = inputs[0];
  Shape shape;
  for (std::size_t d = 1; d < inputs.size(); ++d) {
    const std::int64_t len = scalar_to_int64(inputs[d]);
    if (len < 0) throw RuntimeFailure("all elements of broadcast shape must be non-negative");
    shape.push_back(len);
  }
  const std::size_t off = shape.size() - static_cast<std::size_t>(a.ndim());
  for (std::size_t d = 0; d < static_cast<std::size_t>(a.ndim()); ++d)
    if (a.shape()[d] != 1 && a.shape()[d] != shape[off + d])
      throw RuntimeFailure("operands could not be broadcast together with remapped shapes [original->remapped]: " +
                           shape_str(a.shape()) + " and requested shape " + shape_str(shape));
  outputs[0] = broadcast_to(a, shape);
}

std::vector<ShapeVars> BroadcastTo::infer_shape(const Apply& node, const std::vector<ShapeVars>&) const {
  ShapeVars out;
  for (int i = 1; i < node.num_inputs(); ++i) out.push_back(to_int64(node.input(i)));
  return {out};
}

std::vector<GradTerm> BroadcastTo::pullback(const Apply& node, const VarList& output_grads) const {
  std::vector<GradTerm> terms(static_cast<std::size_t>(node.num_inputs()), GradTerm::disconnected());
  const Var& a = node.input(0);
  if (is_float(a->dtype())) terms[0] = GradTerm::of(cast_grad(sum_to_value(output_grads[0], a), a->dtype()));
  return terms;
}

std::vector<GradTerm> BroadcastTo::pushforward(const Apply& node, const VarList& input_tangents) const {
  return linear_pushforward(node, input_tangents, {0});
}

// --- SearchsortedOp ------------------------------------------------------------------------------

std::vector<TensorType> SearchsortedOp::infer_types(const VarList& inputs) const {
  if (inputs.size() != 2 && inputs.size() != 3)
    type_error(*this, "takes 2 or 3 inputs (x, v[, sorter]), got " + std::to_string(inputs.size()));
  if (inputs[0]->ndim() != 1)
    type_error(*this, "x (" + inputs[0]->label() + ") must be a vector, got " + inputs[0]->type().str());
  if (inputs.size() == 3 && (inputs[2]->ndim() != 1 || !is_integer(inputs[2]->dtype())))
    type_error(*this, "sorter (" + inputs[2]->label() + ") must be an integer vector, got " + inputs[2]->type().str());
  return {TensorType(DType::Int64, inputs[1]->shape())};
}

namespace {

/// The sorter as positions in a vector of length n; NumPy's ValueErrors otherwise.
std::vector<std::int64_t> checked_sorter(const Array& sorter, std::int64_t n) {
  if (sorter.size() != n) throw RuntimeFailure("sorter.size must equal a.size");
  std::vector<std::int64_t> out;
  Array s = astype(sorter, DType::Int64);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t v = s.data<std::int64_t>()[i];
    if (v < 0 || v >= n) throw RuntimeFailure("Sorter index out of range.");
    out.push_back(v);
  }
  return out;
}

}  // namespace

void SearchsortedOp::perform(const Apply&, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  const DType common = upcast(inputs[0].dtype(), inputs[1].dtype());
  Array x = astype(inputs[0], common);
  Array v = astype(inputs[1], common);
  const std::int64_t n = x.size();
  std::vector<std::int64_t> order;
  if (inputs.size() == 3) {
    order = checked_sorter(inputs[2], n);
  } else {
    order.resize(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  }
  Array out = Array::empty(DType::Int64, v.shape());
  visit_real_dtype(common, [&](auto t) {
    using T = decltype(t);
    const T* px = x.data<T>();
    const T* pv = v.data<T>();
    for (std::int64_t k = 0; k < v.size(); ++k) {
      const T value = pv[k];
      // left: the first position whose element is not before the value; right: not after it.
      std::int64_t lo = 0, hi = n;
      while (lo < hi) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        const T e = px[order[static_cast<std::size_t>(mid)]];
        const bool go_right = right_ ? !sorts_before(value, e) : sorts_before(e, value);
        if (go_right)
          lo = mid + 1;
        else
          hi = mid;
      }
      out.data<std::int64_t>()[k] = lo;
    }
  });
  outputs[0] = out;
}

std::vector<ShapeVars> SearchsortedOp::infer_shape(const Apply&, const std::vector<ShapeVars>& input_shapes) const {
  return {input_shapes[1]};
}

std::vector<GradTerm> SearchsortedOp::pullback(const Apply& node, const VarList&) const {
  std::vector<GradTerm> terms(static_cast<std::size_t>(node.num_inputs()), GradTerm::disconnected());
  for (int i = 0; i < 2; ++i) {
    const Var& in = node.input(i);
    if (is_float(in->dtype())) terms[static_cast<std::size_t>(i)] = GradTerm::of(zeros_like(in, in->dtype()));
  }
  return terms;
}

std::vector<GradTerm> SearchsortedOp::pushforward(const Apply&, const VarList&) const {
  return {GradTerm::disconnected()};  // an integer output
}

// --- vectorize rules ------------------------------------------------------------------------------

namespace {

void require_unbatched(const Apply& node, const VarList& inputs, int first, const std::string& what) {
  for (int i = first; i < node.num_inputs(); ++i)
    if (inputs[static_cast<std::size_t>(i)]->ndim() != node.input(i)->ndim()) cannot_vectorize(node, "batched " + what);
}

}  // namespace

std::optional<VarList> Repeat::vectorize(const Apply& node, const VarList& inputs) const {
  const auto& op = static_cast<const Repeat&>(node.op());
  require_unbatched(node, inputs, 1, "repeats");
  if (!op.axis()) cannot_vectorize(node, "a repeat of the flattened tensor");
  const int nb = inputs[0]->ndim() - node.input(0)->ndim();
  return VarList{repeat(inputs[0], inputs[1], op.normalized_axis(node.input(0)->ndim()) + nb)};
}

std::optional<VarList> BroadcastTo::vectorize(const Apply& node, const VarList& inputs) const {
  require_unbatched(node, inputs, 1, "lengths");
  const Var& a = inputs[0];
  const int nb = a->ndim() - node.input(0)->ndim();
  // a's core dimensions align to the right of the target's, after the batch dimensions.
  std::vector<int> order;
  for (int d = 0; d < nb; ++d) order.push_back(d);
  for (int d = 0; d < node.output(0)->ndim() - node.input(0)->ndim(); ++d) order.push_back(DimShuffle::kNewAxis);
  for (int d = nb; d < a->ndim(); ++d) order.push_back(d);
  VarList lengths;
  for (int d = 0; d < nb; ++d) lengths.push_back(shape_i(a, d));
  lengths.insert(lengths.end(), inputs.begin() + 1, inputs.end());
  return VarList{broadcast_to_view(dimshuffle(a, order), lengths)};
}

std::optional<VarList> SearchsortedOp::vectorize(const Apply& node, const VarList& inputs) const {
  if (inputs[0]->ndim() != 1) cannot_vectorize(node, "a batched x");
  require_unbatched(node, inputs, 2, "sorter");
  return make_node(node.op_ptr(), inputs)->outputs();
}

// --- builder API ---------------------------------------------------------------------------------

Var repeat(const Var& x, const Var& repeats, std::optional<std::int64_t> axis) {
  if (!x || !repeats) throw UserError("repeat: the tensor or the repeats is a null Var");
  return apply1(std::make_shared<Repeat>(axis), {x, repeats});
}

Var broadcast_to_view(const Var& a, const VarList& lengths) {
  if (!a) throw UserError("broadcast_to_view: the tensor is a null Var");
  VarList inputs{a};
  inputs.insert(inputs.end(), lengths.begin(), lengths.end());
  return apply1(std::make_shared<BroadcastTo>(), inputs);
}

Var searchsorted(const Var& x, const Var& v, const std::string& side, const Var& sorter) {
  if (!x || !v) throw UserError("searchsorted: x or v is a null Var");
  if (side != "left" && side != "right") throw UserError("searchsorted: side must be \"left\" or \"right\"");
  VarList inputs{x, v};
  if (sorter) inputs.push_back(sorter);
  return apply1(std::make_shared<SearchsortedOp>(side == "right"), inputs);
}

// --- graph-file factories ------------------------------------------------------------------------

OpPtr repeat_from_props(PropReader& props, const std::vector<TensorType>&) {
  std::optional<std::int64_t> axis;
  if (!props.raw("axis").is_null()) axis = props.get_int("axis");
  props.finish();
  return std::make_shared<Repeat>(axis);
}

OpPtr broadcast_to_from_props(PropReader& props, const std::vector<TensorType>&) {
  props.finish();
  return std::make_shared<BroadcastTo>();
}

OpPtr searchsorted_from_props(PropReader& props, const std::vector<TensorType>&) {
  std::string side = props.has("side") ? props.get_string("side") : "left";
  if (side != "left" && side != "right") props.fail("side", "must be \"left\" or \"right\", not \"" + side + "\"");
  props.finish();
  return std::make_shared<SearchsortedOp>(side == "right");
}

}  // namespace kiln
