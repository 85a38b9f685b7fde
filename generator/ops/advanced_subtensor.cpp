#include "ops/advanced_subtensor.h"

#include <limits>

#include "ir/error.h"
#include "ops/array_util.h"
#include "ops/constant.h"
#include "ops/math.h"
#include "ops/grad_util.h"
#include "ops/batching.h"
#include "ops/dimshuffle.h"

namespace kiln {

namespace {

/// Checks that `idx` is an integer vector (PyTensor's "index must be integers" / "vector").
void check_index_vector(const Op& who, const Var& idx) {
  const TensorType& t = idx->type();
  if (t.ndim() != 1 || !is_integer(t.dtype))
    type_error(who, "the index (" + idx->label() + ") must be an integer vector, got " + t.str());
}

void check_indexable(const Op& who, const Var& x) {
  if (x->ndim() == 0) type_error(who, "cannot index into a 0-d tensor (" + x->label() + ")");
}

/// The rows idx selects: (len(idx), *x.shape[1:]) as a static shape.
Shape selected_shape(const TensorType& x, const TensorType& idx) {
  Shape s{idx.shape[0]};
  s.insert(s.end(), x.shape.begin() + 1, x.shape.end());
  return s;
}

/// The indices as int64, negative ones counted from the end; out of range is a RuntimeFailure.
std::vector<std::int64_t> read_indices(const Array& idx, std::int64_t length) {
  std::vector<std::int64_t> out;
  out.reserve(static_cast<std::size_t>(idx.size()));
  visit_dtype(idx.dtype(), [&](auto t) {
    using T = decltype(t);
    idx.for_each_index([&](const std::int64_t* at) {
      T v = *static_cast<const T*>(idx.element_ptr(at));
      if constexpr (std::is_same_v<T, std::uint64_t>) {
        if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
          throw RuntimeFailure("index " + std::to_string(v) +
                               " is out of bounds for axis 0 with size " + std::to_string(length));
      }
      std::int64_t i = static_cast<std::int64_t>(v);
      std::int64_t j = i < 0 ? i + length : i;
      if (j < 0 || j >= length) index_out_of_bounds(i, 0, length);
      out.push_back(j);
    });
  });
  return out;
}

/// Row i of a along its first dimension (a view).
Array row(const Array& a, std::int64_t i) {
  Shape shape(a.shape().begin() + 1, a.shape().end());
  Shape strides(a.strides().begin() + 1, a.strides().end());
  return a.view(shape, strides, i * a.strides()[0]);
}

}  // namespace

// --- AdvancedSubtensor1 ------------------------------------------------------------------------

std::vector<TensorType> AdvancedSubtensor1::infer_types(const VarList& inputs) const {
  if (inputs.size() != 2)
    type_error(*this, "takes 2 inputs (x, idx), got " + std::to_string(inputs.size()));
  check_indexable(*this, inputs[0]);
  check_index_vector(*this, inputs[1]);
  return {TensorType(inputs[0]->dtype(), selected_shape(inputs[0]->type(), inputs[1]->type()))};
}

void AdvancedSubtensor1::perform(const Apply&, const std::vector<Array>& inputs,
                                 std::vector<Array>& outputs) const {
  const Array& x = inputs[0];
  std::vector<std::int64_t> rows = read_indices(inputs[1], x.shape()[0]);
  Shape shape = x.shape();
  shape[0] = static_cast<std::int64_t>(rows.size());
  Array out = Array::empty(x.dtype(), shape);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    Array dst = row(out, static_cast<std::int64_t>(i));
    row(x, rows[i]).copy_into(dst);
  }
  outputs[0] = out;
}

std::vector<ShapeVars> AdvancedSubtensor1::infer_shape(
    const Apply&, const std::vector<ShapeVars>& input_shapes) const {
  ShapeVars dims{input_shapes[1][0]};
  dims.insert(dims.end(), input_shapes[0].begin() + 1, input_shapes[0].end());
  return {dims};
}

// --- AdvancedIncSubtensor1 ---------------------------------------------------------------------

