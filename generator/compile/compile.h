// The compiler in one call: a graph in, rewritten for a backend, generated into sources and
// (compile) built into a library. Every caller — the CLI's compile, emit and run, the bench,
// the tests, programs embedding kiln — goes through these functions, so the chain
// rewrite → lower → generate → build exists once.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/generated_library.h"
#include "codegen/stats.h"
#include "driver/build.h"
#include "rewrite/pipeline.h"

namespace kiln {

struct CompileOptions {
  /// The backend that generates the code (`kiln compile --backend`; codegen/backend.h). An
  /// unknown name is a UserError listing the registered ones.
  std::string backend = "cpp";
  /// Symbol prefix and file name (made a C identifier); empty: the graph's name.
  std::string name;
  /// Rewrite before generating code (false: compile the graph exactly as given).
  bool rewrite = true;
  /// Which rewrites: the default pipeline, or with `rewrites.include` only the rewrites bearing
  /// those tags (PyTensor's rewrite_graph). With `dump_after` and no `dump`, the graph is
  /// printed (dprint, with destroy and view maps) to stderr after those passes.
  PipelineOptions rewrites;
  /// How the library is built (compiler, flags, cache).
  BuildOptions build;
  /// Also build NAME, the standalone program that reads and writes .npy files.
  bool program = false;
  /// Entry points beside the C ABI's (`kiln compile --nutpie`: NAME_nutpie_logp).
  ExtraEntryPoints entry_points;
  /// Fill Emitted::stats_before and stats_after (kiln compile --stats).
  bool stats = false;
  /// Called as each stage starts ("rewrite", "generate", "build"): the CLI's progress line.
  std::function<void(const std::string& stage)> on_stage;
};

/// How long one stage of the compiler took (`kiln -v` prints them).
struct StageTime {
  std::string stage;  ///< "rewrite", "generate", "build"
  double seconds = 0;
};

/// The sources of a graph, and what rewriting did.
struct Emitted {
  GeneratedLibrary sources;
  PipelineReport rewrites;
  std::vector<StageTime> stage_times;  ///< rewrite and generate (and build, for compile())
  std::optional<GraphStats> stats_before;  ///< the graph as given (options.stats)
  std::optional<GraphStats> stats_after;   ///< the graph as compiled (options.stats)
};

/// A built library.
struct Artifacts : Emitted {
  BuildResult build;
};

/// Rewrites `fg` in place as `options` say (`rewrite`, `rewrites`), with the passes the
/// backend can compile (its capabilities: no BLAS pass for a backend without BLAS). Unknown rewrite tags are UserErrors. What `kiln rewrite` and
/// `kiln dprint --rewritten` show.
PipelineReport rewrite_for_backend(FunctionGraph& fg, const CompileOptions& options);

/// Rewrites and generates; `graph` is consumed (pass fg.clone() to keep yours). Throws
/// NotImplementedError naming the first op the backend lacks.
Emitted emit(FunctionGraph graph, const CompileOptions& options = {});

/// emit() and build.
Artifacts compile(FunctionGraph graph, const CompileOptions& options = {});

/// Builds generated sources (through the cache) as `options.build` and `options.program` say.
BuildResult build(const GeneratedLibrary& sources, const CompileOptions& options);

/// Graphs for one library, each exported under its own symbol prefix (unique).
using NamedGraphs = std::vector<std::pair<const FunctionGraph*, std::string>>;

/// One source for several graphs sharing one copy of the runtime (one compile for many graphs:
/// the tests' bundles). `name` names the library. The graphs are used as given (no rewriting:
/// rewrite them first, or pass rewritten copies); NAME.h and the program are not generated.
GeneratedLibrary emit_bundle(const NamedGraphs& graphs, const std::string& name, const CompileOptions& options = {});

/// emit_bundle() and build.
BuildResult compile_bundle(const NamedGraphs& graphs, const std::string& name, const CompileOptions& options = {});

}  // namespace kiln
