// Constant values in graph files: nested JSON arrays of numbers (or a bare number), the strings
// "nan" / "inf" / "-inf", booleans as true/false or 0/1, and {"base64": ..., "order": "C"|"F"}
// with little-endian raw data. ({"npy": path} is resolved by the loader, which knows the
// graph file's folder.)
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "ir/scalar_json.h"
#include "ir/type.h"

namespace kiln {

/// Parses a constant value of the given type. Unknown lengths in `type` take the data's
/// length. Errors are UserErrors whose place is `pointer` (a JSON pointer) or below it.
Array parse_value(const nlohmann::json& j, const TensorType& type, const std::string& pointer);

/// Writes a value: nested arrays for small values, {"base64": ..., "order": "C"} for those of
/// more than `inline_limit` elements. Deterministic.
nlohmann::json value_to_json(const Array& a, std::size_t inline_limit = 256);

/// Base64 (RFC 4648, with padding).
std::string base64_encode(const void* data, std::size_t n);
/// Decodes base64; throws UserError at `pointer` on malformed input.
std::string base64_decode(const std::string& text, const std::string& pointer);

}  // namespace kiln
