// The host side every backend shares: the C ABI's metadata of a graph's tensors, NAME.h (the
// C ABI plus the typed C++ wrapper, templates/host/graph.h.mustache) and NAME_main.cpp (a
// standalone program reading and writing .npy files, templates/host/main.cpp.mustache).
#pragma once

#include <string>
#include <vector>

#include "codegen/render.h"
#include "ir/fgraph.h"

namespace kiln {

/// The kiln_tensor_info entries of `vars` (named `names`) as template items {name, dtype, ndim,
/// offset} appended to `list`; returns the initialiser of their concatenated static shapes.
std::string tensor_infos(const VarList& vars, const std::vector<std::string>& names, TemplateData& list);

/// NAME.h of a graph exported under `name`.
std::string graph_header(const FunctionGraph& fg, const std::string& name, const std::string& extra_declarations = "");

/// NAME_main.cpp of a graph exported under `name`.
std::string main_program(const FunctionGraph& fg, const std::string& name);

}  // namespace kiln
