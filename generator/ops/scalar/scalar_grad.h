// Derivatives of the scalar ops, as graphs of kiln ops over the tensors an Elemwise applies
// them to. Elemwise's pullback multiplies them by the output cotangent and sums the result back
// to each input's shape; its pushforward multiplies them by the input tangents.
#pragma once

#include <vector>

#include "ir/op.h"
#include "ops/scalar/scalar_op.h"

namespace kiln {

/// For each input of `op` applied elementwise to `inputs` (giving `output`): the partial
/// derivative d output / d input as a Value (a graph broadcastable to output's shape), or
/// Disconnected, Undefined (comparisons, bit ops) or NotImplemented, as PyTensor has them.
/// Discrete inputs are Disconnected except through a cast (so that differentiating through
/// cast(argmax(x)) or cast(x > 0) reaches, and names, the op that is not differentiable).
/// Not for Composite (Elemwise differentiates its inner graph).
std::vector<GradTerm> scalar_partials(const ScalarOp& op, const VarList& inputs, const Var& output);

/// scalar_partials for tri_gamma and the special functions (special_functions.h), before the
/// discrete-input rule: scalar_grad_special.cpp.
std::vector<GradTerm> special_partials(ScalarOpId id, const VarList& inputs, const Var& output);

}  // namespace kiln
