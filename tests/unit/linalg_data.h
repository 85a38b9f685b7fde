// Test matrices the linear-algebra tests share: symmetric positive definite batches and normal
// random arrays (float64, deterministic for a given generator).
#pragma once

#include <random>

#include "kiln/runtime/array.hpp"

namespace kiln::testing {

/// Matrices B B^T + n I of shape (..., n, n), B standard normal: symmetric positive definite
/// and well conditioned.
Array spd_matrices(const Shape& shape, std::mt19937& rng);
/// Standard normal values.
Array normal_array(const Shape& shape, std::mt19937& rng);

}  // namespace kiln::testing
