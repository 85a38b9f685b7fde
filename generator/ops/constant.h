// Constants for graph building.
#pragma once

#include <cstdint>

#include "ir/node.h"

namespace kiln {

/// A 0-d int64 constant (lengths, indices, axes).
Var int64_constant(std::int64_t v);
/// A 0-d constant of dtype dt holding v (converted with kiln_scalar::convert).
Var scalar_constant(DType dt, double v);
/// A 1-d int64 constant.
Var int64_vector_constant(const std::vector<std::int64_t>& values);
/// PyTensor's autocasting of a Python int literal: the smallest of int8..int64 that holds it.
Var autocast_int_constant(std::int64_t v);
/// PyTensor's autocasting of a Python float literal: float32 if exactly representable, else
/// float64.
Var autocast_float_constant(double v);

}  // namespace kiln
