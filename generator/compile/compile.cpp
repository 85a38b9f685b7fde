#include "compile/compile.h"

#include <algorithm>
#include <iostream>

#include "ir/error.h"
#include "print/dprint.h"

namespace kiln {

namespace {

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
  if (!options.rewrite) return {};
  PipelineOptions o = options.rewrites;
  check_tags(o);
  if (!o.include.empty()) return rewrite_graph(fg, o.include, o.exclude);
  if (!o.dump) o.dump = dprint_to_stderr;
  return run_pipeline(fg, o);
}

Emitted emit(FunctionGraph graph, const CompileOptions& options) {
  if (options.backend != "cpp") throw UserError("unknown backend \"" + options.backend + "\" (kiln has: cpp)");
  Emitted e;
  if (options.stats) e.stats_before = graph_stats(graph);
  e.rewrites = rewrite_for_backend(graph, options);
  if (options.stats) e.stats_after = graph_stats(graph);
  e.sources = generate_cpp_library(graph, options.name);
  return e;
}

Artifacts compile(FunctionGraph graph, const CompileOptions& options) {
  Artifacts a;
  static_cast<Emitted&>(a) = emit(std::move(graph), options);
  a.build = build(a.sources, options);
  return a;
}

BuildResult build(const CppLibrary& sources, const CompileOptions& options) {
  return build_library(sources, options.build, options.program);
}

CppLibrary emit_bundle(const NamedGraphs& graphs, const std::string& name, const CompileOptions&) {
  return generate_cpp_bundle(graphs, name);
}

BuildResult compile_bundle(const NamedGraphs& graphs, const std::string& name, const CompileOptions& options) {
  CompileOptions one = options;
  one.program = false;  // a bundle has no program
  return build(emit_bundle(graphs, name, options), one);
}

}  // namespace kiln
