#include "ops/gradient_ops.h"

#include <cmath>

#include "ir/error.h"
#include "ops/constant.h"
#include "ops/grad_util.h"
#include "ops/math.h"

namespace kiln {

GradientOp::GradientOp(Kind kind, double a, double b) : kind_(kind), a_(a), b_(b) {
  if (kind_ == Kind::Clip && !(b_ >= a_))
    throw UserError("GradClip: clip_upper_bound should be >= clip_lower_bound (PyTensor's check)");
}

std::string_view GradientOp::name() const {
  switch (kind_) {
    case Kind::Zero: return "ZeroGrad";
    case Kind::Disconnected: return "DisconnectedGrad";
    case Kind::Undefined: return "UndefinedGrad";
    case Kind::Clip: return "GradClip";
    case Kind::Scale: return "GradScale";
  }
  return "?";
}

Json GradientOp::props() const {
  if (kind_ == Kind::Clip) return Json{{"clip_lower_bound", a_}, {"clip_upper_bound", b_}};
  if (kind_ == Kind::Scale) return Json{{"multiplier", a_}};
  return Json::object();
}

std::vector<TensorType> GradientOp::infer_types(const VarList& inputs) const {
  if (inputs.size() != 1) type_error(*this, "takes one input");
  return {inputs[0]->type()};
}

void GradientOp::perform(const Apply&, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  outputs[0] = inputs[0];
}

std::vector<ShapeVars> GradientOp::infer_shape(const Apply&, const std::vector<ShapeVars>& input_shapes) const {
  return {input_shapes[0]};
}

std::vector<GradTerm> GradientOp::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& x = node.input(0);
  const Var& g = output_grads[0];
  switch (kind_) {
    case Kind::Zero: return {GradTerm::of(zeros_like(x))};
    case Kind::Disconnected: return {GradTerm::disconnected()};
    case Kind::Undefined:
      return {GradTerm::undefined("UndefinedGrad: the graph declares the gradient through this node undefined")};
    case Kind::Clip:
      if (!g) return {GradTerm::disconnected()};
      return {GradTerm::of(cast_grad(clip(g, scalar_constant(g->dtype(), a_), scalar_constant(g->dtype(), b_)),
                                     x->dtype()))};
    case Kind::Scale:
      if (!g) return {GradTerm::disconnected()};
      return {GradTerm::of(cast_grad(g * scalar_constant(g->dtype(), a_), x->dtype()))};
  }
  return {GradTerm::disconnected()};
}

std::vector<GradTerm> GradientOp::pushforward(const Apply& node, const VarList& input_tangents) const {
  if (kind_ == Kind::Clip || kind_ == Kind::Scale) return linear_pushforward(node, input_tangents, {0});
  return {GradTerm::disconnected()};
}

std::optional<VarList> GradientOp::vectorize(const Apply& node, const VarList& batched_inputs) const {
  return make_node(node.op_ptr(), batched_inputs)->outputs();  // elementwise: any batch shape
}

Var zero_grad(const Var& x) { return apply1(std::make_shared<GradientOp>(GradientOp::Kind::Zero), {x}); }
Var disconnected_grad(const Var& x) {
  return apply1(std::make_shared<GradientOp>(GradientOp::Kind::Disconnected), {x});
}
Var undefined_grad(const Var& x) { return apply1(std::make_shared<GradientOp>(GradientOp::Kind::Undefined), {x}); }
Var grad_clip(const Var& x, double lower, double upper) {
  return apply1(std::make_shared<GradientOp>(GradientOp::Kind::Clip, lower, upper), {x});
}
Var grad_scale(const Var& x, double multiplier) {
  return apply1(std::make_shared<GradientOp>(GradientOp::Kind::Scale, multiplier), {x});
}

namespace {

// A finite number prop (PyTensor keeps them as Python numbers).
double number_prop(PropReader& props, const std::string& key) {
  const Json& v = props.raw(key);
  if (!v.is_number() || !std::isfinite(v.get<double>())) props.fail(key, "must be a finite number, not " + v.dump());
  return v.get<double>();
}

OpPtr plain(PropReader& props, GradientOp::Kind kind) {
  props.finish();
  return std::make_shared<GradientOp>(kind);
}

}  // namespace

OpPtr zero_grad_from_props(PropReader& props, const std::vector<TensorType>&) {
  return plain(props, GradientOp::Kind::Zero);
}
OpPtr disconnected_grad_from_props(PropReader& props, const std::vector<TensorType>&) {
  return plain(props, GradientOp::Kind::Disconnected);
}
OpPtr undefined_grad_from_props(PropReader& props, const std::vector<TensorType>&) {
  return plain(props, GradientOp::Kind::Undefined);
}
OpPtr grad_clip_from_props(PropReader& props, const std::vector<TensorType>&) {
  const double lo = number_prop(props, "clip_lower_bound"), hi = number_prop(props, "clip_upper_bound");
  props.finish();
  if (!(hi >= lo)) props.fail("clip_upper_bound", "should be >= clip_lower_bound");
  return std::make_shared<GradientOp>(GradientOp::Kind::Clip, lo, hi);
}
OpPtr grad_scale_from_props(PropReader& props, const std::vector<TensorType>&) {
  const double m = number_prop(props, "multiplier");
  props.finish();
  return std::make_shared<GradientOp>(GradientOp::Kind::Scale, m);
}

}  // namespace kiln
