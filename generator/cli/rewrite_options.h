// Command-line options selecting rewrites (compile, run, emit, rewrite, dprint --rewritten),
// and the one place that applies them to a loaded graph.
#pragma once

#include <CLI/CLI.hpp>

#include "rewrite/pipeline.h"

namespace kiln::cli {

struct RewriteArgs {
  std::vector<std::string> include;
  std::vector<std::string> exclude;
  std::vector<std::string> dump_after;
  bool no_rewrite = false;
};

/// Adds --include TAG, --exclude TAG, --dump-after PASS and --no-rewrite to a command.
void add_rewrite_options(CLI::App* cmd, RewriteArgs& args);

/// Rewrites `fg` as the options say: the default pipeline, or (with --include) only the
/// rewrites bearing those tags, or nothing (--no-rewrite). Dumps go to stderr as dprint text.
PipelineReport apply_rewrites(FunctionGraph& fg, const RewriteArgs& args);

}  // namespace kiln::cli
