// Gather fusion: a schedule for the code generator, not a graph rewrite (the graph, its
// printout and the reference evaluator stay as they are).
//
// A gather of a vector along axis 0 — mu[idx], AdvancedSubtensor1 or 3.x's AdvancedSubtensor
// with idx_list=(0,) — whose only reader is one Elemwise node (a hierarchical model's
// `mu[group] + ...`) is not stored: the Elemwise loop reads mu[idx[i]] itself, checking each
// index as it goes. PyTensor 3 fuses the same pattern (its IndexedElemwise).
#pragma once

#include <unordered_set>

#include "ir/fgraph.h"

namespace kiln {

/// The gather nodes of `fg` to fuse into their reader. `excluded` nodes (members of other
/// schedules) are neither fused nor fused into.
std::unordered_set<const Apply*> find_fused_gathers(const FunctionGraph& fg,
                                                    const std::unordered_set<const Apply*>& excluded = {});

/// Whether `node` gathers a vector along axis 0 with one integer vector index (its inputs are
/// then x, idx): the gathers fusion considers.
bool is_vector_gather(const Apply& node);

}  // namespace kiln
