// The C++ backend's output for a graph: NAME.h (C ABI + typed C++ wrapper), NAME.cpp (the
// kernels, one block per node, plus the shape function), NAME_main.cpp (a standalone program
// reading and writing .npy files), and NAME_data.S with NAME_*.bin (large constants as binary
// data). Deterministic: the same graph gives the same bytes.
#pragma once

#include <string>
#include <vector>

#include "ir/fgraph.h"
#include "kiln/runtime/array.hpp"

namespace kiln {

/// A constant too large for an initialiser list: its raw bytes are written to a .bin file and
/// assembled into the library by an `.incbin` in NAME_data.S, which compiles in a moment
/// whatever the size. NAME.cpp refers to it by a hidden symbol carrying the graph's prefix.
struct DataBlob {
  std::string symbol;     ///< hidden symbol defined by NAME_data.S (NAME_const_...)
  std::string file_name;  ///< the .bin file, <symbol>.bin (a C identifier plus ".bin")
  Array data;             ///< C-contiguous, little-endian elements
  std::string sha256;     ///< of the bytes: written into NAME_data.S so any change reassembles it
};

/// Constants of at least this many bytes become DataBlobs; smaller ones stay inline.
constexpr std::size_t kInlineConstantMaxBytes = 4096;

struct CppLibrary {
  std::string name;          ///< symbol prefix: the graph's name made a C identifier
  std::string header;        ///< NAME.h
  std::string source;        ///< NAME.cpp
  std::string main_program;  ///< NAME_main.cpp
  std::vector<DataBlob> blobs;  ///< large constants (NAME_data.S), in symbol order
  bool needs_blas = false;   ///< link OpenBLAS
};

/// NAME_data.S: one hidden, 64-byte aligned read-only symbol per blob, filled by `.incbin` from
/// `data_dir`/<file_name> (the path is escaped; `data_dir` should be absolute, as the assembler
/// resolves relative paths from its working folder). Without blobs the file defines nothing,
/// so build systems can always list it. An empty `data_dir` gives the text used in cache keys.
std::string data_assembly(const CppLibrary& lib, const std::string& data_dir);

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
  int row_block_passes = 0;   ///< row-block groups (codegen/row_block_fusion.h): one read of X each
};
GraphStats graph_stats(const FunctionGraph& fg);

/// One source file implementing several graphs (each exported under its own prefix, which
/// must be unique), sharing one copy of the runtime prologue: one compile for many graphs.
/// `name` names the bundle (the library is lib<name>.so); header and main_program are empty.
CppLibrary generate_cpp_bundle(const std::vector<std::pair<const FunctionGraph*, std::string>>& graphs,
                               const std::string& name);

}  // namespace kiln
