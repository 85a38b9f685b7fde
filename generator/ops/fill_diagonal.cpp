#include "ops/fill_diagonal.h"

#include <algorithm>
#include <cstring>

#include "ops/math.h"
#include "ops/grad_util.h"
#include "ir/error.h"
#include "ops/advanced_subtensor.h"
#include "ops/alloc.h"
#include "ops/array_util.h"
#include "ops/constant.h"
#include "ops/reduce.h"
#include "ops/reshape.h"
#include "ops/subtensor.h"

namespace kiln {

namespace {

/// val must be 0-d and fit a's dtype (PyTensor: upcast(a, val) is a's dtype).
void check_value(const Op& who, const Var& a, const Var& val) {
  if (val->ndim() != 0) type_error(who, "the value (" + val->label() + ") must be 0-d, got " + val->type().str());
  if (upcast(a->dtype(), val->dtype()) != a->dtype())
    type_error(who, "the value's dtype " + std::string(dtype_name(val->dtype())) + " does not fit the tensor's " +
                        std::string(dtype_name(a->dtype())) + " (it would upcast it)");
}

/// a[element] = val for one element given by its multi-index (a is a fresh C-contiguous copy).
void put(Array& a, const std::int64_t* index, const Array& val) {
  std::memcpy(a.element_ptr(index), val.data(), a.itemsize());
}

}  // namespace

SliceRange offset_diagonal(std::int64_t h, std::int64_t w, std::int64_t offset) {
  const std::int64_t shortest = std::min(h, w);
  const std::int64_t start = offset >= 0 ? offset : -offset * w;
  const std::int64_t count = std::min(shortest, offset >= 0 ? w - offset : h + offset);
  const std::int64_t step = w + 1;
  return resolve_slice(start, start + step * count, step, h * w);
}

// --- FillDiagonal --------------------------------------------------------------------------------

std::vector<TensorType> FillDiagonal::infer_types(const VarList& inputs) const {
  if (inputs.size() != 2) type_error(*this, "takes 2 inputs (a, val), got " + std::to_string(inputs.size()));
  if (inputs[0]->ndim() < 2) type_error(*this, "first parameter must have at least two dimensions");
  check_value(*this, inputs[0], inputs[1]);
  return {inputs[0]->type()};
}

void FillDiagonal::perform(const Apply&, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  Array a = inputs[0].copy();
  const Array val = astype(inputs[1], a.dtype());
  std::int64_t n = a.shape(0);
  if (a.ndim() == 2) {
    n = std::min(a.shape(0), a.shape(1));
  } else {
    for (int d = 1; d < a.ndim(); ++d)
      if (a.shape(d) != n) throw RuntimeFailure("All dimensions of input must be of equal length");
  }
  std::vector<std::int64_t> index(static_cast<std::size_t>(a.ndim()));
  for (std::int64_t i = 0; i < n; ++i) {
    std::fill(index.begin(), index.end(), i);
    put(a, index.data(), val);
  }
  outputs[0] = a;
}

std::vector<ShapeVars> FillDiagonal::infer_shape(const Apply&, const std::vector<ShapeVars>& input_shapes) const {
  return {input_shapes[0]};
}

std::vector<GradTerm> FillDiagonal::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& a = node.input(0);
  const Var& val = node.input(1);
  std::vector<GradTerm> terms{GradTerm::disconnected(), GradTerm::disconnected()};
  if (!is_float(a->dtype())) return terms;
  Var g = cast(output_grads[0], a->dtype());
  terms[0] = GradTerm::of(fill_diagonal(g, scalar_constant(a->dtype(), 0)));
  if (is_float(val->dtype())) {
    std::vector<Var> lengths = lengths_of(g);
    Var n = a->ndim() == 2 ? minimum(lengths[0], lengths[1]) : lengths[0];
    Var diag_index = arange(n, DType::Int64);
    std::vector<AdvancedItem> index(static_cast<std::size_t>(a->ndim()), AdvancedItem(diag_index));
    terms[1] = GradTerm::of(cast(sum(advanced_subtensor(g, index)), val->dtype()));
  }
  return terms;
}

