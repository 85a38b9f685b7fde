#include "rewrite/pattern.h"

#include "ir/error.h"
#include "ops/array_util.h"
#include "ops/elemwise.h"

namespace kiln::pat {

const Var& Match::operator[](const std::string& name) const {
  auto it = vars_.find(name);
  KILN_INTERNAL_ASSERT(it != vars_.end(), "pattern has no capture " + name);
  return it->second;
}

bool is_constant_value(const Var& v, double x) {
  if (!v->is_constant()) return false;
  const Array& a = v->value();
  bool all = true;
  a.for_each_index([&](const std::int64_t* idx) {
    if (all && element_as_complex(a, idx) != std::complex<double>(x, 0)) all = false;
  });
  return all;
}

std::optional<ScalarOpId> Pattern::scalar_op() const {
  if (kind_ == Kind::Elemwise) return scalar_;
  return std::nullopt;
}

bool Pattern::match(const Var& v, Match& m) const {
  if (var_guard_ && !var_guard_(v)) return false;
  switch (kind_) {
    case Kind::Any:
      break;
    case Kind::Constant:
      if (!v->is_constant()) return false;
      break;
    case Kind::Value:
      if (!is_constant_value(v, value_)) return false;
      break;
    case Kind::Elemwise: {
      Apply* node = v->owner();
      if (!node || node->op().name() != "Elemwise" || node->num_outputs() != 1) return false;
      const auto& op = static_cast<const Elemwise&>(node->op());
      if (op.scalar_op().id() != scalar_ || node->num_inputs() != static_cast<int>(args_.size())) return false;
      if (!commutative_) {
        for (std::size_t i = 0; i < args_.size(); ++i)
          if (!args_[i].match(node->input(static_cast<int>(i)), m)) return false;
        break;
      }
      Match saved = m;
      if (args_[0].match(node->input(0), m) && args_[1].match(node->input(1), m)) break;
      m = saved;
      if (!(args_[0].match(node->input(1), m) && args_[1].match(node->input(0), m))) return false;
      break;
    }
    case Kind::Node: {
      Apply* node = v->owner();
      if (!node || node->op().name() != op_name_ || v->index() != 0) return false;
      if (static_cast<int>(args_.size()) > node->num_inputs()) return false;
      if (node_guard_ && !node_guard_(*node)) return false;
      for (std::size_t i = 0; i < args_.size(); ++i)
        if (!args_[i].match(node->input(static_cast<int>(i)), m)) return false;
      break;
    }
  }
  if (!capture_.empty()) {
    auto it = m.vars_.find(capture_);
    if (it != m.vars_.end()) return it->second == v;
    m.vars_.emplace(capture_, v);
  }
  return true;
}

Pattern var(const std::string& name) {
  Pattern p;
  p.kind_ = Pattern::Kind::Any;
  p.capture_ = name;
  return p;
}

Pattern constant(const std::string& name) {
  Pattern p;
  p.kind_ = Pattern::Kind::Constant;
  p.capture_ = name;
  return p;
}

Pattern value(double v) {
  Pattern p;
  p.kind_ = Pattern::Kind::Value;
  p.value_ = v;
  return p;
}

Pattern elemwise(ScalarOpId id, std::vector<Pattern> args) {
  Pattern p;
  p.kind_ = Pattern::Kind::Elemwise;
  p.scalar_ = id;
  p.args_ = std::move(args);
  return p;
}

Pattern commutative(ScalarOpId id, Pattern a, Pattern b) {
  Pattern p = elemwise(id, {std::move(a), std::move(b)});
  p.commutative_ = true;
  return p;
}

Pattern node(const std::string& op_name, std::vector<Pattern> args, std::function<bool(const Apply&)> guard) {
  Pattern p;
  p.kind_ = Pattern::Kind::Node;
  p.op_name_ = op_name;
  p.args_ = std::move(args);
  p.node_guard_ = std::move(guard);
  return p;
}

Pattern where(Pattern p, std::function<bool(const Var&)> pred) {
  if (p.var_guard_) {
    auto first = p.var_guard_;
    p.var_guard_ = [first, pred](const Var& v) { return first(v) && pred(v); };
  } else {
    p.var_guard_ = std::move(pred);
  }
  return p;
}

}  // namespace kiln::pat
