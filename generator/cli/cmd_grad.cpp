// kiln grad: a graph whose outputs are the original ones plus gradients (reverse mode), a
// Jacobian-vector product (forward mode, --jvp), full Jacobians (--jacobian) or Hessians
// (--hessian), so that one compiled library returns value and
// derivative sharing their intermediates.
#include <iostream>
#include <set>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/var_lookup.h"
#include "grad/grad.h"
#include "io/graph_load.h"
#include "io/graph_save.h"

namespace kiln::cli {

namespace {

struct GradArgs {
  std::string file;
  std::string cost;
  std::vector<std::string> wrt;
  std::string out;
  bool jvp = false;
  bool jacobian = false;
  bool hessian = false;
  std::string disconnected = "raise";
  std::string undefined = "raise";
};

// `base`, or base_1, base_2, ... when a name is taken.
std::string unique_name(const std::string& base, std::set<std::string>& taken) {
  std::string name = base;
  for (int k = 1; taken.count(name); ++k) name = base + "_" + std::to_string(k);
  taken.insert(name);
  return name;
}

int run_grad(const GradArgs& args) {
  FunctionGraph fg = load_graph_file(args.file);
  Var cost = find_variable(fg, args.cost, "--cost");
  VarList wrt;
  for (const auto& w : args.wrt) wrt.push_back(find_variable(fg, w, "--wrt"));
  GradOptions options;
  if (args.disconnected == "zero") options.disconnected = GradOptions::Disconnected::Zero;
  if (args.undefined == "zero") options.undefined = GradOptions::Undefined::Zero;

  std::set<std::string> taken;
  for (Variable* v : fg.variables())
    if (!v->name().empty()) taken.insert(v->name());
  for (const auto& n : fg.output_names()) taken.insert(n);

  VarList inputs = fg.inputs();
  VarList outputs = fg.outputs();
  std::vector<std::string> names = fg.output_names();
  if (args.jvp) {
    VarList tangents;
    for (const Var& w : wrt) {
      Var t = make_input(w->type(), unique_name("tangent_" + display_name(w), taken));
      inputs.push_back(t);
      tangents.push_back(t);
    }
    outputs.push_back(Rop({cost}, wrt, tangents, options)[0]);
    names.push_back(unique_name("jvp_" + display_name(cost), taken));
  } else if (args.jacobian || args.hessian) {
    for (const Var& w : wrt) {
      outputs.push_back(args.jacobian ? jacobian(cost, w, options) : hessian(cost, w, options));
      names.push_back(unique_name((args.jacobian ? "jacobian_" : "hessian_") + display_name(w), taken));
    }
  } else {
    VarList grads = grad(cost, wrt, options);
    for (std::size_t i = 0; i < wrt.size(); ++i) {
      outputs.push_back(grads[i]);
      names.push_back(unique_name("grad_" + display_name(wrt[i]), taken));
    }
  }
  for (std::size_t k = fg.outputs().size(); k < outputs.size(); ++k)
    if (outputs[k]->name().empty()) outputs[k]->set_name(names[k]);
  const char* suffix = args.jvp ? "_jvp" : args.jacobian ? "_jacobian" : args.hessian ? "_hessian" : "_grad";
  const char* what = args.jvp ? " Jacobian-vector product" : args.jacobian ? " Jacobian(s)"
                     : args.hessian ? " Hessian(s)" : " gradient(s)";
  FunctionGraph result(inputs, outputs, fg.name() + suffix);
  result.set_output_names(names);
  const std::string out = args.out.empty() ? "-" : args.out;
  if (out == "-") {
    std::cout << save_graph_text(result);
  } else {
    save_graph_file(result, out);
    std::cout << "wrote " << out << ": " << outputs.size() << " outputs (" << fg.outputs().size()
              << " original, " << outputs.size() - fg.outputs().size()
              << what << "), " << result.num_nodes()
              << " nodes\n";
  }
  return exit_code::kOk;
}

}  // namespace

void add_grad_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "grad",
      "Differentiate a graph: write a graph whose outputs are the original outputs followed by "
      "the gradient of --cost (a 0-d variable) with respect to each --wrt variable, named "
      "grad_<wrt>. With --jvp, forward mode instead: one input tangent_<wrt> of the same type "
      "per --wrt variable is added, and one output jvp_<cost> (any rank) holding the directional "
      "derivative of --cost along those tangents. With --jacobian, one output jacobian_<wrt> per "
      "--wrt variable: d cost / d wrt, of shape cost.shape + wrt.shape (--cost of any rank). With "
      "--hessian, one output hessian_<wrt> per --wrt variable: the Hessian of the 0-d --cost, of "
      "shape wrt.shape + wrt.shape. Names that are taken get a _1, _2 suffix. The "
      "result is not rewritten: `kiln rewrite` or `kiln compile` simplify and fuse it.");
  auto args = std::make_shared<GradArgs>();
  cmd->add_option("FILE", args->file, "graph file (.json)")->required();
  cmd->add_option("--cost", args->cost, "the variable to differentiate (id or name)")->required();
  cmd->add_option("--wrt", args->wrt, "variable(s) to differentiate with respect to (id or name)")
      ->required();
  cmd->add_option("-o,--output", args->out, "the graph file to write (default: standard output)");
  auto* jvp = cmd->add_flag("--jvp", args->jvp, "forward mode: a Jacobian-vector product instead of gradients");
  auto* jac = cmd->add_flag("--jacobian", args->jacobian,
                            "the full Jacobian of --cost (any rank) with respect to each --wrt variable");
  auto* hes = cmd->add_flag("--hessian", args->hessian,
                            "the Hessian of the 0-d --cost with respect to each --wrt variable");
  jvp->excludes(jac)->excludes(hes);
  jac->excludes(hes);
  cmd->add_option("--disconnected", args->disconnected,
                  "when --cost does not depend on a --wrt variable: raise (default) or zero")
      ->check(CLI::IsMember({"raise", "zero"}));
  cmd->add_option("--undefined", args->undefined,
                  "when the path goes through a non-differentiable op (Argmax, a comparison), an op "
                  "without a gradient or an integer variable: raise (default) or zero")
      ->check(CLI::IsMember({"raise", "zero"}));
  cmd->callback([&exit_code, args] { exit_code = run_guarded([&] { return run_grad(*args); }); });
}

}  // namespace kiln::cli
