// Writing generated sources for a build system (`kiln emit`): files are rewritten only when
// their bytes change, so a build that re-runs kiln recompiles only what really changed, and a
// depfile tells the build system which files (graph, .npy constants) the sources come from.
#pragma once

#include <string>
#include <vector>

#include "codegen/cpp/library.h"

namespace kiln {

/// Writes NAME.h, NAME.cpp, NAME_main.cpp, NAME_data.S (always, possibly defining nothing) and
/// one .bin per large constant into `dir` (created if needed). NAME_data.S names the .bin
/// files by absolute path. Returns the paths written or kept, NAME.h first.
std::vector<std::string> write_emitted_sources(const CppLibrary& lib, const std::string& dir);

/// The graph file and every {"npy": path} file its constants name, as absolute, normalised
/// paths. Meant for a graph that loaded successfully (its npy paths were checked then).
std::vector<std::string> graph_input_files(const std::string& graph_path);

/// Writes a Makefile-style depfile, "targets...: deps...", as Make and Ninja read it (spaces,
/// '#' and '$' escaped). A path holding a newline cannot be written and is refused.
void write_depfile(const std::string& path, const std::vector<std::string>& targets,
                   const std::vector<std::string>& deps);

}  // namespace kiln
