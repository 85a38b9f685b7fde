// Reading files whose names come from a graph file (its {"npy": path} constants) or that a
// command names as its input graph. A graph from an untrusted source must not make kiln read
// beyond its own folder, block on a FIFO, read /dev/zero until memory runs out, or embed a
// file of the build machine into a library: every such read goes through here, before any
// cache lookup or parsing.
#pragma once

#include <cstdint>
#include <string>

namespace kiln {

/// The largest file read_graph_relative_file accepts by default (4 GiB).
constexpr std::uint64_t kMaxInputFileBytes = std::uint64_t{1} << 32;

/// The bytes of `relative` (a relative path from a graph file) inside `base_dir` (the graph
/// file's folder): after resolving symbolic links the file must lie within `base_dir` (also
/// resolved), be a regular file (not a FIFO, device, socket or folder) and hold at most
/// `max_bytes`. The file is opened component by component without following links, so a
/// link swapped in after the check is refused, not followed. Refusals are UserErrors at
/// `where` (a JSON pointer) naming `relative`.
std::string read_graph_relative_file(const std::string& base_dir, const std::string& relative, const std::string& where,
                                     std::uint64_t max_bytes = kMaxInputFileBytes);

/// The largest graph file read_named_file accepts by default (1 GiB).
constexpr std::uint64_t kMaxGraphFileBytes = std::uint64_t{1} << 30;

/// The bytes of a file the user named (a graph file on the command line): a regular file, or
/// a pipe (`kiln validate <(make_graph)`), at most `max_bytes` either way; a UserError at
/// `path` for a folder, a missing file, or more bytes.
std::string read_named_file(const std::string& path, std::uint64_t max_bytes = kMaxGraphFileBytes);

}  // namespace kiln
