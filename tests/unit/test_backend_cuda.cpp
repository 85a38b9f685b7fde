// The cuda backend: the .cu source of the NumPy fixture cases the GPU backends claim (one case
// per distinct kernel), in shards built by nvcc for sm_75 and linked against cudart, with
// ptxas's report checked for local-memory spills in kiln's kernels. The machine needs nvcc,
// not a GPU; without nvcc the case reports "skipped: no nvcc". Running the kernels needs a CUDA
// device, which CI does not have: that case says so and what it would run.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "codegen/gpu/backend.h"
#include "compiled.h"
#include "driver/process.h"
#include "fixtures.h"
#include "ir/error.h"

using namespace kiln;
using namespace kiln::testing;

namespace fs = std::filesystem;

namespace {

// nvcc from $CUDACXX, /usr/local/cuda or PATH; empty when there is none.
std::string find_nvcc() {
  if (const char* env = std::getenv("CUDACXX"); env && *env && fs::exists(env)) return env;
  if (fs::exists("/usr/local/cuda/bin/nvcc")) return "/usr/local/cuda/bin/nvcc";
  const ProcessResult r = run_process({"nvcc", "--version"});
  return r.exit_code == 0 ? "nvcc" : "";
}

// The kernels of a .cu source, each with its own name blanked: two cases whose kernels read the
// same are the same test of nvcc, whatever their graphs are called.
std::vector<std::string> kernel_texts(const std::string& source) {
  std::vector<std::string> out;
  static const std::string marker = "__global__ void ";
  for (std::size_t at = source.find(marker); at != std::string::npos; at = source.find(marker, at + 1)) {
    const std::size_t name = at + marker.size(), paren = source.find('(', name);
    const std::size_t close = source.find("\n}\n", paren);
    if (paren == std::string::npos || close == std::string::npos) break;
    out.push_back(source.substr(paren, close - paren));
  }
  return out;
}

// The fixture cases the cuda backend generates (every op implemented, every scalar op spelled),
// one per distinct kernel: a case is kept when one of its kernels (or an op, dtype and rank of its
// host code) is not in a case kept before it.
// The fixtures repeat each kernel many times over (values, shapes, views and broadcasting patterns
// change the host code's arguments, not the kernel text), and nvcc proves nothing more by
// compiling the same kernel twice. `kernels` gets the number of distinct kernels and host forms.
std::vector<FixtureCase> distinct_kernel_cases(std::size_t& kernels) {
  CompileOptions o = test_compile_options();
  o.backend = "cuda";
  static const std::vector<std::string> ops = gpu_backend_ops();
  const char* filter = std::getenv("KILN_FIXTURE_FILTER");
  std::set<std::string> seen;
  std::vector<FixtureCase> out;
  for (const auto& dir : list_fixture_cases(filter ? filter : "")) {
    FixtureCase c = load_fixture_case(dir);
    bool claimed = true;
    for (const Apply* node : c.graph.toposort())
      claimed = claimed && std::find(ops.begin(), ops.end(), std::string(node->op().name())) != ops.end();
    if (!claimed) continue;
    std::string source;
    try {
      source = emit_bundle({{&c.graph, "probe"}}, "probe", o).source;
    } catch (const NotImplementedError&) {
      continue;
    }
    // Host code is instantiated per op, dtype and rank (ops such as Alloc and Join launch the
    // shared copy kernels and have no kernel of their own).
    std::vector<std::string> keys = kernel_texts(source);
    for (const Apply* node : c.graph.toposort()) {
      std::string key = "host " + std::string(node->op().name());
      for (int k = 0; k < node->num_outputs(); ++k)
        key += " " + std::string(dtype_name(node->output_ptr(k)->dtype())) + "/" + std::to_string(node->output_ptr(k)->ndim());
      keys.push_back(std::move(key));
    }
    bool fresh = false;
    for (std::string& k : keys) fresh = seen.insert(std::move(k)).second || fresh;
    if (fresh) out.push_back(std::move(c));
  }
  kernels = seen.size();
  return out;
}

// This process's share of the cases: KILN_CUDA_SHARD="i/n" (ctest runs the n shards in
// parallel, one nvcc each) takes every n-th case from the i-th; unset, all of them.
std::pair<int, int> shard() {
  const char* env = std::getenv("KILN_CUDA_SHARD");
  int i = 0, n = 1;
  if (env && std::sscanf(env, "%d/%d", &i, &n) == 2 && n > 0 && i >= 0 && i < n) return {i, n};
  return {0, 1};
}

}  // namespace

