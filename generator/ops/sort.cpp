#include "ops/sort.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ops/math.h"
#include "ops/grad_util.h"
#include "ir/error.h"
#include "ops/advanced_subtensor.h"
#include "ops/alloc.h"
#include "ops/array_util.h"
#include "ops/constant.h"
#include "ops/reshape.h"

namespace kiln {

namespace {

const char* const kKinds[] = {"quicksort", "mergesort", "heapsort", "stable"};

/// The axis input's value normalised against the rank; NumPy's AxisError words otherwise.
int runtime_axis(const Array& axis, int ndim) {
  const std::int64_t a = scalar_to_int64(axis);
  if (a < -ndim || a >= ndim)
    throw RuntimeFailure("axis " + std::to_string(a) + " is out of bounds for array of dimension " +
                         std::to_string(ndim));
  return static_cast<int>(a < 0 ? a + ndim : a);
}

/// Calls f(start, stride, length) for every lane of the C-contiguous array `a` along `axis`
/// (element offsets).
template <typename F>
void for_each_lane(const Array& a, int axis, F&& f) {
  Shape outer = a.shape();
  outer[static_cast<std::size_t>(axis)] = 1;
  Array frame = a.view(outer, a.strides());
  const std::int64_t stride = a.strides()[static_cast<std::size_t>(axis)];
  const std::int64_t length = a.shape(axis);
  frame.for_each_index([&](const std::int64_t* at) { f(frame.offset_of(at), stride, length); });
}

/// The stable sorting permutation of every lane of x along `axis` (an int64 array of x's shape),
/// and, when `sorted` is given, x's values in that order.
Array sort_lanes(const Array& x_any, int axis, Array* sorted) {
  const Array x = x_any.contiguous();
  Array perm = Array::empty(DType::Int64, x.shape());
  if (sorted) *sorted = Array::empty(x.dtype(), x.shape());
  std::vector<std::int64_t> order;
  visit_real_dtype(x.dtype(), [&](auto t) {
    using T = decltype(t);
    const T* p = x.data<T>();
    std::int64_t* q = perm.data<std::int64_t>();
    T* s = sorted ? sorted->data<T>() : nullptr;
    for_each_lane(x, axis, [&](std::int64_t start, std::int64_t stride, std::int64_t length) {
      order.resize(static_cast<std::size_t>(length));
      std::iota(order.begin(), order.end(), std::int64_t{0});
      std::stable_sort(order.begin(), order.end(), [&](std::int64_t i, std::int64_t j) {
        return sorts_before(p[start + i * stride], p[start + j * stride]);
      });
      for (std::int64_t k = 0; k < length; ++k) {
        const std::int64_t from = order[static_cast<std::size_t>(k)];
        q[start + k * stride] = from;
        if (s) s[start + k * stride] = p[start + from * stride];
      }
    });
  });
  return perm;
}

/// The axis as a 0-d int64 Var in [0, ndim): a constant when the axis is one.
Var normalized_axis(const Var& axis, int ndim) {
  if (auto a = constant_int(axis)) {
    if (*a >= -ndim && *a < ndim) return int64_constant(*a < 0 ? *a + ndim : *a);
  }
  Var a = cast(axis, DType::Int64);
  return switch_(lt(a, 0), a + int64_constant(ndim), a);
}

}  // namespace

// --- SortBase ------------------------------------------------------------------------------------

const TensorType& SortBase::check_inputs(const VarList& inputs) const {
  if (inputs.size() != 2) type_error(*this, "takes 2 inputs (x, axis), got " + std::to_string(inputs.size()));
  const TensorType& x = inputs[0]->type();
  const TensorType& axis = inputs[1]->type();
  if (axis.ndim() != 0 || !is_integer(axis.dtype))
    type_error(*this, "the axis (" + inputs[1]->label() + ") must be a 0-d integer, got " + axis.str());
  if (x.ndim() == 0) type_error(*this, "cannot sort a 0-d tensor (" + inputs[0]->label() + ")");
  if (auto a = constant_int(inputs[1]))
    if (*a < -x.ndim() || *a >= x.ndim())
      type_error(*this, "axis " + std::to_string(*a) + " is out of bounds for a tensor of rank " +
                            std::to_string(x.ndim()));
  return x;
}

std::vector<ShapeVars> SortBase::infer_shape(const Apply&, const std::vector<ShapeVars>& input_shapes) const {
  return {input_shapes[0]};
}

// --- SortOp --------------------------------------------------------------------------------------

std::vector<TensorType> SortOp::infer_types(const VarList& inputs) const { return {check_inputs(inputs)}; }

void SortOp::perform(const Apply&, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  Array sorted;
  sort_lanes(inputs[0], runtime_axis(inputs[1], inputs[0].ndim()), &sorted);
  outputs[0] = sorted;
}

std::vector<GradTerm> SortOp::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& x = node.input(0);
  const Var& axis = node.input(1);
  std::vector<GradTerm> terms{GradTerm::disconnected(),
                              GradTerm::undefined("the gradient of sort is not defined with respect to its axis")};
  if (!is_float(x->dtype())) return terms;
  // Element k of a lane came from position perm[k]: the cotangent goes back through the
  // inverse permutation, argsort(perm).
  Var perm = argsort(x, axis, kind());
  Var inverse = argsort(perm, axis, kind());
  terms[0] = GradTerm::of(take_along_axis(cast(output_grads[0], x->dtype()), inverse, axis));
  return terms;
}

