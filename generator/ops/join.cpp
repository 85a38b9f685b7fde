#include "ops/join.h"

#include <set>
#include <stdexcept>

#include "ops/math.h"
#include "ir/error.h"
#include "ops/array_util.h"
#include "ops/constant.h"
#include "ops/grad_util.h"
#include "ops/alloc.h"
#include "ops/batching.h"

namespace kiln {

namespace {

std::string list_text(const std::vector<std::int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// Normalises a run-time axis (NumPy's AxisError wording).
int runtime_axis(const std::string& op, std::int64_t axis, int ndim) {
  try {
    return normalize_axis(axis, ndim);
  } catch (const std::out_of_range&) {
    throw RuntimeFailure(op + ": axis " + std::to_string(axis) +
                         " is out of bounds for an array of dimension " + std::to_string(ndim));
  }
}

// Normalises a constant axis at type inference.
int static_axis(const Op& op, std::int64_t axis, int ndim) {
  try {
    return normalize_axis(axis, ndim);
  } catch (const std::out_of_range&) {
    type_error(op, "axis " + std::to_string(axis) + " is out of bounds for tensors of rank " +
                       std::to_string(ndim));
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Join

Join::Join(int axis) : axis_(axis) {
  if (axis < 0) throw UserError("Join: the axis prop must be non-negative, got " + std::to_string(axis));
}

Json Join::props() const { return axis_ ? Json{{"axis", *axis_}} : Json::object(); }

std::optional<int> Join::static_axis_of(const Apply& node) const {
  if (axis_) return axis_;
  const auto value = constant_int(node.input(0));
  if (!value || node.num_inputs() < 2) return std::nullopt;
  try {
    return normalize_axis(*value, node.input(1)->ndim());
  } catch (const std::out_of_range&) {
    return std::nullopt;
  }
}

std::vector<TensorType> Join::infer_types(const VarList& inputs) const {
  const std::size_t first = static_cast<std::size_t>(first_tensor());
  if (inputs.size() < first + 1)
    type_error(*this, axis_ ? "takes at least one tensor" : "takes the axis and at least one tensor");
  std::optional<std::int64_t> axis_value = axis_;
  if (!axis_) {
    const Var& axis = inputs[0];
    if (axis->ndim() != 0 || !is_signed_int(axis->dtype()))
      type_error(*this, "the axis (input 0) must be a 0-d signed integer, got " + axis->type().str());
    axis_value = constant_int(axis);
  }
  std::vector<DType> dtypes;
  std::vector<std::int64_t> ranks;
  for (std::size_t i = first; i < inputs.size(); ++i) {
    if (inputs[i]->ndim() == 0)
      type_error(*this, "cannot join 0-d tensors (input " + std::to_string(i) +
                            "); make them vectors first (or use MakeVector)");
    dtypes.push_back(inputs[i]->dtype());
    ranks.push_back(inputs[i]->ndim());
  }
  const int nd = inputs[first]->ndim();
  for (auto r : ranks)
    if (r != nd)
      type_error(
          *this,
          "Only tensors with the same number of dimensions can be joined. Input ndims were: " +
              list_text(ranks));
  const DType dtype = upcast(dtypes);
  const int ax = axis_value ? static_axis(*this, *axis_value, nd) : -1;
  if (inputs.size() == first + 1) return {TensorType(dtype, inputs[first]->shape())};
  Shape out(static_cast<std::size_t>(nd), kUnknownLength);
  if (ax < 0) return {TensorType(dtype, out)};  // the axis is only known at run time
  for (int d = 0; d < nd; ++d) {
    std::set<std::int64_t> lengths;
    std::int64_t sum = 0;
    bool all_known = true;
    for (std::size_t i = first; i < inputs.size(); ++i) {
      const std::int64_t len = inputs[i]->shape()[static_cast<std::size_t>(d)];
      if (len == kUnknownLength) {
        all_known = false;
      } else {
        lengths.insert(len);
        sum += len;
      }
    }
    if (d == ax) {
      out[static_cast<std::size_t>(d)] = all_known ? sum : kUnknownLength;
    } else if (lengths.size() == 1) {
      out[static_cast<std::size_t>(d)] = *lengths.begin();
    } else if (lengths.size() > 1) {
      type_error(*this, "all input dimensions other than the joined axis (" + std::to_string(ax) +
                            ") must match exactly or be unknown, but along dimension " +
                            std::to_string(d) + " the static lengths differ");
    }
  }
  return {TensorType(dtype, out)};
}

void Join::perform(const Apply& node, const std::vector<Array>& inputs,
                   std::vector<Array>& outputs) const {
  const std::size_t first = static_cast<std::size_t>(first_tensor());
  const int nd = inputs[first].ndim();
  const int axis = axis_ ? *axis_ : runtime_axis("Join", scalar_to_int64(inputs[0]), nd);
  Shape shape = inputs[first].shape();
  shape[static_cast<std::size_t>(axis)] = 0;
  for (std::size_t i = first; i < inputs.size(); ++i) {
    for (int d = 0; d < nd; ++d) {
      const std::int64_t len = inputs[i].shape(d);
      if (d != axis && len != shape[static_cast<std::size_t>(d)])
        throw RuntimeFailure(
            "Join: all input array dimensions except for the concatenation axis must "
            "match exactly, but along dimension " +
            std::to_string(d) + ", the tensor at index 0 has length " +
            std::to_string(shape[static_cast<std::size_t>(d)]) + " and the tensor at index " +
            std::to_string(i - first) + " has length " + std::to_string(len));
    }
    shape[static_cast<std::size_t>(axis)] += inputs[i].shape(axis);
  }
  const DType dtype = node.output_ptr(0)->dtype();
  Array out = Array::empty(dtype, shape);
  std::int64_t offset = 0;
  for (std::size_t i = first; i < inputs.size(); ++i) {
    Array piece = inputs[i].dtype() == dtype ? inputs[i] : astype(inputs[i], dtype);
    Array region = out.view(piece.shape(), out.strides(),
                            offset * out.strides()[static_cast<std::size_t>(axis)]);
    piece.copy_into(region);
    offset += piece.shape(axis);
  }
  outputs[0] = out;
}

std::vector<ShapeVars> Join::infer_shape(const Apply& node,
                                         const std::vector<ShapeVars>& input_shapes) const {
  const std::size_t first = static_cast<std::size_t>(first_tensor());
  if (node.num_inputs() == static_cast<int>(first) + 1) return {input_shapes[first]};
  const Shape& static_out = node.output_ptr(0)->shape();
  const int nd = static_cast<int>(static_out.size());
  const auto axis_value = static_axis_of(node);
  // The joined axis: static, or switch(axis >= 0, axis, axis + ndim) at run time.
  Var join_dim;
  if (!axis_value) {
    Var axis = to_int64(node.input(0));
    join_dim = switch_(ge(axis, int64_constant(0)), axis, axis + int64_constant(nd));
  }
  ShapeVars dims;
  for (int d = 0; d < nd; ++d) {
    if (static_out[static_cast<std::size_t>(d)] != kUnknownLength) {
      dims.push_back(int64_constant(static_out[static_cast<std::size_t>(d)]));
      continue;
    }
    Var first_len = input_shapes[first][static_cast<std::size_t>(d)];
    Var sum = first_len;
    for (std::size_t i = first + 1; i < input_shapes.size(); ++i)
      sum = sum + input_shapes[i][static_cast<std::size_t>(d)];
    if (axis_value)
      dims.push_back(*axis_value == d ? sum : first_len);
    else
      dims.push_back(switch_(eq(int64_constant(d), join_dim), sum, first_len));
  }
  return {dims};
}

// ---------------------------------------------------------------------------------------------
// Split

IndexMap Split::view_map() const {
  IndexMap m;
  for (int i = 0; i < len_splits_; ++i) m[i] = {0};
  return m;
}

Split::Split(int len_splits, int axis) : len_splits_(len_splits), axis_(axis) {
  if (axis < 0) throw UserError("Split: the axis prop must be non-negative, got " + std::to_string(axis));
}

Json Split::props() const {
  Json p{{"len_splits", len_splits_}};
  if (axis_) p["axis"] = *axis_;
  return p;
}

std::string Split::str() const {
  if (axis_) return "Split{len_splits=" + std::to_string(len_splits_) + ", axis=" + std::to_string(*axis_) + "}";
  return "Split{" + std::to_string(len_splits_) + "}";
}

std::optional<int> Split::static_axis_of(const Apply& node) const {
  if (axis_) return axis_;
  const auto value = constant_int(node.input(1));
  if (!value) return std::nullopt;
  try {
    return normalize_axis(*value, node.input(0)->ndim());
  } catch (const std::out_of_range&) {
    return std::nullopt;
  }
}

std::vector<TensorType> Split::infer_types(const VarList& inputs) const {
  const std::size_t sizes_at = static_cast<std::size_t>(sizes_input());
  if (inputs.size() != sizes_at + 1)
    type_error(*this, std::string(axis_ ? "takes 2 inputs (x, sizes)" : "takes 3 inputs (x, axis, sizes)") +
                          ", got " + std::to_string(inputs.size()));
  const TensorType& xt = inputs[0]->type();
  const Var& sizes = inputs[sizes_at];
  if (xt.ndim() == 0) type_error(*this, "cannot split a 0-d tensor");
  std::optional<std::int64_t> axis_value = axis_;
  if (!axis_) {
    const Var& axis = inputs[1];
    if (axis->ndim() != 0 || !is_integer(axis->dtype()))
      type_error(*this, "the axis (input 1) must be a 0-d integer, got " + axis->type().str());
    axis_value = constant_int(axis);
  }
  if (sizes->ndim() != 1 || !is_integer(sizes->dtype()))
    type_error(*this, "the split sizes (input " + std::to_string(sizes_at) +
                          ") must be an integer vector, got " + sizes->type().str());
  if (sizes->shape()[0] != kUnknownLength && sizes->shape()[0] != len_splits_)
    type_error(*this, "expects " + std::to_string(len_splits_) +
                          " split sizes, but the sizes vector has length " +
                          std::to_string(sizes->shape()[0]));
  std::vector<TensorType> out(
      static_cast<std::size_t>(len_splits_),
      TensorType(xt.dtype, Shape(static_cast<std::size_t>(xt.ndim()), kUnknownLength)));
  if (!axis_value) return out;  // the axis is only known at run time
  const int ax = static_axis(*this, *axis_value, xt.ndim());
  auto entries = constant_entries(sizes);
  std::int64_t sum = 0;
  bool all_known = entries.has_value();
  for (int i = 0; i < len_splits_; ++i) {
    Shape shape = xt.shape;
    std::optional<std::int64_t> e;
    if (entries && static_cast<std::size_t>(i) < entries->size())
      e = (*entries)[static_cast<std::size_t>(i)];
    if (e && *e < 0)
      type_error(*this,
                 "split size " + std::to_string(i) + " is negative (" + std::to_string(*e) + ")");
    shape[static_cast<std::size_t>(ax)] = e ? *e : kUnknownLength;
    all_known = all_known && e.has_value();
    sum += e.value_or(0);
    out[static_cast<std::size_t>(i)].shape = shape;
  }
  const std::int64_t len = xt.shape[static_cast<std::size_t>(ax)];
  if (all_known && len != kUnknownLength && sum != len)
    type_error(*this, "the split sizes sum to " + std::to_string(sum) +
                          ", but x has static length " + std::to_string(len) + " along axis " +
                          std::to_string(ax));
  return out;
}

void Split::perform(const Apply&, const std::vector<Array>& inputs,
                    std::vector<Array>& outputs) const {
  const Array& x = inputs[0];
  const int axis = axis_ ? *axis_ : runtime_axis("Split", scalar_to_int64(inputs[1]), x.ndim());
  const Array& sizes = inputs[static_cast<std::size_t>(sizes_input())];
  if (sizes.shape(0) != len_splits_)
    throw RuntimeFailure("Split: expected " + std::to_string(len_splits_) + " split sizes, got " +
                         std::to_string(sizes.shape(0)));
  std::vector<std::int64_t> lengths;
  std::int64_t sum = 0;
  for (std::int64_t i = 0; i < sizes.shape(0); ++i) {
    const std::int64_t v = scalar_to_int64(sizes.view({}, {}, i * sizes.strides()[0]));
    if (v < 0)
      throw RuntimeFailure("Split: split sizes cannot be negative (size " + std::to_string(i) +
                           " is " + std::to_string(v) + ")");
    lengths.push_back(v);
    sum += v;
  }
  if (sum != x.shape(axis))
    throw RuntimeFailure("Split: split sizes sum to " + std::to_string(sum) + "; expected " +
                         std::to_string(x.shape(axis)) + " (the length of axis " +
                         std::to_string(axis) + ")");
  std::int64_t start = 0;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    Shape shape = x.shape();
    shape[static_cast<std::size_t>(axis)] = lengths[i];
    outputs[i] = x.view(shape, x.strides(), start * x.strides()[static_cast<std::size_t>(axis)]);
    start += lengths[i];
  }
}

std::vector<ShapeVars> Split::infer_shape(const Apply& node,
                                          const std::vector<ShapeVars>& input_shapes) const {
  const auto axis_value = static_axis_of(node);
  const Var& sizes = node.input(sizes_input());
  const auto entries = constant_entries(sizes);
  bool usable = axis_value && entries;
  for (std::size_t i = 0; usable && i < entries->size(); ++i)
    usable = (*entries)[i] || sizes->owner();
  if (!usable) return Op::infer_shape(node, input_shapes);
  const int ax = *axis_value;
  std::vector<ShapeVars> out;
  for (int i = 0; i < len_splits_; ++i) {
    ShapeVars dims = input_shapes[0];
    const auto& e = (*entries)[static_cast<std::size_t>(i)];
    dims[static_cast<std::size_t>(ax)] =
        e ? int64_constant(*e) : to_int64(sizes->owner()->input(i));  // a MakeVector entry
    out.push_back(dims);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Builder API and factories

namespace {

// A literal or constant axis normalised against `ndim`, when it is one and in range (an axis out
// of range stays an input, so that type inference refuses it in its usual words).
std::optional<int> known_axis(const IntArg& axis, int ndim) {
  std::optional<std::int64_t> value = axis.literal();
  if (!value) {
    const Var v = axis.var();
    if (!v || v->ndim() != 0 || !is_signed_int(v->dtype())) return std::nullopt;
    value = constant_int(v);
  }
  if (!value || *value < -ndim || *value >= ndim) return std::nullopt;
  return static_cast<int>(*value < 0 ? *value + ndim : *value);
}

}  // namespace

Var join(const IntArg& axis, const VarList& tensors) {
  if (tensors.empty()) throw UserError("join: cannot join an empty list of tensors");
  for (const auto& t : tensors)
    if (!t) throw UserError("join: null tensor");
  if (tensors.size() == 1) return tensors[0];
  if (auto a = known_axis(axis, tensors[0]->ndim())) return apply1(std::make_shared<Join>(*a), tensors);
  VarList inputs{axis.var()};
  inputs.insert(inputs.end(), tensors.begin(), tensors.end());
  return apply1(std::make_shared<Join>(), inputs);
}

Var concatenate(const VarList& tensors, const IntArg& axis) { return join(axis, tensors); }

VarList split(const Var& x, const IntList& sizes, const IntArg& axis) {
  if (!x) throw UserError("split: null tensor");
  Var v = sizes.as_vector();
  if (v->ndim() != 1 || v->shape()[0] == kUnknownLength)
    throw UserError("split: the number of pieces must be known statically (sizes " +
                    v->type().str() + ")");
  const int n = static_cast<int>(v->shape()[0]);
  if (auto a = known_axis(axis, x->ndim())) return make_node(std::make_shared<Split>(n, *a), {x, v})->outputs();
  return make_node(std::make_shared<Split>(n), {x, axis.var(), v})->outputs();
}

namespace {

// A static axis prop: a non-negative integer (PyTensor 3.x refuses negative ones).
int read_axis_prop(PropReader& props) {
  const std::int64_t axis = props.get_int("axis");
  if (axis < 0 || axis > (1 << 20)) props.fail("axis", "must be a non-negative axis, not " + std::to_string(axis));
  return static_cast<int>(axis);
}

}  // namespace

OpPtr join_from_props(PropReader& props, const std::vector<TensorType>&) {
  std::optional<int> axis;
  if (props.has("axis")) axis = read_axis_prop(props);
  props.finish();
  return axis ? std::make_shared<Join>(*axis) : std::make_shared<Join>();
}

OpPtr split_from_props(PropReader& props, const std::vector<TensorType>&) {
  std::int64_t n = props.get_int("len_splits");
  std::optional<int> axis;
  if (props.has("axis")) axis = read_axis_prop(props);
  props.finish();
  if (n < 1 || n > (1 << 20))
    props.fail("len_splits", "must be a positive count, not " + std::to_string(n));
  if (axis) return std::make_shared<Split>(static_cast<int>(n), *axis);
  return std::make_shared<Split>(static_cast<int>(n));
}

// --- gradients ------------------------------------------------------------------------------

std::vector<GradTerm> Join::pullback(const Apply& node, const VarList& output_grads) const {
  std::vector<GradTerm> terms(static_cast<std::size_t>(node.num_inputs()), GradTerm::disconnected());
  const int first = first_tensor();
  std::optional<int> axis = static_axis_of(node);
  if (!axis) {
    for (int i = first; i < node.num_inputs(); ++i)
      terms[static_cast<std::size_t>(i)] = GradTerm::not_implemented("the join axis must be a constant");
    return terms;
  }
  std::vector<IntArg> sizes;
  for (int i = first; i < node.num_inputs(); ++i)
    sizes.emplace_back(lengths_of(node.input(i))[static_cast<std::size_t>(*axis)]);
  VarList pieces = node.num_inputs() == first + 1 ? VarList{output_grads[0]}
                                                  : split(output_grads[0], IntList(sizes), *axis);
  for (int i = first; i < node.num_inputs(); ++i) {
    const Var& x = node.input(i);
    if (is_float(x->dtype()))
      terms[static_cast<std::size_t>(i)] = GradTerm::of(cast_grad(pieces[static_cast<std::size_t>(i - first)], x->dtype()));
  }
  return terms;
}

std::vector<GradTerm> Join::pushforward(const Apply& node, const VarList& input_tangents) const {
  std::vector<int> tensors;
  for (int i = first_tensor(); i < node.num_inputs(); ++i) tensors.push_back(i);
  return linear_pushforward(node, input_tangents, tensors);
}

std::vector<GradTerm> Split::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& x = node.input(0);
  std::vector<GradTerm> terms = repeat_term(static_cast<std::size_t>(node.num_inputs()), GradTerm::disconnected());
  if (!is_float(x->dtype())) return terms;
  VarList pieces;
  for (int j = 0; j < node.num_outputs(); ++j) {
    const Var& g = output_grads[static_cast<std::size_t>(j)];
    pieces.push_back(g ? cast(g, grad_dtype(x->dtype())) : zeros_like(node.output(j)));
  }
  // Join's builder keeps a single piece as it is; the gradient has x's shape either way.
  Var gx = axis_ ? join(*axis_, pieces) : join(node.input(1), pieces);
  terms[0] = GradTerm::of(cast_grad(gx, x->dtype()));
  return terms;
}

std::vector<GradTerm> Split::pushforward(const Apply& node, const VarList& input_tangents) const {
  return linear_pushforward(node, input_tangents, {0});
}

// --- batching rule (vectorize_graph) ---------------------------------------------------------

std::optional<VarList> Join::vectorize(const Apply& node, const VarList& batched_inputs) const {
  const std::vector<int> b = batch_dims(node, batched_inputs);
  const int nb = max_batch_dims(b);
  const int first = first_tensor();
  if (first == 1 && b[0] != 0) cannot_vectorize(node, "its axis has batch dimensions");
  std::optional<int> axis = static_axis_of(node);
  VarList tensors(batched_inputs.begin() + first, batched_inputs.end());
  std::vector<int> tb(b.begin() + first, b.end());
  if (axis) return VarList{join(*axis + nb, with_full_batch(tensors, tb, nb))};
  // An axis known at run time (a shared variable): a non-negative one moves past the batch
  // dimensions, a negative one counts from the end and stays.
  const Var a = to_int64(batched_inputs[0]);
  return VarList{join(switch_(ge(a, int64_constant(0)), a + int64_constant(nb), a), with_full_batch(tensors, tb, nb))};
}

}  // namespace kiln
