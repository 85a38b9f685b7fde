#include "io/value_json.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "ir/error.h"
#include "ir/scalar_json.h"

namespace kiln {

namespace {

using Json = nlohmann::json;

void infer_data_shape(const Json& j, std::size_t depth, std::size_t ndim, Shape& shape,
                      const std::string& ptr, bool complex) {
  if (depth == ndim) {
    if (j.is_array() && !complex)  // (a complex element is a [real, imag] pair)
      throw UserError("value has more nesting than its type's rank " + std::to_string(ndim), ptr);
    return;
  }
  if (!j.is_array())
    throw UserError("value has rank " + std::to_string(depth) + " but its type has rank " +
                        std::to_string(ndim),
                    ptr);
  shape[depth] = static_cast<std::int64_t>(j.size());
  if (!j.empty()) infer_data_shape(j[0], depth + 1, ndim, shape, ptr + "/0", complex);
}

}  // namespace

std::string base64_encode(const void* data, std::size_t n) {
  static const char* abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto* p = static_cast<const unsigned char*>(data);
  std::string out;
  out.reserve((n + 2) / 3 * 4);
  for (std::size_t i = 0; i < n; i += 3) {
    std::uint32_t v = static_cast<std::uint32_t>(p[i]) << 16;
    if (i + 1 < n) v |= static_cast<std::uint32_t>(p[i + 1]) << 8;
    if (i + 2 < n) v |= p[i + 2];
    out += abc[(v >> 18) & 63];
    out += abc[(v >> 12) & 63];
    out += i + 1 < n ? abc[(v >> 6) & 63] : '=';
    out += i + 2 < n ? abc[v & 63] : '=';
  }
  return out;
}

std::string base64_decode(const std::string& text, const std::string& pointer) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string clean;
  for (char c : text)
    if (c != '\n' && c != '\r' && c != ' ') clean += c;
  if (clean.size() % 4 != 0) throw UserError("base64 data length is not a multiple of 4", pointer);
  std::string out;
  out.reserve(clean.size() / 4 * 3);
  for (std::size_t i = 0; i < clean.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      char c = clean[i + static_cast<std::size_t>(k)];
      if (c == '=' && i + 4 == clean.size() && k >= 2) {
        v[k] = 0;
        ++pad;
      } else {
        v[k] = val(c);
        if (v[k] < 0 || pad) throw UserError("malformed base64 data", pointer);
      }
    }
    std::uint32_t w = (static_cast<std::uint32_t>(v[0]) << 18) | (static_cast<std::uint32_t>(v[1]) << 12) |
                      (static_cast<std::uint32_t>(v[2]) << 6) | static_cast<std::uint32_t>(v[3]);
    out += static_cast<char>((w >> 16) & 255);
    if (pad < 2) out += static_cast<char>((w >> 8) & 255);
    if (pad < 1) out += static_cast<char>(w & 255);
  }
  return out;
}

namespace {

// The bytes of an array of `shape`, or a UserError at `pointer` when no array can have that
// shape (NumPy's limit, kiln/runtime/array.hpp's checked_nbytes).
std::int64_t array_bytes(DType dt, const Shape& shape, const std::string& pointer) {
  try {
    return checked_nbytes(shape, dtype_size(dt));
  } catch (const std::length_error& e) {
    throw UserError(e.what(), pointer);
  }
}

}  // namespace

