// The numpy-like API of scipy.special's functions (Elemwise nodes of kiln's special scalar ops,
// runtime/include/kiln/runtime/special/): erfcinv, ndtri_exp, i0, i1, gammainc, gammaincc,
// gammaincinv, gammainccinv, ive, kve, jv, owens_t, polygamma, betainc, betaincinv, hyp2f1, and
// the parameter derivatives the gradients of gammainc, betainc and hyp2f1 are built from.
// Arguments are Vars or number literals (as_var), in scipy's order.
#pragma once

#include "ops/math.h"

namespace kiln {

namespace detail {
template <typename... Args>
Var special(ScalarOpId id, const Args&... args) {
  return elemwise1(ScalarOp(id), {as_var(args)...});
}
}  // namespace detail

#define KILN_SPECIAL_FN(fn, Id)                              \
  template <typename... Args>                                \
  Var fn(const Args&... args) {                              \
    return detail::special(ScalarOpId::Id, args...);        \
  }
KILN_SPECIAL_FN(erfcinv, Erfcinv)
KILN_SPECIAL_FN(ndtri_exp, NdtriExp)
KILN_SPECIAL_FN(i0, I0)
KILN_SPECIAL_FN(i1, I1)
KILN_SPECIAL_FN(gammainc, GammaInc)
KILN_SPECIAL_FN(gammaincc, GammaIncC)
KILN_SPECIAL_FN(gammaincinv, GammaIncInv)
KILN_SPECIAL_FN(gammainccinv, GammaIncCInv)
KILN_SPECIAL_FN(ive, Ive)
KILN_SPECIAL_FN(kve, Kve)
KILN_SPECIAL_FN(jv, Jv)
KILN_SPECIAL_FN(owens_t, OwensT)
KILN_SPECIAL_FN(polygamma, PolyGamma)
KILN_SPECIAL_FN(betainc, BetaInc)
KILN_SPECIAL_FN(betaincinv, BetaIncInv)
KILN_SPECIAL_FN(hyp2f1, Hyp2F1)
/// d/dk gammainc(k, x) (kiln's own scalar op).
KILN_SPECIAL_FN(gammainc_grad_k, GammaIncGradK)
/// d/da, d/db betainc(a, b, x) (kiln's own scalar ops).
KILN_SPECIAL_FN(betainc_grad_a, BetaIncGradA)
KILN_SPECIAL_FN(betainc_grad_b, BetaIncGradB)
/// d/da, d/dc hyp2f1(a, b, c, z) (kiln's own scalar ops; d/db is hyp2f1_grad_a(b, a, c, z)).
KILN_SPECIAL_FN(hyp2f1_grad_a, Hyp2F1GradA)
KILN_SPECIAL_FN(hyp2f1_grad_c, Hyp2F1GradC)
#undef KILN_SPECIAL_FN

}  // namespace kiln
