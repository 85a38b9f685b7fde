// Row-block fusion: a schedule for the code generator, not a graph rewrite (the graph, its
// printout and the reference evaluator stay as they are).
//
// A tall matrix X (n x k) is often read twice: once by z = a X v + b z0 (a Gemv), and again,
// after elementwise work on z, by g = a' Xᵀ r + b' g0 (a Gemv of X's transpose with a vector
// r computed from z) — a model's forward product and its gradient. Run node by node, that
// streams X from memory twice and stores z and r. A row-block group runs all of it in one
// pass over blocks of rows of X: each block's dot products, the elementwise values of its
// rows, the full reductions of those values and the block's share of Xᵀ r, while the block is
// still in cache. Row values that nothing outside the group reads are never stored.
#pragma once

#include <unordered_set>
#include <vector>

#include "ir/fgraph.h"

namespace kiln {

struct RowBlockGroup {
  const Variable* matrix = nullptr;  ///< X
  Apply* product = nullptr;          ///< z = Gemv(z0, a, X, v, b)
  std::vector<Apply*> elemwise;      ///< Elemwise nodes over row values, in toposort order
  /// Gemv(g0, a', Transpose(X), r, b') with r a row value (at least one per group).
  std::vector<Apply*> transposed_products;
  /// CAReduce of a row value over its only axis (folds with a plain binary scalar op).
  std::vector<Apply*> reductions;
  /// Every member, in toposort order (product first).
  std::vector<Apply*> nodes;
  /// Row values (z and the Elemwise outputs): one element per row of X.
  std::vector<const Variable*> row_values;
  /// Row values read by no node outside the group and not graph outputs: never stored.
  std::unordered_set<const Variable*> internal;

  bool contains(const Apply* node) const;
};

/// The row-block groups of a graph: disjoint, each with at least one transposed product, and
/// each contractible to one step (no path leaves a group and comes back into it).
std::vector<RowBlockGroup> find_row_block_groups(const FunctionGraph& fg);

/// Whether, in `order`, each group's members are consecutive and everything they read from
/// outside the group comes before the first of them.
bool runs_as_steps(const std::vector<Apply*>& order, const std::vector<RowBlockGroup>& groups);

/// `order` (a toposort) with each group's members moved together: nodes between a group's
/// first and last member that depend on the group move after it, in their order.
std::vector<Apply*> order_with_groups(const std::vector<Apply*>& order, const std::vector<RowBlockGroup>& groups);

}  // namespace kiln