std::string AdvancedIncSubtensor1::str() const {
  return std::string("AdvancedIncSubtensor1{no_inplace,") + (set_ ? "set" : "inc") +
         (ignore_duplicates_ ? ",ignore_duplicates}" : "}");
}

std::vector<TensorType> AdvancedIncSubtensor1::infer_types(const VarList& inputs) const {
  if (inputs.size() != 3)
    type_error(*this, "takes 3 inputs (x, y, idx), got " + std::to_string(inputs.size()));
  check_indexable(*this, inputs[0]);
  check_index_vector(*this, inputs[2]);
  check_value_type(*this, inputs[1]->type(), selected_shape(inputs[0]->type(), inputs[2]->type()));
  return {inputs[0]->type()};
}

namespace {

/// PyTensor refuses to broadcast a length-1 dimension of y that is not statically 1.
void check_runtime_broadcast(const TensorType& y_type, const Shape& y_shape, const Shape& target) {
  const std::size_t off = target.size() - y_shape.size();
  for (std::size_t d = 0; d < y_shape.size(); ++d)
    if (y_shape[d] == 1 && target[off + d] != 1 && y_type.shape[d] != 1)
      throw RuntimeFailure(
          "Runtime broadcasting not allowed. AdvancedIncSubtensor1 was asked to broadcast the "
          "second "
          "input (y) along a dimension that was not marked as broadcastable. If broadcasting was "
          "intended, use `specify_broadcastable` on the relevant dimension(s).");
}

}  // namespace

void AdvancedIncSubtensor1::perform(const Apply& node, const std::vector<Array>& inputs,
                                    std::vector<Array>& outputs) const {
  Array out = inputs[0].copy();  // never writes into x
  std::vector<std::int64_t> rows = read_indices(inputs[2], out.shape()[0]);
  Shape target = out.shape();
  target[0] = static_cast<std::int64_t>(rows.size());
  check_runtime_broadcast(node.input(1)->type(), inputs[1].shape(), target);
  Array value = broadcast_to(inputs[1], target);
  const auto n = static_cast<std::int64_t>(rows.size());
  if (set_) {
    for (std::int64_t i = 0; i < n; ++i)
      assign_into(row(out, rows[static_cast<std::size_t>(i)]), row(value, i));
  } else if (!ignore_duplicates_) {
    for (std::int64_t i = 0; i < n; ++i)
      increment_into(row(out, rows[static_cast<std::size_t>(i)]), row(value, i));
  } else {
    // NumPy's x[idx] += y: gather every row first, add, then scatter (the last write wins).
    Array gathered = Array::empty(out.dtype(), target);
    for (std::int64_t i = 0; i < n; ++i) {
      Array dst = row(gathered, i);
      row(out, rows[static_cast<std::size_t>(i)]).copy_into(dst);
    }
    increment_into(gathered, value);
    for (std::int64_t i = 0; i < n; ++i) {
      Array dst = row(out, rows[static_cast<std::size_t>(i)]);
      row(gathered, i).copy_into(dst);
    }
  }
  outputs[0] = out;
}

std::vector<ShapeVars> AdvancedIncSubtensor1::infer_shape(
    const Apply&, const std::vector<ShapeVars>& input_shapes) const {
  return {input_shapes[0]};
}

// --- builder API -------------------------------------------------------------------------------

namespace {
void require_var(const Var& v, const char* fn, const char* what) {
  if (!v) throw UserError(std::string(fn) + ": " + what + " is a null Var");
}
}  // namespace

Var take(const Var& x, const Var& idx) {
  require_var(x, "take", "the tensor");
  require_var(idx, "take", "the index");
  return apply1(std::make_shared<AdvancedSubtensor1>(), {x, idx});
}

Var take(const Var& x, const std::vector<std::int64_t>& idx) {
  return take(x, int64_vector_constant(idx));
}

Var advanced_inc_subtensor1(const Var& x, const Var& y, const Var& idx, bool set_instead_of_inc,
                            bool ignore_duplicates) {
  require_var(x, "advanced_inc_subtensor1", "the tensor");
  require_var(y, "advanced_inc_subtensor1", "the value");
  require_var(idx, "advanced_inc_subtensor1", "the index");
  return apply1(std::make_shared<AdvancedIncSubtensor1>(set_instead_of_inc, ignore_duplicates),
                {x, y, idx});
}

