// A graph's constants in generated code, for every backend: small ones as initialiser lists,
// large ones as DataBlobs — raw .bin files assembled into the library by `.incbin` in
// NAME_data.S, which compiles in a moment whatever the size.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kiln/runtime/array.hpp"

namespace kiln {

/// A constant too large for an initialiser list: its raw bytes are written to a .bin file and
/// assembled into the library by an `.incbin` in NAME_data.S. The source refers to it by a
/// hidden symbol carrying the graph's prefix.
struct DataBlob {
  std::string symbol;     ///< hidden symbol defined by NAME_data.S (NAME_const_...)
  std::string file_name;  ///< the .bin file, <symbol>.bin (a C identifier plus ".bin")
  Array data;             ///< C-contiguous, little-endian elements
  std::string sha256;     ///< of the bytes: written into NAME_data.S so any change reassembles it
};

/// Constants of at least this many bytes become DataBlobs; smaller ones stay inline.
constexpr std::size_t kInlineConstantMaxBytes = 4096;

/// Where a graph's constants go: small ones become initialiser lists inside the graph's
/// namespace; large ones become DataBlobs, declared at file scope by their hidden symbol.
struct ConstantSink {
  std::string prefix;                     ///< the graph's symbol prefix
  std::vector<std::string> arrays;        ///< inline definitions
  std::vector<std::string> declarations;  ///< extern "C" declarations of blob symbols
  std::vector<DataBlob> blobs;
};

/// Emits constant `index` of function `fn`; returns the name generated code reads it through.
std::string add_constant(ConstantSink& sink, const std::string& fn, std::size_t index, const Array& value);

/// NAME_data.S for a library `name`: one hidden, 64-byte aligned read-only symbol per blob,
/// filled by `.incbin` from `data_dir`/<file_name> (the path is escaped; `data_dir` should be
/// absolute, as the assembler resolves relative paths from its working folder). Without blobs
/// the file defines nothing, so build systems can always list it. An empty `data_dir` gives
/// the text used in cache keys.
std::string data_assembly(const std::string& name, const std::vector<DataBlob>& blobs, const std::string& data_dir);

}  // namespace kiln
