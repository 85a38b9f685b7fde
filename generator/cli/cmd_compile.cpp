// kiln compile / kiln emit: graph file in, generated sources (and a built library) out.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/build_options.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "codegen/cpp/library.h"
#include "driver/build.h"
#include "driver/process.h"
#include "io/graph_load.h"

namespace kiln::cli {

namespace fs = std::filesystem;

namespace {

struct CompileArgs {
  std::string file;
  std::string out_dir;
  std::string name;
  bool program = false;
  BuildOptions build;
  std::string cxxflags;
};

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw UserError("cannot write " + path.string());
  out << text;
}

CppLibrary generate(const CompileArgs& args) {
  FunctionGraph fg = load_graph_file(args.file);
  return generate_cpp_library(fg, args.name);
}

void prepare_out_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw UserError("cannot create output folder " + dir + ": " + ec.message());
}

}  // namespace

void add_compile_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("compile", "Compile a graph into a shared library libNAME.so with NAME.h and NAME.cpp");
  auto args = std::make_shared<CompileArgs>();
  cmd->add_option("FILE", args->file, "graph file (.json)")->required();
  cmd->add_option("-o,--output-dir", args->out_dir, "folder to write into")->required();
  cmd->add_option("--name", args->name, "symbol prefix and file name (default: the graph's name)");
  cmd->add_flag("--program", args->program, "also build NAME, a standalone program reading/writing .npy files");
  add_build_options(cmd, args->build, args->cxxflags);
  cmd->callback([&exit_code, args] {
    exit_code = run_guarded([&] {
      args->build.cxxflags = split_flags(args->cxxflags);
      CppLibrary lib = generate(*args);
      BuildResult built = build_library(lib, args->build, args->program);
      prepare_out_dir(args->out_dir);
      fs::path dir(args->out_dir);
      write_text(dir / (lib.name + ".h"), lib.header);
      write_text(dir / (lib.name + ".cpp"), lib.source);
      fs::copy_file(built.library_path, dir / ("lib" + lib.name + ".so"), fs::copy_options::overwrite_existing);
      std::cout << "wrote " << (dir / ("lib" + lib.name + ".so")).string() << ", " << lib.name << ".h, "
                << lib.name << ".cpp";
      if (args->program) {
        write_text(dir / (lib.name + "_main.cpp"), lib.main_program);
        fs::copy_file(built.program_path, dir / lib.name, fs::copy_options::overwrite_existing);
        std::cout << ", " << lib.name << "_main.cpp, " << lib.name;
      }
      std::cout << (built.cache_hit ? " (cached)" : "") << "\n";
      return exit_code::kOk;
    });
  });
}

void add_emit_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("emit", "Write the generated sources only (NAME.h, NAME.cpp, NAME_main.cpp)");
  auto args = std::make_shared<CompileArgs>();
  cmd->add_option("FILE", args->file, "graph file (.json)")->required();
  cmd->add_option("-o,--output-dir", args->out_dir, "folder to write into")->required();
  cmd->add_option("--name", args->name, "symbol prefix and file name (default: the graph's name)");
  cmd->callback([&exit_code, args] {
    exit_code = run_guarded([&] {
      CppLibrary lib = generate(*args);
      prepare_out_dir(args->out_dir);
      fs::path dir(args->out_dir);
      write_text(dir / (lib.name + ".h"), lib.header);
      write_text(dir / (lib.name + ".cpp"), lib.source);
      write_text(dir / (lib.name + "_main.cpp"), lib.main_program);
      std::cout << "wrote " << (dir / (lib.name + ".h")).string() << ", " << lib.name << ".cpp, " << lib.name
                << "_main.cpp" << (lib.needs_blas ? " (link with -lopenblas)" : "") << "\n";
      return exit_code::kOk;
    });
  });
}

}  // namespace kiln::cli
