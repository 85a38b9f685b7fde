// kiln runtime: NumPy-like text for arrays ("[[1. 2.]\n [3. 4.]]"), used by the CLI and by
// generated standalone programs to print outputs. Header-only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "kiln/runtime/array.hpp"

namespace kiln {


/// One float as NumPy prints it (8 significant digits, "nan", "inf").
inline std::string format_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.8g", v);
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos) s += ".";
  return s;
}

/// One element of any dtype as NumPy prints it.
inline std::string format_element(const Array& a, const std::int64_t* idx) {
  std::string out;
  visit_dtype(a.dtype(), [&](auto t) {
    using T = decltype(t);
    T v = *static_cast<const T*>(a.element_ptr(idx));
    if constexpr (std::is_same_v<T, bool>)
      out = v ? "True" : "False";
    else if constexpr (kiln_scalar::is_complex_v<T>)
      out = format_float(static_cast<double>(v.real())) + (std::signbit(v.imag()) ? "-" : "+") +
            format_float(std::fabs(static_cast<double>(v.imag()))) + "j";
    else if constexpr (kiln_scalar::is_float_v<T>)
      out = format_float(static_cast<double>(v));
    else if constexpr (std::is_signed_v<T>)
      out = std::to_string(static_cast<long long>(v));
    else
      out = std::to_string(static_cast<unsigned long long>(v));
  });
  return out;
}


/// NumPy-style repr of the values; arrays with more than `threshold` elements are summarised
/// with "..." (the first and last 3 per dimension).
inline std::string format_array(const Array& a, std::int64_t threshold = 1000) {
  const int nd = a.ndim();
  std::vector<std::int64_t> idx(static_cast<std::size_t>(nd), 0);
  if (nd == 0) return format_element(a, idx.data());
  const bool summarise = a.size() > threshold;
  // Pad every element to the widest one, as NumPy does.
  std::size_t width = 0;
  a.for_each_index([&](const std::int64_t* i) { width = std::max(width, format_element(a, i).size()); });
  auto rec = [&](auto&& self, int depth) -> std::string {
    std::string s = "[";
    std::int64_t n = a.shape()[static_cast<std::size_t>(depth)];
    for (std::int64_t i = 0; i < n; ++i) {
      if (summarise && n > 6 && i == 3) {
        s += depth + 1 == nd ? " ..." : "\n" + std::string(static_cast<std::size_t>(depth) + 1, ' ') + "...";
        i = n - 3;
      }
      idx[static_cast<std::size_t>(depth)] = i;
      if (i > 0) {
        if (depth + 1 == nd)
          s += " ";
        else
          s += std::string(static_cast<std::size_t>(nd - depth - 1), '\n') +
               std::string(static_cast<std::size_t>(depth) + 1, ' ');
      }
      if (depth + 1 == nd) {
        std::string e = format_element(a, idx.data());
        s += std::string(width - e.size(), ' ') + e;
      } else {
        s += self(self, depth + 1);
      }
    }
    return s + "]";
  };
  return rec(rec, 0);
}

}  // namespace kiln
