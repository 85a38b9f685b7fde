// The kiln CLI's subcommands. Each lives in its own cli/cmd_*.cpp and registers itself on the
// CLI11 app from main.cpp; the callback stores the exit code.
#pragma once

#include <CLI/CLI.hpp>

namespace kiln::cli {

void add_validate_command(CLI::App& app, int& exit_code);
void add_dprint_command(CLI::App& app, int& exit_code);
void add_eval_command(CLI::App& app, int& exit_code);
void add_compile_command(CLI::App& app, int& exit_code);
void add_emit_command(CLI::App& app, int& exit_code);
void add_run_command(CLI::App& app, int& exit_code);
void add_backends_command(CLI::App& app, int& exit_code);
void add_rewrite_command(CLI::App& app, int& exit_code);
void add_grad_command(CLI::App& app, int& exit_code);
void add_vectorize_command(CLI::App& app, int& exit_code);
void add_replace_command(CLI::App& app, int& exit_code);
void add_cache_command(CLI::App& app, int& exit_code);
void add_view_command(CLI::App& app, int& exit_code);

/// Runs `body` and maps kiln's exceptions to exit codes, printing "kiln: error: ..." to stderr.
int run_guarded(const std::function<int()>& body);

}  // namespace kiln::cli
