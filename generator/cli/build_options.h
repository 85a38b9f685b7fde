// Command-line options shared by the commands that build code (compile, run).
#pragma once

#include <CLI/CLI.hpp>

#include "driver/build.h"

namespace kiln::cli {

/// Adds --cxx, --march, --march-variants, --cxxflags, --fast-math, --math-1ulp, --cache-dir, --no-cache to a command.
void add_build_options(CLI::App* cmd, BuildOptions& options, std::string& cxxflags);

}  // namespace kiln::cli
