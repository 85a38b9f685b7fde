// kiln run: compile (cached) and call the library, with kiln eval's input/output conventions.
#include <iostream>

#include "cli/build_options.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/rewrite_options.h"
#include "cli/run_io.h"
#include "compile/compile.h"
#include "driver/process.h"
#include "io/graph_load.h"
#include "kiln/loader.hpp"

namespace kiln::cli {

void add_run_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("run", "Compile a graph (cached) and run it through the generated library");
  struct Args {
    std::string file;
    std::vector<std::string> inputs;
    std::string output_dir;
    int threads = 1;
    CompileOptions options;
    std::string cxxflags;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("FILE", args->file, "graph file (.json)")->required();
  cmd->add_option("-i,--input", args->inputs, "NAME=FILE.npy for each graph input (by id or name)");
  cmd->add_option("-o,--output-dir", args->output_dir, "write each output as DIR/<name>.npy");
  cmd->add_option("--threads", args->threads, "threads for the call (default 1)");
  add_build_options(cmd, args->options.build, args->cxxflags);
  add_backend_option(cmd, args->options);
  add_rewrite_options(cmd, args->options);
  cmd->callback([&exit_code, args] {
    exit_code = run_guarded([&] {
      args->options.build.cxxflags = split_flags(args->cxxflags);
      FunctionGraph fg = load_graph_file(args->file);
      std::vector<Array> inputs = read_inputs(fg, args->inputs);
      Artifacts built = compile(fg.clone(), args->options);
      Library so(built.build.library_path);
      const kiln_graph_info& info = so.graph(built.sources.name);
      kiln_context* ctx = info.context_create();
      if (!ctx) throw RuntimeFailure("out of memory creating a context");
      info.context_set_num_threads(ctx, args->threads);
      std::vector<DLTensor> dl;
      for (const auto& a : inputs) dl.push_back(a.dltensor());
      if (dl.empty()) dl.resize(1);
      std::vector<DLManagedTensor*> outs(fg.outputs().size() + 1, nullptr);
      int32_t status = info.call(ctx, dl.data(), outs.data());
      std::string error = info.context_last_error(ctx);
      info.context_destroy(ctx);
      if (status != KILN_OK) throw RuntimeFailure(std::string(kiln_status_name(status)) + ": " + error);
      std::vector<Array> results;
      for (std::size_t k = 0; k < fg.outputs().size(); ++k) {
        DLManagedTensor* m = outs[k];
        std::shared_ptr<void> owner(m, [](void* p) {
          auto* mt = static_cast<DLManagedTensor*>(p);
          mt->deleter(mt);
        });
        results.push_back(Array::from_dlpack(m->dl_tensor, owner));
      }
      report_outputs(fg, results, args->output_dir);
      return exit_code::kOk;
    });
  });
}

}  // namespace kiln::cli
