// specialize: cheaper forms of what canonicalize produced (PyTensor's specialize rewrites):
// pow(x, 2) -> sqr(x), pow(x, 3) -> x*sqr(x), pow(x, 0.5) -> sqrt(x), pow(x, -0.5) ->
// 1/sqrt(x), pow(x, -1) -> reciprocal(x), pow(x, 1) -> x, 1/x -> reciprocal(x), x*x -> sqr(x),
// -1*x -> -x, x / c -> x * (1/c) for a float constant c.
#include <cmath>

#include "ops/math.h"
#include "ops/array_util.h"
#include "rewrite/database.h"
#include "rewrite/rule_helpers.h"

namespace kiln {

namespace {

using namespace pat;
using Id = ScalarOpId;

const std::vector<std::string> kSpec = {"specialize"};

// x converted to the dtype the matched node computed in (its output dtype).
Var in_out_dtype(const Match& m, const std::string& name = "x") {
  return cast_to(m[name], m.root->output_ptr(0)->dtype());
}

bool float_output(const Match& m) { return is_float(m.root->output_ptr(0)->dtype()); }

NodeRewrite pow_rule(const std::string& name, double exponent, std::function<Var(const Var&)> build, bool floats_only) {
  return pattern_rule(name, kSpec, elemwise(Id::Pow, {var("x"), value(exponent)}),
                      [build](const Match& m) { return build(in_out_dtype(m)); },
                      [floats_only](const Match& m) { return !floats_only || float_output(m); });
}

}  // namespace

std::vector<NodeRewrite> specialize_rules() {
  std::vector<NodeRewrite> rules;
  rules.push_back(pow_rule("pow_2_to_sqr", 2, [](const Var& x) { return sqr(x); }, false));
  rules.push_back(pow_rule("pow_3", 3, [](const Var& x) { return x * sqr(x); }, false));
  rules.push_back(pow_rule("pow_1", 1, [](const Var& x) { return x; }, false));
  rules.push_back(pow_rule("pow_half_to_sqrt", 0.5, [](const Var& x) { return sqrt(x); }, true));
  rules.push_back(pow_rule("pow_minus_half", -0.5, [](const Var& x) { return reciprocal(sqrt(x)); }, true));
  rules.push_back(pow_rule("pow_minus_1_to_reciprocal", -1, [](const Var& x) { return reciprocal(x); }, true));
  rules.push_back(pattern_rule("one_over_x", kSpec, elemwise(Id::TrueDiv, {value(1), var("x")}),
                               [](const Match& m) { return reciprocal(in_out_dtype(m)); }, float_output));
  rules.push_back(pattern_rule("mul_self_to_sqr", kSpec, elemwise(Id::Mul, {var("x"), var("x")}),
                               [](const Match& m) { return sqr(m["x"]); }));
  // (-1+0j) * z is not -z: NumPy's product gives the imaginary part of -0 a + sign.
  rules.push_back(real_numbers_only(pattern_rule("mul_minus_one_to_neg", kSpec, commutative(Id::Mul, value(-1), var("x")),
                               [](const Match& m) { return neg(in_out_dtype(m)); },
                               [](const Match& m) { return !is_unsigned_int(m.root->output_ptr(0)->dtype()); })));
  // Division by a float constant becomes a multiplication by its reciprocal (computed once).
  rules.push_back(pattern_rule(
      "div_by_constant_to_mul", kSpec, elemwise(Id::TrueDiv, {var("x"), constant("c")}),
      [](const Match& m) -> Var {
        const Array& c = m["c"]->value();
        DType dt = m.root->output_ptr(0)->dtype();
        Array inv = Array::empty(dt, c.shape());
        bool ok = true;
        std::int64_t i = 0;
        c.for_each_index([&](const std::int64_t* idx) {
          double v = element_as_double(c, idx);
          if (v == 0 || !std::isfinite(v)) ok = false;
          if (dt == DType::Float32)
            inv.data<float>()[i++] = 1.0f / static_cast<float>(v);
          else
            inv.data<double>()[i++] = 1.0 / v;
        });
        if (!ok) return nullptr;
        return in_out_dtype(m) * make_constant(inv);
      },
      float_output));
  return rules;
}

}  // namespace kiln