std::vector<GradTerm> SortOp::pushforward(const Apply& node, const VarList& input_tangents) const {
  const Var& t = input_tangents[0];
  if (!t || !is_float(node.input(0)->dtype())) return {GradTerm::disconnected()};
  return {GradTerm::of(take_along_axis(t, argsort(node.input(0), node.input(1), kind()), node.input(1)))};
}

// --- ArgSortOp -----------------------------------------------------------------------------------

std::vector<TensorType> ArgSortOp::infer_types(const VarList& inputs) const {
  return {TensorType(DType::Int64, check_inputs(inputs).shape)};
}

void ArgSortOp::perform(const Apply&, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  outputs[0] = sort_lanes(inputs[0], runtime_axis(inputs[1], inputs[0].ndim()), nullptr);
}

std::vector<GradTerm> ArgSortOp::pullback(const Apply& node, const VarList&) const {
  const Var& x = node.input(0);
  return {is_float(x->dtype()) ? GradTerm::of(zeros_like(x, x->dtype())) : GradTerm::disconnected(),
          GradTerm::undefined("argsort is not differentiable with respect to its axis")};
}

std::vector<GradTerm> ArgSortOp::pushforward(const Apply&, const VarList&) const {
  return {GradTerm::disconnected()};  // an integer output: a zero tangent
}

// --- builder API ---------------------------------------------------------------------------------

Var sort(const Var& x, const Var& axis, const std::string& kind) {
  if (!x || !axis) throw UserError("sort: the tensor or the axis is a null Var");
  return apply1(std::make_shared<SortOp>(kind), {x, axis});
}
Var sort(const Var& x, std::int64_t axis, const std::string& kind) { return sort(x, int64_constant(axis), kind); }

Var argsort(const Var& x, const Var& axis, const std::string& kind) {
  if (!x || !axis) throw UserError("argsort: the tensor or the axis is a null Var");
  return apply1(std::make_shared<ArgSortOp>(kind), {x, axis});
}
Var argsort(const Var& x, std::int64_t axis, const std::string& kind) {
  return argsort(x, int64_constant(axis), kind);
}

Var take_along_axis(const Var& x, const Var& idx, const Var& axis) {
  const int nd = x->ndim();
  Var a = normalized_axis(axis, nd);
  const auto fixed = constant_int(a);
  std::vector<AdvancedItem> index;
  for (int d = 0; d < nd; ++d) {
    if (fixed && *fixed == d) {
      index.emplace_back(idx);
      continue;
    }
    // arange(len) laid along dimension d (length 1 elsewhere): the element's own position.
    std::vector<IntArg> shape(static_cast<std::size_t>(nd), IntArg(1));
    Var len = lengths_of(x)[static_cast<std::size_t>(d)];
    shape[static_cast<std::size_t>(d)] = len;
    Var own = reshape(arange(len, DType::Int64), IntList(shape));
    index.emplace_back(fixed ? own : switch_(eq(a, int64_constant(d)), idx, own));
  }
  return advanced_subtensor(x, index);
}

std::optional<VarList> SortBase::vectorize(const Apply& node, const VarList& inputs) const {
  const int nb = inputs[0]->ndim() - node.input(0)->ndim();
  if (inputs[1]->ndim() != 0)
    throw NotImplementedError("vectorize_graph: " + node.op().str() + " cannot be vectorized yet (a batched axis)");
  Var axis = normalized_axis(inputs[1], node.input(0)->ndim()) + int64_constant(nb);
  return make_node(node.op_ptr(), {inputs[0], axis})->outputs();
}

// --- graph-file factories ------------------------------------------------------------------------

namespace {

std::string read_kind(PropReader& props) {
  std::string kind = props.has("kind") ? props.get_string("kind") : "quicksort";
  if (std::find(std::begin(kKinds), std::end(kKinds), kind) == std::end(kKinds))
    props.fail("kind", "must be one of quicksort, mergesort, heapsort, stable, not \"" + kind + "\"");
  if (!props.raw("order").is_null())
    props.fail("order", "is not applicable to PyTensor graphs (only null)");
  return kind;
}

}  // namespace

OpPtr sort_from_props(PropReader& props, const std::vector<TensorType>&) {
  std::string kind = read_kind(props);
  props.finish();
  return std::make_shared<SortOp>(kind);
}

OpPtr argsort_from_props(PropReader& props, const std::vector<TensorType>&) {
  std::string kind = read_kind(props);
  props.finish();
  return std::make_shared<ArgSortOp>(kind);
}

}  // namespace kiln
