// kiln bisect: compile a graph with every intermediate exposed, run it beside the reference
// evaluator, and name the first node whose compiled value is wrong (compile/bisect.h).
#include <iostream>

#include "cli/build_options.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/rewrite_options.h"
#include "cli/run_io.h"
#include "compile/bisect.h"
#include "driver/process.h"
#include "io/graph_load.h"

namespace kiln::cli {

void add_bisect_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "bisect",
      "Find the first node whose compiled value differs from the reference evaluator's: the graph is "
      "compiled with every intermediate as an output and both are run on the --input values. Exit "
      "code 0 when every value agrees, 3 when one differs (the node is printed with its JSON pointer)");
  struct Args {
    std::string file;
    std::vector<std::string> inputs;
    double rtol = -1, atol = -1;
    CompileOptions options;
    std::string cxxflags;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("FILE", args->file, "graph file (.json)")->required();
  cmd->add_option("-i,--input", args->inputs, "NAME=FILE.npy or NAME=VALUE for each graph input (by id or name)");
  cmd->add_option("--rtol", args->rtol, "relative tolerance for floats (default 1e-6 float64, 1e-4 float32)");
  cmd->add_option("--atol", args->atol, "absolute tolerance for floats (default 1e-9 float64, 1e-6 float32)");
  add_build_options(cmd, args->options.build, args->cxxflags);
  add_backend_option(cmd, args->options);
  add_rewrite_options(cmd, args->options);
  cmd->callback([&exit_code, args] {
    exit_code = run_guarded([&] {
      args->options.build.cxxflags = split_flags(args->cxxflags);
      const FunctionGraph fg = load_graph_file(args->file);
      const std::vector<Array> inputs = read_inputs(fg, args->inputs);
      BisectOptions o;
      o.compile = args->options;
      if (args->rtol >= 0) o.rtol = args->rtol;
      if (args->atol >= 0) o.atol = args->atol;
      const BisectResult r = bisect(fg, inputs, o);
      if (!r.first) {
        std::cout << "all " << r.nodes_checked << " nodes agree with the reference evaluator\n";
        return exit_code::kOk;
      }
      const BisectMismatch& m = *r.first;
      std::cout << "first difference at node " << m.node_index << " of " << fg.num_nodes()
                << " (topological order): " << m.node_line << "\n"
                << "  written as: " << (m.origins.empty() ? "(no node of the file)" : m.origins) << "\n"
                << "  " << m.difference << "\n";
      return exit_code::kRuntimeFailure;
    });
  });
}

}  // namespace kiln::cli
