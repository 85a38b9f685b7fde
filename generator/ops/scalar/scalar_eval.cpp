#include "ops/scalar/scalar_eval.h"

#include <cmath>
#include <stdexcept>

#include "ir/error.h"
#include "kiln/runtime/scalar_math.hpp"
#include "ops/array_util.h"
#include "ops/scalar/composite.h"
#include "ops/scalar/scalar_loop.h"
#include "ops/scalar/special_functions.h"

namespace kiln {

namespace {

namespace ks = kiln_scalar;

template <typename C>
C unary(ScalarOpId id, C x) {
  switch (id) {
    case ScalarOpId::Neg: return ks::wrap_neg(x);
    case ScalarOpId::Abs: return ks::abs(x);
    case ScalarOpId::Sgn: return ks::sgn(x);
    case ScalarOpId::Sqr: return ks::sqr(x);
    case ScalarOpId::Identity:
    case ScalarOpId::Real:  // the parts of a real number: itself and 0
    case ScalarOpId::Conj: return x;
    case ScalarOpId::Imag: return C(0);
    case ScalarOpId::Invert:
      if constexpr (std::is_integral_v<C>) return ks::invert(x);
      break;
    default: break;
  }
  if constexpr (std::is_floating_point_v<C>) {
    switch (id) {
      case ScalarOpId::Exp: return std::exp(x);
      case ScalarOpId::Angle: return std::atan2(C(0), x);
      case ScalarOpId::Exp2: return std::exp2(x);
      case ScalarOpId::Expm1: return std::expm1(x);
      case ScalarOpId::Log: return std::log(x);
      case ScalarOpId::Log2: return std::log2(x);
      case ScalarOpId::Log10: return std::log10(x);
      case ScalarOpId::Log1p: return std::log1p(x);
      case ScalarOpId::Sqrt: return std::sqrt(x);
      case ScalarOpId::Reciprocal: return C(1) / x;
      case ScalarOpId::Sin: return std::sin(x);
      case ScalarOpId::Cos: return std::cos(x);
      case ScalarOpId::Tan: return std::tan(x);
      case ScalarOpId::Arcsin: return std::asin(x);
      case ScalarOpId::Arccos: return std::acos(x);
      case ScalarOpId::Arctan: return std::atan(x);
      case ScalarOpId::Sinh: return std::sinh(x);
      case ScalarOpId::Cosh: return std::cosh(x);
      case ScalarOpId::Tanh: return std::tanh(x);
      case ScalarOpId::Arcsinh: return std::asinh(x);
      case ScalarOpId::Arccosh: return std::acosh(x);
      case ScalarOpId::Arctanh: return std::atanh(x);
      case ScalarOpId::Sigmoid: return ks::sigmoid(x);
      case ScalarOpId::Softplus: return ks::softplus(x);
      case ScalarOpId::Log1mexp: return ks::log1mexp(x);
      case ScalarOpId::Erf: return std::erf(x);
      case ScalarOpId::Erfc: return std::erfc(x);
      case ScalarOpId::Erfcx: return ks::erfcx(x);
      case ScalarOpId::Erfinv: return ks::erfinv(x);
      case ScalarOpId::Gamma: return std::tgamma(x);
      case ScalarOpId::Gammaln: return ks::gammaln(x);
      case ScalarOpId::Psi: return ks::psi(x);
      case ScalarOpId::TriGamma: return ks::trigamma(x);
      case ScalarOpId::Floor: return std::floor(x);
      case ScalarOpId::Ceil: return std::ceil(x);
      case ScalarOpId::Trunc: return std::trunc(x);
      case ScalarOpId::RoundHalfToEven: return ks::round_half_to_even(x);
      case ScalarOpId::RoundHalfAwayFromZero: return ks::round_half_away_from_zero(x);
      default: break;
    }
  }
  throw InternalError("scalar op " + std::string(scalar_op_info(id).name) +
                      " has no unary implementation for " +
                      std::string(dtype_name(DTypeOf<C>::value)));
}

template <typename C>
C binary(ScalarOpId id, C a, C b) {
  switch (id) {
    case ScalarOpId::Add: return ks::wrap_add(a, b);
    case ScalarOpId::Sub: return ks::wrap_sub(a, b);
    case ScalarOpId::Mul: return ks::wrap_mul(a, b);
    case ScalarOpId::IntDiv: return ks::int_div(a, b);
    case ScalarOpId::Mod: return ks::mod(a, b);
    case ScalarOpId::Pow: return ks::pow(a, b);
    case ScalarOpId::Maximum: return ks::maximum(a, b);
    case ScalarOpId::Minimum: return ks::minimum(a, b);
    case ScalarOpId::And:
      if constexpr (std::is_integral_v<C>) return static_cast<C>(a & b);
      break;
    case ScalarOpId::Or:
      if constexpr (std::is_integral_v<C>) return static_cast<C>(a | b);
      break;
    case ScalarOpId::Xor:
      if constexpr (std::is_integral_v<C>) return static_cast<C>(a ^ b);
      break;
    default: break;
  }
  if constexpr (std::is_floating_point_v<C>) {
    switch (id) {
      case ScalarOpId::TrueDiv: return a / b;
      case ScalarOpId::Arctan2: return std::atan2(a, b);
      default: break;
    }
  }
  throw InternalError("scalar op " + std::string(scalar_op_info(id).name) +
                      " has no binary implementation for " +
                      std::string(dtype_name(DTypeOf<C>::value)));
}

template <typename C>
bool predicate(ScalarOpId id, const C* args) {
  switch (id) {
    case ScalarOpId::IsNan:
      if constexpr (std::is_floating_point_v<C>) return std::isnan(args[0]);
      return false;
    case ScalarOpId::IsInf:
      if constexpr (std::is_floating_point_v<C>) return std::isinf(args[0]);
      return false;
    case ScalarOpId::Eq: return args[0] == args[1];
    case ScalarOpId::Neq: return args[0] != args[1];
    case ScalarOpId::Lt: return args[0] < args[1];
    case ScalarOpId::Le: return args[0] <= args[1];
    case ScalarOpId::Gt: return args[0] > args[1];
    case ScalarOpId::Ge: return args[0] >= args[1];
    default: break;
  }
  throw InternalError("not a predicate scalar op");
}

// Evaluates a non-Composite op whose inputs were converted to the computation dtype C (the
// condition of `switch` to bool) and are C-contiguous.
template <typename C>
void eval_typed(const ScalarOp& op, const std::vector<Array>& a, Array& out) {
  const ScalarOpId id = op.id();
  const std::int64_t n = out.size();
  const auto rule = op.info().rule;
  if (rule == DTypeRule::ToBool) {
    bool* o = out.data<bool>();
    C args[2];
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::size_t k = 0; k < a.size(); ++k) args[k] = a[k].data<C>()[i];
      o[i] = predicate<C>(id, args);
    }
    return;
  }
  C* o = out.data<C>();
  if (id == ScalarOpId::Switch) {
    const bool* c = a[0].data<bool>();
    const C* x = a[1].data<C>();
    const C* y = a[2].data<C>();
    for (std::int64_t i = 0; i < n; ++i) o[i] = c[i] ? x[i] : y[i];
    return;
  }
  if (id == ScalarOpId::Clip) {
    const C* x = a[0].data<C>();
    const C* lo = a[1].data<C>();
    const C* hi = a[2].data<C>();
    for (std::int64_t i = 0; i < n; ++i) o[i] = ks::clip(x[i], lo[i], hi[i]);
    return;
  }
  if (a.size() == 1) {
    const C* x = a[0].data<C>();
    for (std::int64_t i = 0; i < n; ++i) o[i] = unary<C>(id, x[i]);
    return;
  }
  // Binary, or a left fold for the variadic add and mul.
  const C* x = a[0].data<C>();
  for (std::int64_t i = 0; i < n; ++i) o[i] = x[i];
  for (std::size_t k = 1; k < a.size(); ++k) {
    const C* y = a[k].data<C>();
    for (std::int64_t i = 0; i < n; ++i) o[i] = binary<C>(id, o[i], y[i]);
  }
}

