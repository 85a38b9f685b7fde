// Saving a FunctionGraph as a graph file. Deterministic, byte for byte: ids come from the file
// the graph was loaded from where possible, else from names, else v0, v1, ...
#pragma once

#include <string>

#include "ir/fgraph.h"

namespace kiln {

/// The graph file text (one variable or node per line), ending with a newline.
std::string save_graph_text(const FunctionGraph& fg);
/// Writes save_graph_text() to `path`.
void save_graph_file(const FunctionGraph& fg, const std::string& path);

}  // namespace kiln