std::vector<GradTerm> FillDiagonal::pushforward(const Apply& node, const VarList& input_tangents) const {
  return linear_pushforward(node, input_tangents, {0, 1});
}

// --- FillDiagonalOffset --------------------------------------------------------------------------

std::vector<TensorType> FillDiagonalOffset::infer_types(const VarList& inputs) const {
  if (inputs.size() != 3) type_error(*this, "takes 3 inputs (a, val, offset), got " + std::to_string(inputs.size()));
  if (inputs[0]->ndim() != 2) type_error(*this, "first parameter must have exactly two dimensions");
  check_value(*this, inputs[0], inputs[1]);
  if (inputs[2]->ndim() != 0 || !is_integer(inputs[2]->dtype()))
    type_error(*this, "the offset (" + inputs[2]->label() + ") must be a 0-d integer, got " + inputs[2]->type().str());
  return {inputs[0]->type()};
}

void FillDiagonalOffset::perform(const Apply&, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  Array a = inputs[0].copy();
  const Array val = astype(inputs[1], a.dtype());
  const SliceRange run = offset_diagonal(a.shape(0), a.shape(1), scalar_to_int64(inputs[2]));
  for (std::int64_t k = 0; k < run.count; ++k) {
    const std::int64_t flat = run.start + k * run.step;  // a is C-contiguous
    const std::int64_t index[2] = {flat / a.shape(1), flat % a.shape(1)};
    put(a, index, val);
  }
  outputs[0] = a;
}

std::vector<ShapeVars> FillDiagonalOffset::infer_shape(const Apply&,
                                                       const std::vector<ShapeVars>& input_shapes) const {
  return {input_shapes[0]};
}

std::vector<GradTerm> FillDiagonalOffset::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& a = node.input(0);
  const Var& val = node.input(1);
  const Var& offset = node.input(2);
  std::vector<GradTerm> terms{GradTerm::disconnected(), GradTerm::disconnected(),
                              GradTerm::undefined("fill_diagonal_offset is not differentiable in its offset")};
  if (!is_float(a->dtype())) return terms;
  Var g = cast(output_grads[0], a->dtype());
  terms[0] = GradTerm::of(fill_diagonal_offset(g, scalar_constant(a->dtype(), 0), offset));
  if (is_float(val->dtype())) {
    // The same elements of the flattened matrix, by the same slice (PyTensor's).
    std::vector<Var> lengths = lengths_of(g);
    const Var& h = lengths[0];
    const Var& w = lengths[1];
    Var off = cast(offset, DType::Int64);
    Var positive = ge(off, 0);
    Var start = switch_(positive, off, -off * w);
    Var count = minimum(minimum(w, h), switch_(positive, w - off, h + off));
    Var step = w + 1;
    Var flat = reshape(g, IntList(std::vector<IntArg>{IntArg(-1)}));
    Var run = subtensor(flat, {slice(start, start + step * count, step)});
    terms[1] = GradTerm::of(cast(sum(run), val->dtype()));
  }
  return terms;
}

std::vector<GradTerm> FillDiagonalOffset::pushforward(const Apply& node, const VarList& input_tangents) const {
  return linear_pushforward(node, input_tangents, {0, 1});
}

// --- builder API and factories -------------------------------------------------------------------

Var fill_diagonal(const Var& a, const Var& val) {
  if (!a || !val) throw UserError("fill_diagonal: the tensor or the value is a null Var");
  return apply1(std::make_shared<FillDiagonal>(), {a, val});
}

Var fill_diagonal_offset(const Var& a, const Var& val, const Var& offset) {
  if (!a || !val || !offset) throw UserError("fill_diagonal_offset: an input is a null Var");
  return apply1(std::make_shared<FillDiagonalOffset>(), {a, val, offset});
}

OpPtr fill_diagonal_from_props(PropReader& props, const std::vector<TensorType>&) {
  props.finish();
  return std::make_shared<FillDiagonal>();
}

OpPtr fill_diagonal_offset_from_props(PropReader& props, const std::vector<TensorType>&) {
  props.finish();
  return std::make_shared<FillDiagonalOffset>();
}

}  // namespace kiln
