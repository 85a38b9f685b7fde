// dprint: PyTensor's debugprint text format, and graphviz dot output.
#pragma once

#include <string>

#include "ir/fgraph.h"

namespace kiln {

struct DprintOptions {
  bool print_type = false;         ///< " <Vector(float64, shape=(?,))>" after each variable
  bool print_destroy_map = false;  ///< " d={0: [0]}"
  bool print_view_map = false;     ///< " v={0: [0]}"
  bool print_toposort = false;     ///< the node's position in toposort after it
  std::string id_type = "CHAR";    ///< "CHAR" ([id A]), "int" ([id 0]) or "" (no ids)
};

/// The text PyTensor's dprint prints for a FunctionGraph (outputs one after another, then an
/// "Inner graphs:" section for Composite scalar ops).
std::string dprint(const FunctionGraph& fg, const DprintOptions& options = {});

/// Graphviz dot source of the graph (nodes are ops, edges carry types).
std::string graphviz_dot(const FunctionGraph& fg);

}  // namespace kiln
