// kiln backends: the backend registry (codegen/backend.h) — each backend's name, what it
// targets and how its sources are built; with --cmake, the CMake variables kiln_add_graph
// reads (cmake/kilnBackends.cmake is this output).
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "codegen/backend.h"

namespace kiln::cli {

void add_backends_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("backends", "List the backends --backend can name, and how their sources are built");
  auto cmake = std::make_shared<bool>(false);
  cmd->add_flag("--cmake", *cmake, "print the CMake variables kiln_add_graph(... BACKEND NAME) reads");
  cmd->callback([&exit_code, cmake] {
    exit_code = run_guarded([&] {
      if (*cmake) {
        std::cout << backends_cmake();
        return exit_code::kOk;
      }
      for (const Backend* b : backends()) {
        const Toolchain& t = b->toolchain;
        std::cout << b->name << ": " << b->description << "\n  " << b->ops.size() << " ops; NAME"
                  << t.source_suffix << " built by $" << t.compiler_env << " (default " << t.default_compiler << ")"
                  << (t.openmp ? ", OpenMP" : "") << (t.vector_math ? ", vector math" : "") << (t.blas ? ", BLAS" : "")
                  << "\n";
      }
      return exit_code::kOk;
    });
  });
}

}  // namespace kiln::cli