Array parse_value(const Json& j, const TensorType& type, const std::string& pointer) {
  const std::size_t nd = type.shape.size();
  if (j.is_object()) {
    if (!j.contains("base64"))
      throw UserError("a value object must be {\"npy\": path} or {\"base64\": ..., \"order\": ...}",
                      pointer);
    for (auto it = j.begin(); it != j.end(); ++it)
      if (it.key() != "base64" && it.key() != "order")
        throw UserError("unknown key \"" + it.key() + "\" in a base64 value", pointer);
    if (!j["base64"].is_string()) throw UserError("base64 data must be a string", pointer + "/base64");
    std::string order = "C";
    if (j.contains("order")) {
      if (!j["order"].is_string() || (j["order"] != "C" && j["order"] != "F"))
        throw UserError("order must be \"C\" or \"F\"", pointer + "/order");
      order = j["order"].get<std::string>();
    }
    if (!type.fully_static())
      throw UserError("a base64 value needs a type with a fully static shape", pointer);
    // Sized before anything is allocated: a type of 2^40 elements with 8 bytes of data is
    // refused by the data's length, not by running out of memory.
    const std::int64_t needed = array_bytes(type.dtype, type.shape, pointer);
    std::string bytes = base64_decode(j["base64"].get<std::string>(), pointer + "/base64");
    if (bytes.size() != static_cast<std::uint64_t>(needed))
      throw UserError("base64 data has " + std::to_string(bytes.size()) + " bytes but type " +
                          type.str() + " needs " + std::to_string(needed),
                      pointer + "/base64");
    Array a = Array::empty(type.dtype, type.shape);
    if (order == "C" || nd <= 1) {
      if (!bytes.empty()) std::memcpy(a.data(), bytes.data(), bytes.size());
    } else {
      // Fortran order: reversed strides over the decoded bytes, then a C-contiguous copy.
      Shape fstrides(nd);
      std::int64_t s = 1;
      for (std::size_t i = 0; i < nd; ++i) {
        fstrides[i] = s;
        s *= type.shape[i];
      }
      auto holder = std::make_shared<std::string>(std::move(bytes));
      Array f = Array::view_of(holder, holder->data(), type.dtype, type.shape, fstrides);
      f.copy_into(a);
    }
    if (type.dtype == DType::Bool) {
      for (std::size_t i = 0; i < a.nbytes(); ++i)
        if (a.data<unsigned char>()[i] > 1)
          throw UserError("bool data must be 0 or 1 bytes", pointer + "/base64");
    }
    return a;
  }
  Shape shape(nd, 0);
  infer_data_shape(j, 0, nd, shape, pointer, is_complex(type.dtype));
  // Below an empty dimension the data says nothing: the type's static lengths hold there (so a
  // (0, 3) value written as [] keeps its shape), unknown ones become 0.
  for (std::size_t i = 0; i + 1 < nd; ++i) {
    if (shape[i] != 0) continue;
    for (std::size_t k = i + 1; k < nd; ++k)
      shape[k] = type.shape[k] == kUnknownLength ? 0 : type.shape[k];
    break;
  }
  for (std::size_t i = 0; i < nd; ++i)
    if (type.shape[i] != kUnknownLength && type.shape[i] != shape[i])
      throw UserError("value has length " + std::to_string(shape[i]) + " in dimension " +
                          std::to_string(i) + " but its type " + type.str() + " says " +
                          std::to_string(type.shape[i]),
                      pointer);
  array_bytes(type.dtype, shape, pointer);  // (0, 10^17, 1000) from "value": []
  Array a = Array::empty(type.dtype, shape);
  visit_dtype(type.dtype, [&](auto t) {
    using T = decltype(t);
    T* out = a.data<T>();
    std::int64_t pos = 0;
    // Walk the nested arrays row-major, checking every row's length (ragged data is an error).
    auto walk = [&](auto&& self, const Json& node, std::size_t depth, const std::string& ptr) -> void {
      if (depth == nd) {
        out[pos++] = parse_json_element<T>(node, ptr);
        return;
      }
      if (!node.is_array() || static_cast<std::int64_t>(node.size()) != shape[depth])
        throw UserError("ragged value: expected an array of length " + std::to_string(shape[depth]),
                        ptr);
      for (std::size_t i = 0; i < node.size(); ++i)
        self(self, node[i], depth + 1, ptr + "/" + std::to_string(i));
    };
    walk(walk, j, 0, pointer);
  });
  return a;
}

Json value_to_json(const Array& a, std::size_t inline_limit) {
  if (static_cast<std::size_t>(a.size()) > inline_limit) {
    Array c = a.contiguous();
    return Json{{"base64", base64_encode(c.data(), c.nbytes())}, {"order", "C"}};
  }
  const int nd = a.ndim();
  std::vector<std::int64_t> idx(static_cast<std::size_t>(nd), 0);
  auto build = [&](auto&& self, int depth) -> Json {
    if (depth == nd) return element_to_json(a, idx.data());
    Json arr = Json::array();
    for (std::int64_t i = 0; i < a.shape()[static_cast<std::size_t>(depth)]; ++i) {
      idx[static_cast<std::size_t>(depth)] = i;
      arr.push_back(self(self, depth + 1));
    }
    return arr;
  };
  return build(build, 0);
}

}  // namespace kiln
