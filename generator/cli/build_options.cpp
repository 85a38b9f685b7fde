#include "cli/build_options.h"

#include <cstdio>
#include <iostream>

#include "driver/nvcc.h"
#include "ir/error.h"

namespace kiln::cli {

void add_build_options(CLI::App* cmd, BuildOptions& options, std::string& cxxflags) {
  cmd->add_option("--cxx", options.cxx,
                  "compiler (default: $CXX, else c++; for --backend cuda the nvcc to use: $CUDACXX, else nvcc on PATH, "
                  "else /usr/local/cuda/bin/nvcc)");
  cmd->add_option("--march", options.march,
                  "target architecture for -march: native (the default: this machine), x86-64-v2, "
                  "x86-64-v3, ..., or none (the compiler's portable default); use a named level for "
                  "a library that will run on other machines");
  cmd->add_option("--march-variants", options.march_variants,
                  "compile for several x86-64 levels (e.g. x86-64-v3,x86-64-v2,x86-64) into one library that "
                  "picks the first one the CPU supports when loaded; replaces --march")
      ->delimiter(',');
  cmd->add_option("--cxxflags", cxxflags, "extra compiler flags (nvcc's for --backend cuda), space separated");
  cmd->add_option("--cuda-arch", options.cuda_arch,
                  "--backend cuda: the GPU architectures to build for, comma-separated: sm_NN for machine code, "
                  "compute_NN for PTX the driver compiles at load time (default sm_75,sm_80,sm_90,compute_90; "
                  "fewer build faster: a small graph for sm_75 alone in about half the time)")
      ->delimiter(',')
      ->check(CLI::Validator(
          [](std::string& arch) -> std::string {
            try {
              checked_cuda_architectures({arch});
              return "";
            } catch (const UserError& e) {
              return e.what();
            }
          },
          "ARCH"));
  cmd->add_flag("--fast-math", options.fast_math,
                "compile with -ffast-math: faster math, but NaN and inf may be mishandled, signed zeros "
                "ignored and sums reassociated (results change with vector width and thread count)");
  cmd->add_flag("--math-1ulp", options.math_1ulp,
                "vectorised exp, log, sin, ... from SLEEF's 1-ULP functions everywhere (about half the speed); "
                "the default is glibc's libmvec, with kiln's own float32 exp/log/sin/cos and SLEEF's "
                "where libmvec is less accurate than NumPy (see `kiln --version`)");
  cmd->add_option("--cache-dir", options.cache_dir, "cache folder (default: $XDG_CACHE_HOME/kiln)");
  cmd->add_flag("--no-cache", [&options](std::int64_t) { options.use_cache = false; },
                "build afresh without reading or writing the cache");
}

void add_verbose_option(CLI::App* cmd, bool& verbose) {
  cmd->add_flag("-v,--verbose", verbose,
                "print each stage's time to stderr and, for a build, whether the cache had the library "
                "and which part of its key changed when not");
}

void print_time(const std::string& stage, double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f s", seconds);
  std::cerr << "kiln: " << stage << " " << text << "\n";
}

void print_stage_times(double load_seconds, const Emitted& e, const BuildResult* build) {
  print_time("load", load_seconds);
  for (const StageTime& t : e.stage_times) print_time(t.stage, t.seconds);
  if (!build) return;
  if (build->cache_hit)
    std::cerr << "kiln: cache hit: " << build->library_path << "\n";
  else
    std::cerr << "kiln: cache miss: " << build->miss_reason << "\n";
}

}  // namespace kiln::cli
