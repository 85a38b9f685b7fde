#include "ir/node.h"

#include "ir/error.h"
#include "ir/op.h"

namespace kiln {

Var make_input(TensorType type, std::string name) {
  Var v(std::shared_ptr<Variable>(new Variable(std::move(type))));
  v->name_ = std::move(name);
  return v;
}

namespace {
// The type of a constant holding `value`: the value's exact shape, or the kind's carrier type.
TensorType constant_type(const Array& value, TypeKind kind) {
  if (kind == TypeKind::Tensor) return TensorType(value.dtype(), value.shape());
  TensorType t = kind == TypeKind::Rng ? rng_type() : none_type();
  KILN_INTERNAL_ASSERT(t.accepts(value), "a " + std::string(type_kind_name(kind)) +
                                             " constant needs a " + TensorType(t.dtype, t.shape).str() +
                                             " carrier");
  return t;
}
}  // namespace

Var make_constant(Array value, std::string name, TypeKind kind) {
  Var v(std::shared_ptr<Variable>(new Variable(constant_type(value, kind))));
  v->name_ = std::move(name);
  // Always a private copy: a caller keeping the Array must not be able to change a constant.
  v->value_ = std::make_shared<const Array>(value.copy());
  return v;
}

Var make_constant_shared(std::shared_ptr<const Array> value, std::string name, TypeKind kind) {
  KILN_INTERNAL_ASSERT(value && value->is_c_contiguous(), "shared constant must be contiguous");
  Var v(std::shared_ptr<Variable>(new Variable(constant_type(*value, kind))));
  v->name_ = std::move(name);
  v->value_ = std::move(value);
  return v;
}

Var none_constant() { return make_constant(Array::empty(DType::Bool, {0}), {}, TypeKind::None); }

void Variable::refine_type(const TensorType& t) {
  KILN_INTERNAL_ASSERT(t.compatible_with(type_), "refine_type with an incompatible type");
  type_ = type_.merged_with(t);
}

std::string Variable::label() const {
  std::string s;
  if (!name_.empty()) s = "\"" + name_ + "\"";
  if (!file_id_.empty() && file_id_ != name_) s += (s.empty() ? "" : " ") + ("(id " + file_id_ + ")");
  if (s.empty()) {
    if (owner_) return "output " + std::to_string(index_) + " of " + owner_->label();
    s = is_constant() ? "constant" : "unnamed input";
  }
  return s;
}

std::shared_ptr<Apply> Apply::create(OpPtr op, VarList inputs,
                                     const std::vector<TensorType>& output_types) {
  std::shared_ptr<Apply> node(new Apply());
  node->op_ = std::move(op);
  node->inputs_ = std::move(inputs);
  node->origins_ = OriginScope::current();
  for (std::size_t i = 0; i < output_types.size(); ++i) {
    std::unique_ptr<Variable> v(new Variable(output_types[i]));
    v->owner_ = node.get();
    v->index_ = static_cast<int>(i);
    node->outputs_.push_back(std::move(v));
  }
  return node;
}

Var Apply::output(int i) const {
  return Var(std::shared_ptr<Variable>(std::const_pointer_cast<Apply>(shared_from_this()),
                                       outputs_.at(static_cast<std::size_t>(i)).get()));
}

VarList Apply::outputs() const {
  VarList out;
  for (int i = 0; i < num_outputs(); ++i) out.push_back(output(i));
  return out;
}

std::string Apply::label() const {
  std::string s = "node " + op_->str();
  std::string names;
  for (const auto& o : outputs_) {
    std::string n = !o->file_id().empty() ? o->file_id() : o->name();
    if (n.empty()) continue;
    names += (names.empty() ? "" : ", ") + ("\"" + n + "\"");
  }
  if (!names.empty()) s += " -> " + names;
  if (origins_) s += " (from " + origins_str(origins_) + ")";
  return s;
}

}  // namespace kiln
