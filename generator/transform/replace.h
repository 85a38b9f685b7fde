// graph_replace (PyTensor's pytensor.graph.replace.graph_replace): a copy of the graph above
// some outputs with some variables replaced by others, one to one. Nodes whose inputs change
// are rebuilt with their op's make_node (so static shapes are re-inferred); the rest is shared.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "ir/op.h"

namespace kiln {

/// Pairs (old variable, new variable).
using Replacements = std::vector<std::pair<Var, Var>>;

/// The outputs with every old variable replaced by its new one. The new variable must have the
/// old one's dtype and rank and no conflicting static length — otherwise a UserError in
/// PyTensor's words ("Cannot convert Type Vector(float64, shape=(?,)) (of Variable y) into Type
/// Scalar(float64, shape=()). ..."). A replacement of a variable the outputs do not depend on
/// is ignored (PyTensor warns; `strict` makes it a UserError).
VarList graph_replace(const VarList& outputs, const Replacements& replace, bool strict = false);
/// graph_replace of one output.
Var graph_replace(const Var& output, const Replacements& replace, bool strict = false);

/// Rebuilds the graph above `outputs` bottom-up: `rebuild(node, new_inputs)` is called for every
/// node one of whose inputs changed and returns its new outputs. `start` maps variables to
/// their replacements. Shared by graph_replace and vectorize_graph.
VarList rebuild_graph(const VarList& outputs, const Replacements& start,
                      const std::function<VarList(const Apply&, const VarList&)>& rebuild);

}  // namespace kiln
