#include "linalg_data.h"

#include <algorithm>
#include <vector>

namespace kiln::testing {

Array spd_matrices(const Shape& shape, std::mt19937& rng) {
  const std::int64_t n = shape.back(), count = shape_size(shape) / std::max<std::int64_t>(n * n, 1);
  Array a = Array::empty(DType::Float64, shape);
  std::normal_distribution<double> dist;
  std::vector<double> b(static_cast<std::size_t>(n * n));
  for (std::int64_t k = 0; k < count; ++k) {
    for (auto& x : b) x = dist(rng);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double s = i == j ? static_cast<double>(n) : 0.0;
        for (std::int64_t l = 0; l < n; ++l)
          s += b[static_cast<std::size_t>(i * n + l)] * b[static_cast<std::size_t>(j * n + l)];
        a.data<double>()[k * n * n + i * n + j] = s;
      }
  }
  return a;
}

Array normal_array(const Shape& shape, std::mt19937& rng) {
  Array a = Array::empty(DType::Float64, shape);
  std::normal_distribution<double> dist;
  for (std::int64_t i = 0; i < a.size(); ++i) a.data<double>()[i] = dist(rng);
  return a;
}

}  // namespace kiln::testing
