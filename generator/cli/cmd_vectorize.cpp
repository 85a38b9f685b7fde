// kiln vectorize: a graph written for core shapes, batched: some inputs get new shapes with
// extra leading (batch) dimensions, and every output follows (vectorize_graph).
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/var_lookup.h"
#include "transform/vectorize.h"
#include "io/graph_load.h"
#include "io/graph_save.h"

namespace kiln::cli {

namespace {

// "5,?,3" (or "(5, ?, 3)", "-1" for unknown, "" or "()" for 0-d) as a static shape.
Shape parse_shape(std::string text, const std::string& arg) {
  std::string s;
  for (char c : text)
    if (c != ' ' && c != '(' && c != ')' && c != '[' && c != ']') s += c;
  Shape shape;
  std::size_t pos = 0;
  while (pos < s.size()) {
    std::size_t end = s.find(',', pos);
    std::string item = s.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    if (item == "?" || item == "-1" || item == "None" || item == "null") {
      shape.push_back(kUnknownLength);
    } else {
      try {
        std::size_t used = 0;
        long long v = std::stoll(item, &used);
        if (used != item.size() || v < 0) throw std::invalid_argument(item);
        shape.push_back(v);
      } catch (const std::exception&) {
        throw UsageError("--input " + arg + ": \"" + item + "\" is not a length (an integer >= 0 or ?)");
      }
    }
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return shape;
}

struct VectorizeArgs {
  std::string file;
  std::vector<std::string> inputs;
  std::string out;
};

int run_vectorize(const VectorizeArgs& args) {
  FunctionGraph fg = load_graph_file(args.file);
  Replacements replace;
  VarList inputs = fg.inputs();
  for (const std::string& arg : args.inputs) {
    std::size_t colon = arg.rfind(':');
    if (colon == std::string::npos) throw UsageError("--input " + arg + ": expected NAME:SHAPE, e.g. x:?,3");
    Var old_var = find_variable(fg, arg.substr(0, colon), "--input");
    if (!old_var->is_input()) throw UserError("--input " + arg + ": only graph inputs can be batched");
    Var batched = make_input(TensorType(old_var->dtype(), parse_shape(arg.substr(colon + 1), arg)), old_var->name());
    batched->set_file_id(old_var->file_id());
    replace.emplace_back(old_var, batched);
    for (Var& in : inputs)
      if (in == old_var) in = batched;
  }
  VarList outputs = vectorize_graph(fg.outputs(), replace);
  FunctionGraph result(inputs, outputs, fg.name());
  result.set_output_names(fg.output_names());
  if (args.out.empty() || args.out == "-") {
    std::cout << save_graph_text(result);
  } else {
    save_graph_file(result, args.out);
    std::cout << "wrote " << args.out << ": " << result.num_nodes() << " nodes\n";
    for (std::size_t k = 0; k < outputs.size(); ++k)
      std::cout << "  output " << k << ": " << outputs[k]->type().str() << "\n";
  }
  return exit_code::kOk;
}

}  // namespace

void add_vectorize_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "vectorize",
      "Batch a graph written for core shapes: each --input NAME:SHAPE gives a graph input a new "
      "shape that is its old shape with extra leading (batch) dimensions, e.g. x:? turns a 0-d x "
      "into a vector and x:4,?,3 a (?,3) matrix into a batch of 4. Elemwise ops broadcast, "
      "reductions and dimension shuffles shift their axes, products become Blockwise; an op that "
      "cannot be batched yet is reported by name.");
  auto args = std::make_shared<VectorizeArgs>();
  cmd->add_option("FILE", args->file, "graph file (.json)")->required();
  cmd->add_option("--input", args->inputs, "NAME:SHAPE, SHAPE as 5,?,3 (? = known at run time)")->required();
  cmd->add_option("-o,--output", args->out, "the graph file to write (default: standard output)");
  cmd->callback([&exit_code, args] { exit_code = run_guarded([&] { return run_vectorize(*args); }); });
}

}  // namespace kiln::cli
