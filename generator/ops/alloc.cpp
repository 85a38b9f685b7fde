#include "ops/alloc.h"

#include <cmath>
#include <cstring>

#include "ops/math.h"
#include "ir/error.h"
#include "kiln/runtime/scalar_math.hpp"
#include "ops/array_util.h"
#include "ops/assert.h"
#include "ops/constant.h"
#include "ops/grad_util.h"
#include "ops/subtensor.h"
#include "ops/batching.h"
#include "ops/dimshuffle.h"
#include "ops/elemwise.h"
#include "ops/join.h"
#include "ops/shape.h"

namespace kiln {

// ---------------------------------------------------------------------------------------------
// Builder arguments and constant helpers

Var IntArg::var() const {
  if (value_) return int64_constant(*value_);
  if (!var_) throw UserError("an integer argument is a null Var");
  return var_;
}

Var NumArg::int_literal(std::int64_t v) { return autocast_int_constant(v); }
Var NumArg::float_literal(double v) { return autocast_float_constant(v); }

IntList::IntList(const std::vector<std::int64_t>& values) {
  for (auto v : values) items_.emplace_back(v);
}

std::vector<IntArg> IntList::items(const std::string& who) const {
  if (!vector_) return items_;
  if (vector_->ndim() != 1 || !is_integer(vector_->dtype()))
    throw UserError(who + ": expected a 1-d integer vector of lengths, got " +
                    vector_->type().str());
  if (vector_->is_constant()) {
    std::vector<IntArg> out;
    const auto entries = constant_entries(vector_);
    for (const auto& e : *entries) {
      if (!e) throw UserError(who + ": a length does not fit in int64");
      out.emplace_back(*e);
    }
    return out;
  }
  if (vector_->owner() && dynamic_cast<const MakeVector*>(&vector_->owner()->op())) {
    std::vector<IntArg> out(vector_->owner()->inputs().begin(), vector_->owner()->inputs().end());
    return out;
  }
  throw UserError(who +
                  ": give the lengths one by one (integers or 0-d Vars); a 1-d Var is "
                  "only accepted when it is a constant or a MakeVector");
}

std::optional<std::vector<std::int64_t>> IntList::literals() const {
  std::vector<std::int64_t> out;
  if (vector_) {
    auto entries = constant_entries(vector_);
    if (!entries) return std::nullopt;
    for (const auto& e : *entries) {
      if (!e) return std::nullopt;
      out.push_back(*e);
    }
    return out;
  }
  for (const auto& item : items_) {
    std::optional<std::int64_t> v = item.literal() ? item.literal() : constant_int(item.var());
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

Var IntList::as_vector() const {
  if (vector_) return vector_;
  bool all_literal = true;
  for (const auto& item : items_) all_literal = all_literal && item.literal().has_value();
  if (all_literal) return int64_vector_constant(*literals());
  VarList scalars;
  for (const auto& item : items_) scalars.push_back(item.var());
  return make_vector(scalars, DType::Int64);
}

namespace {

// True when the integer dtype `d` holds `v` exactly (a cast to it changes nothing).
bool holds_exactly(DType d, std::int64_t v) {
  if (!is_integer(d) || d == DType::Bool) return false;
  const int bits = static_cast<int>(8 * dtype_size(d));
  if (bits == 64) return is_signed_int(d) || v >= 0;
  if (is_signed_int(d)) return v >= -(std::int64_t{1} << (bits - 1)) && v < (std::int64_t{1} << (bits - 1));
  return v >= 0 && v < (std::int64_t{1} << bits);
}

}  // namespace

std::optional<std::int64_t> constant_int(const Var& v) {
  // Through an integer cast of a constant that does not change its value, as PyTensor's
  // get_underlying_scalar_constant_value does: exporters write MakeVector(n, cast(1)) shapes.
  if (v && v->ndim() == 0 && v->owner() && v->owner()->num_inputs() == 1) {
    const auto* e = dynamic_cast<const Elemwise*>(&v->owner()->op());
    if (e && e->scalar_op().id() == ScalarOpId::Cast) {
      auto inner = constant_int(v->owner()->input(0));
      if (inner && holds_exactly(v->dtype(), *inner)) return inner;
      return std::nullopt;
    }
  }
  if (!v || !v->is_constant() || v->ndim() != 0 || is_float(v->dtype())) return std::nullopt;
  try {
    return scalar_to_int64(v->value());
  } catch (const RuntimeFailure&) {
    return std::nullopt;  // a uint64 beyond int64's range
  }
}

std::optional<std::vector<std::optional<std::int64_t>>> constant_entries(const Var& v) {
  if (!v || v->ndim() != 1 || is_float(v->dtype())) return std::nullopt;
  std::vector<std::optional<std::int64_t>> out;
  if (v->is_constant()) {
    const Array& a = v->value();
    visit_real_dtype(a.dtype(), [&](auto t) {
      using T = decltype(t);
      for (std::int64_t i = 0; i < a.size(); ++i) {
        T x = a.data<T>()[i];
        if constexpr (std::is_same_v<T, std::uint64_t>) {
          if (x > static_cast<std::uint64_t>(INT64_MAX)) {
            out.push_back(std::nullopt);
            continue;
          }
        }
        out.push_back(static_cast<std::int64_t>(x));
      }
    });
    return out;
  }
  if (v->owner() && dynamic_cast<const MakeVector*>(&v->owner()->op())) {
    for (const auto& in : v->owner()->inputs()) out.push_back(constant_int(in));
    return out;
  }
  return std::nullopt;
}

Var to_int64(const Var& v) { return cast(v, DType::Int64); }

std::int64_t check_length_input(const Op& op, const Var& v, const std::string& what) {
  if (v->ndim() != 0 || !is_integer(v->dtype()))
    type_error(op, what + " must be a 0-d integer, got " + v->type().str());
  auto c = constant_int(v);
  if (!c) return kUnknownLength;
  if (*c < 0) type_error(op, what + " is negative (" + std::to_string(*c) + ")");
  return *c;
}

std::int64_t read_length(const Array& a, const std::string& what) {
  std::int64_t v = scalar_to_int64(a);
  if (v < 0) throw RuntimeFailure(what + " is negative (" + std::to_string(v) + ")");
  return v;
}

namespace {

// Lengths inputs[first..] of a node: static lengths at type inference.
Shape static_lengths(const Op& op, const VarList& inputs, std::size_t first) {
  Shape out;
  for (std::size_t i = first; i < inputs.size(); ++i)
    out.push_back(check_length_input(op, inputs[i], "length input " + std::to_string(i)));
  return out;
}

Shape runtime_lengths(const std::vector<Array>& inputs, std::size_t first) {
  Shape out;
  for (std::size_t i = first; i < inputs.size(); ++i)
    out.push_back(read_length(inputs[i], "length input " + std::to_string(i)));
  return out;
}

// A length input as an infer_shape result. Unless it is a constant (checked at type inference),
// it is wrapped in a run-time check, so that output_shapes refuses a negative length as
// perform does instead of reporting it.
Var checked_length(const Var& len, const std::string& what) {
  Var v = to_int64(len);
  if (len->is_constant()) return v;
  return check_and_raise(v, {ge(v, int64_constant(0))}, what + " is negative", "ValueError");
}

ShapeVars int64_inputs(const Apply& node, int first) {
  ShapeVars out;
  for (int i = first; i < node.num_inputs(); ++i)
    out.push_back(checked_length(node.input(i), "length input " + std::to_string(i)));
  return out;
}


}  // namespace

const char* const kAllocRuntimeBroadcast =
    "Runtime broadcasting not allowed. The output of Alloc requires broadcasting a dimension of "
    "the input value, which was not marked as broadcastable. If broadcasting was intended, use "
    "`specify_broadcastable` on the relevant input.";

// ---------------------------------------------------------------------------------------------
// Alloc

std::vector<TensorType> Alloc::infer_types(const VarList& inputs) const {
  if (inputs.empty()) type_error(*this, "takes a value and one length per output dimension");
  const TensorType& vt = inputs[0]->type();
  Shape out = static_lengths(*this, inputs, 1);
  const int nd = static_cast<int>(out.size());
  if (vt.ndim() > nd)
    type_error(*this, "the value has rank " + std::to_string(vt.ndim()) + " but only " +
                          std::to_string(nd) + " lengths are given");
  const int lead = nd - vt.ndim();
  for (int d = lead; d < nd; ++d) {
    const std::int64_t v = vt.shape[static_cast<std::size_t>(d - lead)];
    std::int64_t& o = out[static_cast<std::size_t>(d)];
    if (v != 1 && o == kUnknownLength)
      o = v;
    else if (v != kUnknownLength && o != kUnknownLength && v != o && v != 1)
      type_error(*this, "the value's static shape " + vt.shape_str() +
                            " cannot be broadcast to the lengths " +
                            TensorType(vt.dtype, out).shape_str());
  }
  return {TensorType(vt.dtype, out)};
}

void Alloc::perform(const Apply& node, const std::vector<Array>& inputs,
                    std::vector<Array>& outputs) const {
  const Array& value = inputs[0];
  const Shape shape = runtime_lengths(inputs, 1);
  const TensorType& vt = node.input(0)->type();
  const std::size_t lead = shape.size() - static_cast<std::size_t>(value.ndim());
  for (std::size_t d = 0; d < static_cast<std::size_t>(value.ndim()); ++d)
    if (vt.shape[d] == kUnknownLength && value.shape()[d] == 1 && shape[lead + d] != 1)
      throw RuntimeFailure(std::string(kAllocRuntimeBroadcast) + " (value dimension " +
                           std::to_string(d) + " has length 1, the output's has length " +
                           std::to_string(shape[lead + d]) + ")");
  outputs[0] = broadcast_to(value, shape).copy();
}

std::vector<ShapeVars> Alloc::infer_shape(const Apply& node, const std::vector<ShapeVars>&) const {
  return {int64_inputs(node, 1)};
}

// ---------------------------------------------------------------------------------------------
// AllocEmpty

std::vector<TensorType> AllocEmpty::infer_types(const VarList& inputs) const {
  return {TensorType(dtype_, static_lengths(*this, inputs, 0))};
}

void AllocEmpty::perform(const Apply&, const std::vector<Array>& inputs,
                         std::vector<Array>& outputs) const {
  outputs[0] = Array::zeros(dtype_, runtime_lengths(inputs, 0));
}

std::vector<ShapeVars> AllocEmpty::infer_shape(const Apply& node,
                                               const std::vector<ShapeVars>&) const {
  return {int64_inputs(node, 0)};
}

// ---------------------------------------------------------------------------------------------
// MakeVector

std::vector<TensorType> MakeVector::infer_types(const VarList& inputs) const {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const TensorType& t = inputs[i]->type();
    if (t.ndim() != 0)
      type_error(*this, "input " + std::to_string(i) + " must be 0-d, got " + t.str());
    DType up = upcast(dtype_, t.dtype);
    if (up != dtype_)
      type_error(*this, "input " + std::to_string(i) + " of dtype " +
                            std::string(dtype_name(t.dtype)) + " does not upcast to " +
                            std::string(dtype_name(dtype_)) + " (it would give " +
                            std::string(dtype_name(up)) + ")");
  }
  return {TensorType(dtype_, {static_cast<std::int64_t>(inputs.size())})};
}

void MakeVector::perform(const Apply&, const std::vector<Array>& inputs,
                         std::vector<Array>& outputs) const {
  Array out = Array::empty(dtype_, {static_cast<std::int64_t>(inputs.size())});
  const std::size_t isz = out.itemsize();
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    Array v = astype(inputs[k], dtype_);
    std::memcpy(static_cast<char*>(out.data()) + k * isz, v.data(), isz);
  }
  outputs[0] = out;
}

std::vector<ShapeVars> MakeVector::infer_shape(const Apply& node,
                                               const std::vector<ShapeVars>&) const {
  return {{int64_constant(node.num_inputs())}};
}

// ---------------------------------------------------------------------------------------------
// ARange

namespace {

bool all_discrete(const std::vector<Array>& a) {
  return is_discrete(a[0].dtype()) && is_discrete(a[1].dtype()) && is_discrete(a[2].dtype());
}

// np.arange's length: ceil((stop - start) / step), at least 0. Integer inputs subtract exactly
// (Python ints), then divide as floats, as NumPy does.
std::int64_t arange_length(const std::vector<Array>& in) {
  long double start, stop, step;
  if (all_discrete(in)) {
    start = static_cast<long double>(scalar_to_int64(in[0]));
    stop = static_cast<long double>(scalar_to_int64(in[1]));
    step = static_cast<long double>(scalar_to_int64(in[2]));
  } else {
    start = scalar_to_double(in[0]);
    stop = scalar_to_double(in[1]);
    step = scalar_to_double(in[2]);
  }
  if (step == 0) throw RuntimeFailure("ARange: the step must not be zero");
  const double len = std::ceil(static_cast<double>((stop - start) / step));
  if (std::isnan(len)) throw RuntimeFailure("ARange: cannot compute the length (NaN)");
  if (len <= 0) return 0;
  if (len > static_cast<double>(std::int64_t{1} << 40))
    throw RuntimeFailure("ARange: the result would be too large");
  return static_cast<std::int64_t>(len);
}

// The first two values of np.arange (start and start + step, converted to T); NumPy then
// extends them: out[i] = out[0] + i * (out[1] - out[0]), computed in T.
template <typename T>
void arange_fill(const std::vector<Array>& in, Array& out) {
  T first, second;
  if (all_discrete(in)) {
    const std::int64_t start = scalar_to_int64(in[0]), step = scalar_to_int64(in[2]);
    first = kiln_scalar::convert<T>(start);
    second = kiln_scalar::convert<T>(static_cast<std::int64_t>(static_cast<std::uint64_t>(start) +
                                                               static_cast<std::uint64_t>(step)));
  } else {
    const double start = scalar_to_double(in[0]), step = scalar_to_double(in[2]);
    first = kiln_scalar::convert<T>(start);
    second = kiln_scalar::convert<T>(start + step);
  }
  T* dst = out.data<T>();
  const std::int64_t n = out.size();
  if (n > 0) dst[0] = first;
  if (n > 1) dst[1] = second;
  if constexpr (std::is_same_v<T, bool>) {
    if (n > 2)
      throw RuntimeFailure("ARange: a bool result can have at most 2 elements (NumPy's rule)");
  } else if constexpr (std::is_integral_v<T>) {
    const std::uint64_t f = static_cast<std::uint64_t>(first);
    const std::uint64_t delta = static_cast<std::uint64_t>(second) - f;
    for (std::int64_t i = 2; i < n; ++i)
      dst[i] = static_cast<T>(f + static_cast<std::uint64_t>(i) * delta);
  } else {
    const T delta = second - first;
    for (std::int64_t i = 2; i < n; ++i) dst[i] = first + static_cast<T>(i) * delta;
  }
}

}  // namespace

std::vector<TensorType> ARange::infer_types(const VarList& inputs) const {
  if (inputs.size() != 3)
    type_error(*this, "takes 3 inputs (start, stop, step), got " + std::to_string(inputs.size()));
  static const char* const names[] = {"start", "stop", "step"};
  bool all_constant = true;
  for (int i = 0; i < 3; ++i) {
    if (inputs[static_cast<std::size_t>(i)]->ndim() != 0)
      type_error(*this, std::string(names[i]) + " must be 0-d, got " +
                            inputs[static_cast<std::size_t>(i)]->type().str());
    all_constant = all_constant && inputs[static_cast<std::size_t>(i)]->is_constant();
  }
  std::int64_t length = kUnknownLength;
  if (all_constant) {
    try {
      length = arange_length({inputs[0]->value(), inputs[1]->value(), inputs[2]->value()});
    } catch (const RuntimeFailure&) {
      // a zero or NaN step: left to run time, where it fails with a clear message
    }
  }
  return {TensorType(dtype_, {length})};
}

void ARange::perform(const Apply&, const std::vector<Array>& inputs,
                     std::vector<Array>& outputs) const {
  Array out = Array::empty(dtype_, {arange_length(inputs)});
  visit_real_dtype(dtype_, [&](auto t) { arange_fill<decltype(t)>(inputs, out); });
  outputs[0] = out;
}

std::vector<ShapeVars> ARange::infer_shape(const Apply& node, const std::vector<ShapeVars>&) const {
  // PyTensor's formula: max(ceil((stop - start) / step), 0), integers taken as int64 first
  // (uint64 stays, so nothing wraps), with a shortcut for an integer range of step 1.
  auto widen = [](const Var& v) {
    return is_discrete(v->dtype()) && v->dtype() != DType::UInt64 ? to_int64(v) : v;
  };
  const Var start = widen(node.input(0)), stop = widen(node.input(1));
  const Var& step = node.input(2);
  const Var zero = int64_constant(0);
  auto step_value = constant_int(step);
  if (is_discrete(start->dtype()) && is_discrete(stop->dtype()) && step_value && *step_value == 1)
    return {{maximum(to_int64(stop - start), zero)}};
  Var ratio = true_div(cast(stop - start, DType::Float64), step);
  Var length = maximum(to_int64(ceil(ratio)), zero);
  // perform's run-time failures, so that output_shapes refuses what perform refuses rather than
  // reporting an absurd length (a zero step gives an infinite ratio).
  if (!step->is_constant() || scalar_to_double(step->value()) == 0)
    length = check_and_raise(length, {neq(step, scalar_constant(step->dtype(), 0))},
                             "ARange: the step must not be zero", "ValueError");
  return {{check_and_raise(length, {le(length, int64_constant(std::int64_t{1} << 40))},
                           "ARange: the result would be too large", "ValueError")}};
}

// ---------------------------------------------------------------------------------------------
// Eye and Tri

std::vector<TensorType> EyeLike::infer_types(const VarList& inputs) const {
  if (inputs.size() != 3)
    type_error(*this, "takes 3 inputs (n, m, k), got " + std::to_string(inputs.size()));
  const std::int64_t n = check_length_input(*this, inputs[0], "n (rows)");
  const std::int64_t m = check_length_input(*this, inputs[1], "m (columns)");
  if (inputs[2]->ndim() != 0 || !is_integer(inputs[2]->dtype()))
    type_error(*this, "k (the diagonal) must be a 0-d integer, got " + inputs[2]->type().str());
  return {TensorType(dtype_, {n, m})};
}

void EyeLike::perform(const Apply&, const std::vector<Array>& inputs,
                      std::vector<Array>& outputs) const {
  const std::int64_t n = read_length(inputs[0], "n (rows)");
  const std::int64_t m = read_length(inputs[1], "m (columns)");
  const std::int64_t k = scalar_to_int64(inputs[2]);
  Array out = Array::zeros(dtype_, {n, m});
  visit_dtype(dtype_, [&](auto t) {
    using T = decltype(t);
    const T one = kiln_scalar::convert<T>(1);
    T* dst = out.data<T>();
    for (std::int64_t i = 0; i < n; ++i) {
      if (kind_ == Kind::Eye) {
        const std::int64_t j = i + k;
        if (j >= 0 && j < m) dst[i * m + j] = one;
      } else {
        for (std::int64_t j = 0; j < m && j <= i + k; ++j) dst[i * m + j] = one;
      }
    }
  });
  outputs[0] = out;
}

std::vector<ShapeVars> EyeLike::infer_shape(const Apply& node,
                                            const std::vector<ShapeVars>&) const {
  return {{checked_length(node.input(0), "n (rows)"), checked_length(node.input(1), "m (columns)")}};
}

// ---------------------------------------------------------------------------------------------
// Builder API

namespace {
VarList lengths_to_vars(const IntList& lengths, const std::string& who) {
  VarList out;
  for (const auto& item : lengths.items(who)) out.push_back(item.var());
  return out;
}
}  // namespace

Var alloc(const Var& value, const IntList& lengths) {
  VarList inputs{value};
  for (const auto& v : lengths_to_vars(lengths, "alloc")) inputs.push_back(v);
  return apply1(std::make_shared<Alloc>(), inputs);
}

Var alloc_empty(DType dtype, const IntList& lengths) {
  return apply1(std::make_shared<AllocEmpty>(dtype), lengths_to_vars(lengths, "alloc_empty"));
}

Var make_vector(const VarList& scalars, std::optional<DType> dtype) {
  if (!dtype) {
    std::vector<DType> dtypes;
    for (const auto& s : scalars) {
      if (!s) throw UserError("make_vector: null input");
      dtypes.push_back(s->dtype());
    }
    dtype = dtypes.empty() ? DType::Int64 : upcast(dtypes);
  }
  return apply1(std::make_shared<MakeVector>(*dtype), scalars);
}

Var arange(const NumArg& start, const NumArg& stop, const NumArg& step,
           std::optional<DType> dtype) {
  if (!dtype) {
    DType dt = upcast({start.var()->dtype(), stop.var()->dtype(), step.var()->dtype()});
    if (is_signed_int(dt)) dt = DType::Int64;
    if (is_unsigned_int(dt)) dt = DType::UInt64;
    dtype = dt;
  }
  return apply1(std::make_shared<ARange>(*dtype), {start.var(), stop.var(), step.var()});
}

Var arange(const NumArg& stop, std::optional<DType> dtype) { return arange(0, stop, 1, dtype); }

Var eye(const IntArg& n, std::optional<IntArg> m, const IntArg& k, DType dtype) {
  return apply1(std::make_shared<EyeLike>(EyeLike::Kind::Eye, dtype),
                {n.var(), m ? m->var() : n.var(), k.var()});
}

Var tri(const IntArg& N, std::optional<IntArg> M, const IntArg& k, DType dtype) {
  return apply1(std::make_shared<EyeLike>(EyeLike::Kind::Tri, dtype),
                {N.var(), M ? M->var() : N.var(), k.var()});
}

// ---------------------------------------------------------------------------------------------
// Graph-file factories

OpPtr alloc_from_props(PropReader& props, const std::vector<TensorType>&) {
  props.finish();
  return std::make_shared<Alloc>();
}

OpPtr alloc_empty_from_props(PropReader& props, const std::vector<TensorType>&) {
  DType dtype = props.get_dtype("dtype");
  props.finish();
  return std::make_shared<AllocEmpty>(dtype);
}

OpPtr make_vector_from_props(PropReader& props, const std::vector<TensorType>&) {
  DType dtype = props.get_optional_dtype("dtype").value_or(DType::Int64);
  props.finish();
  return std::make_shared<MakeVector>(dtype);
}

OpPtr arange_from_props(PropReader& props, const std::vector<TensorType>&) {
  DType dtype = props.get_dtype("dtype");
  props.finish();
  return std::make_shared<ARange>(dtype);
}

OpPtr eye_from_props(PropReader& props, const std::vector<TensorType>&) {
  DType dtype = props.get_optional_dtype("dtype").value_or(DType::Float64);
  props.finish();
  return std::make_shared<EyeLike>(EyeLike::Kind::Eye, dtype);
}

OpPtr tri_from_props(PropReader& props, const std::vector<TensorType>&) {
  DType dtype = props.get_optional_dtype("dtype").value_or(DType::Float64);
  props.finish();
  return std::make_shared<EyeLike>(EyeLike::Kind::Tri, dtype);
}

// --- gradients ------------------------------------------------------------------------------

std::vector<GradTerm> Alloc::pullback(const Apply& node, const VarList& output_grads) const {
  std::vector<GradTerm> terms(static_cast<std::size_t>(node.num_inputs()), GradTerm::disconnected());
  const Var& value = node.input(0);
  if (is_float(value->dtype())) terms[0] = GradTerm::of(sum_to_type(output_grads[0], value->type()));
  return terms;
}

std::vector<GradTerm> Alloc::pushforward(const Apply& node, const VarList& input_tangents) const {
  return linear_pushforward(node, input_tangents, {0});
}

std::vector<GradTerm> AllocEmpty::pullback(const Apply& node, const VarList&) const {
  return repeat_term(static_cast<std::size_t>(node.num_inputs()), GradTerm::disconnected());
}

std::vector<GradTerm> MakeVector::pullback(const Apply& node, const VarList& output_grads) const {
  std::vector<GradTerm> terms;
  for (int i = 0; i < node.num_inputs(); ++i) {
    const Var& x = node.input(i);
    terms.push_back(is_float(x->dtype()) ? GradTerm::of(cast_grad(at(output_grads[0], i), x->dtype()))
                                         : GradTerm::disconnected());
  }
  return terms;
}

std::vector<GradTerm> MakeVector::pushforward(const Apply& node, const VarList& input_tangents) const {
  std::vector<int> all;
  for (int i = 0; i < node.num_inputs(); ++i) all.push_back(i);
  return linear_pushforward(node, input_tangents, all);
}

std::vector<GradTerm> ARange::pullback(const Apply& node, const VarList&) const {
  return repeat_term(static_cast<std::size_t>(node.num_inputs()), GradTerm::disconnected());
}

std::vector<GradTerm> EyeLike::pullback(const Apply& node, const VarList&) const {
  return repeat_term(static_cast<std::size_t>(node.num_inputs()), GradTerm::disconnected());
}

// --- batching rule (vectorize_graph) ---------------------------------------------------------

std::optional<VarList> Alloc::vectorize(const Apply& node, const VarList& batched_inputs) const {
  const int b = only_first_batched(node, batched_inputs);
  const Var& value = batched_inputs[0];
  const int n = node.output(0)->ndim();
  const int vnd = node.input(0)->ndim();
  // Batch dimensions first, then length-1 dimensions up to the core rank, then the value's.
  std::vector<int> order;
  for (int d = 0; d < b; ++d) order.push_back(d);
  for (int d = 0; d < n - vnd; ++d) order.push_back(DimShuffle::kNewAxis);
  for (int d = 0; d < vnd; ++d) order.push_back(b + d);
  VarList args{dimshuffle(value, order)};
  for (int d = 0; d < b; ++d) args.push_back(shape_i(value, d));
  args.insert(args.end(), batched_inputs.begin() + 1, batched_inputs.end());
  return make_node(node.op_ptr(), args)->outputs();
}

std::optional<VarList> MakeVector::vectorize(const Apply& node, const VarList& batched_inputs) const {
  const std::vector<int> b = batch_dims(node, batched_inputs);
  const int nb = max_batch_dims(b);
  VarList columns;
  for (const Var& s : with_full_batch(batched_inputs, b, nb)) columns.push_back(expand_dims(cast(s, dtype_), nb));
  if (columns.empty()) cannot_vectorize(node, "no elements");
  return VarList{columns.size() == 1 ? columns[0] : join(nb, columns)};
}

}  // namespace kiln
