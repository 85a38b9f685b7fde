// In-place: an Elemwise writes its output into an input buffer that nothing reads afterwards
// (PyTensor's inplace_pattern / destroy_map). Never a graph input (callers' memory is theirs),
// a constant, a view, or a value that is also a graph output.
#pragma once

#include "rewrite/rewriter.h"

namespace kiln {

/// Marks Elemwise nodes in place where that is safe (graph pass, tag "inplace").
RewriteStats make_inplace(FunctionGraph& fg);

}  // namespace kiln
