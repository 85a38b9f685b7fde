// ccache's "direct mode" for `kiln compile`: a second index into the build cache (build.h),
// keyed by what the command reads rather than by the code it generates: the graph file's
// bytes, the .npy files its constants name, every option that changes the result, and the
// identities of this kiln executable and of the compiler. A hit skips loading, rewriting and
// code generation: the command only copies the entry's files. An index entry holds no files of
// its own, only the key of the build-cache entry and the library's name.
#pragma once

#include <optional>
#include <string>

#include "driver/build.h"

namespace kiln {

struct DirectCacheKey {
  std::string key;  ///< sha256 hex; empty when the inputs could not all be read
};

/// The key for compiling the graph text `graph_text`, read from a file in `graph_dir`, with
/// `build` and `other_options` (a description of every other choice that changes the output:
/// rewrite options, the library name, whether the program is built). Empty (no direct mode)
/// when a .npy file the graph names cannot be read or lies outside `graph_dir` (the normal path
/// then reports the error), or when this kiln executable cannot be identified (no /proc).
DirectCacheKey direct_cache_key(const std::string& graph_text, const std::string& graph_dir,
                                const BuildOptions& build, const std::string& other_options);

struct DirectCacheHit {
  std::string name;       ///< the library's name (NAME)
  std::string entry_dir;  ///< the build-cache entry: libNAME.so, NAME.h, NAME.cpp[, NAME_main.cpp, NAME]
};

/// The build-cache entry recorded under `key`, when the record and every file a compile with
/// (or without) the program copies out of the entry are still there.
std::optional<DirectCacheHit> direct_cache_lookup(const DirectCacheKey& key, const BuildOptions& build, bool program);

/// Records that `key` produced the library `name` in the build-cache entry `build_key`.
/// Failures to write are ignored: the record only saves time.
void direct_cache_record(const DirectCacheKey& key, const std::string& name, const std::string& build_key,
                         const BuildOptions& build);

}  // namespace kiln
