// Saving a FunctionGraph as a graph file. Deterministic, byte for byte: ids come from the file
// the graph was loaded from where possible, else from names, else v0, v1, ... kiln writes the
// lowest format version that can express the graph: 1, unless it holds something only version
// 2 has (an rng or none type, an OpFromGraph, an integer literal in a Blockwise signature).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "ir/fgraph.h"

namespace kiln {

/// The graph file text (one variable or node per line), ending with a newline.
std::string save_graph_text(const FunctionGraph& fg);
/// Writes save_graph_text() to `path`.
void save_graph_file(const FunctionGraph& fg, const std::string& path);

/// The lowest format version that can express `fg` (1 or 2).
int graph_format_version(const FunctionGraph& fg);

/// An inner graph as a file writes it (an OpFromGraph's "inner"): {"variables", "nodes",
/// "inputs", "outputs"}, with its own ids, in version 2's spelling.
nlohmann::ordered_json graph_object_json(const FunctionGraph& fg);

}  // namespace kiln
