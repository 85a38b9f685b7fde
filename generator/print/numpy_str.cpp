// NumPy's array printing, reimplemented from its documented behaviour (arrayprint: FloatingFormat
// with floatmode "maxprec", IntegerFormat, BoolFormat, _formatArray's line wrapping).
#include "print/numpy_str.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

namespace kiln {

namespace {

constexpr int kPrecision = 8;      // np.get_printoptions()["precision"]
constexpr int kLineWidth = 75;     // "linewidth"
constexpr std::int64_t kThreshold = 1000;  // "threshold"
constexpr std::int64_t kEdgeItems = 3;     // "edgeitems"

// A decimal number d0.d1d2... x 10^exponent; `digits` has no trailing zeros ("0" for zero).
struct Decimal {
  bool negative = false;
  std::string digits;
  int exponent = 0;
};

// Parses printf's "%.*e" output: [-]d[.ddd]e[+-]XX.
Decimal parse_scientific(const std::string& s) {
  Decimal d;
  std::size_t i = 0;
  if (s[i] == '-') {
    d.negative = true;
    ++i;
  }
  std::size_t e = s.find('e', i);
  for (std::size_t k = i; k < e; ++k)
    if (s[k] != '.') d.digits += s[k];
  d.exponent = std::atoi(s.c_str() + e + 1);
  while (d.digits.size() > 1 && d.digits.back() == '0') d.digits.pop_back();
  return d;
}

std::string printf_string(const char* fmt, int precision, double v) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, precision, v);
  return buf;
}

// `v` rounded to a float of `bits` bits (16, 32 or 64).
double rounded_to(double v, int bits) {
  if (bits == 16) return static_cast<float>(kiln_scalar::half(v));
  if (bits == 32) return static_cast<float>(v);
  return v;
}

// The shortest digits that read back as the same float of `bits` bits.
Decimal shortest(double v, int bits) {
  const int max_precision = bits == 16 ? 5 : bits == 32 ? 8 : 16;
  std::string s;
  for (int p = 0; p <= max_precision; ++p) {
    s = printf_string("%.*e", p, v);
    if (rounded_to(std::strtod(s.c_str(), nullptr), bits) == rounded_to(v, bits)) break;
  }
  return parse_scientific(s);
}

struct Parts {
  std::string int_part;  // with the sign
  std::string frac;      // digits after the point (may be empty)
  int exponent = 0;      // scientific form only
};

Parts positional_parts(const Decimal& d) {
  Parts p;
  const int n = static_cast<int>(d.digits.size());
  const int e = d.exponent;
  if (d.digits == "0") {
    p.int_part = "0";
  } else if (e >= 0) {
    p.int_part = d.digits.substr(0, static_cast<std::size_t>(std::min(n, e + 1))) +
                 std::string(static_cast<std::size_t>(std::max(0, e + 1 - n)), '0');
    if (n > e + 1) p.frac = d.digits.substr(static_cast<std::size_t>(e + 1));
  } else {
    p.int_part = "0";
    p.frac = std::string(static_cast<std::size_t>(-e - 1), '0') + d.digits;
  }
  if (d.negative) p.int_part = "-" + p.int_part;
  return p;
}

// Positional digits, unique but at most kPrecision after the point (Dragon4, trim=".").
Parts positional_capped(double v, int bits) {
  Parts p = positional_parts(shortest(v, bits));
  if (p.frac.size() <= static_cast<std::size_t>(kPrecision)) return p;
  std::string s = printf_string("%.*f", kPrecision, v);
  std::size_t dot = s.find('.');
  p.int_part = s.substr(0, dot);
  p.frac = s.substr(dot + 1);
  while (!p.frac.empty() && p.frac.back() == '0') p.frac.pop_back();
  return p;
}

// Scientific digits, unique but at most kPrecision after the point.
Parts scientific_capped(double v, int bits) {
  Decimal d = shortest(v, bits);
  if (d.digits.size() > static_cast<std::size_t>(kPrecision) + 1)
    d = parse_scientific(printf_string("%.*e", kPrecision, v));
  Parts p;
  p.int_part = (d.negative ? "-" : "") + d.digits.substr(0, 1);
  p.frac = d.digits.substr(1);
  p.exponent = d.exponent;
  return p;
}

