// Argmax (declared in reduce.h with the rest of the reduction family).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "ir/error.h"
#include "ops/reduce.h"

namespace kiln {

namespace {

bool in_axes(const ReduceAxes& axes, int d) {
  return !axes || std::find(axes->begin(), axes->end(), d) != axes->end();
}

// Index of the first maximum of each of `rows` contiguous rows of length `len`; a NaN beats
// everything and the first NaN wins (NumPy's argmax).
template <typename T>
void argmax_rows(const T* in, std::int64_t* out, std::int64_t rows, std::int64_t len) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const T* row = in + r * len;
    std::int64_t best = 0;
    for (std::int64_t k = 1; k < len; ++k) {
      if constexpr (kiln_scalar::is_float_v<T>) {
        if (std::isnan(row[best])) break;
        if (std::isnan(row[k])) {
          best = k;
          break;
        }
      }
      if (row[k] > row[best]) best = k;
    }
    out[r] = best;
  }
}

}  // namespace

Json Argmax::props() const { return Json{{"axis", axis_ ? Json(*axis_) : Json(nullptr)}}; }

std::string Argmax::str() const {
  // PyTensor's default props printing of the sorted tuple: Argmax{axis=(1,)}, Argmax{axis=None}.
  if (!axis_) return "Argmax{axis=None}";
  std::string s = "Argmax{axis=(";
  for (std::size_t i = 0; i < axis_->size(); ++i)
    s += (i ? ", " : "") + std::to_string((*axis_)[i]);
  return s + (axis_->size() == 1 ? ",)}" : ")}");
}

std::vector<TensorType> Argmax::infer_types(const VarList& inputs) const {
  if (inputs.size() != 1) type_error(*this, "takes 1 input, got " + std::to_string(inputs.size()));
  const TensorType& t = inputs[0]->type();
  Shape shape;
  if (axis_)
    for (int d : *axis_)
      if (d >= t.ndim())
        type_error(*this, "axis " + std::to_string(d) + " is out of range for an input of rank " +
                              std::to_string(t.ndim()));
  for (int d = 0; d < t.ndim(); ++d)
    if (!in_axes(axis_, d)) shape.push_back(t.shape[static_cast<std::size_t>(d)]);
  return {TensorType(DType::Int64, shape)};
}

void Argmax::perform(const Apply&, const std::vector<Array>& inputs,
                     std::vector<Array>& outputs) const {
  const Array& x = inputs[0];
  Shape out_shape;
  std::int64_t len = 1;
  for (int d = 0; d < x.ndim(); ++d) {
    if (!in_axes(axis_, d)) {
      out_shape.push_back(x.shape(d));
      continue;
    }
    if (x.shape(d) == 0)
      throw RuntimeFailure("Argmax: cannot take the argmax over axis " + std::to_string(d) +
                           ", which has length 0");
    len *= x.shape(d);
  }
  Array src = move_axes_last(x, reduced_axes_list(axis_, x.ndim())).contiguous();
  Array out = Array::empty(DType::Int64, out_shape);
  visit_real_dtype(x.dtype(), [&](auto t) {
    using T = decltype(t);
    argmax_rows<T>(src.data<T>(), out.data<std::int64_t>(), out.size(), len);
  });
  outputs[0] = out;
}

std::vector<ShapeVars> Argmax::infer_shape(const Apply& node,
                                           const std::vector<ShapeVars>& input_shapes) const {
  ShapeVars dims;
  for (int d = 0; d < node.input(0)->ndim(); ++d)
    if (!in_axes(axis_, d)) dims.push_back(input_shapes[0][static_cast<std::size_t>(d)]);
  return {dims};
}

Var argmax(const Var& x, AxisArg axis) {
  if (!x) throw UserError("argmax: null input");
  ReduceAxes axes;
  try {
    axes = normalize_reduce_axes(axis.axes, x->ndim());
  } catch (const std::invalid_argument& e) {
    throw UserError(std::string("argmax: ") + e.what());
  }
  return apply1(std::make_shared<Argmax>(axes), {x});
}

OpPtr argmax_from_props(PropReader& props, const std::vector<TensorType>& input_types) {
  auto raw = props.get_axes("axis");
  const TensorType& t = single_input_type(props, input_types);
  props.finish();
  try {
    return std::make_shared<Argmax>(normalize_reduce_axes(raw, t.ndim()));
  } catch (const std::invalid_argument& e) {
    props.fail("axis", e.what());
  }
}

std::vector<GradTerm> Argmax::pullback(const Apply&, const VarList&) const {
  return {GradTerm::undefined("Argmax is not differentiable (its output is an index)")};
}

}  // namespace kiln
