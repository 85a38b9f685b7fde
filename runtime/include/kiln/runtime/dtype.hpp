// kiln runtime: element types.
//
// One table (KILN_DTYPES) lists every dtype kiln supports; the enum, the names, the sizes and
// the DLPack codes all come from it. The numeric values of DType are part of the ABI (they are
// the `kiln_dtype` codes of kiln.h): append only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <dlpack/dlpack.h>

#include "kiln/runtime/complex.hpp"
#include "kiln/runtime/half.hpp"

// float16's limits for the evaluator's generic code (not in half.hpp: generated code
// embeds half.hpp inside an anonymous namespace, where std cannot be specialised).
template <>
struct std::numeric_limits<kiln_scalar::half> {
  using half = kiln_scalar::half;
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr int digits = 11;
  static constexpr half min() { return half::from_bits(0x0400); }
  static constexpr half max() { return half::from_bits(0x7bff); }
  static constexpr half lowest() { return half::from_bits(0xfbff); }
  static constexpr half epsilon() { return half::from_bits(0x1400); }
  static constexpr half infinity() { return half::from_bits(0x7c00); }
  static constexpr half quiet_NaN() { return half::from_bits(0x7e00); }
  static constexpr half denorm_min() { return half::from_bits(0x0001); }
};


namespace kiln {

/// X(Enum, CType, "name", DLPack type code, bits): the real dtypes, then the complex ones.
#define KILN_DTYPES(X) KILN_REAL_DTYPES(X) KILN_COMPLEX_DTYPES(X)
#define KILN_REAL_DTYPES(X)                      \
  X(Bool, bool, "bool", 6, 8)                    \
  X(Int8, std::int8_t, "int8", kDLInt, 8)        \
  X(Int16, std::int16_t, "int16", kDLInt, 16)    \
  X(Int32, std::int32_t, "int32", kDLInt, 32)    \
  X(Int64, std::int64_t, "int64", kDLInt, 64)    \
  X(UInt8, std::uint8_t, "uint8", kDLUInt, 8)    \
  X(UInt16, std::uint16_t, "uint16", kDLUInt, 16) \
  X(UInt32, std::uint32_t, "uint32", kDLUInt, 32) \
  X(UInt64, std::uint64_t, "uint64", kDLUInt, 64) \
  X(Float32, float, "float32", kDLFloat, 32)     \
  X(Float64, double, "float64", kDLFloat, 64)   \
  X(Float16, kiln_scalar::half, "float16", kDLFloat, 16)
#define KILN_COMPLEX_DTYPES(X)                                  \
  X(Complex64, std::complex<float>, "complex64", kDLComplex, 64) \
  X(Complex128, std::complex<double>, "complex128", kDLComplex, 128)

/// DLPack's type code for booleans (kDLBool in DLPack >= 0.8; Debian 12 ships 0.6, which
/// predates it, so the value is spelled out here).
constexpr std::uint8_t kDLBoolCode = 6;

enum class DType : std::uint8_t {
#define KILN_X(E, T, N, C, B) E,
  KILN_DTYPES(KILN_X)
#undef KILN_X
};

constexpr int kNumDTypes = 0
#define KILN_X(E, T, N, C, B) +1
    KILN_DTYPES(KILN_X)
#undef KILN_X
    ;

/// The dtype's name as written in graph files and .npy descriptions ("float64").
constexpr std::string_view dtype_name(DType dt) {
  switch (dt) {
#define KILN_X(E, T, N, C, B) \
  case DType::E:              \
    return N;
    KILN_DTYPES(KILN_X)
#undef KILN_X
  }
  return "?";
}

/// Size of one element in bytes.
constexpr std::size_t dtype_size(DType dt) {
  switch (dt) {
#define KILN_X(E, T, N, C, B) \
  case DType::E:              \
    return sizeof(T);
    KILN_DTYPES(KILN_X)
#undef KILN_X
  }
  return 0;
}

/// Parses a dtype name; nullopt for anything else.
inline std::optional<DType> dtype_from_name(std::string_view name) {
#define KILN_X(E, T, N, C, B) \
  if (name == N) return DType::E;
  KILN_DTYPES(KILN_X)
#undef KILN_X
  return std::nullopt;
}

inline DLDataType to_dlpack(DType dt) {
  switch (dt) {
#define KILN_X(E, T, N, C, B) \
  case DType::E:              \
    return DLDataType{static_cast<std::uint8_t>(C), B, 1};
    KILN_DTYPES(KILN_X)
#undef KILN_X
  }
  return DLDataType{0, 0, 0};
}

/// The kiln dtype of a DLPack type; nullopt for vector lanes or unsupported types.
inline std::optional<DType> from_dlpack(DLDataType t) {
  if (t.lanes != 1) return std::nullopt;
#define KILN_X(E, T, N, C, B) \
  if (t.code == static_cast<std::uint8_t>(C) && t.bits == B) return DType::E;
  KILN_DTYPES(KILN_X)
#undef KILN_X
  return std::nullopt;
}

constexpr bool is_bool(DType dt) { return dt == DType::Bool; }
constexpr bool is_float(DType dt) {
  return dt == DType::Float16 || dt == DType::Float32 || dt == DType::Float64;
}
/// The dtype arithmetic on `dt` is done in: float32 for float16 (NumPy computes each float16
/// operation in float32 and rounds the result), `dt` itself otherwise.
constexpr DType arithmetic_dtype(DType dt) { return dt == DType::Float16 ? DType::Float32 : dt; }
constexpr bool is_complex(DType dt) { return dt == DType::Complex64 || dt == DType::Complex128; }
/// The dtype of a complex dtype's parts (float32 for complex64); `dt` itself otherwise.
constexpr DType complex_part_dtype(DType dt) {
  return dt == DType::Complex64 ? DType::Float32 : dt == DType::Complex128 ? DType::Float64 : dt;
}
constexpr bool is_signed_int(DType dt) {
  return dt == DType::Int8 || dt == DType::Int16 || dt == DType::Int32 || dt == DType::Int64;
}
constexpr bool is_unsigned_int(DType dt) {
  return dt == DType::UInt8 || dt == DType::UInt16 || dt == DType::UInt32 || dt == DType::UInt64;
}
constexpr bool is_integer(DType dt) { return is_signed_int(dt) || is_unsigned_int(dt); }
/// bool and integers: PyTensor's "discrete" dtypes.
constexpr bool is_discrete(DType dt) { return !is_float(dt) && !is_complex(dt); }

/// Maps a C++ element type to its DType (for typed helpers).
template <typename T>
struct DTypeOf;
#define KILN_X(E, T, N, C, B)                     \
  template <>                                     \
  struct DTypeOf<T> {                             \
    static constexpr DType value = DType::E;      \
  };
KILN_DTYPES(KILN_X)
#undef KILN_X

/// Calls f(T{}) with a value of the C++ type of `dt` (a compile-time dispatch over dtypes).
template <typename F>
decltype(auto) visit_dtype(DType dt, F&& f) {
  switch (dt) {
#define KILN_X(E, T, N, C, B) \
  case DType::E:              \
    return f(T{});
    KILN_DTYPES(KILN_X)
#undef KILN_X
  }
  return f(double{});
}

/// visit_dtype over the real dtypes alone, for code that orders values or reads them as
/// numbers (indices, sizes, sorting). No complex value reaches it — make_node refuses complex
/// operands for the ops that do not take them — and a complex dtype throws std::logic_error.
template <typename F>
decltype(auto) visit_real_dtype(DType dt, F&& f) {
  switch (dt) {
#define KILN_X(E, T, N, C, B) \
  case DType::E:              \
    return f(T{});
    KILN_REAL_DTYPES(KILN_X)
#undef KILN_X
    default:
      break;
  }
  throw std::logic_error("a " + std::string(dtype_name(dt)) + " value reached code for real numbers");
}

}  // namespace kiln
