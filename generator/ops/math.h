// kiln's pytensor.tensor.math: the numpy-like elementwise API, operators and functions
// that build Elemwise nodes (api/elementwise.h offers them to programs building graphs).
// Python-literal-like constants follow PyTensor's autocasting: an integer literal becomes the
// smallest of int8..int64 holding it; a float literal is float32 when exactly representable,
// else float64 (so `x_f32 * 0.5` stays float32 and `x_f32 * 0.1` becomes float64).
#pragma once

#include <type_traits>

#include "ops/constant.h"
#include "ops/elemwise.h"

namespace kiln {

/// A Var from a Var or a C++ number literal (see the file comment for the dtype).
inline Var as_var(const Var& v) { return v; }
template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
Var as_var(T v) {
  static_assert(!std::is_same_v<T, bool>, "use a bool constant Var: literals true/false are ambiguous");
  if constexpr (std::is_integral_v<T>)
    return autocast_int_constant(static_cast<std::int64_t>(v));
  else
    return autocast_float_constant(static_cast<double>(v));
}

namespace detail {
template <typename T>
constexpr bool is_operand_v = std::is_same_v<std::decay_t<T>, Var> || std::is_arithmetic_v<std::decay_t<T>>;
template <typename A, typename B>
using enable_binary_t = std::enable_if_t<is_operand_v<A> && is_operand_v<B> &&
                                         (std::is_same_v<std::decay_t<A>, Var> ||
                                          std::is_same_v<std::decay_t<B>, Var>),
                                         Var>;
inline Var scalar1(ScalarOpId id, const Var& x) { return elemwise1(ScalarOp(id), {x}); }
inline Var scalar2(ScalarOpId id, const Var& a, const Var& b) { return elemwise1(ScalarOp(id), {a, b}); }
}  // namespace detail

#define KILN_UNARY_FN(fn, Id) \
  inline Var fn(const Var& x) { return detail::scalar1(ScalarOpId::Id, x); }
KILN_UNARY_FN(neg, Neg)
KILN_UNARY_FN(abs, Abs)
KILN_UNARY_FN(sgn, Sgn)
KILN_UNARY_FN(exp, Exp)
KILN_UNARY_FN(exp2, Exp2)
KILN_UNARY_FN(expm1, Expm1)
KILN_UNARY_FN(log, Log)
KILN_UNARY_FN(log2, Log2)
KILN_UNARY_FN(log10, Log10)
KILN_UNARY_FN(log1p, Log1p)
KILN_UNARY_FN(sqrt, Sqrt)
KILN_UNARY_FN(sqr, Sqr)
KILN_UNARY_FN(reciprocal, Reciprocal)
KILN_UNARY_FN(sin, Sin)
KILN_UNARY_FN(cos, Cos)
KILN_UNARY_FN(tan, Tan)
KILN_UNARY_FN(arcsin, Arcsin)
KILN_UNARY_FN(arccos, Arccos)
KILN_UNARY_FN(arctan, Arctan)
KILN_UNARY_FN(sinh, Sinh)
KILN_UNARY_FN(cosh, Cosh)
KILN_UNARY_FN(tanh, Tanh)
KILN_UNARY_FN(arcsinh, Arcsinh)
KILN_UNARY_FN(arccosh, Arccosh)
KILN_UNARY_FN(arctanh, Arctanh)
KILN_UNARY_FN(sigmoid, Sigmoid)
KILN_UNARY_FN(softplus, Softplus)
KILN_UNARY_FN(log1mexp, Log1mexp)
KILN_UNARY_FN(erf, Erf)
KILN_UNARY_FN(erfc, Erfc)
KILN_UNARY_FN(erfcx, Erfcx)
KILN_UNARY_FN(erfinv, Erfinv)
KILN_UNARY_FN(gamma, Gamma)
KILN_UNARY_FN(gammaln, Gammaln)
KILN_UNARY_FN(psi, Psi)
KILN_UNARY_FN(tri_gamma, TriGamma)
KILN_UNARY_FN(floor, Floor)
KILN_UNARY_FN(ceil, Ceil)
KILN_UNARY_FN(trunc, Trunc)
KILN_UNARY_FN(round_half_to_even, RoundHalfToEven)
KILN_UNARY_FN(round_half_away_from_zero, RoundHalfAwayFromZero)
KILN_UNARY_FN(isnan, IsNan)
KILN_UNARY_FN(isinf, IsInf)
KILN_UNARY_FN(invert, Invert)
KILN_UNARY_FN(identity, Identity)
#undef KILN_UNARY_FN

#define KILN_BINARY_FN(fn, Id)                                        \
  template <typename A, typename B>                                   \
  detail::enable_binary_t<A, B> fn(const A& a, const B& b) {          \
    return detail::scalar2(ScalarOpId::Id, as_var(a), as_var(b));     \
  }
KILN_BINARY_FN(add, Add)
KILN_BINARY_FN(sub, Sub)
KILN_BINARY_FN(mul, Mul)
KILN_BINARY_FN(true_div, TrueDiv)
KILN_BINARY_FN(int_div, IntDiv)
KILN_BINARY_FN(mod, Mod)
KILN_BINARY_FN(pow, Pow)
KILN_BINARY_FN(maximum, Maximum)
KILN_BINARY_FN(minimum, Minimum)
KILN_BINARY_FN(arctan2, Arctan2)
KILN_BINARY_FN(eq, Eq)
KILN_BINARY_FN(neq, Neq)
KILN_BINARY_FN(lt, Lt)
KILN_BINARY_FN(le, Le)
KILN_BINARY_FN(gt, Gt)
KILN_BINARY_FN(ge, Ge)
KILN_BINARY_FN(bitwise_and, And)
KILN_BINARY_FN(bitwise_or, Or)
KILN_BINARY_FN(bitwise_xor, Xor)
KILN_BINARY_FN(second, Second)
#undef KILN_BINARY_FN

#define KILN_BINARY_OPERATOR(sym, fn)                                   \
  template <typename A, typename B>                                     \
  detail::enable_binary_t<A, B> operator sym(const A& a, const B& b) {  \
    return fn(a, b);                                                    \
  }
KILN_BINARY_OPERATOR(+, add)
KILN_BINARY_OPERATOR(-, sub)
KILN_BINARY_OPERATOR(*, mul)
KILN_BINARY_OPERATOR(/, true_div)
KILN_BINARY_OPERATOR(%, mod)
KILN_BINARY_OPERATOR(<, lt)
KILN_BINARY_OPERATOR(<=, le)
KILN_BINARY_OPERATOR(>, gt)
KILN_BINARY_OPERATOR(>=, ge)
KILN_BINARY_OPERATOR(&, bitwise_and)
KILN_BINARY_OPERATOR(|, bitwise_or)
KILN_BINARY_OPERATOR(^, bitwise_xor)
#undef KILN_BINARY_OPERATOR

inline Var operator-(const Var& x) { return neg(x); }
inline Var operator~(const Var& x) { return invert(x); }

/// np.where(cond, a, b).
template <typename A, typename B>
Var switch_(const Var& cond, const A& a, const B& b) {
  return elemwise1(ScalarOp(ScalarOpId::Switch), {cond, as_var(a), as_var(b)});
}
template <typename A, typename B>
Var where(const Var& cond, const A& a, const B& b) {
  return switch_(cond, a, b);
}
/// np.clip(x, lo, hi).
template <typename A, typename B>
Var clip(const Var& x, const A& lo, const B& hi) {
  return elemwise1(ScalarOp(ScalarOpId::Clip), {x, as_var(lo), as_var(hi)});
}
/// Converts to dtype (x itself when it already has it, as pt.cast).
inline Var cast(const Var& x, DType dtype) {
  return x->dtype() == dtype ? x : elemwise1(ScalarOp::cast(dtype), {x});
}

}  // namespace kiln
