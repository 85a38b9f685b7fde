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

/// One source file implementing several graphs (each exported under its own prefix, which
/// must be unique), sharing one copy of the runtime prologue: one compile for many graphs.
/// `name` names the bundle (the library is lib<name>.so); header and main_program are empty.
CppLibrary generate_cpp_bundle(const std::vector<std::pair<const FunctionGraph*, std::string>>& graphs,
                               const std::string& name);

}  // namespace kiln
