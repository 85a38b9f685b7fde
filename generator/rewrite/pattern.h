// Patterns for local rewrites, so a rule reads like the algebra it implements:
//
//   rule("log1p", {"stabilize"},
//        elemwise(Log, {commutative(Add, value(1), var("x"))}),
//        [](const Match& m) { return log1p(m["x"]); });
//
// A pattern matches a variable by what computes it. Captures bind variables by name; the same
// name twice must bind the same variable (`x - x`).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/fgraph.h"
#include "ops/scalar/scalar_op.h"

namespace kiln::pat {

/// The variables a successful match bound, and the matched root node.
class Match {
 public:
  const Var& operator[](const std::string& name) const;
  bool has(const std::string& name) const { return vars_.count(name) != 0; }
  Apply* root = nullptr;

 private:
  friend class Pattern;
  std::map<std::string, Var> vars_;
};

class Pattern {
 public:
  enum class Kind { Any, Constant, Value, Elemwise, Node };

  /// Tries to match `v`, adding to `m`'s bindings. On failure `m` may hold partial bindings.
  bool match(const Var& v, Match& m) const;

  Kind kind() const { return kind_; }
  /// For Elemwise roots: the scalar op; for Node roots: the op name.
  std::optional<ScalarOpId> scalar_op() const;
  const std::string& op_name() const { return op_name_; }

  // Construction (see the free functions below).
  Kind kind_ = Kind::Any;
  std::string capture_;
  double value_ = 0;
  ScalarOpId scalar_ = ScalarOpId::Identity;
  bool commutative_ = false;
  std::string op_name_;
  std::function<bool(const Apply&)> node_guard_;
  std::function<bool(const Var&)> var_guard_;
  std::vector<Pattern> args_;
};

/// Any variable, captured as `name` (empty: not captured).
Pattern var(const std::string& name);
/// Any constant, captured as `name` (empty: not captured).
Pattern constant(const std::string& name = "");
/// A constant whose every element equals `v` (any shape; NaN never matches).
Pattern value(double v);
/// An Elemwise output of scalar op `id` on exactly these inputs, in order.
Pattern elemwise(ScalarOpId id, std::vector<Pattern> args);
/// A two-input Elemwise of `id` on these inputs in either order (add, mul, maximum, ...).
Pattern commutative(ScalarOpId id, Pattern a, Pattern b);
/// Output 0 of a node of op `op_name` on these inputs (fewer patterns than inputs: the rest
/// are unconstrained); `guard` may inspect the node (its props).
Pattern node(const std::string& op_name, std::vector<Pattern> args,
             std::function<bool(const Apply&)> guard = {});
/// `p`, and `pred` holds for the matched variable.
Pattern where(Pattern p, std::function<bool(const Var&)> pred);

/// True when `v` is a constant all of whose elements equal `x`.
bool is_constant_value(const Var& v, double x);

}  // namespace kiln::pat
