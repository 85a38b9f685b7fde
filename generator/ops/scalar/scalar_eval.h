// Reference semantics of scalar ops, evaluated element by element over whole arrays.
#pragma once

#include <vector>

#include "kiln/runtime/array.hpp"
#include "ops/scalar/scalar_op.h"

namespace kiln {

/// Evaluates `op` over `args`, which all have shape `shape` (broadcast views are fine), and
/// returns one new C-contiguous array per output, of the op's output dtypes. Inputs are
/// converted to the op's computation dtype first, as PyTensor does.
std::vector<Array> eval_scalar_op(const ScalarOp& op, const std::vector<Array>& args,
                                  const Shape& shape);

}  // namespace kiln
