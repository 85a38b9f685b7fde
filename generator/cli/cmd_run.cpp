// kiln run: compile (cached) and call the library, with kiln eval's input/output conventions.
#include <chrono>
#include <iostream>

#include "cli/build_options.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/progress.h"
#include "cli/rewrite_options.h"
#include "cli/run_io.h"
#include "compile/call.h"
#include "compile/compile.h"
#include "driver/process.h"
#include "io/graph_load.h"
#include "ir/error.h"
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
    bool verbose = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("FILE", args->file, "graph file (.json)")->required();
  cmd->add_option("-i,--input", args->inputs, "NAME=FILE.npy for each graph input (by id or name)");
  cmd->add_option("-o,--output-dir", args->output_dir, "write each output as DIR/<name>.npy");
  cmd->add_option("--threads", args->threads, "threads for the call (default 1)");
  add_build_options(cmd, args->options.build, args->cxxflags);
  add_backend_option(cmd, args->options);
  add_rewrite_options(cmd, args->options);
  add_verbose_option(cmd, args->verbose);
  cmd->callback([&exit_code, args] {
    exit_code = run_guarded([&] {
      args->options.build.cxxflags = split_flags(args->cxxflags);
      // run passes host (kDLCPU) tensors, which a GPU library refuses: say so before compiling.
      if (args->options.backend == "opencl" || args->options.backend == "cuda")
        throw NotImplementedError("kiln run --backend " + args->options.backend +
                                  ": run passes host (kDLCPU) tensors, which a " + args->options.backend +
                                  " library refuses; compile it and call it with device tensors instead");
      const auto start = std::chrono::steady_clock::now();
      FunctionGraph fg = load_graph_file(args->file);
      const double load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::vector<Array> inputs = read_inputs(fg, args->inputs);
      Artifacts built = compile_with_progress(fg.clone(), args->options, args->file);
      if (args->verbose) print_stage_times(load_seconds, built, &built.build);
      if (args->verbose) {
        const std::string variant = Library(built.build.library_path).variant(built.sources.name);
        if (!variant.empty()) std::cerr << "kiln: --march-variants: this CPU runs the " << variant << " variant\n";
      }
      const auto call_start = std::chrono::steady_clock::now();
      std::vector<Array> results = call_built_library(built, inputs, args->threads);
      if (args->verbose)
        print_time("call", std::chrono::duration<double>(std::chrono::steady_clock::now() - call_start).count());
      report_outputs(fg, results, args->output_dir);
      return exit_code::kOk;
    });
  });
}

}  // namespace kiln::cli
