// kiln save: load a graph file and write it back normalised, as every kiln command writes
// graphs: one variable or node per line, nodes in topological order, the lowest format
// version that can say the graph, PyTensor's spellings, constants read from .npy files
// written inline (base64 for large ones), unused variables dropped.
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "io/graph_load.h"
#include "io/graph_save.h"

namespace kiln::cli {

void add_save_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("save", "Load a graph file and write it normalised (the format kiln writes)");
  struct Args {
    std::string file;
    std::string out;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("FILE", args->file, "graph file (.json)")->required();
  cmd->add_option("-o,--output", args->out, "the graph file to write (default: standard output; may be FILE)");
  cmd->callback([&exit_code, args] {
    exit_code = run_guarded([&] {
      const FunctionGraph fg = load_graph_file(args->file);
      if (args->out.empty() || args->out == "-") {
        std::cout << save_graph_text(fg);
      } else {
        save_graph_file(fg, args->out);
        std::cout << "wrote " << args->out << ": graph \"" << fg.name() << "\", " << fg.num_nodes()
                  << " node(s), format version " << graph_format_version(fg) << "\n";
      }
      return exit_code::kOk;
    });
  });
}

}  // namespace kiln::cli
