// kiln compile / kiln emit: graph file in, rewritten (default pipeline) and generated sources
// (and a built library) out.
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "cli/build_options.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/progress.h"
#include "cli/rewrite_options.h"
#include "codegen/backend.h"
#include "compile/compile.h"
#include "codegen/backend.h"
#include "driver/direct_cache.h"
#include "driver/emit_files.h"
#include "driver/process.h"
#include "io/graph_load.h"

namespace kiln::cli {

namespace fs = std::filesystem;

namespace {

struct CompileArgs {
  std::string file;
  std::string out_dir;
  std::string depfile;
  CompileOptions options;  // name, backend, rewrites, build, program, stats
  std::string cxxflags;
  bool verbose = false;
};

// Seconds since `start`.
double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void print_stats(const GraphStats& before, const GraphStats& after, const PipelineReport& report) {
  auto row = [](const char* what, std::int64_t a, std::int64_t b) {
    std::cout << "  " << std::left << std::setw(34) << what << std::right << std::setw(10) << a << std::setw(10) << b
              << "\n";
  };
  std::cout << "  " << std::left << std::setw(34) << "" << std::right << std::setw(10) << "as written" << std::setw(10)
            << "compiled" << "\n";
  row("kernels (computing nodes)", before.kernels, after.kernels);
  row("views", before.views, after.views);
  row("scalar operations in loops", before.scalar_ops, after.scalar_ops);
  row("fused nodes (Composites)", before.fused_nodes, after.fused_nodes);
  row("intermediate values", before.intermediates, after.intermediates);
  row("  computed in place", before.inplace, after.inplace);
  row("  of run-time size", before.dynamic_intermediates, after.dynamic_intermediates);
  row("workspace buffers (after reuse)", before.slots, after.slots);
  row("bytes of static intermediates", before.static_bytes, after.static_bytes);
  row("row-block passes (X read once)", before.row_block_passes, after.row_block_passes);
  for (const auto& [pass, st] : report.passes) {
    if (st.applied.empty()) continue;
    std::cout << "  " << pass << ":";
    for (const auto& [rule, n] : st.applied) std::cout << " " << rule << " x" << n;
    std::cout << "\n";
  }
}

FunctionGraph load(const CompileArgs& args, const std::string& graph_text) {
  return load_graph_text(graph_text, graph_file_folder(args.file), args.file);
}

void report(const CompileArgs& args, const Emitted& e) {
  if (!args.options.stats) return;
  print_stats(*e.stats_before, *e.stats_after, e.rewrites);
  std::cout << "  vector math: " << vector_math_path(args.options.build) << "\n";
}

// Every choice of `kiln compile` that changes its output, besides the build options and the
// graph (direct_cache_key hashes those itself). A new option that changes the output belongs here.
std::string direct_mode_options(const CompileArgs& args) {
  const CompileOptions& o = args.options;
  std::string text = "name=" + o.name + "\nprogram=" + std::to_string(o.program) +
                     "\nno_rewrite=" + std::to_string(!o.rewrite);
  if (o.backend != "cpp") text += "\nbackend=" + o.backend;
  if (o.entry_points.nutpie_logp) text += "\nnutpie=1";
  for (const auto& tag : o.rewrites.include) text += "\ninclude=" + tag;
  for (const auto& tag : o.rewrites.exclude) text += "\nexclude=" + tag;
  return text;
}

// Direct mode serves only what a hit reproduces exactly: not --stats or --dump-after, which
// print what loading and rewriting did. (Its index entries name NAME.cpp, so it serves
// backends whose source is NAME.cpp.)
bool direct_mode_applies(const CompileArgs& args) {
  return args.options.build.use_cache && !args.options.stats && args.options.rewrites.dump_after.empty() &&
         find_backend(args.options.backend).toolchain.source_suffix == ".cpp";
}

void print_written(const fs::path& dir, const std::string& name, const std::string& source_file, bool program,
                   bool cached) {
  std::cout << "wrote " << (dir / ("lib" + name + ".so")).string() << ", " << name << ".h, " << source_file;
  if (program) std::cout << ", " << name << "_main.cpp, " << name;
  std::cout << (cached ? " (cached)" : "") << "\n";
}

void prepare_out_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw IoError("cannot create output folder " + dir + ": " + ec.message());
}

void add_common(CLI::App* cmd, CompileArgs& args) {
  cmd->add_option("FILE", args.file, "graph file (.json)")->required();
  cmd->add_option("-o,--output-dir", args.out_dir, "folder to write into")->required();
  cmd->add_option("--name", args.options.name, "symbol prefix and file name (default: the graph's name)");
  cmd->add_flag("--stats", args.options.stats, "print kernels, fused nodes and intermediates before and after rewriting");
  cmd->add_flag("--nutpie", args.options.entry_points.nutpie_logp,
                "also export NAME_nutpie_logp, nutpie's logp callback, for a graph x -> (logp, gradient)");
  add_backend_option(cmd, args.options);
  add_rewrite_options(cmd, args.options);
  add_verbose_option(cmd, args.verbose);
}

}  // namespace

