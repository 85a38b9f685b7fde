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
  int depth = -1;                  ///< print this many levels (-1: all)
  bool stop_on_name = false;       ///< do not expand below a named node output ("···")
  bool print_origins = false;      ///< " (from /nodes/0 Dot, ...)": the user's nodes it stands for
};

/// The text PyTensor's dprint prints for a FunctionGraph (outputs one after another, then an
/// "Inner graphs:" section for Composite scalar ops). Throws UserError for a bad id_type.
std::string dprint(const FunctionGraph& fg, const DprintOptions& options = {});

/// Graphviz dot source of the graph: ops as boxes, inputs, constants and outputs as ellipses,
/// edges labelled with the variable's dtype and shape. Every label is escaped, whatever the
/// names hold, so the result is always valid dot.
std::string graphviz_dot(const FunctionGraph& fg);

}  // namespace kiln
