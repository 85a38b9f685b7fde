// vectorize_graph (PyTensor's pytensor.graph.replace.vectorize_graph): a graph written for
// core shapes becomes a batched one when some of its inputs are replaced by variables with
// extra leading (batch) dimensions. Each node is batched by its op's rule (Op::vectorize,
// beside the op: Elemwise broadcasts, reductions and DimShuffles shift their axes, Shape_i
// looks past the batch dimensions, ops Blockwise can loop become Blockwise), or, for an op
// whose outputs are its inner graph, through that graph; any other op is a NotImplementedError
// naming it. This file knows no concrete op.
#pragma once

#include <string>

#include "transform/replace.h"

namespace kiln {

/// The outputs recomputed with each pair's first variable replaced by its second, which has
/// the same dtype, the first's shape as its trailing dimensions and any number of leading batch
/// dimensions.
VarList vectorize_graph(const VarList& outputs, const Replacements& replace);
/// vectorize_graph of one output.
Var vectorize_graph(const Var& output, const Replacements& replace);

/// The outputs of `node` applied to batched inputs (`inputs`, each with as many leading batch
/// dimensions as it has beyond the node's own input); what vectorize_graph does per node.
VarList vectorize_node(const Apply& node, const VarList& inputs);

/// NotImplementedError "vectorize_graph: OP cannot be vectorized yet (why)": what a node without
/// a batching rule (or outside what its rule covers) gives.
[[noreturn]] void cannot_vectorize(const Apply& node, const std::string& why = "");

}  // namespace kiln