// Complex operands (C is std::complex<F>), NumPy's complex functions (kiln/runtime/complex.hpp).
// The parts (real, imag, abs, angle) and the predicates write a real or bool output.
template <typename C>
void eval_complex(const ScalarOp& op, const std::vector<Array>& a, Array& out) {
  using F = typename C::value_type;
  const ScalarOpId id = op.id();
  const std::int64_t n = out.size();
  const C* x = a[0].data<C>();
  if (op.info().rule == DTypeRule::ToBool) {
    bool* o = out.data<bool>();
    for (std::int64_t i = 0; i < n; ++i) {
      switch (id) {
        case ScalarOpId::IsNan: o[i] = ks::c_isnan(x[i]); break;
        case ScalarOpId::IsInf: o[i] = ks::c_isinf(x[i]); break;
        case ScalarOpId::Eq: o[i] = x[i] == a[1].data<C>()[i]; break;
        case ScalarOpId::Neq: o[i] = x[i] != a[1].data<C>()[i]; break;
        default: throw InternalError("not a complex predicate");
      }
    }
    return;
  }
  if (id == ScalarOpId::Real || id == ScalarOpId::Imag || id == ScalarOpId::Abs || id == ScalarOpId::Angle) {
    // The part dtype, or float64 for angle (computed in the part dtype, then widened).
    const auto part = [&](auto* o) {
      for (std::int64_t i = 0; i < n; ++i)
        o[i] = id == ScalarOpId::Real ? x[i].real() : id == ScalarOpId::Imag ? x[i].imag()
               : id == ScalarOpId::Abs ? ks::c_abs(x[i]) : ks::c_angle(x[i]);
    };
    if (out.dtype() == DType::Float64)
      part(out.data<double>());
    else
      part(out.data<F>());
    return;
  }
  C* o = out.data<C>();
  if (a.size() == 1) {
    for (std::int64_t i = 0; i < n; ++i) {
      const C v = x[i];
      switch (id) {
        case ScalarOpId::Neg: o[i] = -v; break;
        case ScalarOpId::Identity: o[i] = v; break;
        case ScalarOpId::Conj: o[i] = std::conj(v); break;
        case ScalarOpId::Sqr: o[i] = ks::c_sqr(v); break;
        case ScalarOpId::Reciprocal: o[i] = ks::c_reciprocal(v); break;
        case ScalarOpId::Exp: o[i] = std::exp(v); break;
        case ScalarOpId::Exp2: o[i] = ks::c_exp2(v); break;
        case ScalarOpId::Expm1: o[i] = ks::c_expm1(v); break;
        case ScalarOpId::Log: o[i] = std::log(v); break;
        case ScalarOpId::Log2: o[i] = ks::c_log2(v); break;
        case ScalarOpId::Log10: o[i] = ks::c_log10(v); break;
        case ScalarOpId::Log1p: o[i] = ks::c_log1p(v); break;
        case ScalarOpId::Sqrt: o[i] = std::sqrt(v); break;
        case ScalarOpId::Sin: o[i] = std::sin(v); break;
        case ScalarOpId::Cos: o[i] = std::cos(v); break;
        case ScalarOpId::Tan: o[i] = std::tan(v); break;
        case ScalarOpId::Arcsin: o[i] = std::asin(v); break;
        case ScalarOpId::Arccos: o[i] = std::acos(v); break;
        case ScalarOpId::Arctan: o[i] = std::atan(v); break;
        case ScalarOpId::Sinh: o[i] = std::sinh(v); break;
        case ScalarOpId::Cosh: o[i] = std::cosh(v); break;
        case ScalarOpId::Tanh: o[i] = std::tanh(v); break;
        case ScalarOpId::Arcsinh: o[i] = std::asinh(v); break;
        case ScalarOpId::Arccosh: o[i] = std::acosh(v); break;
        case ScalarOpId::Arctanh: o[i] = std::atanh(v); break;
        default:
          throw InternalError("scalar op " + std::string(op.info().name) + " has no complex implementation");
      }
    }
    return;
  }
  if (id == ScalarOpId::Switch) {
    const bool* c = a[0].data<bool>();
    for (std::int64_t i = 0; i < n; ++i) o[i] = c[i] ? a[1].data<C>()[i] : a[2].data<C>()[i];
    return;
  }
  // Binary, or a left fold for the variadic add and mul.
  for (std::int64_t i = 0; i < n; ++i) o[i] = x[i];
  for (std::size_t k = 1; k < a.size(); ++k) {
    const C* y = a[k].data<C>();
    for (std::int64_t i = 0; i < n; ++i) {
      switch (id) {
        case ScalarOpId::Add: o[i] = o[i] + y[i]; break;
        case ScalarOpId::Sub: o[i] = o[i] - y[i]; break;
        case ScalarOpId::Mul: o[i] = ks::c_mul(o[i], y[i]); break;
        case ScalarOpId::TrueDiv: o[i] = ks::c_div(o[i], y[i]); break;
        case ScalarOpId::Pow: o[i] = ks::c_pow(o[i], y[i]); break;
        default:
          throw InternalError("scalar op " + std::string(op.info().name) + " has no complex implementation");
      }
    }
  }
}

