// Helpers for tests that compile graphs: build options pointing at the test cache, and calling
// a compiled graph with kiln::Array values.
#pragma once

#include <string>
#include <vector>

#include "compile/compile.h"
#include "kiln/loader.hpp"

namespace kiln::testing {

/// Build options for tests: a cache inside the build tree (content-addressed, so reruns reuse
/// it), -march=native.
BuildOptions test_build_options();

/// Compile options for tests: test_build_options(), and the graphs compiled exactly as given
/// (tests that want the rewrite pipeline run it themselves or set `rewrite`).
CompileOptions test_compile_options();

/// The graphs compiled into one library (compile_bundle with test_compile_options()).
BuildResult build_bundle(const NamedGraphs& graphs, const std::string& name);

/// Calls a compiled graph on Arrays; returns its status, and outputs/message.
struct CallResult {
  int32_t status = 0;
  std::string error;
  std::vector<Array> outputs;
};
CallResult call_compiled(const kiln_graph_info& info, const std::vector<Array>& inputs, bool into = false,
                         int threads = 1);

/// One library of a split build: which of the graphs it holds, and where it was built (or why
/// it was not).
struct BuiltBundle {
  std::vector<std::size_t> members;  ///< indices into the graphs given
  std::string library_path;          ///< empty when the build failed
  std::string error;
};

/// Compiles `graphs` as libraries of at most `per_bundle` graphs each (PREFIX_0, PREFIX_1, ...),
/// built concurrently, one compiler per core, largest first. One compile for many graphs keeps
/// the shared prologue's cost down; several bundles keep every core busy (a single 4 MB source
/// takes minutes at -O3 on one core while the other idles).
std::vector<BuiltBundle> build_in_bundles(const NamedGraphs& graphs, const std::string& prefix,
                                          std::size_t per_bundle,
                                          const CompileOptions& options = test_compile_options());

}  // namespace kiln::testing
