#include "ops/constant.h"

#include <cmath>
#include <limits>

#include "ops/array_util.h"

namespace kiln {

Var int64_constant(std::int64_t v) { return make_constant(make_int64_scalar(v)); }

Var scalar_constant(DType dt, double v) { return make_constant(make_scalar_array(dt, v)); }

Var int64_vector_constant(const std::vector<std::int64_t>& values) {
  Array a = Array::empty(DType::Int64, {static_cast<std::int64_t>(values.size())});
  for (std::size_t i = 0; i < values.size(); ++i) a.data<std::int64_t>()[i] = values[i];
  return make_constant(a);
}

Var autocast_int_constant(std::int64_t v) {
  DType dt = DType::Int64;
  if (v >= std::numeric_limits<std::int8_t>::min() && v <= std::numeric_limits<std::int8_t>::max())
    dt = DType::Int8;
  else if (v >= std::numeric_limits<std::int16_t>::min() && v <= std::numeric_limits<std::int16_t>::max())
    dt = DType::Int16;
  else if (v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max())
    dt = DType::Int32;
  Array a = Array::empty(dt, {});
  visit_dtype(dt, [&](auto t) { *a.data<decltype(t)>() = static_cast<decltype(t)>(v); });
  return make_constant(a);
}

Var autocast_float_constant(double v) {
  bool exact32 = std::isnan(v) || static_cast<double>(static_cast<float>(v)) == v;
  return scalar_constant(exact32 ? DType::Float32 : DType::Float64, v);
}

}  // namespace kiln
