// Where each node of a graph runs when the graph has lazy ops (IfElse): a node needed only
// through one branch of a lazy node — every path from it to a graph output enters that node by
// that branch's inputs — runs inside that branch, and only when the branch is taken. Everything
// else runs unconditionally, before the lazy nodes that read it. Branches nest.
//
// The evaluator runs the schedule tree; the code generator lowers its flattened order (each
// branch's nodes contiguous, just before their lazy node) and opens an `if` around each
// branch's run of nodes. Rewrites that group nodes (Elemwise fusion, row-block fusion) keep
// groups within one region so that no branch-only work is hoisted out.
#pragma once

#include <unordered_map>
#include <vector>

#include "ir/fgraph.h"

namespace kiln {

/// A region of a graph: its nodes in execution order; a lazy node carries the region of each
/// of its branches (run, for the branch taken, just before the node itself).
struct BranchSchedule {
  struct Step {
    Apply* node = nullptr;
    std::vector<BranchSchedule> branches;  ///< one per Op::lazy_branches() entry; empty otherwise
  };
  std::vector<Step> steps;

  /// Every node, depth first: each branch's nodes right before their lazy node. A toposort.
  std::vector<Apply*> flatten() const;
  /// Appends flatten() to `out`.
  void flatten_into(std::vector<Apply*>& out) const;
};

/// The schedule of `fg` (one flat region, in toposort order, when it has no lazy node).
BranchSchedule branch_schedule(const FunctionGraph& fg);

/// A node's place in the schedule: the chain of (lazy node, branch) regions it sits in,
/// outermost first; empty at the top level.
using RegionPath = std::vector<std::pair<const Apply*, int>>;

/// The region path of every node of the schedule.
std::unordered_map<const Apply*, RegionPath> region_paths(const BranchSchedule& schedule);

/// True when some node of `fg` is a lazy op.
bool has_lazy_nodes(const FunctionGraph& fg);

}  // namespace kiln
