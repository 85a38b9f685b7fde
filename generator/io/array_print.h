// NumPy-like text for arrays ("[[1. 2.]\n [3. 4.]]"), for the CLI's printed outputs.
#pragma once

#include <string>

#include "kiln/runtime/array.hpp"

namespace kiln {

/// NumPy-style repr of the values; arrays with more than `threshold` elements are summarised
/// with "..." (the first and last 3 per dimension).
std::string format_array(const Array& a, std::int64_t threshold = 1000);

}  // namespace kiln
