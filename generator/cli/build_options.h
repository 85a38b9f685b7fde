// Command-line options shared by the commands that build code (compile, run).
#pragma once

#include <CLI/CLI.hpp>

#include "compile/compile.h"
#include "driver/build.h"

namespace kiln::cli {

/// Adds --cxx, --march, --march-variants, --cxxflags, --cuda-arch, --fast-math, --math-1ulp, --cache-dir, --no-cache to a command.
void add_build_options(CLI::App* cmd, BuildOptions& options, std::string& cxxflags);

/// Adds -v,--verbose: each stage's time, and for a build whether the cache served it and why not.
void add_verbose_option(CLI::App* cmd, bool& verbose);

/// One -v line: "kiln: STAGE 0.123 s" to stderr.
void print_time(const std::string& stage, double seconds);

/// What -v prints, to stderr: "kiln: load 0.003 s", each stage of `e` ("rewrite", "generate",
/// "build"), and for `build` (null for emit) the cache's answer with the reason for a miss.
void print_stage_times(double load_seconds, const Emitted& e, const BuildResult* build);

}  // namespace kiln::cli
