// Loading graph files (GRAPH_FORMAT.md, version 1) into a FunctionGraph. Every refusal is a
// UserError naming the place: a JSON pointer, a node, a variable, or a line and column.
#pragma once

#include <string>

#include "ir/fgraph.h"

namespace kiln {

/// Loads and validates a graph file. `{"npy": path}` constants are read relative to the file's
/// folder and may not escape it.
FunctionGraph load_graph_file(const std::string& path);

/// A graph file's bytes, as load_graph_file reads them (io/safe_file.h's read_named_file: a
/// regular file or a pipe of bounded size; a UserError when it cannot be read),
/// and the folder its {"npy": path} constants are read from. For callers that need the bytes
/// too (kiln compile's direct-mode key) and then call load_graph_text.
std::string read_graph_file(const std::string& path);
std::string graph_file_folder(const std::string& path);

/// Loads a graph from JSON text. `base_dir` resolves npy paths ("" refuses them);
/// `source` names the text in messages (a file name).
FunctionGraph load_graph_text(const std::string& text, const std::string& base_dir,
                              const std::string& source = "<graph>");

}  // namespace kiln
