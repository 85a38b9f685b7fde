#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "io/graph_load.h"

namespace kiln::cli {

void add_validate_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("validate", "Load and check a graph file; print a summary");
  auto file = std::make_shared<std::string>();
  cmd->add_option("FILE", *file, "graph file (.json)")->required();
  cmd->callback([&exit_code, file] {
    exit_code = run_guarded([&] {
      FunctionGraph fg = load_graph_file(*file);
      std::cout << *file << ": ok: graph \"" << fg.name() << "\", " << fg.inputs().size()
                << " input(s), " << fg.outputs().size() << " output(s), " << fg.num_nodes()
                << " node(s)\n";
      return exit_code::kOk;
    });
  });
}

}  // namespace kiln::cli