// complex(re, im) of two real operands of the output's part type F.
template <typename F>
void eval_make_complex(const std::vector<Array>& a, Array& out) {
  std::complex<F>* o = out.data<std::complex<F>>();
  const F* re = a[0].data<F>();
  const F* im = a[1].data<F>();
  for (std::int64_t i = 0; i < out.size(); ++i) o[i] = {re[i], im[i]};
}

std::vector<Array> eval_composite(const CompositeGraph& g, const std::vector<Array>& args,
                                  const Shape& shape) {
  std::vector<Array> values(g.values().size());
  for (int i = 0; i < g.num_inputs(); ++i) values[static_cast<std::size_t>(i)] = args[static_cast<std::size_t>(i)];
  for (std::size_t v = 0; v < g.values().size(); ++v)
    if (g.values()[v].is_constant()) values[v] = broadcast_to(g.values()[v].constant, shape);
  for (const auto& node : g.nodes()) {
    std::vector<Array> ins;
    for (int v : node.inputs) ins.push_back(values[static_cast<std::size_t>(v)]);
    auto outs = eval_scalar_op(node.op, ins, shape);
    for (std::size_t k = 0; k < outs.size(); ++k) values[static_cast<std::size_t>(node.outputs[k])] = outs[k];
  }
  std::vector<Array> result;
  std::vector<bool> handed_out(g.values().size(), false);
  for (int v : g.outputs()) {
    // Outputs are always fresh arrays, even when they are an input or a constant or a value
    // listed twice, so no two outputs share memory with each other or with an input.
    const auto vi = static_cast<std::size_t>(v);
    bool fresh = v >= g.num_inputs() && !g.values()[vi].is_constant() && !handed_out[vi];
    handed_out[vi] = true;
    result.push_back(fresh ? values[vi] : values[vi].copy());
  }
  return result;
}

}  // namespace

