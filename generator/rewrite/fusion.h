// Fusion: chains and trees of Elemwise nodes become one Elemwise over a Composite (one loop,
// no intermediate arrays), with several outputs where a fused value is also needed outside; an
// elementwise producer feeding a reduction folds into the reduction's scalar op
// (sum(x*x) never materialises x*x).
#pragma once

#include "rewrite/rewriter.h"

namespace kiln {

/// Fuses Elemwise groups into Composites (graph pass, tag "fusion").
RewriteStats fuse_elemwise(FunctionGraph& fg);

/// Folds a single-input elementwise producer into the reduction consuming it (tag "fusion").
RewriteStats fuse_reductions(FunctionGraph& fg);

}  // namespace kiln
