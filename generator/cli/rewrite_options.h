// Command-line options selecting rewrites and the backend (compile, emit, run, rewrite,
// dprint --rewritten). They fill CompileOptions; the library applies them (compile/compile.h).
#pragma once

#include <CLI/CLI.hpp>

#include "compile/compile.h"

namespace kiln::cli {

/// Adds --include TAG, --exclude TAG, --dump-after PASS and --no-rewrite to a command.
void add_rewrite_options(CLI::App* cmd, CompileOptions& options);

/// Adds --backend NAME (default cpp).
void add_backend_option(CLI::App* cmd, CompileOptions& options);

}  // namespace kiln::cli
