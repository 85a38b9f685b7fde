#include "ops/scalar/special_functions.h"

#include "ir/error.h"
#include "kiln/runtime/special/bessel_ik.hpp"
#include "kiln/runtime/special/bessel_j.hpp"
#include "kiln/runtime/special/hyp2f1_grad.hpp"
#include "kiln/runtime/special/incomplete_beta_grad.hpp"
#include "kiln/runtime/special/incomplete_beta_inverse.hpp"
#include "kiln/runtime/special/incomplete_gamma_grad.hpp"
#include "kiln/runtime/special/incomplete_gamma_inverse.hpp"
#include "kiln/runtime/special/normal_inverse.hpp"
#include "kiln/runtime/special/owens_t.hpp"
#include "kiln/runtime/special/polygamma.hpp"

namespace kiln {

namespace {

namespace sf = kiln_special;
using Id = ScalarOpId;

template <typename C>
C special_unary(Id id, C x) {
  switch (id) {
    case Id::Erfcinv: return sf::erfcinv(x);
    case Id::NdtriExp: return sf::ndtri_exp(x);
    case Id::I0: return sf::i0(x);
    case Id::I1: return sf::i1(x);
    default: break;
  }
  throw InternalError("no unary special function " + std::string(scalar_op_info(id).name));
}

template <typename C>
C special_binary(Id id, C a, C b) {
  switch (id) {
    case Id::GammaInc: return sf::gammainc(a, b);
    case Id::GammaIncC: return sf::gammaincc(a, b);
    case Id::GammaIncInv: return sf::gammaincinv(a, b);
    case Id::GammaIncCInv: return sf::gammainccinv(a, b);
    case Id::Ive: return sf::ive(a, b);
    case Id::Kve: return sf::kve(a, b);
    case Id::Jv: return sf::jv(a, b);
    case Id::OwensT: return sf::owens_t(a, b);
    case Id::GammaIncGradK: return sf::gammainc_grad_k(a, b);
    default: break;
  }
  throw InternalError("no binary special function " + std::string(scalar_op_info(id).name));
}

template <typename C>
C special_ternary(Id id, C a, C b, C c) {
  switch (id) {
    case Id::BetaInc: return sf::betainc(a, b, c);
    case Id::BetaIncInv: return sf::betaincinv(a, b, c);
    case Id::BetaIncGradA: return sf::betainc_grad_a(a, b, c);
    case Id::BetaIncGradB: return sf::betainc_grad_b(a, b, c);
    default: break;
  }
  throw InternalError("no ternary special function " + std::string(scalar_op_info(id).name));
}

template <typename C>
C special_quaternary(Id id, C a, C b, C c, C d) {
  switch (id) {
    case Id::Hyp2F1: return sf::hyp2f1(a, b, c, d);
    case Id::Hyp2F1GradA: return sf::hyp2f1_grad_a(a, b, c, d);
    case Id::Hyp2F1GradC: return sf::hyp2f1_grad_c(a, b, c, d);
    default: break;
  }
  throw InternalError("no 4-input special function " + std::string(scalar_op_info(id).name));
}

template <typename C>
void eval_typed(Id id, const std::vector<Array>& a, Array& out) {
  C* o = out.data<C>();
  const std::int64_t n = out.size();
  if (id == Id::PolyGamma) {
    const std::int64_t* order = a[0].data<std::int64_t>();
    const C* x = a[1].data<C>();
    for (std::int64_t i = 0; i < n; ++i) o[i] = sf::polygamma(order[i], x[i]);
    return;
  }
  std::vector<const C*> in;
  for (const Array& arr : a) in.push_back(arr.data<C>());
  for (std::int64_t i = 0; i < n; ++i) {
    switch (in.size()) {
      case 1: o[i] = special_unary<C>(id, in[0][i]); break;
      case 2: o[i] = special_binary<C>(id, in[0][i], in[1][i]); break;
      case 3: o[i] = special_ternary<C>(id, in[0][i], in[1][i], in[2][i]); break;
      default: o[i] = special_quaternary<C>(id, in[0][i], in[1][i], in[2][i], in[3][i]); break;
    }
  }
}

}  // namespace

bool is_special_function(ScalarOpId id) {
  switch (id) {
    case Id::Erfcinv: case Id::NdtriExp: case Id::I0: case Id::I1: case Id::GammaInc:
    case Id::GammaIncC: case Id::GammaIncInv: case Id::GammaIncCInv: case Id::Ive: case Id::Kve:
    case Id::Jv: case Id::OwensT: case Id::PolyGamma: case Id::GammaIncGradK: case Id::BetaInc:
    case Id::BetaIncInv: case Id::BetaIncGradA: case Id::BetaIncGradB: case Id::Hyp2F1:
    case Id::Hyp2F1GradA: case Id::Hyp2F1GradC:
      return true;
    default:
      return false;
  }
}

Array eval_special_function(ScalarOpId id, const std::vector<Array>& operands, DType out, const Shape& shape) {
  Array result = Array::empty(out, shape);
  if (out == DType::Float32)
    eval_typed<float>(id, operands, result);
  else if (out == DType::Float64)
    eval_typed<double>(id, operands, result);
  else
    throw InternalError("special function " + std::string(scalar_op_info(id).name) + " with output " +
                        std::string(dtype_name(out)));
  return result;
}

}  // namespace kiln
