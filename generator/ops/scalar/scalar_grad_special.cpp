// The partial derivatives of the special scalar ops (special_functions.h), as PyTensor's
// pytensor/scalar/math.py has them, except that the parameter derivatives PyTensor sums in
// ScalarLoops (gammainc and gammaincc in k, betainc in a and b, hyp2f1 in a, b and c) are kiln's
// own scalar ops, computed by the values' algorithms on forward-mode Duals
// (runtime/include/kiln/runtime/special/*_grad.hpp).
#include "ops/special.h"
#include "ops/grad_util.h"
#include "ir/error.h"
#include "ops/scalar/scalar_grad.h"

namespace kiln {

namespace {

using Id = ScalarOpId;
constexpr double kSqrtPi = 1.77245385090551602730;
constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kSqrt2Pi = 2.50662827463100050242;
constexpr double kPi = 3.14159265358979323846;

GradTerm term(const Var& v) { return GradTerm::of(v); }

GradTerm no_order_gradient(const ScalarOpId id, const char* what) {
  return GradTerm::not_implemented("the derivative of " + std::string(scalar_op_info(id).name) + " with respect to " +
                                   what + " is not implemented (as in PyTensor)");
}

/// log B(a, b) = gammaln(a) + gammaln(b) - gammaln(a + b), as PyTensor's betaln.
Var betaln(const Var& a, const Var& b) { return gammaln(a) + gammaln(b) - gammaln(a + b); }

}  // namespace

std::vector<GradTerm> special_partials(ScalarOpId id, const VarList& in, const Var& z) {
  auto c = [&](double v) { return const_like(z, v); };
  switch (id) {
    case Id::TriGamma:
      return {term(polygamma(2, in[0]))};
    case Id::Erfcinv:
      return {term(c(-kSqrtPi / 2) * exp(sqr(z)))};
    case Id::NdtriExp:  // sqrt(2 pi) exp(x + z^2 / 2): exp(x) / pdf(z) without under/overflow
      return {term(c(kSqrt2Pi) * exp(in[0] + sqr(z) / 2))};
    case Id::I0:
      return {term(i1(in[0]))};
    case Id::I1:  // (I_0 + I_2) / 2, I_2 = ive(2, x) e^|x|
      return {term((i0(in[0]) + ive(2, in[0]) * exp(abs(in[0]))) / 2)};
    case Id::GammaInc:
    case Id::GammaIncC: {
      const Var& k = in[0];
      const Var& x = in[1];
      const Var dk = gammainc_grad_k(k, x);
      const Var dx = exp(-x + (k - 1) * log(x) - gammaln(k));
      if (id == Id::GammaInc) return {term(dk), term(dx)};
      return {term(-dk), term(-dx)};
    }
    case Id::GammaIncInv:
    case Id::GammaIncCInv: {
      const Var dx = exp(z) * gamma(in[0]) * pow(z, 1 - in[0]);
      return {no_order_gradient(id, "k"), term(id == Id::GammaIncInv ? dx : -dx)};
    }
    case Id::Ive: {
      const Var& v = in[0];
      const Var& x = in[1];
      const Var sign = switch_(x > 0, c(1), c(-1));
      return {no_order_gradient(id, "the order v"), term((ive(v - 1, x) - 2 * sign * z + ive(v + 1, x)) / 2)};
    }
    case Id::Kve:
      return {no_order_gradient(id, "the order v"), term((1 - in[0] / in[1]) * z - kve(in[0] - 1, in[1]))};
    case Id::Jv:
      return {no_order_gradient(id, "the order v"), term((jv(in[0] - 1, in[1]) - jv(in[0] + 1, in[1])) / 2)};
    case Id::OwensT: {
      const Var& h = in[0];
      const Var& a = in[1];
      return {term(-exp(-sqr(h) / 2) * erf(a * h / c(kSqrt2)) / c(2 * kSqrt2Pi)),
              term(exp(c(-0.5) * (sqr(a) + 1) * sqr(h)) / (c(2 * kPi) * (sqr(a) + 1)))};
    }
    case Id::PolyGamma:  // the order is discrete: disconnected by scalar_partials
      return {GradTerm::disconnected(), term(polygamma(in[0] + 1, in[1]))};
    case Id::BetaInc: {
      const Var &a = in[0], &b = in[1], &x = in[2];
      return {term(betainc_grad_a(a, b, x)), term(betainc_grad_b(a, b, x)),
              term(exp(log1p(-x) * (b - 1) + log(x) * (a - 1) - betaln(a, b)))};
    }
    case Id::BetaIncInv: {
      const Var &a = in[0], &b = in[1];
      return {no_order_gradient(id, "a"), no_order_gradient(id, "b"),
              term(exp(betaln(a, b)) * pow(1 - z, 1 - b) * pow(z, 1 - a))};
    }
    case Id::Hyp2F1: {
      const Var &a = in[0], &b = in[1], &cc = in[2], &x = in[3];
      return {term(hyp2f1_grad_a(a, b, cc, x)), term(hyp2f1_grad_a(b, a, cc, x)), term(hyp2f1_grad_c(a, b, cc, x)),
              term(a * b / cc * hyp2f1(a + 1, b + 1, cc + 1, x))};
    }
    case Id::GammaIncGradK:
    case Id::BetaIncGradA:
    case Id::BetaIncGradB:
    case Id::Hyp2F1GradA:
    case Id::Hyp2F1GradC:
      return repeat_term(in.size(), GradTerm::not_implemented(
                                        "second derivatives through " + std::string(scalar_op_info(id).name) +
                                        " (a parameter derivative of a special function) are not implemented"));
    default:
      break;
  }
  throw InternalError("no derivative rule for special function " + std::string(scalar_op_info(id).name));
}

}  // namespace kiln