std::string exponent_digits(int e) { return std::to_string(e < 0 ? -e : e); }

std::string exponent_str(int e, std::size_t min_digits) {
  std::string digits = exponent_digits(e);
  if (digits.size() < min_digits) digits = std::string(min_digits - digits.size(), '0') + digits;
  return std::string(e < 0 ? "-" : "+") + digits;
}

std::string pad_left(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::string non_finite_str(double v) { return std::isnan(v) ? "nan" : v < 0 ? "-inf" : "inf"; }

// NumPy's FloatingFormat (floatmode "maxprec", sign "-", suppress_small off), fitted on the
// values that will be shown.
class FloatFormat {
 public:
  FloatFormat(const std::vector<double>& data, int bits) : bits_(bits) {
    std::vector<double> finite;
    bool any_non_finite = false, neg_inf = false;
    for (double x : data) {
      if (std::isfinite(x)) {
        finite.push_back(x);
      } else {
        any_non_finite = true;
        if (std::isinf(x) && x < 0) neg_inf = true;
      }
    }
    double max_val = 0, min_val = 0;
    bool any_non_zero = false;
    for (double x : finite) {
      if (x == 0) continue;
      double a = std::fabs(rounded_to(x, bits));
      max_val = any_non_zero ? std::max(max_val, a) : a;
      min_val = any_non_zero ? std::min(min_val, a) : a;
      any_non_zero = true;
    }
    if (any_non_zero) {
      const double small = rounded_to(1e-4, bits);
      exp_format_ = max_val >= 1e8 || min_val < small || max_val / min_val > 1000.0;
    }
    if (finite.empty()) {
      exp_format_ = false;
    } else if (exp_format_) {
      for (double x : finite) {
        Parts p = scientific_capped(x, bits);
        exp_size_ = std::max(exp_size_, std::max<std::size_t>(2, exponent_digits(p.exponent).size()));
        precision_ = std::max(precision_, p.frac.size());
        pad_left_ = std::max(pad_left_, p.int_part.size());
      }
      pad_right_ = exp_size_ + 2 + precision_;
    } else {
      for (double x : finite) {
        Parts p = positional_capped(x, bits);
        pad_left_ = std::max(pad_left_, p.int_part.size());
        pad_right_ = std::max(pad_right_, p.frac.size());
      }
    }
    if (any_non_finite) {
      const std::size_t offset = pad_right_ + 1;
      const std::size_t inf_len = neg_inf ? 4 : 3;
      if (3 > offset) pad_left_ = std::max(pad_left_, 3 - offset);
      if (inf_len > offset) pad_left_ = std::max(pad_left_, inf_len - offset);
    }
  }

  std::string operator()(double x) const {
    if (!std::isfinite(x)) return pad_left(non_finite_str(x), pad_left_ + pad_right_ + 1);
    if (exp_format_) {
      Parts p = scientific_capped(x, bits_);
      if (p.frac.size() < precision_) {
        // min_digits: the further digits are the exact value's (zeros only when it ends there).
        Decimal d = parse_scientific(printf_string("%.*e", static_cast<int>(precision_), x));
        p.frac = d.digits.substr(1) + std::string(precision_ + 1 - d.digits.size(), '0');
        p.int_part = (d.negative ? "-" : "") + d.digits.substr(0, 1);
        p.exponent = d.exponent;
      }
      return pad_left(p.int_part, pad_left_) + "." + p.frac + "e" + exponent_str(p.exponent, exp_size_);
    }
    Parts p = positional_capped(x, bits_);
    return pad_left(p.int_part, pad_left_) + "." + p.frac +
           std::string(pad_right_ - std::min(pad_right_, p.frac.size()), ' ');
  }

 private:
  int bits_;
  bool exp_format_ = false;
  std::size_t precision_ = 0;
  std::size_t pad_left_ = 0, pad_right_ = 0;
  std::size_t exp_size_ = 0;
};

using ElementFormatter = std::function<std::string(const std::int64_t*)>;

// Indices shown along each axis (all of them, or the edges when summarising).
std::vector<std::vector<std::int64_t>> shown_indices(const Shape& shape, bool summarise) {
  std::vector<std::vector<std::int64_t>> out;
  for (std::int64_t n : shape) {
    std::vector<std::int64_t> idx;
    if (summarise && n > 2 * kEdgeItems) {
      for (std::int64_t i = 0; i < kEdgeItems; ++i) idx.push_back(i);
      for (std::int64_t i = n - kEdgeItems; i < n; ++i) idx.push_back(i);
    } else {
      for (std::int64_t i = 0; i < n; ++i) idx.push_back(i);
    }
    out.push_back(idx);
  }
  return out;
}

// Calls f on every shown element's index.
void for_each_shown(const std::vector<std::vector<std::int64_t>>& shown,
                    const std::function<void(const std::int64_t*)>& f) {
  const std::size_t nd = shown.size();
  std::vector<std::size_t> pos(nd, 0);
  std::vector<std::int64_t> idx(nd, 0);
  for (const auto& s : shown)
    if (s.empty()) return;
  while (true) {
    for (std::size_t d = 0; d < nd; ++d) idx[d] = shown[d][pos[d]];
    f(idx.data());
    std::size_t d = nd;
    while (d > 0) {
      --d;
      if (++pos[d] < shown[d].size()) break;
      pos[d] = 0;
      if (d == 0) return;
    }
    if (nd == 0) return;
  }
}

// A complex number as Python writes it: "1+2j", "-0.5-1e-07j" (parts by repr, no ".0").
std::string complex_repr(double re, double im, int bits) {
  const auto part = [bits](double x) {
    std::string s = python_float_repr(x, bits);
    if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.erase(s.size() - 2);
    return s;
  };
  const bool minus = std::signbit(im) && !std::isnan(im);
  return part(re) + (minus ? "-" : "+") + part(std::fabs(im)) + "j";
}

ElementFormatter make_formatter(const Array& a, bool summarise) {
  auto shown = shown_indices(a.shape(), summarise);
  ElementFormatter result;
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    auto value = [a](const std::int64_t* idx) { return *static_cast<const T*>(a.element_ptr(idx)); };
    if constexpr (std::is_same_v<T, bool>) {
      result = [value](const std::int64_t* idx) { return std::string(value(idx) ? " True" : "False"); };
    } else if constexpr (kiln_scalar::is_complex_v<T>) {
      constexpr int bits = static_cast<int>(sizeof(T) * 4);
      std::size_t width = 0;
      for_each_shown(shown, [&](const std::int64_t* idx) {
        width = std::max(width, complex_repr(value(idx).real(), value(idx).imag(), bits).size());
      });
      result = [value, width](const std::int64_t* idx) {
        return pad_left(complex_repr(value(idx).real(), value(idx).imag(), bits), width);
      };
    } else if constexpr (kiln_scalar::is_float_v<T>) {
      std::vector<double> data;
      for_each_shown(shown, [&](const std::int64_t* idx) { data.push_back(static_cast<double>(value(idx))); });
      FloatFormat fmt(data, static_cast<int>(sizeof(T) * 8));
      result = [value, fmt](const std::int64_t* idx) { return fmt(static_cast<double>(value(idx))); };
    } else {
      std::size_t width = 0;
      for_each_shown(shown, [&](const std::int64_t* idx) { width = std::max(width, std::to_string(value(idx)).size()); });
      result = [value, width](const std::int64_t* idx) { return pad_left(std::to_string(value(idx)), width); };
    }
  });
  return result;
}