std::vector<Array> eval_scalar_op(const ScalarOp& op, const std::vector<Array>& args,
                                  const Shape& shape) {
  std::vector<DType> in_dtypes;
  for (const auto& a : args) in_dtypes.push_back(a.dtype());
  std::vector<DType> out_dtypes;
  try {
    out_dtypes = op.output_dtypes(in_dtypes);
  } catch (const std::invalid_argument& e) {
    throw RuntimeFailure(e.what());
  }
  if (op.id() == ScalarOpId::Composite) return eval_composite(*op.composite_graph(), args, shape);
  if (op.id() == ScalarOpId::ScalarLoop) return eval_scalar_loop(op, args, shape);
  if (op.id() == ScalarOpId::Cast) return {astype(args[0], out_dtypes[0]).copy()};
  if (op.id() == ScalarOpId::Second) return {astype(args[1], out_dtypes[0]).copy()};

  // The same operand conversion the generated code does (PyTensor computes in the output
  // dtype, comparisons in the inputs' upcast, and tests switch's condition as bool).
  // float16 is computed on as float32 and the result rounded once (NumPy's float16 loops).
  std::vector<DType> operands = op.operand_dtypes(in_dtypes);
  for (DType& d : operands) d = arithmetic_dtype(d);
  const DType out_dtype = out_dtypes[0], result_dtype = arithmetic_dtype(out_dtype);
  std::vector<Array> converted;
  for (std::size_t k = 0; k < args.size(); ++k) converted.push_back(astype(args[k], operands[k]));
  Array out;
  if (is_special_function(op.id())) {
    out = eval_special_function(op.id(), converted, result_dtype, shape);
  } else if (op.id() == ScalarOpId::Complex) {
    out = Array::empty(result_dtype, shape);
    if (result_dtype == DType::Complex64)
      eval_make_complex<float>(converted, out);
    else
      eval_make_complex<double>(converted, out);
  } else {
    out = Array::empty(result_dtype, shape);
    visit_dtype(operands.back(), [&](auto t) {
      using C = decltype(t);
      if constexpr (std::is_same_v<C, kiln_scalar::half>)
        throw InternalError("float16 reached scalar evaluation unconverted");
      else if constexpr (ks::is_complex_v<C>)
        eval_complex<C>(op, converted, out);
      else
        eval_typed<C>(op, converted, out);
    });
  }
  return {out_dtype == result_dtype ? out : astype(out, out_dtype).copy()};
}

}  // namespace kiln
