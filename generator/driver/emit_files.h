// Writing generated sources for a build system (`kiln emit`): files are rewritten only when
// their bytes change, so a build that re-runs kiln recompiles only what really changed, and a
// depfile tells the build system which files (graph, .npy constants) the sources come from.
#pragma once

#include <string>
#include <vector>

#include "codegen/generated_library.h"

namespace kiln {

/// Writes NAME.h, NAME.cpp, NAME_main.cpp, NAME_data.S (always, possibly defining nothing) and
/// one .bin per large constant into `dir` (created if needed). NAME_data.S names the .bin
/// files by absolute path. Returns the paths written or kept, NAME.h first.
std::vector<std::string> write_emitted_sources(const GeneratedLibrary& lib, const std::string& dir);

/// Reads a whole file into `out`; false when it cannot be read.
bool read_file(const std::string& path, std::string& out);

/// Writes `text` into `path` unless the file already holds exactly these bytes; an unchanged
/// file is left alone, or with `touch_unchanged` only gets a new modification time. Rewriting
/// is what costs: on ext4, truncating or replacing a file with data flushes it (~2 ms for a
/// 100 kB source here), while comparing costs microseconds.
void write_file_if_changed(const std::string& path, const std::string& text, bool touch_unchanged);

/// Copies `from` over `to` (with its permissions) in the same way; an unchanged `to` is touched,
/// so build systems see it as made now. A changed `to` is replaced by a rename, never rewritten
/// in place, so a program that has it loaded is not disturbed.
void copy_file_if_changed(const std::string& from, const std::string& to);

/// Every {"npy": path} file the constants of a graph's text name, resolved against `base_dir`
/// (the graph file's folder) as the loader does, as absolute, normalised paths, each once.
std::vector<std::string> graph_npy_files(const std::string& graph_text, const std::string& base_dir);

/// The graph file and every {"npy": path} file its constants name, as absolute, normalised
/// paths. Meant for a graph that loaded successfully (its npy paths were checked then).
std::vector<std::string> graph_input_files(const std::string& graph_path);

/// Writes a Makefile-style depfile, "targets...: deps...", as Make and Ninja read it (spaces,
/// '#' and '$' escaped). A path holding a newline cannot be written and is refused.
void write_depfile(const std::string& path, const std::vector<std::string>& targets,
                   const std::vector<std::string>& deps);

}  // namespace kiln
