// The source of a library, assembled for any backend from what it supplies (codegen/backend.h):
// the graph is lowered (codegen/lowering.h), each node's step comes from the backend's emitter
// (host code in the graph function, kernels at file scope), and the backend's host templates
// put around them the graph functions, the ABI entry points and the runtime prologue.
// NAME.h and the standalone program come from codegen/host_abi.h; constants from
// codegen/constants.h.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "codegen/backend.h"
#include "codegen/generated_library.h"

namespace kiln {

/// The sources of one graph. `name` overrides the symbol prefix (sanitised either way).
/// Throws NotImplementedError naming the first op the backend lacks, UserError for an extra
/// entry point the graph or backend cannot have.
GeneratedLibrary generate_library(const Backend& backend, const FunctionGraph& fg, const std::string& name = "",
                                  const ExtraEntryPoints& extra = {});

/// One source implementing several graphs (each exported under its own prefix, which must be
/// unique), sharing one copy of the runtime prologue: one compile for many graphs. `name` names
/// the bundle (the library is lib<name>.so); header and main_program are empty.
GeneratedLibrary generate_bundle(const Backend& backend,
                                 const std::vector<std::pair<const FunctionGraph*, std::string>>& graphs,
                                 const std::string& name);

}  // namespace kiln
