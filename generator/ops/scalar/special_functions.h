// The scalar ops of scipy.special that kiln implements in runtime/include/kiln/runtime/special/
// (erfcinv, gammainc, betainc, the Bessel functions, owens_t, polygamma, hyp2f1, ...) and the
// parameter derivatives kiln's gradients use (gammainc_grad_k, betainc_grad_a/_b,
// hyp2f1_grad_a/_c): their reference evaluation. Their C++ spelling for generated code is in
// templates/cpp/scalar_ops.txt; their derivatives in scalar_grad_special.cpp.
#pragma once

#include <vector>

#include "kiln/runtime/array.hpp"
#include "ops/scalar/scalar_op.h"

namespace kiln {

/// True for the ops evaluated by eval_special_function.
bool is_special_function(ScalarOpId id);

/// Evaluates special function `id` element by element: `operands` are C-contiguous, of shape
/// `shape` and of the op's operand dtypes (ScalarOp::operand_dtypes: the output's float dtype,
/// int64 for polygamma's order). Returns a new array of dtype `out`.
Array eval_special_function(ScalarOpId id, const std::vector<Array>& operands, DType out, const Shape& shape);

}  // namespace kiln
