// kiln rewrite: load a graph, rewrite it, save it as a graph file again.
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/rewrite_options.h"
#include "io/graph_load.h"
#include "io/graph_save.h"

namespace kiln::cli {

void add_rewrite_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "rewrite", "Rewrite a graph (the default pipeline, or only the rewrites bearing --include tags) and save it");
  struct Args {
    std::string file;
    std::string out;
    CompileOptions options;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("FILE", args->file, "graph file (.json)")->required();
  cmd->add_option("-o,--output", args->out, "the rewritten graph file to write")->required();
  add_backend_option(cmd, args->options);
  add_rewrite_options(cmd, args->options);
  cmd->callback([&exit_code, args] {
    exit_code = run_guarded([&] {
      FunctionGraph fg = load_graph_file(args->file);
      std::size_t before = fg.num_nodes();
      PipelineReport report = rewrite_for_backend(fg, args->options);
      save_graph_file(fg, args->out);
      int applied = 0;
      for (const auto& [pass, st] : report.passes) applied += st.total();
      std::cout << "wrote " << args->out << ": " << before << " -> " << fg.num_nodes() << " nodes (" << applied
                << " rewrites applied)\n";
      return exit_code::kOk;
    });
  });
}

}  // namespace kiln::cli
