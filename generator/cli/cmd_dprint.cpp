#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/rewrite_options.h"
#include "io/graph_load.h"
#include "ir/error.h"
#include "print/dprint.h"

namespace kiln::cli {

void add_dprint_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("dprint", "Print a graph as PyTensor's dprint does (or as graphviz dot)");
  struct Args {
    std::string file;
    DprintOptions options;
    bool dot = false;
    bool rewritten = false;
    CompileOptions compile;  // with --rewritten: the backend and rewrites
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("FILE", args->file, "graph file (.json)")->required();
  cmd->add_flag("--print-type", args->options.print_type, "show each variable's type");
  cmd->add_flag("--print-destroy-map", args->options.print_destroy_map, "show destroy maps (d={...})");
  cmd->add_flag("--print-view-map", args->options.print_view_map, "show view maps (v={...})");
  cmd->add_flag("--print-toposort", args->options.print_toposort, "show each node's toposort position");
  cmd->add_option("--id-type", args->options.id_type, "CHAR (default), int, or none (also \"\") for no ids")
      ->transform([](std::string s) { return s == "none" ? std::string() : s; })
      ->check(CLI::IsMember({"CHAR", "int", ""}));
  cmd->add_option("--depth", args->options.depth, "print this many levels (default: all)");
  cmd->add_flag("--stop-on-name", args->options.stop_on_name, "do not expand below named variables");
  cmd->add_flag("--print-origins", args->options.print_origins,
                "show the nodes of the file each node stands for (its JSON pointers and ops)");
  cmd->add_flag("--dot", args->dot, "print graphviz dot instead");
  cmd->add_flag("--rewritten", args->rewritten,
                "print the graph kiln compile would compile: after the default pipeline (or --include), "
                "with destroy and view maps");
  cmd->add_option("--include", args->compile.rewrites.include, "with --rewritten: only the rewrites bearing these tags");
  cmd->add_option("--exclude", args->compile.rewrites.exclude, "with --rewritten: never the rewrites bearing these tags");
  add_backend_option(cmd, args->compile);
  cmd->callback([&exit_code, args] {
    exit_code = run_guarded([&] {
      FunctionGraph fg = load_graph_file(args->file);
      if (args->rewritten) {
        rewrite_for_backend(fg, args->compile);
        args->options.print_destroy_map = args->options.print_view_map = true;
      } else if (!args->compile.rewrites.include.empty() || !args->compile.rewrites.exclude.empty()) {
        throw UsageError("--include/--exclude select rewrites: use them with --rewritten");
      }
      std::cout << (args->dot ? graphviz_dot(fg) : dprint(fg, args->options));
      return exit_code::kOk;
    });
  });
}

}  // namespace kiln::cli
