#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/run_io.h"
#include "eval/evaluator.h"
#include "io/graph_load.h"

namespace kiln::cli {

void add_eval_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("eval", "Evaluate a graph with the reference evaluator");
  struct Args {
    std::string file;
    std::vector<std::string> inputs;
    std::string output_dir;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("FILE", args->file, "graph file (.json)")->required();
  cmd->add_option("-i,--input", args->inputs, "NAME=FILE.npy for each graph input (by id or name)");
  cmd->add_option("-o,--output-dir", args->output_dir, "write each output as DIR/<name>.npy");
  cmd->callback([&exit_code, args] {
    exit_code = run_guarded([&] {
      FunctionGraph fg = load_graph_file(args->file);
      std::vector<Array> inputs = read_inputs(fg, args->inputs);
      std::vector<Array> outputs = evaluate(fg, inputs);
      report_outputs(fg, outputs, args->output_dir);
      return exit_code::kOk;
    });
  });
}

}  // namespace kiln::cli
