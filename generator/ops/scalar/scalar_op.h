// Scalar ops: the per-element operations that Elemwise broadcasts and CAReduce folds.
//
// KILN_SCALAR_OPS is the one table of every scalar op: its graph-file name, arity, dtype rule
// and the name PyTensor prints. The enum, name lookup, type inference and printing all come
// from it; the reference semantics live in scalar_eval.cpp and the C++ spelling in the cpp
// backend's table.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/runtime/dtype.hpp"

namespace kiln {

class CompositeGraph;

/// How a scalar op's output dtype follows from its input dtypes (PyTensor's
/// output_types_preference).
enum class DTypeRule {
  Upcast,          ///< upcast of all inputs (upcast_out)
  UpcastNoBool,    ///< upcast, refusing a bool result (upcast_out_nobool)
  UpcastMin8,      ///< upcast, a bool result becomes int8 (upcast_out_min8)
  SameAsFirst,     ///< dtype of input 0 (same_out)
  SameNoBool,      ///< dtype of input 0, refusing bool (same_out_nobool)
  UpgradeToFloat,  ///< float: bool/[u]int8/[u]int16 -> float32, wider ints -> float64
  FloatOnly,       ///< input must be float; same dtype (same_out_float_only)
  ToBool,          ///< comparisons and predicates: bool
  TrueDiv,         ///< all-discrete inputs -> float64, else upcast
  Discrete,        ///< all bool -> bool, all integer -> upcast; refuses floats and bool mixed
                   ///< with integers (bit/logical ops)
  Switch,          ///< upcast of inputs 1 and 2
  PolyGamma,       ///< input 0 (the order) must be discrete; upgrade_to_float of input 1
  Second,          ///< dtype of input 1
  Cast,            ///< the `dtype` parameter
  Composite,       ///< from the inner graph
  Loop,            ///< ScalarLoop: an integer n_steps, then its inner graph's inputs; its outputs
  ComplexPart,     ///< a complex input's part dtype (complex64 -> float32), else the input's (real_out)
  Float64Out,      ///< float64 whatever the input (specific_out(float64))
  MakeComplex,     ///< two real inputs -> complex128 when their upcast needs float64, else complex64
};

/// X(Id, "graph name", arity (-1: two or more; -2: from the Composite), DTypeRule,
///   PyTensor's scalar op str — Elemwise prints it capitalized: "EQ" -> "Eq")
#define KILN_SCALAR_OPS(X)\
  X(Neg, "neg", 1, SameNoBool, "neg")                                                          \
  X(Abs, "abs", 1, SameAsFirst, "abs")                                                         \
  X(Sgn, "sgn", 1, SameNoBool, "sign")                                                         \
  X(Exp, "exp", 1, UpgradeToFloat, "exp")                                                      \
  X(Exp2, "exp2", 1, UpgradeToFloat, "exp2")                                                   \
  X(Expm1, "expm1", 1, UpgradeToFloat, "expm1")                                                \
  X(Log, "log", 1, UpgradeToFloat, "log")                                                      \
  X(Log2, "log2", 1, UpgradeToFloat, "log2")                                                   \
  X(Log10, "log10", 1, UpgradeToFloat, "log10")                                                \
  X(Log1p, "log1p", 1, UpgradeToFloat, "log1p")                                                \
  X(Sqrt, "sqrt", 1, UpgradeToFloat, "sqrt")                                                   \
  X(Sqr, "sqr", 1, SameAsFirst, "sqr")                                                         \
  X(Reciprocal, "reciprocal", 1, UpgradeToFloat, "reciprocal")                                 \
  X(Sin, "sin", 1, UpgradeToFloat, "sin")                                                      \
  X(Cos, "cos", 1, UpgradeToFloat, "cos")                                                      \
  X(Tan, "tan", 1, UpgradeToFloat, "tan")                                                      \
  X(Arcsin, "arcsin", 1, UpgradeToFloat, "arcsin")                                             \
  X(Arccos, "arccos", 1, UpgradeToFloat, "arccos")                                             \
  X(Arctan, "arctan", 1, UpgradeToFloat, "arctan")                                             \
  X(Sinh, "sinh", 1, UpgradeToFloat, "sinh")                                                   \
  X(Cosh, "cosh", 1, UpgradeToFloat, "cosh")                                                   \
  X(Tanh, "tanh", 1, UpgradeToFloat, "tanh")                                                   \
  X(Arcsinh, "arcsinh", 1, UpgradeToFloat, "arcsinh")                                          \
  X(Arccosh, "arccosh", 1, UpgradeToFloat, "arccosh")                                          \
  X(Arctanh, "arctanh", 1, UpgradeToFloat, "arctanh")                                          \
  X(Sigmoid, "sigmoid", 1, UpgradeToFloat, "sigmoid")                                          \
  X(Softplus, "softplus", 1, UpgradeToFloat, "softplus")                                       \
  X(Log1mexp, "log1mexp", 1, UpgradeToFloat, "scalar_log1mexp")                                \
  X(Erf, "erf", 1, UpgradeToFloat, "erf")                                                      \
  X(Erfc, "erfc", 1, UpgradeToFloat, "erfc")                                                   \
  X(Erfcx, "erfcx", 1, UpgradeToFloat, "erfcx")                                                \
  X(Erfinv, "erfinv", 1, UpgradeToFloat, "erfinv")                                             \
  X(Gamma, "gamma", 1, UpgradeToFloat, "gamma")                                                \
  X(Gammaln, "gammaln", 1, UpgradeToFloat, "gammaln")                                          \
  X(Psi, "psi", 1, UpgradeToFloat, "psi")                                                      \
  X(TriGamma, "tri_gamma", 1, UpgradeToFloat, "tri_gamma")                                     \
  X(Erfcinv, "erfcinv", 1, UpgradeToFloat, "erfcinv")                                          \
  X(NdtriExp, "ndtri_exp", 1, UpgradeToFloat, "ndtri_exp")                                     \
  X(I0, "i0", 1, UpgradeToFloat, "i0")                                                         \
  X(I1, "i1", 1, UpgradeToFloat, "i1")                                                         \
  X(Floor, "floor", 1, UpgradeToFloat, "floor")                                                \
  X(Ceil, "ceil", 1, UpgradeToFloat, "ceil")                                                   \
  X(Trunc, "trunc", 1, UpgradeToFloat, "trunc")                                                \
  X(RoundHalfToEven, "round_half_to_even", 1, FloatOnly, "RoundHalfToEven")                    \
  X(RoundHalfAwayFromZero, "round_half_away_from_zero", 1, FloatOnly, "RoundHalfAwayFromZero") \
  X(IsNan, "isnan", 1, ToBool, "isnan")                                                        \
  X(IsInf, "isinf", 1, ToBool, "isinf")                                                        \
  X(Invert, "invert", 1, Discrete, "invert")                                                   \
  X(Identity, "identity", 1, SameAsFirst, "identity")                                          \
  X(Real, "real", 1, ComplexPart, "real")                                                      \
  X(Imag, "imag", 1, ComplexPart, "imag")                                                      \
  X(Conj, "conj", 1, UpcastMin8, "conj")                                                       \
  X(Angle, "angle", 1, Float64Out, "angle")                                                    \
  X(Add, "add", -1, Upcast, "add")                                                             \
  X(Sub, "sub", 2, UpcastNoBool, "sub")                                                        \
  X(Mul, "mul", -1, Upcast, "mul")                                                             \
  X(TrueDiv, "true_div", 2, TrueDiv, "true_div")                                               \
  X(IntDiv, "int_div", 2, Upcast, "int_div")                                                   \
  X(Mod, "mod", 2, Upcast, "mod")                                                              \
  X(Pow, "pow", 2, UpcastMin8, "pow")                                                          \
  X(Maximum, "maximum", 2, Upcast, "maximum")                                                  \
  X(Minimum, "minimum", 2, Upcast, "minimum")                                                  \
  X(Arctan2, "arctan2", 2, UpgradeToFloat, "arctan2")                                          \
  X(GammaInc, "gammainc", 2, UpgradeToFloat, "gammainc")                                       \
  X(GammaIncC, "gammaincc", 2, UpgradeToFloat, "gammaincc")                                    \
  X(GammaIncInv, "gammaincinv", 2, UpgradeToFloat, "gammaincinv")                              \
  X(GammaIncCInv, "gammainccinv", 2, UpgradeToFloat, "gammainccinv")                           \
  X(Ive, "ive", 2, UpgradeToFloat, "ive")                                                      \
  X(Kve, "kve", 2, UpgradeToFloat, "kve")                                                      \
  X(Jv, "jv", 2, UpgradeToFloat, "jv")                                                         \
  X(OwensT, "owens_t", 2, UpgradeToFloat, "owens_t")                                           \
  X(PolyGamma, "polygamma", 2, PolyGamma, "polygamma")                                         \
  X(GammaIncGradK, "gammainc_grad_k", 2, UpgradeToFloat, "gammainc_grad_k")                    \
  X(Eq, "eq", 2, ToBool, "EQ")                                                                 \
  X(Neq, "neq", 2, ToBool, "NEQ")                                                              \
  X(Lt, "lt", 2, ToBool, "LT")                                                                 \
  X(Le, "le", 2, ToBool, "LE")                                                                 \
  X(Gt, "gt", 2, ToBool, "GT")                                                                 \
  X(Ge, "ge", 2, ToBool, "GE")                                                                 \
  X(And, "and", 2, Discrete, "AND")                                                            \
  X(Or, "or", 2, Discrete, "OR")                                                               \
  X(Xor, "xor", 2, Discrete, "XOR")                                                            \
  X(Second, "second", 2, Second, "second")                                                     \
  X(Complex, "complex", 2, MakeComplex, "complex")                                             \
  X(Switch, "switch", 3, Switch, "Switch")                                                     \
  X(Clip, "clip", 3, Upcast, "clip")                                                           \
  X(BetaInc, "betainc", 3, UpgradeToFloat, "betainc")                                          \
  X(BetaIncInv, "betaincinv", 3, UpgradeToFloat, "betaincinv")                                 \
  X(BetaIncGradA, "betainc_grad_a", 3, UpgradeToFloat, "betainc_grad_a")                       \
  X(BetaIncGradB, "betainc_grad_b", 3, UpgradeToFloat, "betainc_grad_b")                       \
  X(Hyp2F1, "hyp2f1", 4, UpgradeToFloat, "hyp2f1")                                             \
  X(Hyp2F1GradA, "hyp2f1_grad_a", 4, UpgradeToFloat, "hyp2f1_grad_a")                          \
  X(Hyp2F1GradC, "hyp2f1_grad_c", 4, UpgradeToFloat, "hyp2f1_grad_c")                          \
  X(Cast, "cast", 1, Cast, "Cast")                                                             \
  X(Composite, "Composite", -2, Composite, "Composite")                                        \
  X(ScalarLoop, "ScalarLoop", -2, Loop, "ScalarLoop")

enum class ScalarOpId : std::uint8_t {
#define KILN_X(Id, Name, Arity, Rule, Print) Id,
  KILN_SCALAR_OPS(KILN_X)
#undef KILN_X
};

/// Static facts about a scalar op kind, from the table.
struct ScalarOpInfo {
  ScalarOpId id;
  std::string_view name;        ///< graph-file name ("add")
  int arity;                    ///< inputs; -1 = two or more; -2 = given by the Composite
  DTypeRule rule;
  std::string_view print_name;  ///< PyTensor's scalar op str ("add", "EQ")
};

const ScalarOpInfo& scalar_op_info(ScalarOpId id);
/// Looks up a scalar op kind by its graph-file name ("add", "log1p"); nullopt if unknown.
std::optional<ScalarOpId> scalar_op_from_name(std::string_view name);
/// Every scalar op kind, in table order.
const std::vector<ScalarOpInfo>& all_scalar_ops();

/// Whether the scalar op computes on complex operands (the others refuse them as not
/// implemented): arithmetic, exp and log, powers, trigonometric and hyperbolic functions and
/// their inverses, the parts (real, imag, conj, angle, abs), eq/neq, isnan/isinf, switch, casts.
bool scalar_op_takes_complex(ScalarOpId id);

/// PyTensor's upcast (NumPy's dtype promotion on dtypes alone).
DType upcast(DType a, DType b);
DType upcast(const std::vector<DType>& dtypes);
/// PyTensor's upgrade_to_float of one dtype: float stays; bool, [u]int8, [u]int16 -> float32;
/// wider integers -> float64.
DType upgrade_to_float(DType dt);

/// A scalar op: a kind plus its parameters (the target dtype of `cast`; the inner graph of a
/// Composite). Immutable and cheap to copy.
class ScalarOp {
 public:
  ScalarOp() = default;
  explicit ScalarOp(ScalarOpId id) : id_(id) {}
  static ScalarOp cast(DType to);
  static ScalarOp composite(std::shared_ptr<const CompositeGraph> graph);
  /// PyTensor's ScalarLoop: `graph` maps (carried values..., constants...) to (their updates...,
  /// and for a while loop a bool `until`); the op's inputs are n_steps, the carried values'
  /// initial values and the constants (ops/scalar/scalar_loop.h).
  static ScalarOp scalar_loop(std::shared_ptr<const CompositeGraph> graph, bool is_while);

