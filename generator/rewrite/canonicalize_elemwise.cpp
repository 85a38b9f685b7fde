// canonicalize, elementwise algebra: add/mul chains flattened, their constants folded, neutral
// elements dropped and inputs put in a canonical order (so a+b and b+a merge); double
// negation; neg/sub normal forms; x - x; identities that do nothing.
#include <algorithm>

#include "ops/math.h"
#include "eval/evaluator.h"
#include "ops/array_util.h"
#include "ops/scalar/scalar_eval.h"
#include "rewrite/database.h"
#include "rewrite/pattern.h"
#include "rewrite/rule_helpers.h"

namespace kiln {

namespace {

using namespace pat;
using Id = ScalarOpId;


// Constant inputs of an add/mul folded into one constant, computed like the node would.
Var fold_constants(Id id, const VarList& constants) {
  std::vector<Array> values;
  std::vector<Shape> shapes;
  for (const auto& c : constants) {
    values.push_back(c->value());
    shapes.push_back(c->value().shape());
  }
  Shape shape = broadcast_shapes(shapes);
  std::vector<Array> args;
  for (const auto& v : values) args.push_back(broadcast_to(v, shape));
  return make_constant(eval_scalar_op(ScalarOp(id), args, shape)[0]);
}

// add/mul: flatten same-dtype nested chains with no other user, fold constants, drop the
// neutral element, order inputs canonically. Fires only when the input list changes.
NodeRewrite commutative_chain_rule(Id id, double neutral) {
  NodeRewrite r;
  r.name = id == Id::Add ? "add_canonical" : "mul_canonical";
  r.tags = kCanonicalizeTags;
  r.op_name = "Elemwise";
  r.scalar = id;
  r.apply = [id, neutral](const FunctionGraph& fg, const Apply& node) -> std::optional<VarList> {
    const Variable& out = *node.output_ptr(0);
    VarList flat;
    bool flattened = false;
    for (const auto& in : node.inputs()) {
      if (is_elemwise(in, id) && in->dtype() == out.dtype() && client_count(fg, in) == 1) {
        for (const auto& inner : in->owner()->inputs()) flat.push_back(inner);
        flattened = true;
      } else {
        flat.push_back(in);
      }
    }
    VarList constants, others;
    for (const auto& v : flat) (v->is_constant() ? constants : others).push_back(v);
    bool folded = false;
    if (constants.size() > 1) {
      // Folding may only happen where it keeps the computation dtype (upcast is associative;
      // the folded constant gets the constants' upcast).
      constants = {fold_constants(id, constants)};
      folded = true;
    }
    bool dropped = false;
    if (constants.size() == 1 && !others.empty() && pat::is_constant_value(constants[0], neutral)) {
      // Dropping the neutral constant must not change the dtype or the broadcast shape.
      std::vector<DType> dts;
      std::vector<TensorType> types;
      for (const auto& o : others) {
        dts.push_back(o->dtype());
        types.push_back(o->type());
      }
      Shape static_shape = broadcast_static_shapes(types);
      if (upcast(dts) == out.dtype() && TensorType(out.dtype(), static_shape).at_least_as_specific_as(out.type()) &&
          TensorType(out.dtype(), static_shape) == TensorType(out.dtype(), static_shape).merged_with(out.type())) {
        constants.clear();
        dropped = true;
      }
    }
    std::stable_sort(others.begin(), others.end(),
                     [&](const Var& a, const Var& b) { return order_key(fg, a) < order_key(fg, b); });
    VarList ordered = constants;
    ordered.insert(ordered.end(), others.begin(), others.end());
    bool reordered = ordered.size() == static_cast<std::size_t>(node.num_inputs()) &&
                     !std::equal(ordered.begin(), ordered.end(), node.inputs().begin());
    if (!flattened && !folded && !dropped && !reordered) return std::nullopt;
    if (ordered.size() == 1) return VarList{match_dtype(ordered[0], out)};
    return VarList{elemwise1(ScalarOp(id), ordered)};
  };
  return r;
}

}  // namespace

std::vector<NodeRewrite> canonicalize_elemwise_rules() {
  std::vector<NodeRewrite> rules;
  rules.push_back(commutative_chain_rule(Id::Add, 0.0));
  rules.push_back(commutative_chain_rule(Id::Mul, 1.0));

  rules.push_back(pattern_rule("neg_neg", kCanonicalizeTags, elemwise(Id::Neg, {elemwise(Id::Neg, {var("x")})}),
                               [](const Match& m) { return m["x"]; }));
  rules.push_back(pattern_rule("sub_neg_to_add", kCanonicalizeTags, elemwise(Id::Sub, {var("a"), elemwise(Id::Neg, {var("b")})}),
                               [](const Match& m) { return add(m["a"], m["b"]); }));
  rules.push_back(pattern_rule("add_neg_to_sub", kCanonicalizeTags, commutative(Id::Add, var("a"), elemwise(Id::Neg, {var("b")})),
                               [](const Match& m) { return sub(m["a"], m["b"]); }));
  rules.push_back(pattern_rule(
      "sub_self_to_zeros", kCanonicalizeTags, elemwise(Id::Sub, {var("x"), var("x")}),
      [](const Match& m) { return second(m["x"], broadcastable_constant(0, *m["x"])); }));
  rules.push_back(pattern_rule("sub_zero", kCanonicalizeTags, elemwise(Id::Sub, {var("x"), value(0)}),
                               [](const Match& m) { return match_dtype(m["x"], *m.root->output_ptr(0)); }));
  rules.push_back(pattern_rule("zero_sub", kCanonicalizeTags, elemwise(Id::Sub, {value(0), var("x")}),
                               [](const Match& m) { return match_dtype(neg(m["x"]), *m.root->output_ptr(0)); }));
  rules.push_back(pattern_rule("div_one", kCanonicalizeTags, elemwise(Id::TrueDiv, {var("x"), value(1)}),
                               [](const Match& m) { return match_dtype(m["x"], *m.root->output_ptr(0)); }));
  rules.push_back(pattern_rule("int_div_one", kCanonicalizeTags,
                               where(elemwise(Id::IntDiv, {var("x"), value(1)}),
                                     [](const Var& v) { return is_discrete(v->dtype()); }),
                               [](const Match& m) { return match_dtype(m["x"], *m.root->output_ptr(0)); }));
  rules.push_back(pattern_rule("identity", kCanonicalizeTags, elemwise(Id::Identity, {var("x")}),
                               [](const Match& m) { return m["x"]; }));
  rules.push_back(pattern_rule("cast_same_dtype", kCanonicalizeTags,
                               where(node("Elemwise", {var("x")},
                                          [](const Apply& n) {
                                            const Elemwise* e = elemwise_op(&n);
                                            return e->scalar_op().id() == Id::Cast &&
                                                   e->scalar_op().cast_dtype() == n.input(0)->dtype();
                                          }),
                                     [](const Var&) { return true; }),
                               [](const Match& m) { return m["x"]; }));
  // second(a, b) is b broadcast to a's shape: when b already has the output's shape, it is b.
  rules.push_back(pattern_rule("second_unneeded", kCanonicalizeTags, elemwise(Id::Second, {var("a"), var("b")}),
                               [](const Match& m) { return m["b"]; },
                               [](const Match& m) { return m["b"]->type() == m.root->output_ptr(0)->type(); }));
  // switch with a constant condition is one of its branches.
  rules.push_back(pattern_rule(
      "switch_constant_condition", kCanonicalizeTags, elemwise(Id::Switch, {constant("c"), var("a"), var("b")}),
      [](const Match& m) -> Var {
        const Array& c = m["c"]->value();
        bool all_true = true, all_false = true;
        c.for_each_index([&](const std::int64_t* idx) {
          bool t = element_as_double(c, idx) != 0;
          all_true = all_true && t;
          all_false = all_false && !t;
        });
        if (!all_true && !all_false) return nullptr;
        const Variable& out = *m.root->output_ptr(0);
        Var chosen = match_dtype(all_true ? m["a"] : m["b"], out);
        Var other = all_true ? m["b"] : m["a"];
        // The condition and the other branch still decide the broadcast shape: second() keeps
        // it (and second_unneeded removes it where it is not needed).
        return second(m["c"], second(other, chosen));
      }));
  return rules;
}

}  // namespace kiln
