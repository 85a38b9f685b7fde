// The C++ backend's output for a graph: NAME.h (C ABI + typed C++ wrapper), NAME.cpp (the
// kernels, one block per node, plus the shape function), and NAME_main.cpp (a standalone
// program reading and writing .npy files). Deterministic: the same graph gives the same bytes.
#pragma once

#include <string>

#include "ir/fgraph.h"

namespace kiln {

struct CppLibrary {
  std::string name;          ///< symbol prefix: the graph's name made a C identifier
  std::string header;        ///< NAME.h
  std::string source;        ///< NAME.cpp
  std::string main_program;  ///< NAME_main.cpp
  bool needs_blas = false;   ///< link OpenBLAS
};

/// Generates the sources. `name` overrides the symbol prefix (sanitised either way).
/// Throws NotImplementedError naming the first op the backend lacks.
CppLibrary generate_cpp_library(const FunctionGraph& fg, const std::string& name = "");

/// What compiling a graph involves (for `kiln compile --stats`).
struct GraphStats {
  int kernels = 0;            ///< nodes that compute (not views)
  int views = 0;              ///< nodes that are views of their input
  int scalar_ops = 0;         ///< scalar operations inside Elemwise/reduction nodes (Composites counted inside)
  int fused_nodes = 0;        ///< Elemwise nodes whose scalar op is a Composite
  int intermediates = 0;      ///< values held in the workspace
  int inplace = 0;            ///< values computed into their input's buffer
  int slots = 0;              ///< workspace buffers after sharing by liveness
  std::int64_t static_bytes = 0;  ///< bytes of intermediates whose shapes are static
  int dynamic_intermediates = 0;  ///< intermediates whose size is known only at run time
};
GraphStats graph_stats(const FunctionGraph& fg);

/// One source file implementing several graphs (each exported under its own prefix, which
/// must be unique), sharing one copy of the runtime prologue: one compile for many graphs.
/// `name` names the bundle (the library is lib<name>.so); header and main_program are empty.
CppLibrary generate_cpp_bundle(const std::vector<std::pair<const FunctionGraph*, std::string>>& graphs,
                               const std::string& name);

}  // namespace kiln
