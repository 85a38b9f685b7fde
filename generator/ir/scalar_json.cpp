#include "ir/scalar_json.h"

namespace kiln {

using Json = nlohmann::json;

Array parse_scalar(const Json& j, DType dt, const std::string& pointer) {
  Array a = Array::empty(dt, {});
  visit_dtype(dt, [&](auto t) {
    using T = decltype(t);
    *a.data<T>() = parse_json_element<T>(j, pointer);
  });
  return a;
}

Json element_to_json(const Array& a, const std::int64_t* index) {
  Json out;
  visit_dtype(a.dtype(), [&](auto t) {
    using T = decltype(t);
    T v = *static_cast<const T*>(a.element_ptr(index));
    const auto real_json = [](double x) -> Json {
      if (std::isnan(x)) return "nan";
      if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
      return x;
    };
    if constexpr (kiln_scalar::is_complex_v<T>) {
      out = Json::array({real_json(static_cast<double>(v.real())), real_json(static_cast<double>(v.imag()))});
    } else if constexpr (kiln_scalar::is_float_v<T>) {
      out = real_json(static_cast<double>(v));
    } else if constexpr (std::is_same_v<T, bool>) {
      out = v;
    } else if constexpr (std::is_unsigned_v<T>) {
      out = static_cast<std::uint64_t>(v);
    } else {
      out = static_cast<std::int64_t>(v);
    }
  });
  return out;
}

}  // namespace kiln
