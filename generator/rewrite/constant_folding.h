// Constant folding: a node whose inputs are all constants becomes constants, computed with
// the op's perform (the reference evaluator), unless the op says not to (do_constant_folding:
// AllocEmpty, asserts) or the result would be much bigger than its inputs (a huge Alloc of a
// scalar stays an Alloc, so the library does not carry megabytes it can compute).
#pragma once

#include "rewrite/rewriter.h"

namespace kiln {

/// The constant-folding rule (tags: canonicalize, constant_folding).
NodeRewrite constant_folding_rule();

}  // namespace kiln
