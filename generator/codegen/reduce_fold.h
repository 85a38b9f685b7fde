// How a fused reduction `CAReduce{Composite}` folds, shared by the backends' reduction
// emitters: the operation that accumulates, and whether partial folds may be combined.
#pragma once

#include "ops/scalar/composite.h"

namespace kiln {

// How a Composite `acc, x -> acc'` folds: `op` computes acc' (possibly through casts) from i0
// (possibly through casts) and a term that does not depend on i0. `splittable` says whether
// runs folded separately may be joined with `op` in the accumulator dtype and give what the
// in-order fold gives: always when no cast is involved; for float chains up to rounding; for
// integer chains when `op` commutes with truncation (add, mul, bitwise).
struct CompositeFold {
  ScalarOpId op = ScalarOpId::Add;
  bool found = false;
  bool splittable = false;
};

/// The fold of a Composite `acc, x -> acc'` (found is false when it has no accumulating op).
CompositeFold analyse_composite_fold(const CompositeGraph& g);

}  // namespace kiln
