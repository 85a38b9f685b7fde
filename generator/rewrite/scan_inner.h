// A Scan's step function is rewritten like any graph: each Scan node of a graph gets its inner
// graph rewritten by the same pipeline (the same --include/--exclude selection), and is replaced
// by a Scan holding the result when that changed anything. The loop itself stays opaque to
// the rewrites of the outer graph.
#pragma once

#include <functional>

#include "rewrite/rewriter.h"

namespace kiln {

/// Rewrites the step function of every Scan node of `fg` with `rewrite` (applied to a copy),
/// nested Scans included (`rewrite` is the pipeline, which calls this again). Counts the nodes
/// replaced as "scan_inner_graph".
RewriteStats rewrite_scan_inner_graphs(FunctionGraph& fg, const std::function<void(FunctionGraph&)>& rewrite);

}  // namespace kiln
