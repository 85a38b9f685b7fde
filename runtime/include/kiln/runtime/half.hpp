// kiln runtime: float16, NumPy's half-precision float, as a storage type.
//
// IEEE binary16 as NumPy's float16 is: a value converts to float exactly and back with one
// rounding (to nearest, ties to even, NumPy's npy_double_to_half), so code that computes each
// operation in float and stores its result as half rounds as NumPy's float16 loops do.
// Conversions from double round once (not through float).
//
// The reference evaluator, generated libraries and standalone programs all embed THIS file, so
// they round alike. Self-contained C++17, header-only, no kiln dependency.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace kiln_scalar {

/// The half bits nearest `x` (NaN keeps the top bits of its payload and stays a NaN, as NumPy).
inline std::uint16_t half_bits_from_double(double x) {
  std::uint64_t d;
  std::memcpy(&d, &x, sizeof d);
  const auto sign = static_cast<std::uint16_t>((d >> 48) & 0x8000u);
  const int biased = static_cast<int>((d >> 52) & 0x7ff);
  const std::uint64_t fraction = d & 0xfffffffffffffull;
  if (biased == 0x7ff) {
    if (fraction == 0) return static_cast<std::uint16_t>(sign | 0x7c00u);
    const auto nan = static_cast<std::uint16_t>(0x7c00u | (fraction >> 42));
    return static_cast<std::uint16_t>(sign | (nan == 0x7c00u ? 0x7c01u : nan));
  }
  const int e = biased - 1023;
  if (e >= 16) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (e < -25) return sign;
  // The significand in units of the half's spacing at this magnitude, rounded to even; a carry
  // out of the significand moves into the exponent field (up to infinity) by the addition.
  const std::uint64_t significand = fraction | (1ull << 52);
  const int shift = 52 + (e >= -14 ? e - 10 : -24) - e;
  std::uint64_t q = significand >> shift;
  const std::uint64_t rest = significand & ((1ull << shift) - 1), halfway = 1ull << (shift - 1);
  if (rest > halfway || (rest == halfway && (q & 1))) ++q;
  const std::uint64_t bits = e >= -14 ? (static_cast<std::uint64_t>(e + 14) << 10) + q : q;
  return static_cast<std::uint16_t>(sign | bits);
}

/// The half bits nearest `x`: as from double (exact), except that a NaN's payload is read from
/// its own bits (a float-to-double conversion would quiet a signalling NaN; NumPy keeps it).
inline std::uint16_t half_bits_from_float(float x) {
  std::uint32_t f;
  std::memcpy(&f, &x, sizeof f);
  if ((f & 0x7f800000u) != 0x7f800000u || (f & 0x7fffffu) == 0) return half_bits_from_double(x);
  const auto nan = static_cast<std::uint16_t>(0x7c00u | ((f & 0x7fffffu) >> 13));
  return static_cast<std::uint16_t>(((f >> 16) & 0x8000u) | (nan == 0x7c00u ? 0x7c01u : nan));
}

/// The float equal to half bits `h` (exact).
inline float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu, fraction = h & 0x3ffu;
  std::uint32_t f;
  if (exponent == 0x1f) {
    f = sign | 0x7f800000u | (fraction << 13);
  } else if (exponent != 0) {
    f = sign | ((exponent + 112) << 23) | (fraction << 13);
  } else {
    const float v = static_cast<float>(fraction) * 5.9604644775390625e-8f;  // fraction * 2^-24, exact
    return sign ? -v : v;
  }
  float out;
  std::memcpy(&out, &f, sizeof out);
  return out;
}

/// NumPy's float16. Reads as float (implicitly, exactly); built from any arithmetic value with
/// one rounding. It has no binary operators of its own, so `a + b` on halves is float
/// arithmetic (rounded when stored back as half).
struct half {
  std::uint16_t bits = 0;

  half() = default;
  half(float x) : bits(half_bits_from_float(x)) {}
  half(double x) : bits(half_bits_from_double(x)) {}
  template <typename I, typename = std::enable_if_t<std::is_integral_v<I>>>
  half(I x) : bits(half_bits_from_double(static_cast<double>(x))) {}
  operator float() const { return half_bits_to_float(bits); }
  // In-place arithmetic as NumPy's float16 `a += b`: in float, rounded once.
  half& operator+=(float x) { return *this = half(static_cast<float>(*this) + x); }
  half& operator-=(float x) { return *this = half(static_cast<float>(*this) - x); }
  half& operator*=(float x) { return *this = half(static_cast<float>(*this) * x); }
  half& operator/=(float x) { return *this = half(static_cast<float>(*this) / x); }

  static constexpr half from_bits(std::uint16_t b) {
    half h;
    h.bits = b;
    return h;
  }
};

/// Floating-point element types: float, double, long double and half.
template <typename T>
inline constexpr bool is_float_v = std::is_floating_point_v<T> || std::is_same_v<T, half>;

/// The type sums and products of T are accumulated in: float for half (NumPy's float16 dot,
/// matmul and add.reduce accumulate in float32), T otherwise.
template <typename T>
using arithmetic_t = std::conditional_t<std::is_same_v<T, half>, float, T>;

}  // namespace kiln_scalar
