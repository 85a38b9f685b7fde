// The non-tensor types of graph format version 2 in JSON: `{"kind": "rng", "bit_generator":
// "PCG64"}` and `{"kind": "none"}`, and their constant values — an rng's NumPy
// `bit_generator.state` (`{"pcg64": {"state": "<decimal>", "inc": "<decimal>", "has_uint32": 0,
// "uinteger": 0}}`, the 128-bit numbers as decimal strings) and none's `null`.
#pragma once

#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "ir/type.h"

namespace kiln {

/// A located UserError for the first key of object `obj` (at JSON pointer `where`) that is not in
/// `allowed`; `what` names the object in the message ("unknown key \"x\" in node").
void check_keys(const nlohmann::json& obj, const std::set<std::string>& allowed, const std::string& where,
                const std::string& what);

/// Parses a type object that has a "kind" key. "tensor" is not a kind a file writes (a tensor
/// type is `{"dtype", "shape"}`). UserErrors name `where` or a key below it; an rng over another
/// bit generator than PCG64 is a NotImplementedError.
TensorType parse_kind_type(const nlohmann::json& t, const std::string& where);

/// The constant value of a non-tensor variable, as its run-time carrier: for rng the six words
/// {state_hi, state_lo, inc_hi, inc_lo, has_uint32, uinteger} parsed exactly from the decimal
/// strings; for none an empty carrier (`value` is null, or absent when `value` is nullptr).
Array parse_kind_value(const nlohmann::json* value, const TensorType& type, const std::string& where);

/// A 128-bit unsigned decimal ("0" ... "340282366920938463463374607431768211455"), digits only;
/// nullopt for anything else (sign, spaces, empty, too large).
std::optional<unsigned __int128> parse_uint128_decimal(const std::string& text);
/// The decimal text of a 128-bit unsigned integer.
std::string uint128_decimal(unsigned __int128 v);

/// The JSON of a type (tensor, rng or none), keys in the order files write them.
nlohmann::ordered_json type_to_json(const TensorType& t);
/// The JSON of a non-tensor constant's value (the carrier back to {"pcg64": ...} or null).
nlohmann::ordered_json kind_value_to_json(const TensorType& t, const Array& carrier);

}  // namespace kiln
