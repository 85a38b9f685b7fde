// File names for a graph's outputs (`kiln eval`, `kiln run` and generated programs agree):
// each output's name, or id, made safe as a file name — only [A-Za-z0-9_.-], no leading dot —
// with output_<i> where names clash or are empty.
#pragma once

#include <string>
#include <vector>

#include "ir/fgraph.h"

namespace kiln {

/// One "<stem>.npy" per graph output.
std::vector<std::string> output_file_names(const FunctionGraph& fg);

/// The name an output is known by (its given output name, else its variable's name, else id).
std::string output_display_name(const FunctionGraph& fg, std::size_t k);

}  // namespace kiln
