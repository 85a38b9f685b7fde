// W7: compile time of W4's training-step graph (float64): load + rewrite + codegen in process
// (what `kiln emit` does); a cold `kiln compile` as a subprocess: the graph not in the cache, the
// cache's once-per-compiler pieces (the precompiled system headers, the compiler's identity)
// there, as for any graph but a cache's first; the same with `--no-cache` (nothing reused); and
// a cache hit of `kiln compile` (subprocess) followed by a dlopen of the result.
#include <dlfcn.h>
#include <filesystem>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include "common.hpp"
#include "compile/compile.h"
#include "io/graph_load.h"

extern char** environ;

namespace bench {
namespace {

const char* const kGraph = "w4_logreg_float64";

// Runs argv with stdout/stderr to `log`; throws unless it exits with 0.
void run_process(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("cannot run " + argv[0] + ": " + std::strerror(rc));
  int status = 0;
  if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(argv[1] + " failed (status " + std::to_string(status) + "), see " + log);
}

std::vector<std::string> compile_argv(const std::string& out_dir, bool cache, const std::string& cache_name = "w7-cache") {
  std::vector<std::string> argv = {env_required("KILN_BENCH_KILN"), "compile", graph_dir() + "/" + kGraph + ".json",
                                   "-o", out_dir, "--name", kGraph};
  if (cache) {
    argv.push_back("--cache-dir");
    argv.push_back(env_required("KILN_BENCH_WORK") + "/" + cache_name);
  } else {
    argv.push_back("--no-cache");
  }
  return argv;
}

void register_w7() {
  add("W7/codegen/float64/threads:1", [](benchmark::State& st) {
    const std::string path = graph_dir() + "/" + kGraph + ".json";
    kiln::CompileOptions options;  // as kiln emit: the default pipeline
    options.name = kGraph;
    for (auto _ : st) {
      kiln::Emitted e = kiln::emit(kiln::load_graph_file(path), options);
      benchmark::DoNotOptimize(e.sources.source.data());
    }
  });
  add("W7/compile_cold/float64/threads:1", [](benchmark::State& st) {
    const std::string work = env_required("KILN_BENCH_WORK");
    const std::filesystem::path cache = work + "/w7-cold-cache";
    auto argv = compile_argv(work + "/w7-cold", true, "w7-cold-cache");
    try {
      run_process(argv, work + "/w7-cold.log");  // the cache's once-per-compiler pieces (untimed)
      for (auto _ : st) {
        st.PauseTiming();
        // Everything but those pieces goes: the graph's entry, its direct-mode record.
        for (const auto& e : std::filesystem::directory_iterator(cache)) {
          const std::string name = e.path().filename().string();
          if (name != "pch" && name != "compilers") std::filesystem::remove_all(e.path());
        }
        st.ResumeTiming();
        run_process(argv, work + "/w7-cold.log");
      }
    } catch (const std::exception& e) {
      st.SkipWithError(e.what());
    }
  })->Iterations(1)->Repetitions(3);
  add("W7/compile_nocache/float64/threads:1", [](benchmark::State& st) {
    const std::string work = env_required("KILN_BENCH_WORK");
    auto argv = compile_argv(work + "/w7-nocache", false);
    try {
      for (auto _ : st) run_process(argv, work + "/w7-nocache.log");
    } catch (const std::exception& e) {
      st.SkipWithError(e.what());
    }
  })->Iterations(1)->Repetitions(3);
  add("W7/cache_hit/float64/threads:1", [](benchmark::State& st) {
    const std::string work = env_required("KILN_BENCH_WORK");
    const std::string dir = work + "/w7-hit";
    auto argv = compile_argv(dir, true);
    const std::string lib = dir + "/lib" + kGraph + ".so", sym = std::string(kGraph) + "_info";
    try {
      run_process(argv, work + "/w7-hit.log");  // fill the cache (untimed)
      for (auto _ : st) {
        run_process(argv, work + "/w7-hit.log");
        void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h || !dlsym(h, sym.c_str())) throw std::runtime_error("cannot load " + lib);
        dlclose(h);
      }
    } catch (const std::exception& e) {
      st.SkipWithError(e.what());
    }
  });
}

}  // namespace

void register_compile() { register_w7(); }

}  // namespace bench
