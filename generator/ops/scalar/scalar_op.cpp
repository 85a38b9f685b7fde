#include "ops/scalar/scalar_op.h"

#include <stdexcept>

#include "ir/error.h"

#include "ops/scalar/composite.h"

namespace kiln {

namespace {
const std::vector<ScalarOpInfo>& table() {
  static const std::vector<ScalarOpInfo> t = {
#define KILN_X(Id, Name, Arity, Rule, Print) \
  ScalarOpInfo{ScalarOpId::Id, Name, Arity, DTypeRule::Rule, Print},
      KILN_SCALAR_OPS(KILN_X)
#undef KILN_X
  };
  return t;
}

int int_bits(DType dt) { return static_cast<int>(dtype_size(dt)) * 8; }

DType signed_of_bits(int bits) {
  switch (bits) {
    case 8: return DType::Int8;
    case 16: return DType::Int16;
    case 32: return DType::Int32;
    default: return DType::Int64;
  }
}
}  // namespace

const ScalarOpInfo& scalar_op_info(ScalarOpId id) { return table()[static_cast<std::size_t>(id)]; }

const std::vector<ScalarOpInfo>& all_scalar_ops() { return table(); }

std::optional<ScalarOpId> scalar_op_from_name(std::string_view name) {
  for (const auto& info : table())
    if (info.name == name) return info.id;
  // PyTensor 3.x prints maximum and minimum capitalised (graph format version 2).
  if (name == "Maximum") return ScalarOpId::Maximum;
  if (name == "Minimum") return ScalarOpId::Minimum;
  return std::nullopt;
}

bool scalar_op_takes_complex(ScalarOpId id) {
  switch (id) {
    case ScalarOpId::Neg: case ScalarOpId::Abs: case ScalarOpId::Exp: case ScalarOpId::Exp2:
    case ScalarOpId::Expm1: case ScalarOpId::Log: case ScalarOpId::Log2: case ScalarOpId::Log10:
    case ScalarOpId::Log1p: case ScalarOpId::Sqrt: case ScalarOpId::Sqr: case ScalarOpId::Reciprocal:
    case ScalarOpId::Sin: case ScalarOpId::Cos: case ScalarOpId::Tan: case ScalarOpId::Arcsin:
    case ScalarOpId::Arccos: case ScalarOpId::Arctan: case ScalarOpId::Sinh: case ScalarOpId::Cosh:
    case ScalarOpId::Tanh: case ScalarOpId::Arcsinh: case ScalarOpId::Arccosh: case ScalarOpId::Arctanh:
    case ScalarOpId::IsNan: case ScalarOpId::IsInf: case ScalarOpId::Identity: case ScalarOpId::Real:
    case ScalarOpId::Imag: case ScalarOpId::Conj: case ScalarOpId::Angle: case ScalarOpId::Add:
    case ScalarOpId::Sub: case ScalarOpId::Mul: case ScalarOpId::TrueDiv: case ScalarOpId::Pow:
    case ScalarOpId::Eq: case ScalarOpId::Neq: case ScalarOpId::Second: case ScalarOpId::Switch:
    case ScalarOpId::Cast: case ScalarOpId::Composite:
      return true;
    default:
      return false;
  }
}

DType upcast(DType a, DType b) {
  if (a == b) return a;
  if (is_complex(a) || is_complex(b)) {
    // NumPy: the complex type whose parts hold both (complex64 with int32 or float64 is
    // complex128).
    const DType parts = upcast(complex_part_dtype(a), complex_part_dtype(b));
    return parts == DType::Float64 ? DType::Complex128 : DType::Complex64;
  }
  if (is_bool(a)) return b;
  if (is_bool(b)) return a;
  if (is_float(a) || is_float(b)) {
    // NumPy's promotion: the wider float; an integer needs float16 (8 bits), float32 (16
    // bits) or float64 (wider) to hold its values.
    const auto rank = [](DType f) { return f == DType::Float16 ? 0 : f == DType::Float32 ? 1 : 2; };
    if (is_float(a) && is_float(b)) return rank(a) >= rank(b) ? a : b;
    DType f = is_float(a) ? a : b;
    DType i = is_float(a) ? b : a;
    const DType needed = int_bits(i) <= 8 ? DType::Float16 : int_bits(i) <= 16 ? DType::Float32 : DType::Float64;
    return rank(f) >= rank(needed) ? f : needed;
  }
  // Two different integer types.
  if (is_signed_int(a) == is_signed_int(b))
    return int_bits(a) >= int_bits(b) ? a : b;
  DType s = is_signed_int(a) ? a : b;
  DType u = is_signed_int(a) ? b : a;
  if (int_bits(u) < int_bits(s)) return s;
  if (int_bits(u) == 64) return DType::Float64;
  return signed_of_bits(int_bits(u) * 2);
}

DType upcast(const std::vector<DType>& dtypes) {
  if (dtypes.empty()) throw std::invalid_argument("upcast of no dtypes");
  DType r = dtypes[0];
  for (std::size_t i = 1; i < dtypes.size(); ++i) r = upcast(r, dtypes[i]);
  return r;
}

DType upgrade_to_float(DType dt) {
  if (is_float(dt) || is_complex(dt)) return dt;
  if (is_bool(dt) || int_bits(dt) <= 16) return DType::Float32;
  return DType::Float64;
}

ScalarOp ScalarOp::cast(DType to) {
  ScalarOp op(ScalarOpId::Cast);
  op.cast_dtype_ = to;
  return op;
}

ScalarOp ScalarOp::composite(std::shared_ptr<const CompositeGraph> graph) {
  ScalarOp op(ScalarOpId::Composite);
  op.composite_ = std::move(graph);
  return op;
}

ScalarOp ScalarOp::scalar_loop(std::shared_ptr<const CompositeGraph> graph, bool is_while) {
  ScalarOp op(ScalarOpId::ScalarLoop);
  op.composite_ = std::move(graph);
  op.loop_is_while_ = is_while;
  return op;
}

int ScalarOp::num_outputs() const {
  return composite_ ? static_cast<int>(composite_->outputs().size()) : 1;
}

int ScalarOp::loop_carries() const { return num_outputs() - (loop_is_while_ ? 1 : 0); }

void ScalarOp::check_arity(std::size_t n) const {
  int arity = info().arity;
  if (arity == -2) arity = composite_->num_inputs() + (id_ == ScalarOpId::ScalarLoop ? 1 : 0);
  if (arity == -1) {
    if (n < 2)
      throw std::invalid_argument(std::string(info().name) + " takes two or more inputs, got " +
                                  std::to_string(n));
    return;
  }
  if (n != static_cast<std::size_t>(arity))
    throw std::invalid_argument(std::string(info().name) + " takes " + std::to_string(arity) +
                                " input" + (arity == 1 ? "" : "s") + ", got " + std::to_string(n));
}

std::vector<DType> ScalarOp::output_dtypes(const std::vector<DType>& in) const {
  check_arity(in.size());
  const std::string name(info().name);
  auto refuse = [&](std::size_t i, const std::string& why) {
    throw std::invalid_argument(name + " " + why + " (input " + std::to_string(i) + " is " +
                                std::string(dtype_name(in[i])) + ")");
  };
  // Not a type error: PyTensor computes these on complex numbers (with NumPy), kiln does not yet.
  if (id_ != ScalarOpId::Composite)
    for (std::size_t i = 0; i < in.size(); ++i)
      if (is_complex(in[i]) && !scalar_op_takes_complex(id_))
        throw NotImplementedError(name + " does not take complex numbers in kiln yet (input " + std::to_string(i) +
                                  " is " + std::string(dtype_name(in[i])) + ")");
  switch (info().rule) {
    case DTypeRule::ComplexPart:
      return {complex_part_dtype(in[0])};
    case DTypeRule::Float64Out:
      return {DType::Float64};
    case DTypeRule::MakeComplex: {
      for (std::size_t i = 0; i < in.size(); ++i)
        if (is_complex(in[i])) refuse(i, "takes real parts");
      const DType up = upcast(in);
      const bool wide = up == DType::Float64 || up == DType::Int64 || up == DType::UInt64 ||
                        up == DType::Int32 || up == DType::UInt32;
      return {wide ? DType::Complex128 : DType::Complex64};
    }
    case DTypeRule::Upcast:
      return {upcast(in)};
    case DTypeRule::UpcastNoBool: {
      DType r = upcast(in);
      if (is_bool(r)) refuse(0, "does not accept only-boolean inputs");
      return {r};
    }
    case DTypeRule::UpcastMin8: {
      DType r = upcast(in);
      return {is_bool(r) ? DType::Int8 : r};
    }
    case DTypeRule::SameAsFirst:  // abs of a complex number is real
      return {id_ == ScalarOpId::Abs ? complex_part_dtype(in[0]) : in[0]};
    case DTypeRule::SameNoBool:
      if (is_bool(in[0])) refuse(0, "does not accept booleans");
      return {in[0]};
    case DTypeRule::UpgradeToFloat: {
      // Each input is upgraded first, then the results upcast: arctan2(int16, uint16) is
      // float32 (not the float64 of upgrading their upcast, int32).
      std::vector<DType> upgraded;
      for (DType d : in) upgraded.push_back(upgrade_to_float(d));
      return {upcast(upgraded)};
    }
    case DTypeRule::FloatOnly:
      if (!is_float(in[0])) refuse(0, "needs a float input");
      return {in[0]};
    case DTypeRule::ToBool:
      return {DType::Bool};
    case DTypeRule::TrueDiv: {
      bool all_discrete = true;
      for (DType d : in) all_discrete = all_discrete && is_discrete(d);
      return {all_discrete ? DType::Float64 : upcast(in)};
    }
    case DTypeRule::Discrete:
      for (std::size_t i = 0; i < in.size(); ++i) {
        if (is_float(in[i])) refuse(i, "needs bool or integer inputs");
        if (is_bool(in[i]) != is_bool(in[0])) refuse(i, "does not mix booleans and integers");
      }
      if (is_float(upcast(in)))  // uint64 with a signed type: no integer type holds both
        refuse(in.size() - 1, "has no integer type holding both uint64 and signed inputs");
      return {upcast(in)};
    case DTypeRule::Switch:
      if (is_complex(in[0])) refuse(0, "needs a real condition");
      return {upcast(in[1], in[2])};
    case DTypeRule::PolyGamma:
      if (!is_discrete(in[0])) refuse(0, "needs a discrete (integer or bool) order");
      return {upgrade_to_float(in[1])};
    case DTypeRule::Second:
      return {in[1]};
    case DTypeRule::Cast:
      // As pytensor.tensor.cast: dropping an imaginary part is ambiguous.
      if (is_complex(in[0]) && !is_complex(cast_dtype_))
        refuse(0, "cannot cast complex to " + std::string(dtype_name(cast_dtype_)) +
                      " (ambiguous: take real, imag, abs or angle first)");
      return {cast_dtype_};
    case DTypeRule::Composite: {
      auto expected = composite_->input_dtypes();
      for (std::size_t i = 0; i < in.size(); ++i)
        if (in[i] != expected[i])
          throw std::invalid_argument("Composite input " + std::to_string(i) + " is declared " +
                                      std::string(dtype_name(expected[i])) + " but receives " +
                                      std::string(dtype_name(in[i])));
      return composite_->output_dtypes();
    }
    case DTypeRule::Loop: {
      if (!is_discrete(in[0]) || is_bool(in[0])) refuse(0, "needs an integer number of steps");
      auto expected = composite_->input_dtypes();
      for (std::size_t i = 1; i < in.size(); ++i)
        if (in[i] != expected[i - 1])
          throw std::invalid_argument("ScalarLoop input " + std::to_string(i) + " is declared " +
                                      std::string(dtype_name(expected[i - 1])) + " but receives " +
                                      std::string(dtype_name(in[i])));
      return composite_->output_dtypes();
    }
  }
  throw std::logic_error("unhandled dtype rule");
}

std::vector<DType> ScalarOp::operand_dtypes(const std::vector<DType>& in) const {
  std::vector<DType> out = output_dtypes(in);
  switch (id_) {
    case ScalarOpId::Cast:
      return in;
    case ScalarOpId::Second:
      return {in[0], out[0]};
    case ScalarOpId::Switch:
      return {DType::Bool, out[0], out[0]};
    case ScalarOpId::PolyGamma:  // the order stays an integer
      return {DType::Int64, out[0]};
    case ScalarOpId::Real:
    case ScalarOpId::Imag:
    case ScalarOpId::Abs:
    case ScalarOpId::Angle:  // a complex operand stays complex (the result is one of its parts)
      if (is_complex(in[0])) return in;
      break;
    case ScalarOpId::Complex:  // the parts are computed in the output's part dtype
      return {complex_part_dtype(out[0]), complex_part_dtype(out[0])};
    default:
      break;
  }
  DType compute = out[0];
  if (info().rule == DTypeRule::ToBool) compute = in.size() == 1 ? in[0] : upcast(in);
  return std::vector<DType>(in.size(), compute);
}

nlohmann::json ScalarOp::to_json() const {
  if (id_ == ScalarOpId::Cast)
    return nlohmann::json{{"name", "cast"}, {"dtype", std::string(dtype_name(cast_dtype_))}};
  if (id_ == ScalarOpId::Composite) return composite_->to_json();
  if (id_ == ScalarOpId::ScalarLoop) {
    nlohmann::json j = composite_->to_json();
    j["name"] = "ScalarLoop";
    j["is_while"] = loop_is_while_;
    return j;
  }
  return std::string(info().name);
}

std::string ScalarOp::str() const {
  if (id_ == ScalarOpId::Cast) return "Cast{" + std::string(dtype_name(cast_dtype_)) + "}";
  if (id_ == ScalarOpId::Composite) {
    // PyTensor spells out small single-output Composites and abbreviates the others.
    if (composite_->outputs().size() > 1 || composite_->nodes().size() > 10) return "Composite{...}";
    return "Composite{" + composite_->expression() + "}";
  }
  return std::string(info().print_name);
}

bool ScalarOp::operator==(const ScalarOp& o) const {
  if (id_ != o.id_) return false;
  if (id_ == ScalarOpId::Cast) return cast_dtype_ == o.cast_dtype_;
  if (id_ == ScalarOpId::Composite || id_ == ScalarOpId::ScalarLoop)
    return loop_is_while_ == o.loop_is_while_ &&
           (composite_ == o.composite_ || composite_->to_json() == o.composite_->to_json());
  return true;
}

}  // namespace kiln
