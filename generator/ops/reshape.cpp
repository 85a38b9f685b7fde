#include "ops/reshape.h"

#include "ops/math.h"
#include "ir/error.h"
#include "ops/array_util.h"
#include "ops/constant.h"
#include "ops/grad_util.h"
#include "ops/batching.h"
#include "ops/join.h"
#include "ops/shape.h"
#include "ops/subtensor.h"

namespace kiln {

namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// Reads a 1-d integer array (any integer dtype) as int64 values.
std::vector<std::int64_t> read_int_vector(const Array& a) {
  std::vector<std::int64_t> out;
  std::int64_t i = 0;
  for (; i < a.shape(0); ++i) out.push_back(scalar_to_int64(a.view({}, {}, i * a.strides()[0])));
  return out;
}

// Product of static lengths, or nullopt when one is unknown or the product overflows (no
// array has that size; perform reports it when the graph runs).
std::optional<std::int64_t> static_size(const Shape& shape) {
  std::int64_t n = 1;
  for (auto d : shape) {
    if (d == kUnknownLength || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  return n;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Reshape

std::vector<TensorType> Reshape::infer_types(const VarList& inputs) const {
  if (inputs.size() != 2)
    type_error(*this, "takes 2 inputs (x, shape), got " + std::to_string(inputs.size()));
  const TensorType& xt = inputs[0]->type();
  const Var& s = inputs[1];
  if (s->ndim() != 1)
    type_error(*this, "the shape must be a 1-d integer vector, got " + s->type().str());
  const bool empty_constant = s->is_constant() && s->value().size() == 0;
  if (!is_signed_int(s->dtype()) && !empty_constant)
    type_error(*this, "Shape must be integers; got " + std::string(dtype_name(s->dtype())) +
                          " (only signed integer shapes are accepted)");
  if (s->shape()[0] != kUnknownLength && s->shape()[0] != ndim_)
    type_error(*this, "the shape has length " + std::to_string(s->shape()[0]) + ", should be " +
                          std::to_string(ndim_));

  Shape out(static_cast<std::size_t>(ndim_), kUnknownLength);
  if (auto entries = constant_entries(s)) {
    int negatives = 0;
    for (std::size_t i = 0; i < entries->size(); ++i) {
      const auto& e = (*entries)[i];
      if (!e) continue;
      if (*e >= 0)
        out[i] = *e;
      else if (++negatives > 1)
        type_error(*this, "can only specify one unknown dimension (-1) in the shape");
    }
  }
  const auto x_size = static_size(xt.shape);
  int unknown = -1, n_unknown = 0;
  for (int i = 0; i < ndim_; ++i) {
    if (out[static_cast<std::size_t>(i)] != kUnknownLength) continue;
    unknown = i;
    ++n_unknown;
  }
  if (x_size && n_unknown == 1) {
    std::int64_t known = 1;
    bool overflow = false;
    for (auto d : out)
      if (d != kUnknownLength) overflow |= __builtin_mul_overflow(known, d, &known);
    if (!overflow && known != 0 && *x_size % known == 0)
      out[static_cast<std::size_t>(unknown)] = *x_size / known;
  }
  const auto out_size = static_size(out);
  if (x_size && out_size && *x_size != *out_size)
    type_error(*this, "the input's static shape " + xt.shape_str() +
                          " is incompatible with the new shape " +
                          TensorType(xt.dtype, out).shape_str());
  return {TensorType(xt.dtype, out)};
}

void Reshape::perform(const Apply&, const std::vector<Array>& inputs,
                      std::vector<Array>& outputs) const {
  const Array& x = inputs[0];
  const Array& s = inputs[1];
  if (s.shape(0) != ndim_)
    throw RuntimeFailure("Reshape: the shape argument has length " + std::to_string(s.shape(0)) +
                         ", should be " + std::to_string(ndim_));
  const std::vector<std::int64_t> requested =
      s.size() ? read_int_vector(s) : std::vector<std::int64_t>{};
  Shape shape(requested.begin(), requested.end());
  int unknown = -1;
  std::int64_t known = 1;
  bool overflow = false;
  for (int i = 0; i < ndim_; ++i) {
    const std::int64_t v = requested[static_cast<std::size_t>(i)];
    if (v < 0) {
      if (unknown >= 0)
        throw RuntimeFailure("Reshape: can only specify one unknown dimension (-1)");
      unknown = i;
    } else if (v != 0 && known > INT64_MAX / v) {
      overflow = true;
    } else {
      known *= v;
    }
  }
  const std::int64_t size = x.size();
  const bool ok = !overflow && (unknown >= 0 ? known != 0 && size % known == 0 : known == size);
  if (!ok)
    throw RuntimeFailure("Reshape: cannot reshape array of size " + std::to_string(size) +
                         " into shape " + shape_text(requested));
  if (unknown >= 0) shape[static_cast<std::size_t>(unknown)] = size / known;
  Array c = x.contiguous();
  outputs[0] = c.view(shape, c_strides(shape));
}

std::vector<ShapeVars> Reshape::infer_shape(const Apply& node,
                                            const std::vector<ShapeVars>& input_shapes) const {
  const ShapeVars& xs = input_shapes[0];
  if (xs.empty()) return {ShapeVars(static_cast<std::size_t>(ndim_), int64_constant(1))};
  Var input_size = xs[0];
  for (std::size_t i = 1; i < xs.size(); ++i) input_size = input_size * xs[i];

  const Var& s = node.input(1);
  auto entries = constant_entries(s);
  const VarList* parts = s->owner() ? &s->owner()->inputs() : nullptr;
  bool usable = entries.has_value();
  for (std::size_t i = 0; usable && i < entries->size(); ++i) usable = (*entries)[i] || parts;
  if (!usable) return Op::infer_shape(node, input_shapes);  // a run-time shape vector
  // Entry i: a constant length, or (for -1) the input size over the other lengths. A MakeVector
  // entry that is not constant may still be -1 at run time: switch on it.
  ShapeVars dims;
  VarList given;
  for (std::size_t i = 0; i < entries->size(); ++i)
    given.push_back((*entries)[i] ? int64_constant(*(*entries)[i]) : to_int64((*parts)[i]));
  Var product = int64_constant(1);
  for (const auto& g : given) product = product * g;
  // -product is the product of the other lengths when exactly one entry is -1.
  Var rest = int_div(input_size, maximum(-product, int64_constant(1)));
  for (std::size_t i = 0; i < entries->size(); ++i) {
    const auto& e = (*entries)[i];
    if (e && *e >= 0)
      dims.push_back(given[i]);
    else if (e)
      dims.push_back(rest);
    else
      dims.push_back(switch_(eq(given[i], int64_constant(-1)), rest, given[i]));
  }
  return {dims};
}

// ---------------------------------------------------------------------------------------------
// SpecifyShape

namespace {
bool is_unchecked(const Var& length) {
  auto c = constant_int(length);
  return c && *c == -1;
}
}  // namespace

std::vector<TensorType> SpecifyShape::infer_types(const VarList& inputs) const {
  if (inputs.empty()) type_error(*this, "takes x and one length per dimension of x");
  const TensorType& xt = inputs[0]->type();
  if (static_cast<int>(inputs.size()) - 1 != xt.ndim())
    type_error(*this, "x is " + std::to_string(xt.ndim()) + "-dimensional (" + xt.str() +
                          ") and will never match a shape of length " +
                          std::to_string(inputs.size() - 1));
  Shape out = xt.shape;
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    const Var& len = inputs[i];
    if (len->ndim() != 0 || !is_integer(len->dtype()))
      type_error(*this, "length input " + std::to_string(i) + " must be a 0-d integer, got " +
                            len->type().str());
    auto c = constant_int(len);
    if (!c || *c == -1) continue;
    if (*c < 0)
      type_error(*this, "length input " + std::to_string(i) + " is negative (" +
                            std::to_string(*c) + "); only -1 (unchecked) is allowed");
    std::int64_t& d = out[i - 1];
    if (d != kUnknownLength && d != *c)
      type_error(*this, "dimension " + std::to_string(i - 1) + " of x has static length " +
                            std::to_string(d) + ", but the specified length is " +
                            std::to_string(*c));
    d = *c;
  }
  return {TensorType(xt.dtype, out)};
}

void SpecifyShape::perform(const Apply& node, const std::vector<Array>& inputs,
                           std::vector<Array>& outputs) const {
  const Array& x = inputs[0];
  std::string expected = "(";
  bool ok = true;
  for (int d = 0; d < x.ndim(); ++d) {
    expected += d ? ", " : "";
    if (is_unchecked(node.input(d + 1))) {
      expected += "None";
      continue;
    }
    const std::int64_t want = scalar_to_int64(inputs[static_cast<std::size_t>(d) + 1]);
    expected += std::to_string(want);
    ok = ok && x.shape(d) == want;
  }
  expected += x.ndim() == 1 ? ",)" : ")";
  if (!ok)
    throw RuntimeFailure("SpecifyShape: got shape " + shape_str(x.shape()) + ", expected " +
                         expected);
  outputs[0] = x;
}

std::vector<ShapeVars> SpecifyShape::infer_shape(const Apply& node,
                                                 const std::vector<ShapeVars>& input_shapes) const {
  ShapeVars dims;
  for (int d = 0; d + 1 < node.num_inputs(); ++d) {
    const Var& len = node.input(d + 1);
    dims.push_back(is_unchecked(len) ? input_shapes[0][static_cast<std::size_t>(d)]
                                     : to_int64(len));
  }
  return {dims};
}

// ---------------------------------------------------------------------------------------------
// Builder API and factories

Var reshape(const Var& x, const IntList& shape) {
  Var s = shape.as_vector();
  if (s->ndim() != 1 || s->shape()[0] == kUnknownLength)
    throw UserError("reshape: the length of the shape vector must be known statically (" +
                    s->type().str() + "); pass ndim");
  return reshape(x, s, static_cast<int>(s->shape()[0]));
}

Var reshape(const Var& x, const Var& shape, int ndim) {
  return apply1(std::make_shared<Reshape>(ndim), {x, shape});
}

Var specify_shape(const Var& x, const IntList& lengths) {
  std::vector<IntArg> items = lengths.items("specify_shape");
  bool new_info = static_cast<int>(items.size()) != x->ndim();
  VarList inputs{x};
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto& lit = items[i].literal();
    if (!lit || (*lit != -1 && (i >= x->shape().size() || x->shape()[i] != *lit))) new_info = true;
    inputs.push_back(items[i].var());
  }
  if (!new_info) return x;
  return apply1(std::make_shared<SpecifyShape>(), inputs);
}

OpPtr reshape_from_props(PropReader& props, const std::vector<TensorType>&) {
  std::int64_t ndim = props.get_int("ndim");
  props.finish();
  if (ndim < 0 || ndim > 64)
    props.fail("ndim", "must be a rank between 0 and 64, not " + std::to_string(ndim));
  return std::make_shared<Reshape>(static_cast<int>(ndim));
}

OpPtr specify_shape_from_props(PropReader& props, const std::vector<TensorType>&) {
  props.finish();
  return std::make_shared<SpecifyShape>();
}

// --- gradients ------------------------------------------------------------------------------

std::vector<GradTerm> Reshape::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& x = node.input(0);
  std::vector<IntArg> lengths;
  for (const Var& l : lengths_of(x)) lengths.emplace_back(l);
  return {GradTerm::of(cast_grad(reshape(output_grads[0], IntList(lengths)), x->dtype())),
          GradTerm::disconnected()};
}

std::vector<GradTerm> Reshape::pushforward(const Apply& node, const VarList& input_tangents) const {
  return linear_pushforward(node, input_tangents, {0});
}

std::vector<GradTerm> SpecifyShape::pullback(const Apply& node, const VarList& output_grads) const {
  std::vector<GradTerm> terms(static_cast<std::size_t>(node.num_inputs()), GradTerm::disconnected());
  terms[0] = GradTerm::of(cast_grad(output_grads[0], node.input(0)->dtype()));
  return terms;
}

std::vector<GradTerm> SpecifyShape::pushforward(const Apply& node, const VarList& input_tangents) const {
  return linear_pushforward(node, input_tangents, {0});
}

// --- batching rule (vectorize_graph) ---------------------------------------------------------

std::optional<VarList> Reshape::vectorize(const Apply& node, const VarList& batched_inputs) const {
  const int b = only_first_batched(node, batched_inputs);
  Var batch = subtensor(shape(batched_inputs[0]), {slice(none, b)});
  Var target = join(0, {batch, cast(batched_inputs[1], DType::Int64)});
  return VarList{reshape(batched_inputs[0], target, node.output(0)->ndim() + b)};
}

std::optional<VarList> SpecifyShape::vectorize(const Apply& node, const VarList& batched_inputs) const {
  const int b = only_first_batched(node, batched_inputs);
  VarList args{batched_inputs[0]};
  for (int d = 0; d < b; ++d) args.push_back(int64_constant(-1));  // batch lengths unspecified
  args.insert(args.end(), batched_inputs.begin() + 1, batched_inputs.end());
  return make_node(node.op_ptr(), args)->outputs();
}

}  // namespace kiln