void add_compile_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("compile", "Compile a graph into a shared library libNAME.so with NAME.h and NAME.cpp");
  auto args = std::make_shared<CompileArgs>();
  add_common(cmd, *args);
  cmd->add_flag("--program", args->options.program, "also build NAME, a standalone program reading/writing .npy files");
  add_build_options(cmd, args->options.build, args->cxxflags);
  cmd->callback([&exit_code, args] {
    exit_code = run_guarded([&] {
      CompileOptions& o = args->options;
      o.build.cxxflags = split_flags(args->cxxflags);
      const std::string graph_text = read_graph_file(args->file);
      const fs::path dir(args->out_dir);
      DirectCacheKey direct;
      if (direct_mode_applies(*args)) {
        direct = direct_cache_key(graph_text, graph_file_folder(args->file), o.build, direct_mode_options(*args));
        if (auto hit = direct_cache_lookup(direct, o.build, o.program)) {
          prepare_out_dir(args->out_dir);
          const fs::path entry(hit->entry_dir);
          std::vector<std::string> files = {hit->name + ".h", hit->name + ".cpp", "lib" + hit->name + ".so"};
          if (o.program) files.insert(files.end(), {hit->name + "_main.cpp", hit->name});
          for (const auto& file : files) copy_file_if_changed((entry / file).string(), (dir / file).string());
          print_written(dir, hit->name, hit->name + ".cpp", o.program, true);
          if (args->verbose)
            std::cerr << "kiln: direct-mode cache hit (graph file, its .npy files and options unchanged): "
                      << hit->entry_dir << "\n";
          return exit_code::kOk;
        }
      }
      const auto start = std::chrono::steady_clock::now();
      FunctionGraph fg = load(*args, graph_text);
      const double load_seconds = seconds_since(start);
      Artifacts a = compile_with_progress(std::move(fg), o, args->file);
      report(*args, a);
      if (args->verbose) print_stage_times(load_seconds, a, &a.build);
      const GeneratedLibrary& lib = a.sources;
      direct_cache_record(direct, lib.name, a.build.key, o.build);
      prepare_out_dir(args->out_dir);
      write_file_if_changed((dir / (lib.name + ".h")).string(), lib.header, true);
      write_file_if_changed((dir / lib.source_file).string(), lib.source, true);
      copy_file_if_changed(a.build.library_path, (dir / ("lib" + lib.name + ".so")).string());
      if (o.program) {
        write_file_if_changed((dir / (lib.name + "_main.cpp")).string(), lib.main_program, true);
        copy_file_if_changed(a.build.program_path, (dir / lib.name).string());
      }
      print_written(dir, lib.name, lib.source_file, o.program, a.build.cache_hit);
      return exit_code::kOk;
    });
  });
}

void add_emit_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "emit", "Write the generated sources only (NAME.h, NAME.cpp, NAME_main.cpp, NAME_data.S and its .bin files)");
  auto args = std::make_shared<CompileArgs>();
  add_common(cmd, *args);
  cmd->add_option("--depfile", args->depfile,
                  "also write a Makefile-style depfile: the sources depend on the graph and its .npy files");
  cmd->callback([&exit_code, args] {
    exit_code = run_guarded([&] {
      const auto start = std::chrono::steady_clock::now();
      FunctionGraph fg = load(*args, read_graph_file(args->file));
      const double load_seconds = seconds_since(start);
      Emitted e = emit(std::move(fg), args->options);
      report(*args, e);
      if (args->verbose) print_stage_times(load_seconds, e, nullptr);
      const GeneratedLibrary& lib = e.sources;
      // Unchanged files keep their time stamps, so build systems rebuild only what changed.
      std::vector<std::string> written = write_emitted_sources(lib, args->out_dir);
      if (!args->depfile.empty()) write_depfile(args->depfile, written, graph_input_files(args->file));
      std::cout << "wrote " << written.front() << ", " << lib.source_file << ", " << lib.name << "_main.cpp, "
                << lib.name << "_data.S";
      if (!lib.blobs.empty()) std::cout << " and " << lib.blobs.size() << " .bin file(s)";
      // The BLAS the code calls: OpenBLAS for cpp, the backend's own (CLBlast, cuBLAS) for a GPU.
      const Toolchain& toolchain = find_backend(lib.backend).toolchain;
      std::string blas = toolchain.blas ? "-lopenblas" : toolchain.blas_libraries;
      if (!toolchain.blas && !toolchain.linalg_libraries.empty() && lib.source.find("kg::linalg::") != std::string::npos)
        blas += " " + toolchain.linalg_libraries;
      std::cout << (lib.needs_blas && !blas.empty() ? " (link with " + blas + ")" : "") << "\n";
      return exit_code::kOk;
    });
  });
}

}  // namespace kiln::cli
