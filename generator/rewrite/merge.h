// Merging: one node per distinct computation (same op + props + inputs) and one constant per
// distinct value (same dtype, shape and bytes) — PyTensor's MergeOptimizer.
#pragma once

#include "rewrite/rewriter.h"

namespace kiln {

/// Merges duplicate constants and nodes in one pass over the graph (inputs are merged before
/// their users, so a single pass reaches the fixpoint).
RewriteStats merge_duplicates(FunctionGraph& fg);

}  // namespace kiln
