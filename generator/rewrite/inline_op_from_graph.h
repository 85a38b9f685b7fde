// Inlining OpFromGraph nodes: each is replaced by its inner graph applied to the node's inputs
// (nested ones too), so that rewriting, fusion and code generation see only ordinary ops. The
// first pass of the pipeline (rewrite/pipeline.cpp) and of every compile.
#pragma once

#include <optional>

#include "rewrite/rewriter.h"

namespace kiln {

/// Inlines every OpFromGraph of `fg`, until none is left. Counts them as "inline_op_from_graph".
RewriteStats inline_op_from_graphs(FunctionGraph& fg);

/// A copy of `fg` with its OpFromGraph nodes inlined, or nullopt when it has none (code
/// generation's guard for graphs compiled without rewriting).
std::optional<FunctionGraph> inlined_copy(const FunctionGraph& fg);

}  // namespace kiln
