#include "compile/compile.h"

#include <algorithm>
#include <chrono>
#include <iostream>

#include "codegen/backend.h"
#include "codegen/source.h"
#include "ir/error.h"
#include "print/dprint.h"
#include "rewrite/inline_op_from_graph.h"

namespace kiln {

namespace {

// Seconds since the last lap (or construction).
class Stopwatch {
 public:
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(now - start_).count();
    start_ = now;
    return s;
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// The dump kiln prints without a callback of the caller's: dprint with destroy and view maps.
void dprint_to_stderr(const std::string& pass, const FunctionGraph& g) {
  DprintOptions d;
  d.print_destroy_map = true;
  d.print_view_map = true;
  std::cerr << "--- after " << pass << " ---\n" << dprint(g, d);
}

void check_tags(const PipelineOptions& o) {
  const auto known = known_rewrite_tags();
  for (const auto* list : {&o.include, &o.exclude})
    for (const auto& t : *list)
      if (std::find(known.begin(), known.end(), t) == known.end()) throw UserError("unknown rewrite tag \"" + t + "\"");
}

}  // namespace

PipelineReport rewrite_for_backend(FunctionGraph& fg, const CompileOptions& options) {
  const Backend& backend = find_backend(options.backend);
  if (!options.rewrite) {
    // "Exactly as written" still means OpFromGraph nodes inlined: code generation has none.
    PipelineReport report;
    report.passes.emplace_back("inline", inline_op_from_graphs(fg));
    return report;
  }
  PipelineOptions o = options.rewrites;
  check_tags(o);
  o.capabilities = backend.capabilities;
  if (!o.include.empty()) return rewrite_graph(fg, o.include, o.exclude, o.capabilities);
  if (!o.dump) o.dump = dprint_to_stderr;
  return run_pipeline(fg, o);
}

Emitted emit(FunctionGraph graph, const CompileOptions& options) {
  const Backend& backend = find_backend(options.backend);
  Emitted e;
  Stopwatch clock;
  if (options.on_stage) options.on_stage("rewrite");
  if (options.stats) e.stats_before = graph_stats(graph, backend);
  e.rewrites = rewrite_for_backend(graph, options);
  if (options.stats) e.stats_after = graph_stats(graph, backend);
  e.stage_times.push_back({"rewrite", clock.lap()});
  if (options.on_stage) options.on_stage("generate");
  e.sources = generate_library(backend, graph, options.name, options.entry_points);
  e.stage_times.push_back({"generate", clock.lap()});
  return e;
}

Artifacts compile(FunctionGraph graph, const CompileOptions& options) {
  Artifacts a;
  static_cast<Emitted&>(a) = emit(std::move(graph), options);
  Stopwatch clock;
  if (options.on_stage) options.on_stage("build");
  a.build = build(a.sources, options);
  a.stage_times.push_back({a.build.cache_hit ? "build (cached)" : "build", clock.lap()});
  return a;
}

BuildResult build(const GeneratedLibrary& sources, const CompileOptions& options) {
  return build_library(sources, options.build, options.program);
}

GeneratedLibrary emit_bundle(const NamedGraphs& graphs, const std::string& name, const CompileOptions& options) {
  return generate_bundle(find_backend(options.backend), graphs, name);
}

BuildResult compile_bundle(const NamedGraphs& graphs, const std::string& name, const CompileOptions& options) {
  CompileOptions one = options;
  one.program = false;  // a bundle has no program
  return build(emit_bundle(graphs, name, options), one);
}

}  // namespace kiln
