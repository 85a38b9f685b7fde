// Inner graphs: ops that hold a graph inside themselves (PyTensor's HasInnerGraph) — a
// Composite's scalar expression inside Elemwise or CAReduce today; OpFromGraph's graph, Scan's
// step and IfElse's branches next. Every op exposes them through one hook, Op::inner_graphs(),
// and that is what grad (an op whose outputs are its body is differentiated through it),
// vectorize_graph (such an op without a batching rule is batched through it), dprint (the
// "Inner graphs" section) and codegen (--stats) use, so a new op with an inner graph needs no
// change in any of them.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "ir/node.h"

namespace kiln {

class FunctionGraph;

/// A graph an op holds. Implementations live beside their ops (ops/elemwise.h's
/// CompositeInnerGraph).
class InnerGraph {
 public:
  virtual ~InnerGraph() = default;
  virtual int num_inputs() const = 0;
  virtual int num_outputs() const = 0;
  /// Nodes inside (what --stats counts as operations in loops).
  virtual std::size_t num_nodes() const = 0;
  /// The inner computation on outer variables, one per inner input (of its dtype): new nodes
  /// computing the inner outputs, as the inner graph computes them ("inlining").
  virtual VarList apply(const VarList& inputs) const = 0;
};

/// One inner graph of an op, and how the op uses it.
struct InnerGraphUse {
  std::shared_ptr<const InnerGraph> graph;
  /// What it is to the op ("Composite", later "then", "else", "step").
  std::string role;
  /// The node's outputs are `graph` applied to the node's inputs, each broadcast to its output's
  /// shape (Elemwise{Composite}; OpFromGraph): grad differentiates that expansion, and
  /// vectorize_graph batches it when the op has no batching rule of its own.
  bool is_body = false;
  /// Set when the op calls the graph as a function of its own (Scan's step, once per step):
  /// code generation emits it once as a separate function the node's code calls
  /// (NodeEmitContext::inner_function).
  std::shared_ptr<const FunctionGraph> function;
};

}  // namespace kiln
