// The kiln CLI's subcommands. Each lives in its own cli/cmd_*.cpp and registers itself on the
// CLI11 app from main.cpp; the callback stores the exit code.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

#include "ir/error.h"

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
void add_save_command(CLI::App& app, int& exit_code);
void add_bisect_command(CLI::App& app, int& exit_code);

/// `kiln --version`: kiln's version, the compiler, BLAS, SLEEF, ABI and graph-format versions.
std::string version_text();

/// A command line that asks for something impossible (a malformed --input, options that do not
/// go together): exit code 1, like CLI11's own parse errors.
class UsageError : public UserError {
 public:
  using UserError::UserError;
};

/// Runs `body` and maps kiln's exceptions to exit codes, printing "kiln: error: ..." to stderr.
int run_guarded(const std::function<int()>& body);

}  // namespace kiln::cli
