#include "ops/softmax.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "ir/error.h"
#include "kiln/runtime/scalar_math.hpp"
#include "ops/array_util.h"
#include "ops/reduce.h"
#include "ops/math.h"
#include "ops/grad_util.h"
#include "ops/batching.h"
#include "ops/op_from_graph.h"

namespace kiln {

namespace {

Json axis_json(std::optional<int> axis) { return axis ? Json(*axis) : Json(nullptr); }

void check_float_input(const Op& op, const Var& v, const char* what) {
  if (!is_float(v->dtype()))
    type_error(op, std::string(what) + " must be float32 or float64, got " +
                       std::string(dtype_name(v->dtype())) + " (cast it to a float first)");
}

void check_axis_fits(const Op& op, std::optional<int> axis, int ndim) {
  if (axis && (*axis < 0 || *axis >= ndim))
    type_error(op, "axis " + std::to_string(*axis) + " is out of range for an input of rank " +
                       std::to_string(ndim));
}

// `a` as float64 rows: the axis moved last (or everything flattened), contiguous.
Array as_rows(const Array& a, std::optional<int> axis) {
  return astype(axis ? move_axes_last(a, {*axis}) : a, DType::Float64);
}

// The row-major result `rows` (laid out as as_rows made it) back in the input's layout and
// `dtype`, as a fresh array.
Array from_rows(const Array& rows, std::optional<int> axis, DType dtype) {
  Array r = axis ? move_last_axis_to(rows, *axis) : rows;
  return astype(r, dtype);
}

double row_max(const double* in, std::int64_t len) {
  double m = -INFINITY;
  for (std::int64_t k = 0; k < len; ++k) m = kiln_scalar::maximum(m, in[k]);
  return m;
}

std::optional<int> normalized(const char* fn, const Var& x, std::optional<int> axis) {
  if (!x) throw UserError(std::string(fn) + ": null input");
  if (!axis) return std::nullopt;
  try {
    return normalize_axis(*axis, x->ndim());
  } catch (const std::out_of_range& e) {
    throw UserError(std::string(fn) + ": " + e.what());
  }
}

}  // namespace

// --- Softmax and LogSoftmax -----------------------------------------------------------------

Json SoftmaxBase::props() const { return Json{{"axis", axis_json(axis_)}}; }

std::vector<TensorType> SoftmaxBase::infer_types(const VarList& inputs) const {
  if (inputs.size() != 1) type_error(*this, "takes 1 input, got " + std::to_string(inputs.size()));
  check_float_input(*this, inputs[0], "the input");
  check_axis_fits(*this, axis_, inputs[0]->ndim());
  return {inputs[0]->type()};
}

void SoftmaxBase::perform(const Apply&, const std::vector<Array>& inputs,
                          std::vector<Array>& outputs) const {
  const Array& x = inputs[0];
  Array in = as_rows(x, axis_);
  Array out = Array::empty(DType::Float64, in.shape());
  const std::int64_t len = axis_ ? x.shape(*axis_) : x.size();
  const std::int64_t rows = len == 0 ? 0 : in.size() / len;
  for (std::int64_t r = 0; r < rows; ++r)
    compute_row(in.data<double>() + r * len, out.data<double>() + r * len, len);
  outputs[0] = from_rows(out, axis_, x.dtype());
}

std::vector<ShapeVars> SoftmaxBase::infer_shape(const Apply&,
                                                const std::vector<ShapeVars>& input_shapes) const {
  return {input_shapes[0]};
}

void Softmax::compute_row(const double* in, double* out, std::int64_t len) const {
  const double m = row_max(in, len);
  double total = 0;
  for (std::int64_t k = 0; k < len; ++k) total += out[k] = std::exp(in[k] - m);
  for (std::int64_t k = 0; k < len; ++k) out[k] /= total;
}

void LogSoftmax::compute_row(const double* in, double* out, std::int64_t len) const {
  double m = row_max(in, len);
  if (!std::isfinite(m)) m = 0;  // as scipy.special.log_softmax
  double total = 0;
  for (std::int64_t k = 0; k < len; ++k) total += std::exp(in[k] - m);
  const double log_total = std::log(total);
  for (std::int64_t k = 0; k < len; ++k) out[k] = (in[k] - m) - log_total;
}

// --- SoftmaxGrad --------------------------------------------------------------------------------

Json SoftmaxGrad::props() const { return Json{{"axis", axis_json(axis_)}}; }

std::vector<TensorType> SoftmaxGrad::infer_types(const VarList& inputs) const {
  if (inputs.size() != 2)
    type_error(*this, "takes 2 inputs (dy, sm), got " + std::to_string(inputs.size()));
  check_float_input(*this, inputs[0], "dy (input 0)");
  check_float_input(*this, inputs[1], "sm (input 1)");
  const TensorType& dy = inputs[0]->type();
  const TensorType& sm = inputs[1]->type();
  if (dy.ndim() != sm.ndim() || !TensorType(sm.dtype, dy.shape).compatible_with(sm))
    type_error(*this, "dy " + dy.str() + " and sm " + sm.str() + " must have the same shape");
  check_axis_fits(*this, axis_, sm.ndim());
  return {sm};
}

void SoftmaxGrad::perform(const Apply&, const std::vector<Array>& inputs,
                          std::vector<Array>& outputs) const {
  const Array& dy_in = inputs[0];
  const Array& sm_in = inputs[1];
  if (dy_in.shape() != sm_in.shape())
    throw RuntimeFailure("dy has shape " + shape_str(dy_in.shape()) + " but sm has shape " +
                         shape_str(sm_in.shape()));
  Array dy = as_rows(dy_in, axis_);
  Array sm = as_rows(sm_in, axis_);
  Array out = Array::empty(DType::Float64, sm.shape());
  const std::int64_t len = axis_ ? sm_in.shape(*axis_) : sm_in.size();
  const std::int64_t rows = len == 0 ? 0 : sm.size() / len;
  for (std::int64_t r = 0; r < rows; ++r) {
    const double* g = dy.data<double>() + r * len;
    const double* s = sm.data<double>() + r * len;
    double* o = out.data<double>() + r * len;
    double dot = 0;
    for (std::int64_t k = 0; k < len; ++k) dot += g[k] * s[k];
    for (std::int64_t k = 0; k < len; ++k) o[k] = (g[k] - dot) * s[k];
  }
  outputs[0] = from_rows(out, axis_, sm_in.dtype());
}

std::vector<ShapeVars> SoftmaxGrad::infer_shape(const Apply&,
                                                const std::vector<ShapeVars>& input_shapes) const {
  return {input_shapes[1]};
}

// --- builders and factories -----------------------------------------------------------------

Var softmax(const Var& x, std::optional<int> axis) {
  return apply1(std::make_shared<Softmax>(normalized("softmax", x, axis)), {x});
}

Var log_softmax(const Var& x, std::optional<int> axis) {
  return apply1(std::make_shared<LogSoftmax>(normalized("log_softmax", x, axis)), {x});
}

Var softmax_grad(const Var& dy, const Var& sm, std::optional<int> axis) {
  if (!dy) throw UserError("softmax_grad: null dy");
  return apply1(std::make_shared<SoftmaxGrad>(normalized("softmax_grad", sm, axis)), {dy, sm});
}

namespace {

// PyTensor 3.x's axis: null, an int, or a list of ints (the axes softmax normalises over).
struct SoftmaxAxes {
  bool several = false;    ///< a list kiln's one-axis op cannot say (set `axes`)
  std::optional<int> one;  ///< otherwise: the axis, or nullopt for every element
  std::vector<int> axes;   ///< sorted, distinct
};

SoftmaxAxes read_softmax_axes(PropReader& props, int ndim) {
  SoftmaxAxes r;
  if (!props.has("axis") || !props.raw("axis").is_array()) {
    r.one = read_single_axis(props, "axis", ndim);
    return r;
  }
  std::vector<bool> seen(static_cast<std::size_t>(ndim), false);
  const std::vector<std::int64_t> listed = props.get_axes("axis").value_or(std::vector<std::int64_t>{});
  for (std::int64_t a : listed) {
    int d = 0;
    try {
      d = normalize_axis(a, ndim);
    } catch (const std::out_of_range& e) {
      props.fail("axis", e.what());
    }
    if (seen[static_cast<std::size_t>(d)]) props.fail("axis", "repeats axis " + std::to_string(a));
    seen[static_cast<std::size_t>(d)] = true;
    r.axes.push_back(d);
  }
  std::sort(r.axes.begin(), r.axes.end());
  if (r.axes.size() == 1) {
    r.one = r.axes[0];
  } else if (r.axes.size() != static_cast<std::size_t>(ndim)) {
    r.several = true;  // none, or some but not all of them
  }
  return r;
}

// Softmax or LogSoftmax over several (not all) axes — or none — as PyTensor 3.x defines it: an
// OpFromGraph of its build_inner_graph formula (inlined before rewriting like any other).
OpPtr softmax_over_axes(bool is_log, const TensorType& t, const std::vector<int>& axes) {
  Var x = make_input(t, "x");
  const int nd = t.ndim();
  Var stable = x - expand_reduced(max(x, axes), nd, axes);
  Var out = is_log ? stable - log(expand_reduced(sum(exp(stable), axes), nd, axes))
                   : exp(stable) / expand_reduced(sum(exp(stable), axes), nd, axes);
  auto inner = std::make_shared<FunctionGraph>(VarList{x}, VarList{out}, "inner");
  return std::make_shared<OpFromGraph>(is_log ? "LogSoftmax" : "Softmax", inner);
}

OpPtr softmax_like_from_props(PropReader& props, const std::vector<TensorType>& input_types, bool is_log) {
  const TensorType& t = single_input_type(props, input_types);
  SoftmaxAxes axes = read_softmax_axes(props, t.ndim());
  props.finish();  // an "inner" graph (3.x's Softmax is an OpFromGraph) is accepted and ignored
  if (axes.several) return softmax_over_axes(is_log, t, axes.axes);
  if (is_log) return std::make_shared<LogSoftmax>(axes.one);
  return std::make_shared<Softmax>(axes.one);
}

}  // namespace

OpPtr softmax_from_props(PropReader& props, const std::vector<TensorType>& input_types) {
  return softmax_like_from_props(props, input_types, false);
}

OpPtr log_softmax_from_props(PropReader& props, const std::vector<TensorType>& input_types) {
  return softmax_like_from_props(props, input_types, true);
}

OpPtr softmax_grad_from_props(PropReader& props, const std::vector<TensorType>& input_types) {
  if (input_types.size() != 2) {
    std::string node = props.where("");
    node = node.substr(0, node.rfind("/props"));
    throw UserError(
        "SoftmaxGrad takes 2 inputs (dy, sm), got " + std::to_string(input_types.size()), node);
  }
  auto axis = read_single_axis(props, "axis", input_types[1].ndim());
  props.finish();
  return std::make_shared<SoftmaxGrad>(axis);
}

// --- gradients, written with Elemwise and Sum so that they can be differentiated again ---------

namespace {

// sum(v) over the op's axis (every axis when null), keeping the dimensions.
Var sum_keep(const Var& v, std::optional<int> axis) {
  std::vector<int> axes;
  if (axis) axes.push_back(*axis);
  else for (int d = 0; d < v->ndim(); ++d) axes.push_back(d);
  if (axes.empty()) return v;
  return expand_reduced(sum(v, axes), v->ndim(), axes);
}

}  // namespace

std::vector<GradTerm> Softmax::pullback(const Apply& node, const VarList& output_grads) const {
  const Var z = node.output(0);
  const Var& g = output_grads[0];
  return {GradTerm::of(cast_grad(z * (g - sum_keep(g * z, axis())), z->dtype()))};
}

std::vector<GradTerm> Softmax::pushforward(const Apply& node, const VarList& input_tangents) const {
  const Var z = node.output(0);
  const Var& t = input_tangents[0];
  return {GradTerm::of(cast_grad(z * (t - sum_keep(z * t, axis())), z->dtype()))};
}

std::vector<GradTerm> LogSoftmax::pullback(const Apply& node, const VarList& output_grads) const {
  const Var z = node.output(0);
  const Var& g = output_grads[0];
  return {GradTerm::of(cast_grad(g - exp(z) * sum_keep(g, axis()), z->dtype()))};
}

std::vector<GradTerm> LogSoftmax::pushforward(const Apply& node, const VarList& input_tangents) const {
  const Var z = node.output(0);
  const Var& t = input_tangents[0];
  return {GradTerm::of(cast_grad(t - sum_keep(exp(z) * t, axis()), z->dtype()))};
}

// SoftmaxGrad(dy, sm) = sm * (dy - S) with S = sum(dy * sm) over the axis. So with a cotangent
// g: d/d dy = sm * (g - sum(g * sm)) and d/d sm = g * (dy - S) - dy * sum(g * sm).
std::vector<GradTerm> SoftmaxGrad::pullback(const Apply& node, const VarList& output_grads) const {
  const Var dy = node.input(0), sm = node.input(1);
  const Var& g = output_grads[0];
  Var s = sum_keep(dy * sm, axis());
  Var gs = sum_keep(g * sm, axis());
  return {GradTerm::of(sum_to_type(cast_grad(sm * (g - gs), dy->dtype()), dy->type())),
          GradTerm::of(sum_to_type(cast_grad(g * (dy - s) - dy * gs, sm->dtype()), sm->type()))};
}

// d out = t_sm * (dy - S) + sm * (t_dy - dS), dS = sum(t_dy * sm + dy * t_sm).
std::vector<GradTerm> SoftmaxGrad::pushforward(const Apply& node, const VarList& input_tangents) const {
  const Var dy = node.input(0), sm = node.input(1);
  const Var out = node.output(0);
  const Var& t_dy = input_tangents[0];
  const Var& t_sm = input_tangents[1];
  Var s = sum_keep(dy * sm, axis());
  Var d_out;
  if (t_dy) d_out = sm * (t_dy - sum_keep(t_dy * sm, axis()));
  if (t_sm) {
    Var term = t_sm * (dy - s) - sm * sum_keep(dy * t_sm, axis());
    d_out = d_out ? d_out + term : term;
  }
  if (!d_out) return {GradTerm::disconnected()};
  return {GradTerm::of(cast_grad(d_out, out->dtype()))};
}

// --- batching rule (vectorize_graph) ---------------------------------------------------------

std::optional<VarList> SoftmaxBase::vectorize(const Apply& node, const VarList& batched_inputs) const {
  const int b = only_first_batched(node, batched_inputs);
  if (!axis_) cannot_vectorize(node, "a softmax over every element");
  const Var& x = batched_inputs[0];
  return VarList{name() == "Softmax" ? softmax(x, *axis_ + b) : log_softmax(x, *axis_ + b)};
}

}  // namespace kiln
