// One scalar value's JSON spelling, shared by graph files' constants (io/value_json.h builds
// arrays from it) and op props (a Composite's constants): numbers, true/false (or 0/1) for
// bools, and "nan", "inf", "-inf" for floats.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "ir/error.h"
#include "kiln/runtime/array.hpp"

namespace kiln {

/// Parses one element of C++ type T; a UserError at `ptr` (a JSON pointer) when `j` is not a
/// value of T's dtype (wrong kind, out of range, a fraction for an integer).
template <typename T>
T parse_json_element(const nlohmann::json& j, const std::string& ptr) {
  const std::string tname(dtype_name(DTypeOf<T>::value));
  if constexpr (kiln_scalar::is_complex_v<T>) {
    // A [real, imag] pair of the part type (or a real number: imag 0).
    using F = typename T::value_type;
    if (!j.is_array()) return T(parse_json_element<F>(j, ptr), F(0));
    if (j.size() != 2)
      throw UserError("a " + tname + " value must be a [real, imag] pair, not an array of " + std::to_string(j.size()),
                      ptr);
    return T(parse_json_element<F>(j[0], ptr + "/0"), parse_json_element<F>(j[1], ptr + "/1"));
  } else if constexpr (std::is_same_v<T, bool>) {
    if (j.is_boolean()) return j.get<bool>();
    if (j.is_number_integer() || j.is_number_unsigned()) {
      auto v = j.get<std::int64_t>();
      if (v == 0 || v == 1) return v == 1;
    }
    throw UserError("a bool value must be true, false, 0 or 1, not " + j.dump(), ptr);
  } else if constexpr (kiln_scalar::is_float_v<T>) {
    double v;
    if (j.is_string()) {
      const auto& s = j.get_ref<const std::string&>();
      if (s == "nan") v = std::numeric_limits<double>::quiet_NaN();
      else if (s == "inf") v = std::numeric_limits<double>::infinity();
      else if (s == "-inf") v = -std::numeric_limits<double>::infinity();
      else throw UserError("a float value must be a number, \"nan\", \"inf\" or \"-inf\", not \"" + s + "\"", ptr);
    } else if (j.is_number()) {
      v = j.get<double>();
    } else if (j.is_boolean()) {
      v = j.get<bool>() ? 1.0 : 0.0;
    } else {
      throw UserError("expected a number for a " + tname + " value, got " + std::string(j.type_name()), ptr);
    }
    if constexpr (std::is_same_v<T, float>) {
      if (std::isfinite(v) && std::fabs(v) > static_cast<double>(std::numeric_limits<float>::max()))
        throw UserError("value " + j.dump() + " does not fit in float32", ptr);
    }
    return static_cast<T>(v);
  } else {
    if (j.is_boolean()) return static_cast<T>(j.get<bool>() ? 1 : 0);
    if (j.is_number_unsigned()) {
      auto v = j.get<std::uint64_t>();
      if (v > static_cast<std::uint64_t>(std::numeric_limits<T>::max()))
        throw UserError("value " + j.dump() + " does not fit in " + tname, ptr);
      return static_cast<T>(v);
    }
    if (j.is_number_integer()) {
      auto v = j.get<std::int64_t>();
      if constexpr (std::is_unsigned_v<T>) {
        if (v < 0 || static_cast<std::uint64_t>(v) > std::numeric_limits<T>::max())
          throw UserError("value " + j.dump() + " does not fit in " + tname, ptr);
      } else {
        if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max())
          throw UserError("value " + j.dump() + " does not fit in " + tname, ptr);
      }
      return static_cast<T>(v);
    }
    if (j.is_number_float()) {
      double v = j.get<double>();
      if (std::trunc(v) == v && v >= static_cast<double>(std::numeric_limits<T>::min()) &&
          v <= static_cast<double>(std::numeric_limits<T>::max()) &&
          std::fabs(v) < 9007199254740992.0)
        return static_cast<T>(v);
      throw UserError("value " + j.dump() + " is not a " + tname, ptr);
    }
    throw UserError("expected an integer for a " + tname + " value, got " + std::string(j.type_name()), ptr);
  }
}

/// Parses one scalar element into a 0-d array of dtype `dt`.
Array parse_scalar(const nlohmann::json& j, DType dt, const std::string& pointer);

/// One element as JSON (number, bool, or "nan"/"inf"/"-inf"); `index` has one entry per
/// dimension (null for a 0-d array).
nlohmann::json element_to_json(const Array& a, const std::int64_t* index);

}  // namespace kiln