// One real architecture (sm_75, the oldest CUDA 13 supports): the kernels are the same text for
// every target, and what this proves (each kernel template instantiated as kiln emits it is
// valid CUDA that ptxas compiles without spills) does not change with the target; building for
// several targets multiplies the time (docs/gpu_backends.md says how long this takes).
TEST_CASE("cuda: the conformance graphs build with nvcc without spills") {
  const std::string nvcc = find_nvcc();
  if (nvcc.empty()) {
    MESSAGE("skipped: no nvcc (set CUDACXX or install the CUDA toolkit)");
    return;
  }
  std::size_t kernels = 0;
  const std::vector<FixtureCase> cases = distinct_kernel_cases(kernels);
  const auto [part, parts] = shard();
  NamedGraphs graphs;
  for (std::size_t k = static_cast<std::size_t>(part); k < cases.size(); k += static_cast<std::size_t>(parts))
    graphs.emplace_back(&cases[k].graph, "c" + std::to_string(k));
  REQUIRE(!graphs.empty());
  CompileOptions o = test_compile_options();
  o.backend = "cuda";
  const std::string name = "cuda_conformance_" + std::to_string(part);
  const GeneratedLibrary lib = emit_bundle(graphs, name, o);
  const fs::path dir = fs::path(KILN_TEST_CACHE_DIR) / "cuda";
  fs::create_directories(dir);
  const fs::path source = dir / lib.source_file;
  std::ofstream(source) << lib.source;
  // Host code at -O1 (it is the C++ backend's, checked at -O2 elsewhere); device code at
  // ptxas's default -O3, whose register allocation is what the spill check is about.
  std::vector<std::string> command = {nvcc, "-std=c++17", "-O1", "-shared", "-Xcompiler", "-fPIC,-fvisibility=hidden",
                                      "-diag-suppress", "177,186", "-I" KILN_SOURCE_DIR "/runtime/include", "-gencode",
                                      "arch=compute_75,code=sm_75", "-Xptxas", "-v", "-o",
                                      (dir / ("lib" + name + ".so")).string(), source.string(), "-lcudart"};
  if (lib.needs_blas) command.push_back("-lcublas");  // the products' cuBLAS
  const ProcessResult r = run_process(command);
  INFO(r.output.substr(0, 20000));
  REQUIRE_MESSAGE(r.exit_code == 0, "nvcc failed on " << source.string());
  MESSAGE(graphs.size() << " of " << cases.size() << " fixture graphs (shard " << part << "/" << parts << "; "
                        << kernels << " distinct kernels and host forms in all) built by nvcc for sm_75");
  // ptxas -v: one "N bytes spill stores, M bytes spill loads" line per kernel.
  std::istringstream lines(r.output);
  int compiled = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("spill stores") == std::string::npos) continue;
    ++compiled;
    CHECK_MESSAGE(line.find(" 0 bytes spill stores, 0 bytes spill loads") != std::string::npos, line);
  }
  CHECK(compiled > 0);
}

TEST_CASE("cuda: the conformance graphs run on a CUDA device") {
  const ProcessResult smi = run_process({"nvidia-smi", "-L"});
  if (smi.exit_code != 0 || smi.output.find("GPU ") == std::string::npos) {
    MESSAGE("skipped: no CUDA device (nvidia-smi -L lists none). With one, this case would run the fixtures the GPU "
            "backends claim through the nvcc-built library above; that harness (kDLCUDA inputs via cudaMemcpy) is not "
            "written yet (docs/gpu_backends.md)");
    return;
  }
  FAIL("a CUDA device is present but the CUDA run harness is not written yet (docs/gpu_backends.md)");
}
