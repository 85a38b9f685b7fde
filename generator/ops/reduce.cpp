#include "ops/reduce.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "ir/error.h"
#include "kiln/runtime/scalar_math.hpp"
#include "ops/array_util.h"
#include "ops/constant.h"
#include "ops/elemwise.h"
#include "ops/scalar/composite.h"
#include "ops/scalar/scalar_eval.h"
#include "ops/shape.h"
#include "ops/math.h"
#include "ops/grad_util.h"
#include "ops/batching.h"

namespace kiln {

namespace ks = kiln_scalar;

// --- axes -----------------------------------------------------------------------------------

ReduceAxes normalize_reduce_axes(const std::optional<std::vector<std::int64_t>>& axes, int ndim) {
  if (!axes || axes->empty()) return std::nullopt;
  const int range = std::max(ndim, 1);
  std::vector<int> out;
  for (std::int64_t a : *axes) {
    if (a < -range || a >= range)
      throw std::invalid_argument("axis " + std::to_string(a) +
                                  " is out of range for an input of rank " + std::to_string(ndim));
    int d = static_cast<int>(a < 0 ? a + range : a);
    if (std::find(out.begin(), out.end(), d) != out.end())
      throw std::invalid_argument("axis " + std::to_string(a) + " is repeated");
    out.push_back(d);
  }
  if (ndim == 0) return std::nullopt;
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int> reduced_axes_list(const ReduceAxes& axes, int ndim) {
  if (axes) return *axes;
  std::vector<int> all;
  for (int d = 0; d < ndim; ++d) all.push_back(d);
  return all;
}

bool is_foldable_scalar_op(ScalarOpId id) {
  switch (id) {
    case ScalarOpId::Add:
    case ScalarOpId::Mul:
    case ScalarOpId::Maximum:
    case ScalarOpId::Minimum:
    case ScalarOpId::And:
    case ScalarOpId::Or:
    case ScalarOpId::Xor:
      return true;
    default:
      return false;
  }
}

namespace {

bool is_reduced(const ReduceAxes& axes, int d) {
  return !axes || std::find(axes->begin(), axes->end(), d) != axes->end();
}

std::string axis_str(const ReduceAxes& axes) {
  if (!axes) return "axes=None";
  if (axes->size() == 1) return "axis=" + std::to_string((*axes)[0]);
  std::string s = "axes=[";
  for (std::size_t i = 0; i < axes->size(); ++i) s += (i ? ", " : "") + std::to_string((*axes)[i]);
  return s + "]";
}

Json axes_json(const ReduceAxes& axes) { return axes ? Json(*axes) : Json(nullptr); }

// Refuses axes that do not fit an input of rank ndim (an op built for another rank).
void check_axes_fit(const Op& op, const ReduceAxes& axes, int ndim) {
  if (!axes) return;
  for (int d : *axes)
    if (d >= ndim)
      type_error(op, "axis " + std::to_string(d) + " is out of range for an input of rank " +
                         std::to_string(ndim));
}

const char* kind_name(ReduceKind k) {
  switch (k) {
    case ReduceKind::CAReduce:
      return "CAReduce";
    case ReduceKind::Sum:
      return "Sum";
    case ReduceKind::Prod:
      return "Prod";
    case ReduceKind::ProdWithoutZeros:
      return "ProdWithoutZeros";
    case ReduceKind::Max:
      return "Max";
    case ReduceKind::Min:
      return "Min";
    case ReduceKind::All:
      return "All";
    case ReduceKind::Any:
      return "Any";
  }
  return "CAReduce";
}

ScalarOpId kind_scalar_op(ReduceKind k) {
  switch (k) {
    case ReduceKind::Sum:
      return ScalarOpId::Add;
    case ReduceKind::Prod:
    case ReduceKind::ProdWithoutZeros:
      return ScalarOpId::Mul;
    case ReduceKind::Max:
      return ScalarOpId::Maximum;
    case ReduceKind::Min:
      return ScalarOpId::Minimum;
    case ReduceKind::All:
      return ScalarOpId::And;
    case ReduceKind::Any:
      return ScalarOpId::Or;
    case ReduceKind::CAReduce:
      break;
  }
  throw InternalError("the generic CAReduce has no fixed scalar op");
}

// The default dtypes of Sum, Prod and ProdWithoutZeros (PyTensor's upcast_discrete_output).
DType upcast_discrete_output(DType in) {
  if (is_bool(in) || is_signed_int(in)) return DType::Int64;
  if (is_unsigned_int(in)) return DType::UInt64;
  return in;
}

DType default_acc_dtype(DType in) {
  if (in == DType::Float16) return DType::Float32;
  if (in == DType::Complex64) return DType::Complex128;
  return in == DType::Float32 ? DType::Float64 : upcast_discrete_output(in);
}

// PyTensor's acc_dtype check: a float accumulator for a discrete input is fine; otherwise the
// accumulator must hold every input value (upcast(in, acc) == acc).
void check_acc_dtype(DType in, DType acc) {
  if (is_float(acc) && is_discrete(in)) return;
  if (upcast(in, acc) != acc)
    throw std::invalid_argument("acc_dtype " + std::string(dtype_name(acc)) +
                                " would lose precision for an input of dtype " +
                                std::string(dtype_name(in)) + " (use at least " +
                                std::string(dtype_name(upcast(in, acc))) + ")");
}

// The accumulating operation of a Composite `acc, x -> acc'`: the op computing its output,
// looking through final casts. nullopt when that is not one kiln knows an identity for.
std::optional<ScalarOpId> composite_accumulator(const CompositeGraph& g) {
  int v = g.outputs()[0];
  for (;;) {
    const CompositeGraph::Node* producer = nullptr;
    for (const auto& n : g.nodes())
      if (std::find(n.outputs.begin(), n.outputs.end(), v) != n.outputs.end()) producer = &n;
    if (!producer) return std::nullopt;
    if (producer->op.id() == ScalarOpId::Cast) {
      v = producer->inputs[0];
      continue;
    }
    if (is_foldable_scalar_op(producer->op.id())) return producer->op.id();
    return std::nullopt;
  }
}

// The accumulator dtype of a generic CAReduce whose scalar op is a Composite, checking that the
// Composite has the form `acc, x -> acc'` for an input of dtype `in`.
DType composite_acc_dtype(const CompositeGraph& g, DType in, std::optional<DType> acc_prop) {
  if (g.num_inputs() != 2 || g.outputs().size() != 1)
    throw std::invalid_argument(
        "a Composite used as a reduction must take two inputs (acc, x) and "
        "return one output; this one takes " +
        std::to_string(g.num_inputs()) + " and returns " + std::to_string(g.outputs().size()));
  const DType acc = g.input_dtypes()[0];
  if (acc_prop && *acc_prop != acc)
    throw std::invalid_argument("acc_dtype is " + std::string(dtype_name(*acc_prop)) +
                                " but the Composite's accumulator input i0 is " +
                                std::string(dtype_name(acc)));
  if (g.input_dtypes()[1] != in)
    throw std::invalid_argument("the Composite's element input i1 is " +
                                std::string(dtype_name(g.input_dtypes()[1])) +
                                " but the reduced input is " + std::string(dtype_name(in)));
  if (g.output_dtypes()[0] != acc)
    throw std::invalid_argument("the Composite returns " +
                                std::string(dtype_name(g.output_dtypes()[0])) +
                                " but its accumulator i0 is " + std::string(dtype_name(acc)) +
                                " (end it with a cast to the accumulator dtype)");
  if (!composite_accumulator(g))
    throw std::invalid_argument(
        "the Composite's output is not computed by add, mul, maximum, "
        "minimum, and, or or xor (possibly cast), so the reduction has no "
        "identity to start from");
  return acc;
}

// --- perform ----------------------------------------------------------------------------------

// The identity of a folding scalar op in the accumulator type A.
template <typename A>
A identity_of(ScalarOpId id) {
  switch (id) {
    case ScalarOpId::Mul:
      return A(1);
    case ScalarOpId::And:
      if constexpr (std::is_same_v<A, bool>)
        return true;
      else if constexpr (std::is_integral_v<A>)
        return static_cast<A>(~A(0));
      break;
    case ScalarOpId::Maximum:
      if constexpr (kiln_scalar::is_float_v<A>)
        return -std::numeric_limits<A>::infinity();
      else
        return std::numeric_limits<A>::lowest();
    case ScalarOpId::Minimum:
      if constexpr (kiln_scalar::is_float_v<A>)
        return std::numeric_limits<A>::infinity();
      else
        return std::numeric_limits<A>::max();
    default:
      break;
  }
  return A(0);  // add, or, xor
}

// Folds each of `rows` contiguous rows of length `len` of `in` into out[row].
template <typename A, typename Step>
void fold_rows(const A* in, A* out, std::int64_t rows, std::int64_t len, A init, Step step) {
  for (std::int64_t r = 0; r < rows; ++r) {
    A acc = init;
    const A* row = in + r * len;
    for (std::int64_t k = 0; k < len; ++k) acc = step(acc, row[k]);
    out[r] = acc;
  }
}

template <typename A>
void fold_typed(ScalarOpId id, bool without_zeros, const A* in, A* out, std::int64_t rows,
                std::int64_t len) {
  const A init = without_zeros ? A(0) : identity_of<A>(id);
  if constexpr (ks::is_complex_v<A>) {
    // Sums and products only (make_node refuses the rest), with NumPy's complex product.
    if (id == ScalarOpId::Add && !without_zeros)
      return fold_rows(in, out, rows, len, init, [](A a, A b) { return a + b; });
    if (id == ScalarOpId::Mul && !without_zeros)
      return fold_rows(in, out, rows, len, init, [](A a, A b) { return ks::c_mul(a, b); });
    throw InternalError("a complex reduction by " + std::string(scalar_op_info(id).name) + " was not refused by make_node");
  } else {
  if (without_zeros) {
    fold_rows(in, out, rows, len, init, [](A a, A b) {
      return a == A(0) ? b : b == A(0) ? a : ks::wrap_mul(a, b);
    });
    return;
  }
  switch (id) {
    case ScalarOpId::Add:
      return fold_rows(in, out, rows, len, init, [](A a, A b) { return ks::wrap_add(a, b); });
    case ScalarOpId::Mul:
      return fold_rows(in, out, rows, len, init, [](A a, A b) { return ks::wrap_mul(a, b); });
    case ScalarOpId::Maximum:
      return fold_rows(in, out, rows, len, init, [](A a, A b) { return ks::maximum(a, b); });
    case ScalarOpId::Minimum:
      return fold_rows(in, out, rows, len, init, [](A a, A b) { return ks::minimum(a, b); });
    default:
      break;
  }
  if constexpr (std::is_integral_v<A>) {
    switch (id) {
      case ScalarOpId::And:
        return fold_rows(in, out, rows, len, init, [](A a, A b) { return static_cast<A>(a & b); });
      case ScalarOpId::Or:
        return fold_rows(in, out, rows, len, init, [](A a, A b) { return static_cast<A>(a | b); });
      case ScalarOpId::Xor:
        return fold_rows(in, out, rows, len, init, [](A a, A b) { return static_cast<A>(a ^ b); });
      default:
        break;
    }
  }
  throw InternalError("reduction by " + std::string(scalar_op_info(id).name) + " of " +
                      std::string(dtype_name(DTypeOf<A>::value)) + " was not refused by make_node");
  }
}

// A new array of `shape` filled with the identity of `id` in dtype `dt`.
Array identity_array(ScalarOpId id, DType dt, const Shape& shape) {
  Array a = Array::empty(dt, shape);
  visit_dtype(dt, [&](auto t) {
    using A = decltype(t);
    std::fill(a.data<A>(), a.data<A>() + a.size(), identity_of<A>(id));
  });
  return a;
}

// A generic fold: the scalar op (any, including a Composite) applied to the output-shaped
// accumulator and one reduced position at a time. `moved` has the reduced axes last.
Array fold_with_scalar_op(const ScalarOp& op, ScalarOpId accumulator, const Array& moved,
                          const Shape& out_shape, std::int64_t len, DType acc_dtype) {
  Array acc = identity_array(accumulator, acc_dtype, out_shape);
  if (acc.size() == 0) return acc;
  Array src = moved.contiguous();
  Shape strides = c_strides(out_shape);
  for (auto& s : strides) s *= len;
  for (std::int64_t k = 0; k < len; ++k) {
    Array slice = src.view(out_shape, strides, k);
    acc = eval_scalar_op(op, {acc, slice}, out_shape)[0];
  }
  return acc;
}

}  // namespace

// --- CAReduce -------------------------------------------------------------------------------

CAReduce::CAReduce(ReduceKind kind, ScalarOp scalar_op, ReduceAxes axis, std::optional<DType> dtype,
                   std::optional<DType> acc_dtype)
    : kind_(kind),
      scalar_op_(kind == ReduceKind::CAReduce ? std::move(scalar_op)
                                              : ScalarOp(kind_scalar_op(kind))),
      axis_(std::move(axis)),
      dtype_(dtype),
      acc_dtype_(acc_dtype) {}

std::string_view CAReduce::name() const { return kind_name(kind_); }

std::string CAReduce::empty_axis_message(int axis) const {
  return std::string(name()) + ": cannot reduce over axis " + std::to_string(axis) + ", which has length 0 (" +
         scalar_op_.str() + " has no identity)";
}

ReduceDTypes CAReduce::dtypes_for(DType in) const {
  const bool sum_or_product = kind_ == ReduceKind::Sum || kind_ == ReduceKind::Prod ||
                              (kind_ == ReduceKind::CAReduce && (scalar_op_.id() == ScalarOpId::Add ||
                                                                 scalar_op_.id() == ScalarOpId::Mul));
  if (is_complex(in) && !sum_or_product)
    throw NotImplementedError(str() + ": reducing " + std::string(dtype_name(in)) +
                              " is not implemented in kiln yet (sums and products are)");
  switch (kind_) {
    case ReduceKind::Sum:
    case ReduceKind::Prod:
    case ReduceKind::ProdWithoutZeros: {
      DType acc = acc_dtype_.value_or(default_acc_dtype(in));
      if (acc_dtype_) check_acc_dtype(in, acc);
      return {dtype_.value_or(upcast_discrete_output(in)), acc};
    }
    case ReduceKind::Max:
    case ReduceKind::Min:
      return {in, in};
    case ReduceKind::All:
    case ReduceKind::Any:
      return {DType::Bool, DType::Bool};
    case ReduceKind::CAReduce:
      break;
  }
  DType acc;
  if (scalar_op_.id() == ScalarOpId::Composite) {
    acc = composite_acc_dtype(*scalar_op_.composite_graph(), in, acc_dtype_);
  } else {
    if (!is_foldable_scalar_op(scalar_op_.id()))
      throw std::invalid_argument(
          "cannot reduce with " + scalar_op_.str() +
          " (only add, mul, maximum, minimum, and, or, xor or a Composite)");
    acc = acc_dtype_.value_or(in);
    if (scalar_op_.output_dtypes({acc, acc})[0] != acc)
      throw std::invalid_argument(scalar_op_.str() + " of two " + std::string(dtype_name(acc)) +
                                  " values is not " + std::string(dtype_name(acc)));
  }
  if (acc != in) check_acc_dtype(in, acc);
  return {dtype_.value_or(in), acc};
}

Json CAReduce::props() const {
  Json p = Json::object();
  if (kind_ == ReduceKind::CAReduce) p["scalar_op"] = scalar_op_.to_json();
  p["axis"] = axes_json(axis_);
  if (dtype_) p["dtype"] = std::string(dtype_name(*dtype_));
  if (acc_dtype_) p["acc_dtype"] = std::string(dtype_name(*acc_dtype_));
  return p;
}

std::string CAReduce::str() const {
  // PyTensor: "Sum{axes=None}", "CAReduce{add, axis=0}", with ", acc=<dtype>" when the
  // accumulator differs from the output dtype.
  std::string s = std::string(name()) + "{";
  if (kind_ == ReduceKind::CAReduce) s += scalar_op_.str() + ", ";
  s += axis_str(axis_);
  if (dtype_ && acc_dtype_ && *dtype_ != *acc_dtype_)
    s += ", acc=" + std::string(dtype_name(*acc_dtype_));
  return s + "}";
}

std::vector<TensorType> CAReduce::infer_types(const VarList& inputs) const {
  if (inputs.size() != 1) type_error(*this, "takes 1 input, got " + std::to_string(inputs.size()));
  const TensorType& t = inputs[0]->type();
  check_axes_fit(*this, axis_, t.ndim());
  ReduceDTypes dt{};
  try {
    dt = dtypes_for(t.dtype);
  } catch (const std::invalid_argument& e) {
    type_error(*this, e.what());
  }
  Shape shape;
  for (int d = 0; d < t.ndim(); ++d)
    if (!is_reduced(axis_, d)) shape.push_back(t.shape[static_cast<std::size_t>(d)]);
  return {TensorType(dt.out, shape)};
}

void CAReduce::perform(const Apply&, const std::vector<Array>& inputs,
                       std::vector<Array>& outputs) const {
  const Array& x = inputs[0];
  const std::vector<int> axes = reduced_axes_list(axis_, x.ndim());
  ReduceDTypes dt = dtypes_for(x.dtype());
  Shape out_shape;
  std::int64_t len = 1;
  for (int d = 0; d < x.ndim(); ++d) {
    std::int64_t n = x.shape(d);
    if (!is_reduced(axis_, d)) {
      out_shape.push_back(n);
    } else {
      len *= n;
      if (n == 0 && (kind_ == ReduceKind::Max || kind_ == ReduceKind::Min))
        throw RuntimeFailure(empty_axis_message(d));
    }
  }
  Array moved = move_axes_last(x, axes);
  Array acc;
  if (scalar_op_.id() == ScalarOpId::Composite) {
    acc = fold_with_scalar_op(scalar_op_, *composite_accumulator(*scalar_op_.composite_graph()),
                              moved, out_shape, len, dt.acc);
  } else {
    // Contiguous, in the accumulator dtype; a float16 accumulator is a float32 one rounded at
    // the end (NumPy's float16 reductions).
    const DType fold = arithmetic_dtype(dt.acc);
    Array src = astype(moved, fold);
    acc = Array::empty(fold, out_shape);
    const bool without_zeros = kind_ == ReduceKind::ProdWithoutZeros;
    visit_dtype(fold, [&](auto t) {
      using A = decltype(t);
      if constexpr (!std::is_same_v<A, kiln_scalar::half>)
        fold_typed<A>(scalar_op_.id(), without_zeros, src.data<A>(), acc.data<A>(), acc.size(), len);
    });
  }
  outputs[0] = astype(acc, dt.out);
}

std::vector<ShapeVars> CAReduce::infer_shape(const Apply& node,
                                             const std::vector<ShapeVars>& input_shapes) const {
  ShapeVars dims;
  for (int d = 0; d < node.input(0)->ndim(); ++d)
    if (!is_reduced(axis_, d)) dims.push_back(input_shapes[0][static_cast<std::size_t>(d)]);
  return {dims};
}

// --- builders -------------------------------------------------------------------------------

namespace {

ReduceAxes builder_axes(const char* fn, const Var& x, const AxisArg& axis) {
  if (!x) throw UserError(std::string(fn) + ": null input");
  try {
    return normalize_reduce_axes(axis.axes, x->ndim());
  } catch (const std::invalid_argument& e) {
    throw UserError(std::string(fn) + ": " + e.what());
  }
}

// Builds a reduction whose dtype/acc_dtype props are filled in from the input, as PyTensor's
// make_node does (Max, Min, All and Any keep them unset).
Var reduce(ReduceKind kind, const ScalarOp& op, const Var& x, const AxisArg& axis,
           std::optional<DType> dtype, std::optional<DType> acc_dtype) {
  ReduceAxes axes = builder_axes(kind_name(kind), x, axis);
  auto probe = std::make_shared<CAReduce>(kind, op, axes, dtype, acc_dtype);
  if (kind == ReduceKind::Max || kind == ReduceKind::Min || kind == ReduceKind::All ||
      kind == ReduceKind::Any)
    return apply1(probe, {x});
  ReduceDTypes dt{};
  try {
    dt = probe->dtypes_for(x->dtype());
  } catch (const std::invalid_argument& e) {
    type_error(*probe, e.what());
  }
  return apply1(std::make_shared<CAReduce>(kind, op, axes, dt.out, dt.acc), {x});
}

// PyTensor's All/Any make_node: a non-bool input first becomes `x != 0`.
Var not_equal_zero(const Var& x) {
  if (x->dtype() == DType::Bool) return x;
  return elemwise1(ScalarOp(ScalarOpId::Neq), {x, autocast_int_constant(0)});
}

}  // namespace

Var sum(const Var& x, AxisArg axis, std::optional<DType> dtype, std::optional<DType> acc_dtype) {
  return reduce(ReduceKind::Sum, ScalarOp(ScalarOpId::Add), x, axis, dtype, acc_dtype);
}

Var prod(const Var& x, AxisArg axis, std::optional<DType> dtype, std::optional<DType> acc_dtype) {
  return reduce(ReduceKind::Prod, ScalarOp(ScalarOpId::Mul), x, axis, dtype, acc_dtype);
}

Var prod_without_zeros(const Var& x, AxisArg axis, std::optional<DType> dtype,
                       std::optional<DType> acc_dtype) {
  return reduce(ReduceKind::ProdWithoutZeros, ScalarOp(ScalarOpId::Mul), x, axis, dtype, acc_dtype);
}

Var max(const Var& x, AxisArg axis) {
  return reduce(ReduceKind::Max, ScalarOp(ScalarOpId::Maximum), x, axis, std::nullopt,
                std::nullopt);
}

Var min(const Var& x, AxisArg axis) {
  return reduce(ReduceKind::Min, ScalarOp(ScalarOpId::Minimum), x, axis, std::nullopt,
                std::nullopt);
}

Var all(const Var& x, AxisArg axis) {
  builder_axes("All", x, axis);
  return reduce(ReduceKind::All, ScalarOp(ScalarOpId::And), not_equal_zero(x), axis, std::nullopt,
                std::nullopt);
}

Var any(const Var& x, AxisArg axis) {
  builder_axes("Any", x, axis);
  return reduce(ReduceKind::Any, ScalarOp(ScalarOpId::Or), not_equal_zero(x), axis, std::nullopt,
                std::nullopt);
}

Var careduce(const ScalarOp& op, const Var& x, AxisArg axis, std::optional<DType> dtype,
             std::optional<DType> acc_dtype) {
  return reduce(ReduceKind::CAReduce, op, x, axis, dtype, acc_dtype);
}

Var mean(const Var& x, AxisArg axis, std::optional<DType> dtype, std::optional<DType> acc_dtype) {
  const std::vector<int> axes = reduced_axes_list(builder_axes("mean", x, axis), x->ndim());
  Var s = sum(x, axis, dtype, acc_dtype);
  const DType len_dtype = s->dtype() == DType::Float32 ? DType::Float32 : DType::Float64;
  for (int d : axes) {
    Var len = elemwise1(ScalarOp::cast(len_dtype), {shape_i(x, d)});
    s = elemwise1(ScalarOp(ScalarOpId::TrueDiv), {s, len});
  }
  // No axis to divide by (a 0-d input): PyTensor still casts a discrete sum to float.
  if (is_discrete(s->dtype())) s = elemwise1(ScalarOp::cast(len_dtype), {s});
  return s;
}

// --- factories ------------------------------------------------------------------------------

const TensorType& single_input_type(const PropReader& props,
                                    const std::vector<TensorType>& input_types) {
  if (input_types.size() != 1) {
    std::string node = props.where("");
    node = node.substr(0, node.rfind("/props"));
    throw UserError(props.op_name() + " takes 1 input, got " + std::to_string(input_types.size()),
                    node);
  }
  return input_types[0];
}

namespace {

ReduceAxes read_reduce_axes(PropReader& props, int ndim) {
  auto raw = props.get_axes("axis");
  try {
    return normalize_reduce_axes(raw, ndim);
  } catch (const std::invalid_argument& e) {
    props.fail("axis", e.what());
  }
}

// True for `"axis": []` on an input of rank >= 1: a reduction over no axes (PyTensor's
// `CAReduce(op, axis=())`, `pt.sum(x, axis=[])`), not over all of them as null says.
bool reduces_no_axes(PropReader& props, int ndim) {
  if (ndim == 0 || !props.has("axis")) return false;
  const Json& raw = props.raw("axis");
  return raw.is_array() && raw.empty();
}

// A reduction over no axes folds no element: each output element is its input converted to
// the output dtype, as NumPy's ufunc.reduce(x, axis=()) and PyTensor (CAReduce._c_all: "just an
// Elemwise cast") compute it. The node becomes that cast, or the identity.
OpPtr reduction_over_no_axes(DType in, DType out) {
  return std::make_shared<Elemwise>(in == out ? ScalarOp(ScalarOpId::Identity) : ScalarOp::cast(out));
}

// Sum, Prod, ProdWithoutZeros and CAReduce: dtype and acc_dtype are filled in from the input.
OpPtr reduction_with_dtypes(ReduceKind kind, ScalarOp op, PropReader& props,
                            const std::vector<TensorType>& input_types) {
  auto dtype = props.get_optional_dtype("dtype");
  auto acc_dtype = props.get_optional_dtype("acc_dtype");
  const TensorType& t = single_input_type(props, input_types);
  ReduceAxes axes = read_reduce_axes(props, t.ndim());
  const bool no_axes = reduces_no_axes(props, t.ndim());
  props.finish();
  CAReduce probe(kind, op, axes, dtype, acc_dtype);
  ReduceDTypes dt{};
  try {
    dt = probe.dtypes_for(t.dtype);
  } catch (const std::invalid_argument& e) {
    props.fail(kind == ReduceKind::CAReduce && !acc_dtype ? "scalar_op" : "acc_dtype", e.what());
  }
  if (no_axes) return reduction_over_no_axes(t.dtype, dt.out);
  return std::make_shared<CAReduce>(kind, std::move(op), axes, dt.out, dt.acc);
}

// Max, Min, All, Any: dtype and acc_dtype may only restate what the op gives.
OpPtr reduction_without_dtypes(ReduceKind kind, PropReader& props,
                               const std::vector<TensorType>& input_types) {
  auto dtype = props.get_optional_dtype("dtype");
  auto acc_dtype = props.get_optional_dtype("acc_dtype");
  const TensorType& t = single_input_type(props, input_types);
  ReduceAxes axes = read_reduce_axes(props, t.ndim());
  const bool no_axes = reduces_no_axes(props, t.ndim());
  props.finish();
  auto op = std::make_shared<CAReduce>(kind, ScalarOp(), axes);
  const DType out = op->dtypes_for(t.dtype).out;
  for (const auto& [key, value] : {std::pair{"dtype", dtype}, std::pair{"acc_dtype", acc_dtype}})
    if (value && *value != out)
      props.fail(key, "must be null or " + std::string(dtype_name(out)) + " for " +
                          props.op_name() + " of " + std::string(dtype_name(t.dtype)) +
                          " (it keeps that dtype), not " + std::string(dtype_name(*value)));
  if (no_axes) return reduction_over_no_axes(t.dtype, out);
  return op;
}

}  // namespace

OpPtr careduce_from_props(PropReader& props, const std::vector<TensorType>& input_types) {
  ScalarOp op = scalar_op_from_json(props.raw("scalar_op"), props.where("scalar_op"));
  if (op.id() == ScalarOpId::Composite) {
    const auto& g = *op.composite_graph();
    if (g.num_inputs() != 2 || g.outputs().size() != 1)
      props.fail("scalar_op", "must be a Composite of two inputs (acc, x) and one output");
  } else if (!is_foldable_scalar_op(op.id())) {
    props.fail("scalar_op",
               "must be add, mul, maximum, minimum, and, or, xor or a Composite, not " + op.str());
  }
  return reduction_with_dtypes(ReduceKind::CAReduce, std::move(op), props, input_types);
}

OpPtr sum_from_props(PropReader& props, const std::vector<TensorType>& input_types) {
  return reduction_with_dtypes(ReduceKind::Sum, ScalarOp(ScalarOpId::Add), props, input_types);
}

OpPtr prod_from_props(PropReader& props, const std::vector<TensorType>& input_types) {
  return reduction_with_dtypes(ReduceKind::Prod, ScalarOp(ScalarOpId::Mul), props, input_types);
}

OpPtr prod_without_zeros_from_props(PropReader& props, const std::vector<TensorType>& input_types) {
  return reduction_with_dtypes(ReduceKind::ProdWithoutZeros, ScalarOp(ScalarOpId::Mul), props,
                               input_types);
}

OpPtr max_from_props(PropReader& props, const std::vector<TensorType>& input_types) {
  return reduction_without_dtypes(ReduceKind::Max, props, input_types);
}

OpPtr min_from_props(PropReader& props, const std::vector<TensorType>& input_types) {
  return reduction_without_dtypes(ReduceKind::Min, props, input_types);
}

OpPtr all_from_props(PropReader& props, const std::vector<TensorType>& input_types) {
  return reduction_without_dtypes(ReduceKind::All, props, input_types);
}

OpPtr any_from_props(PropReader& props, const std::vector<TensorType>& input_types) {
  return reduction_without_dtypes(ReduceKind::Any, props, input_types);
}

// --- shared helpers -------------------------------------------------------------------------

Array move_axes_last(const Array& a, const std::vector<int>& axes) {
  Shape shape, strides;
  for (int d = 0; d < a.ndim(); ++d) {
    if (std::find(axes.begin(), axes.end(), d) != axes.end()) continue;
    shape.push_back(a.shape()[static_cast<std::size_t>(d)]);
    strides.push_back(a.strides()[static_cast<std::size_t>(d)]);
  }
  for (int d : axes) {
    shape.push_back(a.shape()[static_cast<std::size_t>(d)]);
    strides.push_back(a.strides()[static_cast<std::size_t>(d)]);
  }
  return a.view(shape, strides);
}

Array move_last_axis_to(const Array& a, int axis) {
  Shape shape = a.shape(), strides = a.strides();
  const auto pos = static_cast<std::ptrdiff_t>(axis);
  std::rotate(shape.begin() + pos, shape.end() - 1, shape.end());
  std::rotate(strides.begin() + pos, strides.end() - 1, strides.end());
  return a.view(shape, strides);
}

std::optional<int> read_single_axis(PropReader& props, const std::string& key, int ndim) {
  const Json& v = props.raw(key);
  if (v.is_null()) return std::nullopt;
  if (!v.is_number_integer()) props.fail(key, "must be null or an integer, not " + v.dump());
  try {
    return normalize_axis(v.get<std::int64_t>(), ndim);
  } catch (const std::out_of_range& e) {
    props.fail(key, e.what());
  }
}

// --- gradients ------------------------------------------------------------------------------

namespace {

// PyTensor's Prod gradient, exact with zeros: prod/x where a group has no zero; where it has
// exactly one, the product of the others at that zero and 0 elsewhere; 0 for more zeros.
Var prod_partial(const Var& x, const std::vector<int>& axes, const Var& out) {
  const int nd = x->ndim();
  Var p = expand_reduced(out, nd, axes);
  Var is_zero = eq(x, 0);
  Var zeros_in_group = expand_reduced(sum(is_zero, axes), nd, axes);
  Var without_zeros = expand_reduced(prod_without_zeros(x, axes), nd, axes);
  Var single_zero_here = bitwise_and(eq(zeros_in_group, 1), is_zero);
  Var with_zero = switch_(single_zero_here, without_zeros, const_like(x, 0));
  return switch_(neq(zeros_in_group, 0), with_zero, p / x);
}

}  // namespace

std::vector<GradTerm> CAReduce::pullback(const Apply& node, const VarList& output_grads) const {
  const Var x = node.input(0);
  if (is_discrete(x->dtype())) return {GradTerm::disconnected()};
  const std::vector<int> axes = reduced_axes_list(axis_, x->ndim());
  const Var out = node.output(0);
  const Var g = broadcast_like(expand_reduced(output_grads[0], x->ndim(), axes), x);
  ScalarOpId op = scalar_op_.id();
  switch (kind_) {
    case ReduceKind::Sum: op = ScalarOpId::Add; break;
    case ReduceKind::Prod: op = ScalarOpId::Mul; break;
    case ReduceKind::Max: op = ScalarOpId::Maximum; break;
    case ReduceKind::Min: op = ScalarOpId::Minimum; break;
    case ReduceKind::ProdWithoutZeros: {
      // Zeros do not take part: d/dx_i = product / x_i for the others, 0 at the zeros.
      Var p = expand_reduced(out, x->ndim(), axes);
      return {GradTerm::of(cast_grad(g * switch_(eq(x, 0), const_like(x, 0), p / x), x->dtype()))};
    }
    case ReduceKind::All:
    case ReduceKind::Any:
      return {GradTerm::undefined(str() + " is not differentiable (its output is a truth value)")};
    case ReduceKind::CAReduce: break;
  }
  switch (op) {
    case ScalarOpId::Add:
      return {GradTerm::of(cast_grad(g, x->dtype()))};
    case ScalarOpId::Mul:
      return {GradTerm::of(cast_grad(grad_mul(g, prod_partial(x, axes, out), x), x->dtype()))};
    case ScalarOpId::Maximum:
    case ScalarOpId::Minimum:
      // Every element equal to the extremum receives the cotangent (PyTensor's rule).
      return {GradTerm::of(cast_grad(g * eq(x, expand_reduced(out, x->ndim(), axes)), x->dtype()))};
    default:
      return {GradTerm::not_implemented("no gradient for a reduction with " + scalar_op_.str())};
  }
}

std::vector<GradTerm> CAReduce::pushforward(const Apply& node, const VarList& input_tangents) const {
  if (kind_ == ReduceKind::Sum || (kind_ == ReduceKind::CAReduce && scalar_op_.id() == ScalarOpId::Add))
    return linear_pushforward(node, input_tangents, {0});
  return Op::pushforward(node, input_tangents);  // the driver differentiates the pullback
}

// --- batching rule (vectorize_graph) ---------------------------------------------------------

std::vector<InnerGraphUse> CAReduce::inner_graphs() const { return scalar_inner_graphs(scalar_op_, false); }

std::optional<VarList> CAReduce::vectorize(const Apply& node, const VarList& batched_inputs) const {
  const int nb = only_first_batched(node, batched_inputs);
  std::vector<int> axes = shifted(reduced_axes_list(axis_, node.input(0)->ndim()), nb);
  auto batched = std::make_shared<CAReduce>(kind_, scalar_op_, axes, dtype_, acc_dtype_);
  return make_node(batched, {batched_inputs[0]})->outputs();
}

std::optional<VarList> Argmax::vectorize(const Apply& node, const VarList& batched_inputs) const {
  const int nb = only_first_batched(node, batched_inputs);
  std::vector<int> axes = shifted(reduced_axes_list(axis_, node.input(0)->ndim()), nb);
  return VarList{apply1(std::make_shared<Argmax>(axes), {batched_inputs[0]})};
}

}  // namespace kiln
