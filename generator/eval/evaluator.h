// The reference evaluator: runs a FunctionGraph with every op's perform. It is the oracle for
// every backend and the engine of constant folding. Run-time failures are RuntimeFailures that
// name the node (or the input) involved; nothing crashes.
#pragma once

#include <vector>

#include "ir/fgraph.h"

namespace kiln {

/// Evaluates the graph. `inputs` follow fg.inputs(); each must match its input's dtype, rank
/// and static lengths. Returns one array per graph output.
std::vector<Array> evaluate(const FunctionGraph& fg, const std::vector<Array>& inputs);

/// Checks that `a` can be passed as graph input `var` (dtype, rank, static lengths); throws a
/// RuntimeFailure naming the input otherwise.
void check_input(const Variable& var, const Array& a, std::size_t position);

}  // namespace kiln
