#include "ops/shape.h"

#include "ir/error.h"
#include "ops/array_util.h"
#include "ops/constant.h"
#include "ops/batching.h"
#include "ops/subtensor.h"

namespace kiln {

std::vector<TensorType> ShapeOp::infer_types(const VarList& inputs) const {
  if (inputs.size() != 1) type_error(*this, "takes 1 input, got " + std::to_string(inputs.size()));
  return {TensorType(DType::Int64, {inputs[0]->ndim()})};
}

void ShapeOp::perform(const Apply&, const std::vector<Array>& inputs,
                      std::vector<Array>& outputs) const {
  const Array& x = inputs[0];
  Array out = Array::empty(DType::Int64, {x.ndim()});
  for (int d = 0; d < x.ndim(); ++d) out.data<std::int64_t>()[d] = x.shape()[static_cast<std::size_t>(d)];
  outputs[0] = out;
}

std::vector<ShapeVars> ShapeOp::infer_shape(const Apply& node, const std::vector<ShapeVars>&) const {
  return {{int64_constant(node.input(0)->ndim())}};
}

std::vector<GradTerm> ShapeOp::pullback(const Apply&, const VarList&) const {
  return {GradTerm::disconnected()};
}

std::vector<TensorType> ShapeI::infer_types(const VarList& inputs) const {
  if (inputs.size() != 1) type_error(*this, "takes 1 input, got " + std::to_string(inputs.size()));
  if (i_ < 0 || i_ >= inputs[0]->ndim())
    type_error(*this, "dimension " + std::to_string(i_) + " is out of range for an input of rank " +
                          std::to_string(inputs[0]->ndim()));
  return {scalar_type(DType::Int64)};
}

void ShapeI::perform(const Apply&, const std::vector<Array>& inputs,
                     std::vector<Array>& outputs) const {
  outputs[0] = make_int64_scalar(inputs[0].shape()[static_cast<std::size_t>(i_)]);
}

std::vector<ShapeVars> ShapeI::infer_shape(const Apply&, const std::vector<ShapeVars>&) const {
  return {{}};
}

std::vector<GradTerm> ShapeI::pullback(const Apply&, const VarList&) const {
  return {GradTerm::disconnected()};
}

Var shape(const Var& x) { return apply1(std::make_shared<ShapeOp>(), {x}); }

Var shape_i(const Var& x, int i) {
  int d = i < 0 ? i + x->ndim() : i;
  if (d < 0 || d >= x->ndim())
    throw UserError("shape_i: dimension " + std::to_string(i) + " is out of range for rank " +
                    std::to_string(x->ndim()));
  return apply1(std::make_shared<ShapeI>(d), {x});
}

std::vector<ShapeVars> output_shapes(const Apply& node, const std::vector<ShapeVars>& input_shapes) {
  std::vector<ShapeVars> out = node.op().infer_shape(node, input_shapes);
  if (!out.empty() || node.num_outputs() == 0) return out;
  for (int i = 0; i < node.num_outputs(); ++i) {
    ShapeVars dims;
    Var o = node.output(i);
    // An rng's or a none's carrier has a fixed shape, and Shape_i takes tensors only.
    for (int d = 0; d < o->ndim(); ++d)
      dims.push_back(o->type().is_tensor() ? shape_i(o, d) : int64_constant(o->shape()[static_cast<std::size_t>(d)]));
    out.push_back(dims);
  }
  return out;
}

OpPtr shape_from_props(PropReader& props, const std::vector<TensorType>&) {
  props.finish();
  return std::make_shared<ShapeOp>();
}

OpPtr shape_i_from_props(PropReader& props, const std::vector<TensorType>&) {
  std::int64_t i = props.get_int("i");
  props.finish();
  if (i < 0 || i > 64) props.fail("i", "must be a dimension index, not " + std::to_string(i));
  return std::make_shared<ShapeI>(static_cast<int>(i));
}

// --- batching rule (vectorize_graph) ---------------------------------------------------------

std::optional<VarList> ShapeOp::vectorize(const Apply& node, const VarList& batched_inputs) const {
  const int nb = only_first_batched(node, batched_inputs);
  return VarList{subtensor(shape(batched_inputs[0]), {slice(nb)})};  // the core lengths
}

std::optional<VarList> ShapeI::vectorize(const Apply& node, const VarList& batched_inputs) const {
  const int nb = only_first_batched(node, batched_inputs);
  return VarList{shape_i(batched_inputs[0], i_ + nb)};
}

}  // namespace kiln