  ScalarOpId id() const { return id_; }
  const ScalarOpInfo& info() const { return scalar_op_info(id_); }
  DType cast_dtype() const { return cast_dtype_; }
  /// The inner graph of a Composite or a ScalarLoop.
  const std::shared_ptr<const CompositeGraph>& composite_graph() const { return composite_; }
  /// A ScalarLoop that stops when its `until` output is true.
  bool loop_is_while() const { return loop_is_while_; }
  /// A ScalarLoop's carried values (its outputs without `until`).
  int loop_carries() const;

  /// Number of inputs this op takes for n given inputs: throws when n is not allowed.
  void check_arity(std::size_t n) const;
  int num_outputs() const;

  /// Output dtypes for the given input dtypes; throws std::invalid_argument (with a message
  /// saying which input) when the op refuses them (e.g. `and` on floats).
  std::vector<DType> output_dtypes(const std::vector<DType>& inputs) const;

  /// The dtype each input is converted to before the op computes (PyTensor computes in the
  /// output dtype, comparisons in the inputs' upcast, `switch` tests its condition as bool).
  /// Not for Composite (its inner nodes convert for themselves).
  std::vector<DType> operand_dtypes(const std::vector<DType>& inputs) const;

  /// The graph-file form: "add", or {"name": "cast", "dtype": "int8"}, or a Composite object.
  nlohmann::json to_json() const;
  /// PyTensor's scalar op str: "add", "EQ", "Cast{int8}", "Composite{(i0 + i1)}".
  std::string str() const;

  bool operator==(const ScalarOp& o) const;
  bool operator!=(const ScalarOp& o) const { return !(*this == o); }

 private:
  ScalarOpId id_ = ScalarOpId::Identity;
  DType cast_dtype_ = DType::Float64;
  std::shared_ptr<const CompositeGraph> composite_;
  bool loop_is_while_ = false;
};

}  // namespace kiln
