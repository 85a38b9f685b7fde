#include "io/type_json.h"

#include <set>

#include "ir/error.h"

namespace kiln {

using Json = nlohmann::json;
using OJson = nlohmann::ordered_json;

namespace {

}  // namespace

void check_keys(const Json& obj, const std::set<std::string>& allowed, const std::string& where,
                const std::string& what) {
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (!allowed.count(it.key()))
      throw UserError("unknown key \"" + it.key() + "\" in " + what, where + "/" + it.key());
}

namespace {

// One of the six words: the 128-bit numbers split into high and low halves (kiln.h).
constexpr std::size_t kStateHi = 0, kStateLo = 1, kIncHi = 2, kIncLo = 3, kHasUint32 = 4, kUinteger = 5;

std::uint64_t high(unsigned __int128 v) { return static_cast<std::uint64_t>(v >> 64); }
std::uint64_t low(unsigned __int128 v) { return static_cast<std::uint64_t>(v); }
unsigned __int128 join_halves(std::uint64_t hi, std::uint64_t lo) {
  return (static_cast<unsigned __int128>(hi) << 64) | lo;
}

unsigned __int128 read_uint128(const Json& obj, const char* key, const std::string& where) {
  const std::string at = where + "/" + key;
  if (!obj.contains(key)) throw UserError(std::string("a PCG64 state needs \"") + key + "\"", where);
  const Json& v = obj[key];
  if (!v.is_string())
    throw UserError(std::string("\"") + key +
                        "\" must be a decimal string (a 128-bit integer does not fit a JSON number), not " + v.dump(),
                    at);
  auto n = parse_uint128_decimal(v.get<std::string>());
  if (!n)
    throw UserError(std::string("\"") + key + "\" must be the decimal digits of an integer from 0 to 2**128 - 1, not " +
                        v.dump(),
                    at);
  return *n;
}

std::uint64_t read_small(const Json& obj, const char* key, std::uint64_t max, const std::string& where) {
  const std::string at = where + "/" + key;
  if (!obj.contains(key)) throw UserError(std::string("a PCG64 state needs \"") + key + "\"", where);
  const Json& v = obj[key];
  if (!(v.is_number_unsigned() || v.is_number_integer()) || v.get<std::int64_t>() < 0 ||
      v.get<std::uint64_t>() > max)
    throw UserError(std::string("\"") + key + "\" must be an integer from 0 to " + std::to_string(max) + ", not " +
                        v.dump(),
                    at);
  return v.get<std::uint64_t>();
}

}  // namespace

std::optional<unsigned __int128> parse_uint128_decimal(const std::string& text) {
  if (text.empty() || text.size() > 39) return std::nullopt;  // 2**128 - 1 has 39 digits
  unsigned __int128 v = 0;
  const unsigned __int128 max = ~static_cast<unsigned __int128>(0);
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const unsigned digit = static_cast<unsigned>(c - '0');
    if (v > (max - digit) / 10) return std::nullopt;
    v = v * 10 + digit;
  }
  return v;
}

std::string uint128_decimal(unsigned __int128 v) {
  if (v == 0) return "0";
  std::string s;
  while (v != 0) {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  }
  return s;
}

TensorType parse_kind_type(const Json& t, const std::string& where) {
  const Json& kind = t["kind"];
  if (!kind.is_string()) throw UserError("\"kind\" must be \"rng\" or \"none\", not " + kind.dump(), where + "/kind");
  const std::string k = kind.get<std::string>();
  if (k == "none") {
    check_keys(t, {"kind"}, where, "a none type");
    return none_type();
  }
  if (k == "rng") {
    check_keys(t, {"kind", "bit_generator"}, where, "an rng type");
    if (t.contains("bit_generator")) {
      const Json& bg = t["bit_generator"];
      if (!bg.is_string())
        throw UserError("\"bit_generator\" must be a string such as \"PCG64\", not " + bg.dump(),
                        where + "/bit_generator");
      if (bg != "PCG64")
        throw NotImplementedError("rng bit generator \"" + bg.get<std::string>() +
                                      "\" is not implemented in kiln (only \"PCG64\", NumPy's default)",
                                  where + "/bit_generator");
    }
    return rng_type();
  }
  throw UserError("\"kind\" must be \"rng\" or \"none\" (a tensor type is {\"dtype\": ..., \"shape\": [...]}), not " +
                      kind.dump(),
                  where + "/kind");
}

Array parse_kind_value(const Json* value, const TensorType& type, const std::string& where) {
  if (type.kind == TypeKind::None) {
    if (value && !value->is_null()) throw UserError("a none constant's value is null, not " + value->dump(), where);
    return Array::empty(DType::Bool, {0});
  }
  KILN_INTERNAL_ASSERT(type.kind == TypeKind::Rng, "parse_kind_value of a tensor type");
  const std::string form =
      "an rng value is {\"pcg64\": {\"state\": \"<decimal>\", \"inc\": \"<decimal>\", \"has_uint32\": 0 or 1, "
      "\"uinteger\": <uint32>}}";
  if (!value) throw UserError("an rng constant needs a value: " + form, where);
  if (!value->is_object() || !value->contains("pcg64")) throw UserError(form + ", not " + value->dump(), where);
  check_keys(*value, {"pcg64"}, where, "an rng value");
  const std::string at = where + "/pcg64";
  const Json& s = (*value)["pcg64"];
  if (!s.is_object()) throw UserError(form + "; \"pcg64\" must be an object", at);
  check_keys(s, {"state", "inc", "has_uint32", "uinteger"}, at, "a PCG64 state");
  const unsigned __int128 state = read_uint128(s, "state", at);
  const unsigned __int128 inc = read_uint128(s, "inc", at);
  Array words = Array::empty(DType::UInt64, {kRngStateWords});
  std::uint64_t* w = words.data<std::uint64_t>();
  w[kStateHi] = high(state);
  w[kStateLo] = low(state);
  w[kIncHi] = high(inc);
  w[kIncLo] = low(inc);
  w[kHasUint32] = read_small(s, "has_uint32", 1, at);
  w[kUinteger] = read_small(s, "uinteger", 0xffffffffu, at);
  return words;
}

OJson type_to_json(const TensorType& t) {
  if (t.kind == TypeKind::None) return OJson{{"kind", "none"}};
  if (t.kind == TypeKind::Rng) return OJson{{"kind", "rng"}, {"bit_generator", "PCG64"}};
  OJson shape = OJson::array();
  for (auto d : t.shape) {
    if (d == kUnknownLength)
      shape.push_back(nullptr);
    else
      shape.push_back(d);
  }
  return OJson{{"dtype", std::string(dtype_name(t.dtype))}, {"shape", shape}};
}

OJson kind_value_to_json(const TensorType& t, const Array& carrier) {
  if (t.kind == TypeKind::None) return OJson(nullptr);
  KILN_INTERNAL_ASSERT(t.kind == TypeKind::Rng && t.accepts(carrier), "kind_value_to_json of a tensor");
  const Array c = carrier.contiguous();
  const std::uint64_t* w = c.data<std::uint64_t>();
  OJson s;
  s["state"] = uint128_decimal(join_halves(w[kStateHi], w[kStateLo]));
  s["inc"] = uint128_decimal(join_halves(w[kIncHi], w[kIncLo]));
  s["has_uint32"] = w[kHasUint32];
  s["uinteger"] = w[kUinteger];
  return OJson{{"pcg64", s}};
}

}  // namespace kiln
