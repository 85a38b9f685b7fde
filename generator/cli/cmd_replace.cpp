// kiln replace: splice graphs together (graph_replace): a variable of FILE is replaced by the
// output of another graph file, whose inputs join FILE's (matched by name).
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/var_lookup.h"
#include "transform/replace.h"
#include "io/graph_load.h"
#include "io/graph_save.h"

namespace kiln::cli {

namespace {

struct ReplaceArgs {
  std::string file;
  std::vector<std::string> replacements;
  std::string out;
};

// Graphs loaded for replacements stay alive while the result is built and saved.
struct Loaded {
  std::vector<std::unique_ptr<FunctionGraph>> graphs;
};

int run_replace(const ReplaceArgs& args) {
  FunctionGraph fg = load_graph_file(args.file);
  Loaded loaded;
  Replacements replace;
  VarList inputs = fg.inputs();
  for (const std::string& arg : args.replacements) {
    std::size_t eq = arg.find('=');
    if (eq == std::string::npos)
      throw UsageError("--replace " + arg + ": expected VAR=FILE2.json or VAR=FILE2.json:OUTPUT");
    Var old_var = find_variable(fg, arg.substr(0, eq), "--replace");
    std::string rhs = arg.substr(eq + 1);
    std::string out_key;
    std::size_t colon = rhs.rfind(':');
    if (colon != std::string::npos && rhs.find(".json", colon) == std::string::npos) {
      out_key = rhs.substr(colon + 1);
      rhs = rhs.substr(0, colon);
    }
    loaded.graphs.push_back(std::make_unique<FunctionGraph>(load_graph_file(rhs)));
    const FunctionGraph& other = *loaded.graphs.back();
    Var value;
    if (!out_key.empty()) {
      value = find_variable(other, out_key, "--replace output");
    } else if (other.outputs().size() == 1) {
      value = other.outputs()[0];
    } else {
      throw UserError("--replace " + arg + ": " + rhs + " has " + std::to_string(other.outputs().size()) +
                      " outputs; say which one with " + rhs + ":OUTPUT");
    }
    // The other graph's inputs are FILE's inputs of the same name, or new inputs.
    Replacements join;
    for (const Var& in : other.inputs()) {
      Var same;
      for (const Var& mine : inputs)
        if (!in->name().empty() && mine->name() == in->name() && mine != old_var) same = mine;
      if (same) {
        join.emplace_back(in, same);
      } else {
        inputs.push_back(in);
      }
    }
    replace.emplace_back(old_var, graph_replace(value, join));
  }
  VarList outputs = graph_replace(fg.outputs(), replace);
  // Inputs that were replaced are no longer inputs.
  VarList kept;
  for (const Var& in : inputs) {
    bool replaced = false;
    for (const auto& [o, n] : replace) replaced = replaced || o == in;
    if (!replaced) kept.push_back(in);
  }
  FunctionGraph result(kept, outputs, fg.name());
  result.set_output_names(fg.output_names());
  if (args.out.empty() || args.out == "-") {
    std::cout << save_graph_text(result);
  } else {
    save_graph_file(result, args.out);
    std::cout << "wrote " << args.out << ": " << result.inputs().size() << " inputs, " << result.num_nodes()
              << " nodes\n";
  }
  return exit_code::kOk;
}

}  // namespace

void add_replace_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "replace",
      "Replace variables of a graph by the outputs of other graphs (graph_replace). Each "
      "--replace VAR=FILE2.json substitutes FILE2's single output (or FILE2.json:OUTPUT, an "
      "output's id or name) for VAR; FILE2's inputs become inputs of the result, except those "
      "named like an input of FILE, which are that input. A replaced input is no longer an input. "
      "The replacement must have VAR's dtype and rank and no conflicting static length.");
  auto args = std::make_shared<ReplaceArgs>();
  cmd->add_option("FILE", args->file, "graph file (.json)")->required();
  cmd->add_option("--replace", args->replacements, "VAR=FILE2.json[:OUTPUT]")->required();
  cmd->add_option("-o,--output", args->out, "the graph file to write (default: standard output)");
  cmd->callback([&exit_code, args] { exit_code = run_guarded([&] { return run_replace(*args); }); });
}

}  // namespace kiln::cli
