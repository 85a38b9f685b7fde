// kiln: the command-line front end.
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/exit_codes.h"

int main(int argc, char** argv) {
  CLI::App app{"kiln: an ahead-of-time compiler for computational graphs"};
  app.set_version_flag("--version", std::function<std::string()>(kiln::cli::version_text),
                       "Print kiln's version and the compiler, BLAS, vector math, SLEEF, C ABI and graph-format versions");
  app.require_subcommand(1);
  int exit_code = kiln::exit_code::kOk;
  kiln::cli::add_validate_command(app, exit_code);
  kiln::cli::add_dprint_command(app, exit_code);
  kiln::cli::add_eval_command(app, exit_code);
  kiln::cli::add_compile_command(app, exit_code);
  kiln::cli::add_emit_command(app, exit_code);
  kiln::cli::add_run_command(app, exit_code);
  kiln::cli::add_backends_command(app, exit_code);
  kiln::cli::add_rewrite_command(app, exit_code);
  kiln::cli::add_grad_command(app, exit_code);
  kiln::cli::add_vectorize_command(app, exit_code);
  kiln::cli::add_replace_command(app, exit_code);
  kiln::cli::add_cache_command(app, exit_code);
  kiln::cli::add_view_command(app, exit_code);
  kiln::cli::add_save_command(app, exit_code);
  kiln::cli::add_bisect_command(app, exit_code);
  app.footer(
      "Exit codes: 0 ok, 1 usage, 2 invalid graph, 3 run-time failure, 4 I/O error, "
      "5 not implemented, 6 compiler failure, 70 internal error.");
  // CLI11 reads "--name=" (an empty value) as a bare "--name" and takes the next argument as
  // its value; written as "--name" "", the empty string is the value.
  std::vector<std::string> args;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.size() > 3 && arg.rfind("--", 0) == 0 && arg.back() == '=' && arg.find('=') == arg.size() - 1) {
      args.push_back(arg.substr(0, arg.size() - 1));
      args.emplace_back();
    } else {
      args.push_back(arg);
    }
  }
  std::vector<const char*> arg_ptrs;
  for (const auto& a : args) arg_ptrs.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(arg_ptrs.size()), arg_ptrs.data());
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kiln::exit_code::kUsage;
  }
  return exit_code;
}
