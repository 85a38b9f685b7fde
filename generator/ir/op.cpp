#include "ir/op.h"

#include <functional>

#include "ir/error.h"

namespace kiln {

std::string prop_repr(const Json& v) {
  if (v.is_null()) return "None";
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_string()) return "'" + v.get<std::string>() + "'";
  if (v.is_array()) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + prop_repr(v[i]);
    return s + "]";
  }
  return v.dump();
}

std::string Op::str() const {
  Json p = props();
  if (p.empty()) return std::string(name());
  std::string s = std::string(name()) + "{";
  bool first = true;
  for (auto it = p.begin(); it != p.end(); ++it) {
    s += (first ? "" : ", ") + it.key() + "=" + prop_repr(it.value());
    first = false;
  }
  return s + "}";
}

const std::string& Op::key() const {
  if (key_.empty()) key_ = std::string(name()) + props().dump() + structure_key();
  return key_;
}

std::size_t Op::hash() const { return std::hash<std::string>()(key()); }

std::vector<ShapeVars> Op::infer_shape(const Apply& /*node*/, const std::vector<ShapeVars>& /*input_shapes*/) const {
  return {};
}

std::optional<VarList> Op::vectorize(const Apply& /*node*/, const VarList& /*batched_inputs*/) const {
  return std::nullopt;
}

std::vector<GradTerm> Op::pullback(const Apply& node, const VarList& /*output_grads*/) const {
  return std::vector<GradTerm>(static_cast<std::size_t>(node.num_inputs()),
                               GradTerm::not_implemented(str() + " has no pullback"));
}

std::vector<GradTerm> Op::pushforward(const Apply& node, const VarList& /*input_tangents*/) const {
  return std::vector<GradTerm>(static_cast<std::size_t>(node.num_outputs()),
                               GradTerm::not_implemented(str() + " has no pushforward"));
}

void type_error(const Op& op, const std::string& msg) { throw UserError(op.str() + ": " + msg); }

ApplyPtr make_node(OpPtr op, VarList inputs) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) throw UserError(op->str() + ": input " + std::to_string(i) + " is null");
    const TypeKind kind = inputs[i]->type().kind;
    if (!op->accepts_kind(static_cast<int>(i), kind))
      throw UserError(op->str() + ": input " + std::to_string(i) + " (" + inputs[i]->label() + ") is " +
                      (kind == TypeKind::Rng ? "an rng" : kind == TypeKind::None ? "a none" : "a tensor") + " (" +
                      inputs[i]->type().str() + ")" + (kind == TypeKind::Tensor ? ", which it does not take" : ", not a tensor"));
  }
  std::vector<TensorType> types = op->infer_types(inputs);
  if (!op->accepts_complex()) {
    for (std::size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i]->type().kind == TypeKind::Tensor && is_complex(inputs[i]->dtype()))
        throw NotImplementedError(op->str() + ": input " + std::to_string(i) + " (" + inputs[i]->label() + ") is " +
                                  std::string(dtype_name(inputs[i]->dtype())) +
                                  "; this op does not compute on complex numbers in kiln yet");
    for (const TensorType& t : types)
      if (t.kind == TypeKind::Tensor && is_complex(t.dtype))
        throw NotImplementedError(op->str() + ": a " + std::string(dtype_name(t.dtype)) +
                                  " output; this op does not compute on complex numbers in kiln yet");
  }
  return Apply::create(std::move(op), std::move(inputs), types);
}

Var apply1(OpPtr op, VarList inputs) {
  ApplyPtr node = make_node(std::move(op), std::move(inputs));
  KILN_INTERNAL_ASSERT(node->num_outputs() == 1, "apply1 on a multi-output op");
  return node->output(0);
}

}  // namespace kiln
