// stabilize: numerically safer forms of common expressions (PyTensor's stabilize rewrites):
// log(1+x) -> log1p(x), exp(x)-1 -> expm1(x), log(1+exp(x)) -> softplus(x),
// log(sigmoid(x)) -> -softplus(-x), log(1-sigmoid(x)) -> -softplus(x), 1-sigmoid(x) ->
// sigmoid(-x), log(1-exp(x)) -> log1mexp(x), log(exp(x)) -> x, sqrt(sqr(x)) -> |x|,
// log(softmax(x)) -> log_softmax(x), log(sum(exp(x))) -> max-shifted logsumexp.
//
// Where the original computed in a wider dtype than x (log(1 + x) with a float64 1 and a
// float32 x), x is cast to that dtype first, so no rewrite changes a result's dtype.
#include "ops/math.h"
#include "ops/dimshuffle.h"
#include "ops/reduce.h"
#include "ops/softmax.h"
#include "rewrite/database.h"
#include "rewrite/rule_helpers.h"

namespace kiln {

namespace {

using namespace pat;
using Id = ScalarOpId;

const std::vector<std::string> kStab = {"stabilize"};

// The dtype the matched inner node (capture "inner") computed in, applied to x.
Var as_inner(const Match& m, const std::string& x = "x") { return cast_to(m[x], m["inner"]->dtype()); }

Pattern captured(Pattern p, const std::string& name) {
  p.capture_ = name;
  return p;
}

// log(sum(exp(x), axes)) -> m + log(sum(exp(x - m'), axes)), m = max(x, axes) (0 where it is
// infinite), m' the same with the reduced axes kept as length 1.
Var logsumexp(const Var& x, const CAReduce& sum_op) {
  std::vector<int> axes = reduced_axes_list(sum_op.axis(), x->ndim());
  Var m = max(x, axes);
  Var safe = switch_(isinf(m), cast_to(autocast_int_constant(0), m->dtype()), m);
  std::vector<int> order;
  int next = 0;
  for (int d = 0; d < x->ndim(); ++d)
    order.push_back(std::find(axes.begin(), axes.end(), d) != axes.end() ? DimShuffle::kNewAxis : next++);
  Var kept = dimshuffle(safe, order);
  Var s = sum(exp(x - kept), axes, sum_op.dtype(), sum_op.acc_dtype());
  return log(s) + safe;
}

// x - m' as logsumexp() writes it (m' a DimShuffle of the switch around max): already shifted.
// Without this guard the rule matches its own result and nests itself up to the driver's cap.
bool is_max_shifted(const Var& x) {
  if (!is_elemwise(x, Id::Sub)) return false;
  const Apply* shift = x->owner()->input(1)->owner();
  return shift && shift->op().name() == "DimShuffle" && is_elemwise(shift->input(0), Id::Switch);
}

}  // namespace

std::vector<NodeRewrite> stabilize_rules() {
  std::vector<NodeRewrite> rules;
  rules.push_back(pattern_rule("log1p", kStab,
                               elemwise(Id::Log, {captured(commutative(Id::Add, value(1), var("x")), "inner")}),
                               [](const Match& m) { return log1p(as_inner(m)); }));
  rules.push_back(pattern_rule("expm1", kStab,
                               elemwise(Id::Sub, {captured(elemwise(Id::Exp, {var("x")}), "inner"), value(1)}),
                               [](const Match& m) { return expm1(m["x"]); }));
  rules.push_back(pattern_rule("expm1_add", kStab,
                               commutative(Id::Add, captured(elemwise(Id::Exp, {var("x")}), "inner"), value(-1)),
                               [](const Match& m) { return expm1(m["x"]); }));
  rules.push_back(pattern_rule("softplus", kStab, elemwise(Id::Log1p, {captured(elemwise(Id::Exp, {var("x")}), "inner")}),
                               [](const Match& m) { return softplus(m["x"]); }));
  rules.push_back(pattern_rule("log_sigmoid", kStab,
                               elemwise(Id::Log, {captured(elemwise(Id::Sigmoid, {var("x")}), "inner")}),
                               [](const Match& m) { return neg(softplus(neg(m["x"]))); }));
  rules.push_back(pattern_rule(
      "one_minus_sigmoid", kStab, elemwise(Id::Sub, {value(1), captured(elemwise(Id::Sigmoid, {var("x")}), "inner")}),
      [](const Match& m) { return sigmoid(neg(m["x"])); }));
  rules.push_back(pattern_rule("log1p_neg_sigmoid", kStab,
                               elemwise(Id::Log1p, {elemwise(Id::Neg, {captured(elemwise(Id::Sigmoid, {var("x")}), "inner")})}),
                               [](const Match& m) { return neg(softplus(m["x"])); }));
  rules.push_back(pattern_rule("log1mexp", kStab,
                               elemwise(Id::Log, {elemwise(Id::Sub, {value(1), captured(elemwise(Id::Exp, {var("x")}), "inner")})}),
                               [](const Match& m) { return log1mexp(m["x"]); }));
  rules.push_back(pattern_rule("log1p_neg_exp", kStab,
                               elemwise(Id::Log1p, {elemwise(Id::Neg, {captured(elemwise(Id::Exp, {var("x")}), "inner")})}),
                               [](const Match& m) { return log1mexp(m["x"]); }));
  rules.push_back(pattern_rule("log_exp", kStab, elemwise(Id::Log, {captured(elemwise(Id::Exp, {var("x")}), "inner")}),
                               [](const Match& m) { return m["x"]; },
                               [](const Match& m) { return is_float(m["x"]->dtype()); }));
  rules.push_back(pattern_rule("sqrt_sqr", kStab, elemwise(Id::Sqrt, {captured(elemwise(Id::Sqr, {var("x")}), "inner")}),
                               [](const Match& m) { return abs(m["x"]); },
                               [](const Match& m) { return is_float(m["x"]->dtype()); }));
  rules.push_back(pattern_rule("log_softmax", kStab, elemwise(Id::Log, {node("Softmax", {var("x")})}),
                               [](const Match& m) {
                                 const auto& op = static_cast<const Softmax&>(m.root->input(0)->owner()->op());
                                 return log_softmax(m["x"], op.axis());
                               }));
  rules.push_back(pattern_rule(
      "logsumexp", kStab,
      elemwise(Id::Log, {node("Sum", {elemwise(Id::Exp, {var("x")})})}),
      [](const Match& m) {
        const auto& op = static_cast<const CAReduce&>(m.root->input(0)->owner()->op());
        return logsumexp(m["x"], op);
      },
      [](const Match& m) { return is_float(m["x"]->dtype()) && !is_max_shifted(m["x"]); }));
  // Identities of real numbers: NumPy's complex log1p and expm1 are other formulas (less
  // accurate near 0), log(exp(z)) is not z, sqrt(sqr(z)) not |z|.
  for (NodeRewrite& rule : rules) rule = real_numbers_only(std::move(rule));
  return rules;
}

}  // namespace kiln