std::string rstrip(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// _extendLine: appends `word` to `line`, first wrapping when it would pass `width`.
void extend_line(std::string& s, std::string& line, const std::string& word, std::size_t width,
                 const std::string& next_prefix) {
  bool wrap = line.size() + word.size() > width && line.size() > next_prefix.size();
  if (wrap) {
    s += rstrip(line) + "\n";
    line = next_prefix;
  }
  line += word;
}

// _formatArray's recursion.
class ArrayFormatter {
 public:
  ArrayFormatter(const Array& a, bool summarise)
      : a_(a), summarise_(summarise), element_(make_formatter(a, summarise)) {}

  std::string format() {
    index_.clear();
    return recurse(" ", kLineWidth);
  }

 private:
  std::string recurse(const std::string& hanging, std::size_t width) {
    const std::size_t axis = index_.size();
    const std::size_t axes_left = static_cast<std::size_t>(a_.ndim()) - axis;
    if (axes_left == 0) return element_(index_.data());
    const std::string next_hanging = hanging + " ";
    const std::size_t next_width = width - 1;
    const std::int64_t len = a_.shape()[axis];
    const bool summary = summarise_ && 2 * kEdgeItems < len;
    const std::int64_t leading = summary ? kEdgeItems : 0;
    const std::int64_t trailing = summary ? kEdgeItems : len;
    auto sub = [&](std::int64_t i) {
      index_.push_back(i);
      std::string r = recurse(next_hanging, next_width);
      index_.pop_back();
      return r;
    };
    std::string s;
    if (axes_left == 1) {
      const std::size_t elem_width = width - 1;
      std::string line = hanging;
      for (std::int64_t i = 0; i < leading; ++i) {
        extend_line(s, line, sub(i), elem_width, hanging);
        line += " ";
      }
      if (summary) {
        extend_line(s, line, "...", elem_width, hanging);
        line += " ";
      }
      for (std::int64_t i = trailing; i > 1; --i) {
        extend_line(s, line, sub(len - i), elem_width, hanging);
        line += " ";
      }
      extend_line(s, line, sub(len - 1), elem_width, hanging);
      s += line;
    } else {
      const std::string line_sep(axes_left - 1, '\n');
      for (std::int64_t i = 0; i < leading; ++i) s += hanging + sub(i) + line_sep;
      if (summary) s += hanging + "..." + line_sep;
      for (std::int64_t i = trailing; i > 1; --i) s += hanging + sub(len - i) + line_sep;
      s += hanging + sub(len - 1);
    }
    return "[" + s.substr(hanging.size()) + "]";
  }

  const Array& a_;
  bool summarise_;
  ElementFormatter element_;
  std::vector<std::int64_t> index_;
};

std::string scalar_str(const Array& a) {
  std::string out;
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T v = *static_cast<const T*>(a.data());
    if constexpr (std::is_same_v<T, bool>)
      out = v ? "True" : "False";
    else if constexpr (kiln_scalar::is_complex_v<T>)
      out = "(" + complex_repr(v.real(), v.imag(), static_cast<int>(sizeof(T) * 4)) + ")";
    else if constexpr (kiln_scalar::is_float_v<T>)
      out = python_float_repr(static_cast<double>(v), static_cast<int>(sizeof(T) * 8));
    else
      out = std::to_string(v);
  });
  return out;
}

