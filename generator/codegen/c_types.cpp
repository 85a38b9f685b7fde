#include "codegen/c_types.h"

#include <cmath>
#include <cstdio>

namespace kiln {

std::string ctype(DType dt) {
  switch (dt) {
    case DType::Bool: return "bool";
    case DType::Int8: return "int8_t";
    case DType::Int16: return "int16_t";
    case DType::Int32: return "int32_t";
    case DType::Int64: return "int64_t";
    case DType::UInt8: return "uint8_t";
    case DType::UInt16: return "uint16_t";
    case DType::UInt32: return "uint32_t";
    case DType::UInt64: return "uint64_t";
    case DType::Float32: return "float";
    case DType::Float64: return "double";
    case DType::Float16: return "kiln_scalar::half";
    case DType::Complex64: return "std::complex<float>";
    case DType::Complex128: return "std::complex<double>";
  }
  return "void";
}

std::string dl_dtype_literal(DType dt) {
  DLDataType t = to_dlpack(dt);
  return "DLDataType{" + std::to_string(t.code) + ", " + std::to_string(t.bits) + ", 1}";
}

std::string tensor_type(const Variable& v) {
  return "kg::Tensor<" + ctype(v.dtype()) + ", " + std::to_string(v.ndim()) + ">";
}

namespace {
std::string float_literal(double x, bool single) {
  if (std::isnan(x)) return single ? "__builtin_nanf(\"\")" : "__builtin_nan(\"\")";
  if (std::isinf(x)) return std::string(x < 0 ? "-" : "") + (single ? "__builtin_inff()" : "__builtin_inf()");
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", x);
  return std::string(buf) + (single ? "f" : "");
}
}  // namespace

std::string scalar_literal(const Array& v, bool c_style) {
  std::string out;
  visit_dtype(v.dtype(), [&](auto t) {
    using T = decltype(t);
    T x = *v.data<T>();
    if constexpr (kiln_scalar::is_complex_v<T>) {
      const bool single = std::is_same_v<typename T::value_type, float>;
      out = ctype(v.dtype()) + "(" + float_literal(static_cast<double>(x.real()), single) + ", " +
            float_literal(static_cast<double>(x.imag()), single) + ")";
    } else if constexpr (std::is_same_v<T, bool>) {
      out = x ? "true" : "false";
    } else if constexpr (std::is_same_v<T, kiln_scalar::half>) {
      char buf[48];
      std::snprintf(buf, sizeof buf, "kiln_scalar::half::from_bits(0x%04x)", static_cast<unsigned>(x.bits));
      out = buf;
    } else if constexpr (kiln_scalar::is_float_v<T>) {
      out = float_literal(static_cast<double>(x), std::is_same_v<T, float>);
    } else if constexpr (std::is_signed_v<T>) {
      long long y = static_cast<long long>(x);
      out = y == INT64_MIN ? "(-9223372036854775807LL - 1)" : std::to_string(y) + "LL";
      if (c_style) out = y == INT64_MIN ? "(-9223372036854775807L - 1)" : std::to_string(y) + "L";
      out = (c_style ? "((" + ctype(v.dtype()) + ")(" : "static_cast<" + ctype(v.dtype()) + ">(") + out + ")" + (c_style ? ")" : "");
    } else {
      const std::string digits = std::to_string(static_cast<unsigned long long>(x)) + (c_style ? "UL" : "ULL");
      out = c_style ? "((" + ctype(v.dtype()) + ")(" + digits + "))" : "static_cast<" + ctype(v.dtype()) + ">(" + digits + ")";
    }
  });
  return out;
}

}  // namespace kiln
