#include "ops/array_util.h"

#include <stdexcept>
#include <string>

#include "ir/error.h"
#include "kiln/runtime/scalar_math.hpp"

namespace kiln {

Array row_view(const Array& a, std::int64_t i) {
  Shape shape(a.shape().begin() + 1, a.shape().end());
  Shape strides(a.strides().begin() + 1, a.strides().end());
  return a.view(shape, strides, i * a.strides()[0]);
}

Array astype(const Array& a, DType to) {
  if (a.dtype() == to && a.is_c_contiguous()) return a;
  Array out = Array::empty(to, a.shape());
  visit_dtype(a.dtype(), [&](auto fv) {
    using From = decltype(fv);
    visit_dtype(to, [&](auto tv) {
      using To = decltype(tv);
      To* dst = out.data<To>();
      std::int64_t i = 0;
      if (a.is_c_contiguous()) {
        const From* src = a.data<From>();
        for (std::int64_t n = a.size(); i < n; ++i) dst[i] = kiln_scalar::convert<To>(src[i]);
      } else {
        a.for_each_index([&](const std::int64_t* idx) {
          dst[i++] = kiln_scalar::convert<To>(*static_cast<const From*>(a.element_ptr(idx)));
        });
      }
    });
  });
  return out;
}

Shape broadcast_shapes(const std::vector<Shape>& shapes) {
  std::size_t nd = 0;
  for (const auto& s : shapes) nd = std::max(nd, s.size());
  Shape out(nd, 1);
  for (std::size_t d = 0; d < nd; ++d) {
    for (const auto& s : shapes) {
      if (d + s.size() < nd) continue;
      std::int64_t len = s[d + s.size() - nd];
      if (len == 1) continue;
      if (out[d] == 1) {
        out[d] = len;
      } else if (out[d] != len) {
        std::string msg = "shapes";
        for (const auto& t : shapes) msg += " " + shape_str(t);
        throw RuntimeFailure(msg + " cannot be broadcast together");
      }
    }
  }
  return out;
}

Array broadcast_to(const Array& a, const Shape& shape) {
  if (static_cast<std::size_t>(a.ndim()) > shape.size())
    throw RuntimeFailure("cannot broadcast shape " + shape_str(a.shape()) + " to " + shape_str(shape));
  std::size_t lead = shape.size() - static_cast<std::size_t>(a.ndim());
  Shape strides(shape.size(), 0);
  for (std::size_t d = 0; d < static_cast<std::size_t>(a.ndim()); ++d) {
    std::int64_t len = a.shape()[d];
    if (len == shape[lead + d]) {
      strides[lead + d] = a.strides()[d];
    } else if (len != 1) {
      throw RuntimeFailure("cannot broadcast shape " + shape_str(a.shape()) + " to " +
                           shape_str(shape));
    }
  }
  return a.view(shape, strides);
}

std::int64_t scalar_to_int64(const Array& a) {
  if (a.size() != 1) throw RuntimeFailure("expected a single integer, got shape " + shape_str(a.shape()));
  if (is_float(a.dtype())) throw RuntimeFailure("expected an integer, got a float");
  std::vector<std::int64_t> zero(static_cast<std::size_t>(a.ndim()), 0);
  std::int64_t v = 0;
  visit_real_dtype(a.dtype(), [&](auto t) {
    using T = decltype(t);
    T x = *static_cast<const T*>(a.element_ptr(zero.data()));
    if constexpr (std::is_same_v<T, std::uint64_t>) {
      if (x > static_cast<std::uint64_t>(INT64_MAX)) throw RuntimeFailure("integer too large");
    }
    v = static_cast<std::int64_t>(x);
  });
  return v;
}

double element_as_double(const Array& a, const std::int64_t* index) {
  double v = 0;
  visit_real_dtype(a.dtype(), [&](auto t) {
    using T = decltype(t);
    v = static_cast<double>(*static_cast<const T*>(a.element_ptr(index)));
  });
  return v;
}

double scalar_to_double(const Array& a) {
  std::vector<std::int64_t> zero(static_cast<std::size_t>(a.ndim()), 0);
  return element_as_double(a, zero.data());
}

std::complex<double> element_as_complex(const Array& a, const std::int64_t* index) {
  if (a.dtype() == DType::Complex64) return *static_cast<const std::complex<float>*>(a.element_ptr(index));
  if (a.dtype() == DType::Complex128) return *static_cast<const std::complex<double>*>(a.element_ptr(index));
  return element_as_double(a, index);
}

Array make_scalar_array(DType dt, double v) {
  Array a = Array::empty(dt, {});
  visit_dtype(dt, [&](auto t) {
    using T = decltype(t);
    *a.data<T>() = kiln_scalar::convert<T>(v);
  });
  return a;
}

Array make_int64_scalar(std::int64_t v) {
  Array a = Array::empty(DType::Int64, {});
  *a.data<std::int64_t>() = v;
  return a;
}

SliceRange resolve_slice(std::optional<std::int64_t> start, std::optional<std::int64_t> stop,
                         std::optional<std::int64_t> step, std::int64_t length) {
  std::int64_t st = step.value_or(1);
  if (st == 0) throw RuntimeFailure("slice step cannot be zero");
  auto clamp_bound = [&](std::optional<std::int64_t> v, std::int64_t dflt) -> std::int64_t {
    if (!v) return dflt;
    std::int64_t x = *v;
    if (x < 0) {
      x += length;
      if (x < 0) x = st < 0 ? -1 : 0;
    } else if (x >= length) {
      x = st < 0 ? length - 1 : length;
    }
    return x;
  };
  std::int64_t b = clamp_bound(start, st < 0 ? length - 1 : 0);
  std::int64_t e = clamp_bound(stop, st < 0 ? -1 : length);
  // Written as (span - 1) / |step| + 1 so a huge step (even INT64_MIN) cannot overflow.
  std::int64_t count = 0;
  if (st > 0 && e > b) count = (e - b - 1) / st + 1;
  if (st < 0 && b > e) count = (b - e - 1) / (st == INT64_MIN ? INT64_MAX : -st) + 1;
  // With at most one element the step is never taken: 1 keeps stride * step from overflowing
  // (the generated runtime's kiln_resolve_slice does the same).
  return SliceRange{b, count > 1 ? st : 1, count};
}

int normalize_axis(std::int64_t axis, int ndim) {
  if (axis < -ndim || axis >= ndim)
    throw std::out_of_range("axis " + std::to_string(axis) + " is out of range for rank " +
                            std::to_string(ndim));
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

}  // namespace kiln