std::string strip(const std::string& s) {
  std::size_t b = s.find_first_not_of(" \t\n");
  if (b == std::string::npos) return "";
  std::size_t e = s.find_last_not_of(" \t\n");
  return s.substr(b, e - b + 1);
}

}  // namespace

std::string python_float_repr(double v, int bits) {
  if (!std::isfinite(v)) return non_finite_str(v);
  Decimal d = shortest(v, bits);
  const double a = std::fabs(v);
  if (a == 0 || (a >= 1e-4 && a < 1e16)) {
    Parts p = positional_parts(d);
    return p.int_part + "." + (p.frac.empty() ? "0" : p.frac);
  }
  std::string mantissa = d.digits.substr(0, 1);
  if (d.digits.size() > 1) mantissa += "." + d.digits.substr(1);
  return (d.negative ? "-" : "") + mantissa + "e" + exponent_str(d.exponent, 2);
}

std::string numpy_str(const Array& a) {
  if (a.ndim() == 0) return scalar_str(a);
  if (a.size() == 0) return "[]";
  ArrayFormatter f(a, a.size() > kThreshold);
  return f.format();
}

std::string constant_str(const Array& value, const std::string& name) {
  std::string data;
  for (char c : numpy_str(value))
    if (c != '\n') data += c;
  if (data.size() > 20) data = strip(data.substr(0, 10)) + " ... " + strip(data.substr(data.size() - 10));
  return name.empty() ? data : name + "{" + data + "}";
}

}  // namespace kiln
