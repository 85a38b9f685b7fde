// One rule per scalar op: the partial derivatives written with the numpy-like API. Constants
// that are not exact in float32 take the output's dtype (const_like) so that float32 graphs
// keep float32 gradients; small integers are exact in every float dtype.
#include "ops/scalar/scalar_grad.h"

#include <cmath>

#include "ops/math.h"
#include "ops/grad_util.h"
#include "ir/error.h"
#include "ops/scalar/special_functions.h"

namespace kiln {

namespace {

using Id = ScalarOpId;
constexpr double kLn2 = 0.69314718055994530942;
constexpr double kLn10 = 2.30258509299404568402;
constexpr double kTwoOverSqrtPi = 1.12837916709551257390;
constexpr double kSqrtPiOverTwo = 0.88622692545275801365;

GradTerm val(const Var& v) { return GradTerm::of(v); }

// The derivative of a unary op at x, given its output z; c(v) is a constant of z's dtype.
Var unary_partial(Id id, const Var& x, const Var& z) {
  auto c = [&](double v) { return const_like(z, v); };
  switch (id) {
    case Id::Neg: return c(-1);
    case Id::Abs: return sgn(x);
    case Id::Exp: return z;
    case Id::Exp2: return z * c(kLn2);
    case Id::Expm1: return z + 1;
    case Id::Log: return 1 / x;
    case Id::Log2: return 1 / (x * c(kLn2));
    case Id::Log10: return 1 / (x * c(kLn10));
    case Id::Log1p: return 1 / (1 + x);
    case Id::Sqrt: return c(0.5) / z;
    case Id::Sqr: return 2 * x;
    case Id::Reciprocal: return -sqr(z);
    case Id::Sin: return cos(x);
    case Id::Cos: return -sin(x);
    case Id::Tan: return 1 + sqr(z);
    case Id::Arcsin: return 1 / sqrt(1 - sqr(x));
    case Id::Arccos: return -1 / sqrt(1 - sqr(x));
    case Id::Arctan: return 1 / (1 + sqr(x));
    case Id::Sinh: return cosh(x);
    case Id::Cosh: return sinh(x);
    case Id::Tanh: return 1 - sqr(z);
    case Id::Arcsinh: return 1 / sqrt(sqr(x) + 1);
    case Id::Arccosh: return 1 / sqrt(sqr(x) - 1);
    case Id::Arctanh: return 1 / (1 - sqr(x));
    case Id::Sigmoid: return z * (1 - z);
    case Id::Softplus: return sigmoid(x);
    case Id::Log1mexp: return -1 / expm1(-x);  // d log(1 - e^x) = -e^x / (1 - e^x)
    case Id::Erf: return c(kTwoOverSqrtPi) * exp(-sqr(x));
    case Id::Erfc: return c(-kTwoOverSqrtPi) * exp(-sqr(x));
    case Id::Erfcx: return 2 * x * z - c(kTwoOverSqrtPi);
    case Id::Erfinv: return c(kSqrtPiOverTwo) * exp(sqr(z));
    case Id::Gamma: return z * psi(x);
    case Id::Gammaln: return psi(x);
    case Id::Psi: return tri_gamma(x);
    case Id::Identity: return c(1);
    case Id::Cast: return c(1);
    default: break;
  }
  throw InternalError("no unary derivative rule for " + std::string(scalar_op_info(id).print_name));
}

bool is_unary_rule(Id id) {
  switch (id) {
    case Id::Neg: case Id::Abs: case Id::Exp: case Id::Exp2: case Id::Expm1: case Id::Log:
    case Id::Log2: case Id::Log10: case Id::Log1p: case Id::Sqrt: case Id::Sqr:
    case Id::Reciprocal: case Id::Sin: case Id::Cos: case Id::Tan: case Id::Arcsin:
    case Id::Arccos: case Id::Arctan: case Id::Sinh: case Id::Cosh: case Id::Tanh:
    case Id::Arcsinh: case Id::Arccosh: case Id::Arctanh: case Id::Sigmoid: case Id::Softplus:
    case Id::Log1mexp: case Id::Erf: case Id::Erfc: case Id::Erfcx: case Id::Erfinv:
    case Id::Gamma: case Id::Gammaln: case Id::Psi: case Id::Identity: case Id::Cast:
      return true;
    default:
      return false;
  }
}

// Ops whose output is piecewise constant in a float input: a zero gradient (as PyTensor).
bool is_piecewise_constant(Id id) {
  switch (id) {
    case Id::Sgn: case Id::Floor: case Id::Ceil: case Id::Trunc: case Id::RoundHalfToEven:
    case Id::RoundHalfAwayFromZero: case Id::IntDiv:
      return true;
    default:
      return false;
  }
}

// Predicates and bit operations: a cotangent arriving at their (discrete) output means someone
// differentiates through a comparison, which has no gradient.
bool is_not_differentiable(Id id) {
  switch (id) {
    case Id::Eq: case Id::Neq: case Id::Lt: case Id::Le: case Id::Gt: case Id::Ge:
    case Id::IsNan: case Id::IsInf: case Id::Invert: case Id::And: case Id::Or: case Id::Xor:
      return true;
    default:
      return false;
  }
}

std::vector<GradTerm> nary_partials(Id id, const VarList& in, const Var& z) {
  auto c = [&](double v) { return const_like(z, v); };
  const std::size_t n = in.size();
  switch (id) {
    case Id::Add:
      return repeat_term(n, val(c(1)));
    case Id::Sub:
      return {val(c(1)), val(c(-1))};
    case Id::Mul: {
      std::vector<GradTerm> out;
      for (std::size_t i = 0; i < n; ++i) {
        VarList others;
        for (std::size_t k = 0; k < n; ++k)
          if (k != i) others.push_back(in[k]);
        out.push_back(val(others.size() == 1 ? others[0] : elemwise1(ScalarOp(Id::Mul), others)));
      }
      return out;
    }
    case Id::TrueDiv:
      return {val(1 / in[1]), val(-z / in[1])};
    case Id::Mod:  // x - floor(x / y) * y
      return {val(c(1)), val(-int_div(in[0], in[1]))};
    case Id::Pow:
      return {val(in[1] * pow(in[0], in[1] - 1)), val(log(in[0]) * z)};
    case Id::Maximum:
    case Id::Minimum:
      // Ties send the gradient to both inputs, as PyTensor does.
      return {val(eq(z, in[0])), val(eq(z, in[1]))};
    case Id::Arctan2: {  // arctan2(y, x)
      Var r2 = sqr(in[0]) + sqr(in[1]);
      return {val(in[1] / r2), val(-in[0] / r2)};
    }
    case Id::Second:
      return {GradTerm::disconnected(), val(c(1))};
    case Id::Switch:
      return {GradTerm::disconnected(), val(switch_(in[0], c(1), c(0))),
              val(switch_(in[0], c(0), c(1)))};
    case Id::Clip:  // PyTensor's x < lo ? lo : (x > hi ? hi : x): its pullback's gx and glo; ghi
                    // also needs x >= lo, which PyTensor omits (they differ only when lo > hi)
      return {val(bitwise_and(ge(in[0], in[1]), le(in[0], in[2]))), val(lt(in[0], in[1])),
              val(bitwise_and(ge(in[0], in[1]), gt(in[0], in[2])))};
    default:
      break;
  }
  throw InternalError("no derivative rule for " + std::string(scalar_op_info(id).print_name));
}

}  // namespace

std::vector<GradTerm> scalar_partials(const ScalarOp& op, const VarList& inputs, const Var& output) {
  const Id id = op.id();
  const std::size_t n = inputs.size();
  KILN_INTERNAL_ASSERT(id != Id::Composite, "scalar_partials of a Composite");
  if (id == Id::ScalarLoop)
    return repeat_term(n, GradTerm::not_implemented("the derivative of a ScalarLoop is not implemented in kiln (PyTensor "
                                                    "builds them inside gradients, where kiln writes its own ops)"));
  if (is_not_differentiable(id))
    return repeat_term(n, GradTerm::undefined(op.str() + " is not differentiable (its output is a "
                                              "truth value or a bit pattern)"));
  std::vector<GradTerm> terms;
  if (id == Id::TriGamma || is_special_function(id)) {
    terms = special_partials(id, inputs, output);
  } else if (is_piecewise_constant(id) || (id == Id::Cast && is_discrete(output->dtype()))) {
    terms = repeat_term(n, val(const_like(output, 0)));
  } else if (is_unary_rule(id)) {
    terms = {val(unary_partial(id, inputs[0], output))};
  } else {
    terms = nary_partials(id, inputs, output);
  }
  // Discrete inputs have no gradient of their own; a cast from one passes the cotangent on so
  // that the op that produced the discrete value decides (Argmax, comparisons: undefined).
  if (id != Id::Cast)
    for (std::size_t i = 0; i < n; ++i)
      if (is_discrete(inputs[i]->dtype())) terms[i] = GradTerm::disconnected();
  return terms;
}

}  // namespace kiln
