#include "rewrite/rule_helpers.h"

#include <functional>

#include "ops/array_util.h"
#include "ops/constant.h"

namespace kiln {

const Elemwise* elemwise_op(const Apply* node) {
  if (!node || node->op().name() != "Elemwise") return nullptr;
  return static_cast<const Elemwise*>(&node->op());
}

bool is_elemwise(const Var& v, ScalarOpId id) {
  const Elemwise* op = elemwise_op(v->owner());
  return op && op->scalar_op().id() == id;
}

Var cast_to(const Var& v, DType dtype) {
  return v->dtype() == dtype ? v : elemwise1(ScalarOp::cast(dtype), {v});
}

Var match_dtype(const Var& v, const Variable& like) { return cast_to(v, like.dtype()); }

Var broadcastable_constant(double value, const Variable& like) {
  Array a = make_scalar_array(like.dtype(), value);
  Shape ones(static_cast<std::size_t>(like.ndim()), 1);
  return make_constant(a.view(ones, Shape(ones.size(), 0)).copy());
}

std::string order_key(const FunctionGraph& fg, const Var& v, int depth) {
  if (v->is_input()) {
    for (std::size_t i = 0; i < fg.inputs().size(); ++i)
      if (fg.inputs()[i] == v) return "0:" + std::to_string(1000000 + i);
    return "0:?";
  }
  if (v->is_constant()) {
    const Array& a = v->value();
    std::string bytes(static_cast<const char*>(a.data()), a.nbytes());
    return "1:" + std::string(dtype_name(a.dtype())) + shape_str(a.shape()) + std::to_string(std::hash<std::string>()(bytes));
  }
  const Apply* node = v->owner();
  std::string key = "2:" + node->op().key() + ":" + std::to_string(v->index());
  if (depth > 0) {
    key += "(";
    for (const auto& in : node->inputs()) key += order_key(fg, in, depth - 1) + ",";
    key += ")";
  }
  return key;
}

std::size_t client_count(const FunctionGraph& fg, const Var& v) { return fg.clients(v.get()).size(); }

NodeRewrite real_numbers_only(NodeRewrite rule) {
  rule.apply = [apply = std::move(rule.apply)](const FunctionGraph& fg, const Apply& node) -> std::optional<VarList> {
    for (const Var& v : node.inputs())
      if (v->type().is_tensor() && is_complex(v->dtype())) return std::nullopt;
    for (int i = 0; i < node.num_outputs(); ++i)
      if (node.output_ptr(i)->type().is_tensor() && is_complex(node.output_ptr(i)->dtype())) return std::nullopt;
    return apply(fg, node);
  };
  return rule;
}

}  // namespace kiln