Var inc_take(const Var& x, const Var& idx, const Var& y, bool ignore_duplicates) {
  return advanced_inc_subtensor1(x, y, idx, false, ignore_duplicates);
}

Var set_take(const Var& x, const Var& idx, const Var& y) {
  return advanced_inc_subtensor1(x, y, idx, true);
}

// --- graph-file factories ----------------------------------------------------------------------

OpPtr advanced_subtensor1_from_props(PropReader& props, const std::vector<TensorType>&) {
  props.finish();
  return std::make_shared<AdvancedSubtensor1>();
}

OpPtr advanced_inc_subtensor1_from_props(PropReader& props, const std::vector<TensorType>&) {
  bool set = props.get_bool("set_instead_of_inc", false);
  bool ignore_duplicates = props.get_bool("ignore_duplicates", false);
  props.finish();
  return std::make_shared<AdvancedIncSubtensor1>(set, ignore_duplicates);
}

// --- gradients ------------------------------------------------------------------------------

std::vector<GradTerm> AdvancedSubtensor1::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& x = node.input(0);
  if (!is_float(x->dtype())) return repeat_term(2, GradTerm::disconnected());
  // Repeated indices accumulate, as they should for a gradient.
  Var gx = advanced_inc_subtensor1(zeros_like(x, x->dtype()), cast(output_grads[0], x->dtype()), node.input(1));
  return {GradTerm::of(gx), GradTerm::disconnected()};
}

std::vector<GradTerm> AdvancedSubtensor1::pushforward(const Apply& node, const VarList& input_tangents) const {
  return linear_pushforward(node, input_tangents, {0});
}

std::vector<GradTerm> AdvancedIncSubtensor1::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& x = node.input(0);
  const Var& y = node.input(1);
  const Var& idx = node.input(2);
  const Var& g = output_grads[0];
  std::vector<GradTerm> terms(3, GradTerm::disconnected());
  if (is_float(x->dtype()))
    terms[0] = GradTerm::of(set_ ? advanced_inc_subtensor1(g, zeros_like(y, g->dtype()), idx, true) : g);
  if (is_float(y->dtype())) terms[1] = GradTerm::of(sum_to_type(take(g, idx), y->type()));
  return terms;
}

std::vector<GradTerm> AdvancedIncSubtensor1::pushforward(const Apply& node,
                                                         const VarList& input_tangents) const {
  return linear_pushforward(node, input_tangents, {0, 1});
}

// --- batching rule (vectorize_graph) ---------------------------------------------------------

std::optional<VarList> AdvancedSubtensor1::vectorize(const Apply& node, const VarList& batched_inputs) const {
  const std::vector<int> b = batch_dims(node, batched_inputs);
  const int nb = max_batch_dims(b);
  check_unbatched_from(node, b, 1);
  const int nd = batched_inputs[0]->ndim();
  Var front = dimshuffle(batched_inputs[0], to_front(nd, nb));
  return VarList{dimshuffle(take(front, batched_inputs[1]), from_front(nd, nb))};
}

std::optional<VarList> AdvancedIncSubtensor1::vectorize(const Apply& node, const VarList& batched_inputs) const {
  const std::vector<int> b = batch_dims(node, batched_inputs);
  const int nb = max_batch_dims(b);
  check_unbatched_from(node, b, 2);
  VarList xy = with_full_batch({batched_inputs[0], batched_inputs[1]}, {b[0], b[1]}, nb);
  const int nd = xy[0]->ndim();
  Var x = dimshuffle(xy[0], to_front(nd, nb));
  Var y = dimshuffle(pad_core(xy[1], nb, node.input(0)->ndim()), to_front(nd, nb));
  auto same = std::make_shared<AdvancedIncSubtensor1>(set_, ignore_duplicates_);
  return VarList{dimshuffle(apply1(same, {x, y, batched_inputs[2]}), from_front(nd, nb))};
}

}  // namespace kiln
