#include "ops/diag.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "ops/math.h"
#include "ir/error.h"
#include "ops/array_util.h"
#include "ops/constant.h"
#include "ops/grad_util.h"
#include "ops/shape.h"
#include "ops/subtensor.h"
#include "ops/batching.h"

namespace kiln {

namespace {

// Length of the `offset` diagonal of a dim1 x dim2 matrix (NumPy's PyArray_Diagonal).
std::int64_t diag_length(std::int64_t dim1, std::int64_t dim2, std::int64_t offset) {
  if (offset > 0) return std::clamp<std::int64_t>(dim2 - offset, 0, dim1);
  if (offset < 0) return std::clamp<std::int64_t>(dim1 + offset, 0, dim2);
  return std::min(dim1, dim2);
}

void check_axes(std::int64_t axis1, std::int64_t axis2) {
  if (axis1 < 0 || axis2 < 0)
    throw UserError("axes must be non-negative here (got " + std::to_string(axis1) + ", " +
                    std::to_string(axis2) + ")");
  if (axis1 == axis2)
    throw UserError("axis1 and axis2 cannot be the same (" + std::to_string(axis1) + ")");
}

std::string props_text(std::int64_t offset, int axis1, int axis2) {
  return "offset=" + std::to_string(offset) + ", axis1=" + std::to_string(axis1) +
         ", axis2=" + std::to_string(axis2);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// ExtractDiag

ExtractDiag::ExtractDiag(std::int64_t offset, int axis1, int axis2) {
  check_axes(axis1, axis2);
  if (axis1 > axis2) {
    std::swap(axis1, axis2);
    offset = -offset;
  }
  offset_ = offset;
  axis1_ = axis1;
  axis2_ = axis2;
}

std::string ExtractDiag::str() const {
  // kiln's ExtractDiag always returns a view (PyTensor's default, view=True).
  return "ExtractDiag{" + props_text(offset_, axis1_, axis2_) + ", view=True}";
}

std::vector<TensorType> ExtractDiag::infer_types(const VarList& inputs) const {
  if (inputs.size() != 1) type_error(*this, "takes 1 input, got " + std::to_string(inputs.size()));
  const TensorType& t = inputs[0]->type();
  if (t.ndim() < 2) type_error(*this, "needs an input with 2 or more dimensions, got " + t.str());
  if (axis2_ >= t.ndim())
    type_error(*this, "axis " + std::to_string(axis2_) + " is out of range for " + t.str());
  Shape out;
  for (int d = 0; d < t.ndim(); ++d)
    if (d != axis1_ && d != axis2_) out.push_back(t.shape[static_cast<std::size_t>(d)]);
  const std::int64_t dim1 = t.shape[static_cast<std::size_t>(axis1_)];
  const std::int64_t dim2 = t.shape[static_cast<std::size_t>(axis2_)];
  out.push_back(dim1 != kUnknownLength && dim2 != kUnknownLength ? diag_length(dim1, dim2, offset_)
                                                                 : kUnknownLength);
  return {TensorType(t.dtype, out)};
}

void ExtractDiag::perform(const Apply&, const std::vector<Array>& inputs,
                          std::vector<Array>& outputs) const {
  const Array& x = inputs[0];
  Shape shape, strides;
  for (int d = 0; d < x.ndim(); ++d) {
    if (d == axis1_ || d == axis2_) continue;
    shape.push_back(x.shape(d));
    strides.push_back(x.strides()[static_cast<std::size_t>(d)]);
  }
  const std::int64_t s1 = x.strides()[static_cast<std::size_t>(axis1_)];
  const std::int64_t s2 = x.strides()[static_cast<std::size_t>(axis2_)];
  const std::int64_t n = diag_length(x.shape(axis1_), x.shape(axis2_), offset_);
  shape.push_back(n);
  strides.push_back(s1 + s2);
  const std::int64_t start = n == 0 ? 0 : offset_ >= 0 ? offset_ * s2 : -offset_ * s1;
  outputs[0] = x.view(shape, strides, start);
}

std::vector<ShapeVars> ExtractDiag::infer_shape(const Apply& node,
                                                const std::vector<ShapeVars>& input_shapes) const {
  const ShapeVars& in = input_shapes[0];
  ShapeVars dims;
  for (int d = 0; d < node.input(0)->ndim(); ++d)
    if (d != axis1_ && d != axis2_) dims.push_back(in[static_cast<std::size_t>(d)]);
  const Var& dim1 = in[static_cast<std::size_t>(axis1_)];
  const Var& dim2 = in[static_cast<std::size_t>(axis2_)];
  const Var zero = int64_constant(0);
  const Var off = int64_constant(offset_ < 0 ? -offset_ : offset_);
  if (offset_ > 0)
    dims.push_back(clip(dim2 - off, zero, dim1));
  else if (offset_ < 0)
    dims.push_back(clip(dim1 - off, zero, dim2));
  else
    dims.push_back(minimum(dim1, dim2));
  return {dims};
}

// ---------------------------------------------------------------------------------------------
// AllocDiag

AllocDiag::AllocDiag(std::int64_t offset, int axis1, int axis2)
    : offset_(offset), axis1_(axis1), axis2_(axis2) {
  check_axes(axis1, axis2);
  if (axis1 > axis2)
    throw UserError("AllocDiag needs axis1 < axis2 (got " + props_text(offset, axis1, axis2) + ")");
}

std::string AllocDiag::str() const {
  // PyTensor's AllocDiag.__str__ is f"AllocDiag{{{self.axis1=}, {self.axis2=}, {self.offset=}}}".
  return "AllocDiag{self.axis1=" + std::to_string(axis1_) +
         ", self.axis2=" + std::to_string(axis2_) + ", self.offset=" + std::to_string(offset_) +
         "}";
}

std::vector<TensorType> AllocDiag::infer_types(const VarList& inputs) const {
  if (inputs.size() != 1) type_error(*this, "takes 1 input, got " + std::to_string(inputs.size()));
  const TensorType& t = inputs[0]->type();
  if (t.ndim() < 1) type_error(*this, "needs an input with 1 or more dimensions, got " + t.str());
  const int out_nd = t.ndim() + 1;
  if (axis2_ >= out_nd)
    type_error(*this, "axis " + std::to_string(axis2_) + " is out of range for an output of rank " +
                          std::to_string(out_nd));
  const std::int64_t n = t.shape.back();
  const std::int64_t m =
      n == kUnknownLength ? kUnknownLength : n + (offset_ < 0 ? -offset_ : offset_);
  Shape out;
  std::size_t next = 0;
  for (int d = 0; d < out_nd; ++d) out.push_back(d == axis1_ || d == axis2_ ? m : t.shape[next++]);
  return {TensorType(t.dtype, out)};
}

void AllocDiag::perform(const Apply&, const std::vector<Array>& inputs,
                        std::vector<Array>& outputs) const {
  const Array& x = inputs[0];
  const int nd = x.ndim();
  const std::int64_t m = x.shape(nd - 1) + (offset_ < 0 ? -offset_ : offset_);
  Shape shape;
  std::vector<int> source;  // for each output position: the input axis, or -1 for axis1/axis2
  int next = 0;
  for (int d = 0; d <= nd; ++d) {
    const bool diag_axis = d == axis1_ || d == axis2_;
    shape.push_back(diag_axis ? m : x.shape(next));
    source.push_back(diag_axis ? -1 : next++);
  }
  Array out = Array::zeros(x.dtype(), shape);
  const std::int64_t row0 = offset_ < 0 ? -offset_ : 0, col0 = offset_ > 0 ? offset_ : 0;
  const std::size_t isz = x.itemsize();
  std::vector<std::int64_t> idx(shape.size());
  x.for_each_index([&](const std::int64_t* in) {
    for (int d = 0; d <= nd; ++d)
      idx[static_cast<std::size_t>(d)] =
          source[static_cast<std::size_t>(d)] >= 0 ? in[source[static_cast<std::size_t>(d)]] : 0;
    idx[static_cast<std::size_t>(axis1_)] = in[nd - 1] + row0;
    idx[static_cast<std::size_t>(axis2_)] = in[nd - 1] + col0;
    std::memcpy(out.element_ptr(idx.data()), x.element_ptr(in), isz);
  });
  outputs[0] = out;
}

std::vector<ShapeVars> AllocDiag::infer_shape(const Apply& node,
                                              const std::vector<ShapeVars>& input_shapes) const {
  const ShapeVars& in = input_shapes[0];
  const Var m = in.back() + int64_constant(offset_ < 0 ? -offset_ : offset_);
  ShapeVars dims;
  std::size_t next = 0;
  for (int d = 0; d <= node.input(0)->ndim(); ++d)
    dims.push_back(d == axis1_ || d == axis2_ ? m : in[next++]);
  return {dims};
}

// ---------------------------------------------------------------------------------------------
// Builder API and factories

namespace {
int normalize_or_throw(const std::string& who, std::int64_t axis, int ndim) {
  try {
    return normalize_axis(axis, ndim);
  } catch (const std::out_of_range& e) {
    throw UserError(who + ": " + e.what());
  }
}
}  // namespace

Var diagonal(const Var& x, std::int64_t offset, int axis1, int axis2) {
  const int a1 = normalize_or_throw("diagonal", axis1, x->ndim());
  const int a2 = normalize_or_throw("diagonal", axis2, x->ndim());
  return apply1(std::make_shared<ExtractDiag>(offset, a1, a2), {x});
}

Var alloc_diag(const Var& diag, std::int64_t offset, int axis1, int axis2) {
  int a1 = normalize_or_throw("alloc_diag", axis1, diag->ndim() + 1);
  int a2 = normalize_or_throw("alloc_diag", axis2, diag->ndim() + 1);
  if (a1 > a2) std::swap(a1, a2);
  return apply1(std::make_shared<AllocDiag>(offset, a1, a2), {diag});
}

namespace {
// Reads offset/axis1/axis2; negative axes are normalised against `ndim` (when the node has one
// input to take it from).
struct DiagProps {
  std::int64_t offset;
  int axis1, axis2;
};
DiagProps read_diag_props(PropReader& props, const std::vector<TensorType>& input_types,
                          int extra_dims) {
  const std::int64_t offset = props.get_int("offset", 0);
  const std::int64_t a1 = props.get_int("axis1", 0);
  const std::int64_t a2 = props.get_int("axis2", 1);
  props.finish();
  if (input_types.size() != 1)
    throw UserError(props.op_name() + " takes 1 input, got " + std::to_string(input_types.size()));
  const int ndim = input_types[0].ndim() + extra_dims;
  auto norm = [&](const char* key, std::int64_t a) {
    if (a < -ndim || a >= ndim)
      props.fail(key,
                 "is out of range for rank " + std::to_string(ndim) + ": " + std::to_string(a));
    return static_cast<int>(a < 0 ? a + ndim : a);
  };
  DiagProps p{offset, norm("axis1", a1), norm("axis2", a2)};
  if (p.axis1 == p.axis2) props.fail("axis2", "must differ from axis1");
  return p;
}
}  // namespace

OpPtr extract_diag_from_props(PropReader& props, const std::vector<TensorType>& input_types) {
  DiagProps p = read_diag_props(props, input_types, 0);
  return std::make_shared<ExtractDiag>(p.offset, p.axis1, p.axis2);
}

OpPtr alloc_diag_from_props(PropReader& props, const std::vector<TensorType>& input_types) {
  DiagProps p = read_diag_props(props, input_types, 1);
  if (p.axis1 > p.axis2)
    props.fail("axis2", "must be greater than axis1 (the diagonal's axes are given in order)");
  return std::make_shared<AllocDiag>(p.offset, p.axis1, p.axis2);
}

// --- gradients ------------------------------------------------------------------------------

std::vector<GradTerm> ExtractDiag::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& x = node.input(0);
  if (!is_float(x->dtype())) return {GradTerm::disconnected()};
  // The cotangent laid on the diagonal of a square block (side: diagonal length + |offset|),
  // cropped to x and written into zeros of x's shape.
  Var block = alloc_diag(cast(output_grads[0], x->dtype()), offset_, axis1_, axis2_);
  Var side = shape_i(block, axis1_);
  std::vector<IndexItem> crop_block, crop_x;
  for (int d = 0; d <= axis2_; ++d) {
    const bool diag_axis = d == axis1_ || d == axis2_;
    crop_block.push_back(diag_axis ? slice(none, shape_i(x, d)) : slice());
    crop_x.push_back(diag_axis ? slice(none, side) : slice());
  }
  Var gx = set_subtensor(zeros_like(x, x->dtype()), crop_x, subtensor(block, crop_block));
  return {GradTerm::of(gx)};
}

std::vector<GradTerm> ExtractDiag::pushforward(const Apply& node, const VarList& input_tangents) const {
  return linear_pushforward(node, input_tangents, {0});
}

std::vector<GradTerm> AllocDiag::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& x = node.input(0);
  if (!is_float(x->dtype())) return {GradTerm::disconnected()};
  return {GradTerm::of(cast_grad(diagonal(output_grads[0], offset_, axis1_, axis2_), x->dtype()))};
}

std::vector<GradTerm> AllocDiag::pushforward(const Apply& node, const VarList& input_tangents) const {
  return linear_pushforward(node, input_tangents, {0});
}

// --- batching rule (vectorize_graph) ---------------------------------------------------------

std::optional<VarList> ExtractDiag::vectorize(const Apply& node, const VarList& batched_inputs) const {
  const int b = only_first_batched(node, batched_inputs);
  return VarList{apply1(std::make_shared<ExtractDiag>(offset_, axis1_ + b, axis2_ + b), {batched_inputs[0]})};
}

std::optional<VarList> AllocDiag::vectorize(const Apply& node, const VarList& batched_inputs) const {
  const int b = only_first_batched(node, batched_inputs);
  return VarList{apply1(std::make_shared<AllocDiag>(offset_, axis1_ + b, axis2_ + b), {batched_inputs[0]})};
}

}  // namespace kiln
