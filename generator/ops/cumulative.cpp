#include "ops/cumulative.h"

#include <stdexcept>

#include "ir/error.h"
#include "kiln/runtime/scalar_math.hpp"
#include "ops/array_util.h"
#include "ops/constant.h"
#include "ops/elemwise.h"
#include "ops/reduce.h"
#include "ops/math.h"
#include "ops/grad_util.h"
#include "ops/reshape.h"
#include "ops/subtensor.h"
#include "ops/batching.h"

namespace kiln {

namespace {

namespace ks = kiln_scalar;

// Scans each of `rows` contiguous rows of length `len` in place.
template <typename T>
void scan_rows(T* data, std::int64_t rows, std::int64_t len, CumMode mode) {
  for (std::int64_t r = 0; r < rows; ++r) {
    T* row = data + r * len;
    for (std::int64_t k = 1; k < len; ++k) {
      if constexpr (ks::is_complex_v<T>)  // NumPy's complex product
        row[k] = mode == CumMode::Add ? row[k - 1] + row[k] : ks::c_mul(row[k - 1], row[k]);
      else
        row[k] = mode == CumMode::Add ? ks::wrap_add(row[k - 1], row[k]) : ks::wrap_mul(row[k - 1], row[k]);
    }
  }
}

}  // namespace

Json CumOp::props() const {
  return Json{{"axis", axis_ ? Json(*axis_) : Json(nullptr)},
              {"mode", mode_ == CumMode::Add ? "add" : "mul"}};
}

std::string CumOp::str() const {
  return std::string(mode_ == CumMode::Add ? "Cumsum" : "Cumprod") +
         "{axis=" + (axis_ ? std::to_string(*axis_) : "None") + "}";
}

std::vector<TensorType> CumOp::infer_types(const VarList& inputs) const {
  if (inputs.size() != 1) type_error(*this, "takes 1 input, got " + std::to_string(inputs.size()));
  const TensorType& t = inputs[0]->type();
  if (axis_) {
    if (*axis_ < 0 || *axis_ >= t.ndim())
      type_error(*this, "axis " + std::to_string(*axis_) +
                            " is out of range for an input of rank " + std::to_string(t.ndim()));
    return {t};
  }
  // Flattened: one dimension holding every element.
  std::int64_t n = 1;
  for (auto len : t.shape)
    n = (len == kUnknownLength || n == kUnknownLength) ? kUnknownLength : n * len;
  return {TensorType(t.dtype, {n})};
}

void CumOp::perform(const Apply&, const std::vector<Array>& inputs,
                    std::vector<Array>& outputs) const {
  const Array& x = inputs[0];
  Array out;
  std::int64_t len;
  if (axis_) {
    out = move_axes_last(x, {*axis_}).copy();
    len = x.shape(*axis_);
  } else {
    out = x.copy();
    len = out.size();
    out = out.view({len}, {1});
  }
  std::int64_t rows = len == 0 ? 0 : out.size() / len;
  visit_dtype(x.dtype(), [&](auto t) {
    using T = decltype(t);
    scan_rows<T>(out.data<T>(), rows, len, mode_);
  });
  outputs[0] = axis_ ? move_last_axis_to(out, *axis_).contiguous() : out;
}

std::vector<ShapeVars> CumOp::infer_shape(const Apply&,
                                          const std::vector<ShapeVars>& input_shapes) const {
  if (axis_) return {input_shapes[0]};
  const ShapeVars& dims = input_shapes[0];
  if (dims.empty()) return {{int64_constant(1)}};
  Var n = dims[0];
  for (std::size_t d = 1; d < dims.size(); ++d)
    n = elemwise1(ScalarOp(ScalarOpId::Mul), {n, dims[d]});
  return {{n}};
}

namespace {
Var cumulative(const Var& x, std::optional<int> axis, CumMode mode) {
  if (!x) throw UserError("cumulative op: null input");
  std::optional<int> a;
  if (axis) {
    try {
      a = normalize_axis(*axis, x->ndim());
    } catch (const std::out_of_range& e) {
      throw UserError(std::string(mode == CumMode::Add ? "cumsum: " : "cumprod: ") + e.what());
    }
  }
  return apply1(std::make_shared<CumOp>(a, mode), {x});
}
}  // namespace

Var cumsum(const Var& x, std::optional<int> axis) { return cumulative(x, axis, CumMode::Add); }

Var cumprod(const Var& x, std::optional<int> axis) { return cumulative(x, axis, CumMode::Mul); }

OpPtr cumop_from_props(PropReader& props, const std::vector<TensorType>& input_types) {
  CumMode mode = CumMode::Add;
  if (props.has("mode")) {
    std::string m = props.get_string("mode");
    if (m != "add" && m != "mul")
      props.fail("mode", "must be \"add\" or \"mul\", not \"" + m + "\"");
    mode = m == "add" ? CumMode::Add : CumMode::Mul;
  } else {
    props.raw("mode");
  }
  const TensorType& t = single_input_type(props, input_types);
  std::optional<int> axis = read_single_axis(props, "axis", t.ndim());
  props.finish();
  return std::make_shared<CumOp>(axis, mode);
}

// --- gradients ------------------------------------------------------------------------------

namespace {

Var flip(const Var& x, int axis) {
  std::vector<IndexItem> index(static_cast<std::size_t>(axis), slice());
  index.push_back(slice(none, none, -1));
  return subtensor(x, index);
}

// The adjoint of cumsum along `axis`: a cumulative sum from the end.
Var reverse_cumsum(const Var& g, int axis) { return flip(cumsum(flip(g, axis), axis), axis); }

}  // namespace

std::vector<GradTerm> CumOp::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& x = node.input(0);
  if (!is_float(x->dtype())) return {GradTerm::disconnected()};
  const int axis = axis_.value_or(0);
  Var g = output_grads[0];
  // PyTensor's cumprod rule (which divides by x, so it is undefined where x is 0).
  if (mode_ == CumMode::Mul) g = g * node.output(0);
  Var gx = reverse_cumsum(g, axis);
  if (mode_ == CumMode::Mul) gx = gx / (axis_ ? x : reshape(x, IntList{-1}));
  if (!axis_) {
    std::vector<IntArg> lengths;
    for (const Var& l : lengths_of(x)) lengths.emplace_back(l);
    gx = reshape(gx, IntList(lengths));
  }
  return {GradTerm::of(cast_grad(gx, x->dtype()))};
}

std::vector<GradTerm> CumOp::pushforward(const Apply& node, const VarList& input_tangents) const {
  if (mode_ == CumMode::Add) return linear_pushforward(node, input_tangents, {0});
  return Op::pushforward(node, input_tangents);
}

// --- batching rule (vectorize_graph) ---------------------------------------------------------

std::optional<VarList> CumOp::vectorize(const Apply& node, const VarList& batched_inputs) const {
  const int b = only_first_batched(node, batched_inputs);
  if (!axis_) cannot_vectorize(node, "a cumulative op over the flattened input");
  return VarList{apply1(std::make_shared<CumOp>(*axis_ + b, mode_), {batched_inputs[0]})};
}

}  // namespace kiln
