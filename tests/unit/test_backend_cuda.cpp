// The cuda backend: the .cu source of the NumPy fixture cases the GPU backends claim (one case
// per distinct kernel), in shards built by the driver's nvcc command (driver/nvcc.h) for sm_75,
// with ptxas's report checked for local-memory spills in kiln's kernels and written as the
// table docs/cuda_kernels.md (registers, shared memory, stack and spills of every kernel). The
// machine needs nvcc, not a GPU; without nvcc the case reports "skipped: no nvcc". Running the
// kernels needs a CUDA device, which CI does not have: that case says so and what it would run.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "codegen/gpu/backend.h"
#include "compiled.h"
#include "driver/nvcc.h"
#include "driver/process.h"
#include "fixtures.h"
#include "ir/error.h"
#include "ops/random.h"

#ifdef KILN_TEST_CUDA
#include "api/graph_builder.h"
#include "api/elementwise.h"
#include "device_call.h"
#include "kiln/cuda.hpp"
#endif

using namespace kiln;
using namespace kiln::testing;

namespace fs = std::filesystem;

namespace {

// The kernels of a .cu source by name, each text with its own name blanked: two cases whose
// kernels read the same are the same test of nvcc, whatever their graphs are called.
std::map<std::string, std::string> kernels_by_name(const std::string& source) {
  std::map<std::string, std::string> out;
  static const std::string marker = "__global__ void ";
  for (std::size_t at = source.find(marker); at != std::string::npos; at = source.find(marker, at + 1)) {
    const std::size_t name = at + marker.size(), paren = source.find('(', name);
    const std::size_t close = source.find("\n}\n", paren);
    if (paren == std::string::npos || close == std::string::npos) break;
    out[source.substr(name, paren - name)] = source.substr(paren, close - paren);
  }
  return out;
}

std::vector<std::string> kernel_texts(const std::string& source) {
  std::vector<std::string> out;
  for (auto& [name, text] : kernels_by_name(source)) out.push_back(std::move(text));
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
    // Random draws build in a test of their own (test_gpu_random.cpp), outside the ptxas table.
    for (const Apply* node : c.graph.toposort())
      claimed = claimed && std::find(ops.begin(), ops.end(), std::string(node->op().name())) != ops.end() &&
                !is_impure(node->op());
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

// KILN_CUDA_EVERY=k keeps every k-th case of the shard (1, or unset: all): the ctest entry for
// the other architectures builds a sample, since each architecture costs ptxas another pass
// over every kernel.
std::size_t every() {
  const char* env = std::getenv("KILN_CUDA_EVERY");
  const long k = env && *env ? std::strtol(env, nullptr, 10) : 1;
  return k > 1 ? static_cast<std::size_t>(k) : 1;
}

// --- docs/cuda_kernels.md: the ptxas table -----------------------------------------------------
//
// One section per shard (each ctest shard checks, or with KILN_UPDATE_GOLDEN=1 rewrites, its own,
// under a lock since both run at once), and a summary per fixture family over every section.
// The table holds what this nvcc made of the kernels: with another nvcc release it is not
// compared (the numbers are the compiler's, not kiln's).

const char kTablePath[] = KILN_SOURCE_DIR "/docs/cuda_kernels.md";

// One kernel's line: | fixture case | kernel | arch | registers | shared | stack | spill stores | spill loads |
struct TableRow {
  std::string fixture, kernel, arch;
  std::int64_t registers = 0, shared = 0, stack = 0, spill_stores = 0, spill_loads = 0;
};

std::string table_cell(std::string text) {
  for (char& c : text)
    if (c == '|') c = '/';
  return text;
}

std::string table_line(const TableRow& r) {
  return "| " + table_cell(r.fixture) + " | " + table_cell(r.kernel) + " | " + r.arch + " | " +
         std::to_string(r.registers) + " | " + std::to_string(r.shared) + " | " + std::to_string(r.stack) + " | " +
         std::to_string(r.spill_stores) + " | " + std::to_string(r.spill_loads) + " |";
}

// The graph index k of a kernel named "c<k>_...", or -1 (the bundle's file-scope kernels).
long graph_index(const std::string& kernel) {
  if (kernel.size() < 2 || kernel[0] != 'c' || kernel[1] < '0' || kernel[1] > '9') return -1;
  return std::strtol(kernel.c_str() + 1, nullptr, 10);
}

// The rows of a ptxas report of the bundle whose graph "c<k>" is fixture case names[k]: kernels
// are named after their graph ("c12_graph_s0_flat" → fixture names[12], kernel "graph_s0_flat");
// the bundle's file-scope kernels (kiln_copy_N, ...) are listed under "(shared)". A kernel whose
// text (`texts`, by name) an earlier graph of the bundle has too is listed once, at the first.
std::vector<TableRow> table_rows(std::vector<PtxasFunction> report, const std::map<std::string, std::string>& names,
                                 const std::map<std::string, std::string>& texts) {
  std::stable_sort(report.begin(), report.end(), [](const PtxasFunction& a, const PtxasFunction& b) {
    return std::make_tuple(graph_index(a.name), a.name, a.arch) < std::make_tuple(graph_index(b.name), b.name, b.arch);
  });
  std::set<std::pair<std::string, std::string>> listed;  // (kernel text, arch)
  std::vector<TableRow> rows;
  for (const PtxasFunction& f : report) {
    auto text = texts.find(f.name);
    if (text != texts.end() && !listed.insert({text->second, f.arch}).second) continue;
    TableRow r;
    r.fixture = "(shared)";
    r.kernel = f.name;
    const std::size_t underscore = f.name.find('_');
    if (underscore != std::string::npos) {
      auto it = names.find(f.name.substr(0, underscore));
      if (it != names.end()) {
        r.fixture = it->second;
        r.kernel = f.name.substr(underscore + 1);
      }
    }
    r.arch = f.arch;
    r.registers = f.registers;
    r.shared = f.shared_bytes;
    r.stack = f.stack_bytes;
    r.spill_stores = f.spill_store_bytes;
    r.spill_loads = f.spill_load_bytes;
    rows.push_back(std::move(r));
  }
  std::sort(rows.begin(), rows.end(), [](const TableRow& a, const TableRow& b) {
    return std::tie(a.fixture, a.kernel, a.arch) < std::tie(b.fixture, b.kernel, b.arch);
  });
  return rows;
}

std::string section_begin(int part, int parts) {
  return "<!-- shard " + std::to_string(part) + "/" + std::to_string(parts) + " begin -->";
}
std::string section_end(int part, int parts) {
  return "<!-- shard " + std::to_string(part) + "/" + std::to_string(parts) + " end -->";
}

std::string section_text(int part, int parts, std::size_t graphs, const std::string& archs,
                         const std::vector<TableRow>& rows) {
  std::string s = section_begin(part, parts) + "\n\n### Shard " + std::to_string(part) + " of " +
                  std::to_string(parts) + ": " + std::to_string(graphs) + " fixture graphs, " +
                  std::to_string(rows.size()) + " distinct kernels × architectures (" + archs + ")\n\n" +
                  "| fixture case | kernel | arch | registers | shared memory (bytes) | stack (bytes) | spill stores "
                  "(bytes) | spill loads (bytes) |\n|---|---|---|--:|--:|--:|--:|--:|\n";
  for (const TableRow& r : rows) s += table_line(r) + "\n";
  return s + "\n" + section_end(part, parts) + "\n";
}

// The rows of every shard section of the table's text.
std::vector<TableRow> rows_of_table(const std::string& text) {
  std::vector<TableRow> rows;
  std::istringstream lines(text);
  bool inside = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("<!-- shard ", 0) == 0) inside = line.find(" begin -->") != std::string::npos;
    if (!inside || line.rfind("| ", 0) != 0 || line.rfind("| fixture case |", 0) == 0) continue;
    std::vector<std::string> cells;
    std::istringstream in(line.substr(2));
    for (std::string cell; std::getline(in, cell, '|');) {
      while (!cell.empty() && cell.back() == ' ') cell.pop_back();
      while (!cell.empty() && cell.front() == ' ') cell.erase(0, 1);
      cells.push_back(cell);
    }
    if (cells.size() < 8) continue;
    TableRow r{cells[0], cells[1], cells[2]};
    r.registers = std::atoll(cells[3].c_str());
    r.shared = std::atoll(cells[4].c_str());
    r.stack = std::atoll(cells[5].c_str());
    r.spill_stores = std::atoll(cells[6].c_str());
    r.spill_loads = std::atoll(cells[7].c_str());
    rows.push_back(std::move(r));
  }
  return rows;
}

// Per fixture family and architecture: kernels, the most registers (and which kernel), the most
// shared memory and stack, and the spilled bytes.
std::string summary_text(const std::vector<TableRow>& rows) {
  struct Family {
    int kernels = 0;
    TableRow most;
    std::int64_t shared = 0, stack = 0, spills = 0;
  };
  std::map<std::pair<std::string, std::string>, Family> families;
  std::int64_t spills = 0;
  const TableRow* most = nullptr;
  for (const TableRow& r : rows) {
    const std::string family = r.fixture.substr(0, r.fixture.find('/'));
    Family& f = families[{family, r.arch}];
    if (f.kernels++ == 0 || r.registers > f.most.registers) f.most = r;
    f.shared = std::max(f.shared, r.shared);
    f.stack = std::max(f.stack, r.stack);
    f.spills += r.spill_stores + r.spill_loads;
    spills += r.spill_stores + r.spill_loads;
    if (!most || r.registers > most->registers) most = &r;
  }
  std::string s = "<!-- summary begin -->\n\n" + std::to_string(rows.size()) + " kernels × architectures; " +
                  (most ? "at most " + std::to_string(most->registers) + " registers (" + most->fixture + ", " +
                              most->kernel + ", " + most->arch + ")"
                        : std::string("none")) +
                  "; " + std::to_string(spills) + " bytes spilled.\n\n" +
                  "| fixture family | arch | kernels | most registers | in | most shared memory (bytes) | most stack "
                  "(bytes) | spilled (bytes) |\n|---|---|--:|--:|---|--:|--:|--:|\n";
  for (const auto& [key, f] : families)
    s += "| " + key.first + " | " + key.second + " | " + std::to_string(f.kernels) + " | " +
         std::to_string(f.most.registers) + " | " + table_cell(f.most.fixture + " " + f.most.kernel) + " | " +
         std::to_string(f.shared) + " | " + std::to_string(f.stack) + " | " + std::to_string(f.spills) + " |\n";
  return s + "\n<!-- summary end -->\n";
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The text between `begin` and `end` (both lines included), or "".
std::string part_of(const std::string& text, const std::string& begin, const std::string& end) {
  const std::size_t a = text.find(begin), b = a == std::string::npos ? a : text.find(end, a);
  return b == std::string::npos ? "" : text.substr(a, b + end.size() + 1 - a);
}

// The table with `section` in place of its shard's (sections in shard order) and the summary
// recomputed from every section.
std::string updated_table(std::string text, int part, int parts, const std::string& nvcc_line,
                          const std::string& section) {
  const std::string head =
      "# CUDA kernels: registers, shared memory and spills\n\n"
      "Generated from `ptxas -v` by the nvcc build of the conformance graphs (`ctest -R cuda_nvcc_build`,\n"
      "`tests/unit/test_backend_cuda.cpp`): every distinct kernel kiln emits for the fixture cases the GPU\n"
      "backends claim, built with the driver's nvcc flags (`generator/driver/nvcc.h`; device code at\n"
      "ptxas's default -O3). The test fails when a kernel spills to local memory and, with the nvcc\n"
      "release below, when this file is out of date: regenerate it with\n"
      "`KILN_UPDATE_GOLDEN=1 ctest --test-dir build -R cuda_nvcc_build -j2` (or `scripts/update-golden --cuda`).\n"
      "Do not edit.\n\n" +
      nvcc_line + "\n\n";
  std::vector<std::string> sections(static_cast<std::size_t>(parts));
  for (int i = 0; i < parts; ++i) sections[static_cast<std::size_t>(i)] = part_of(text, section_begin(i, parts), section_end(i, parts));
  sections[static_cast<std::size_t>(part)] = section;
  std::string body;
  for (const std::string& s : sections) body += (s.empty() ? "" : "\n" + s);
  return head + "## Summary\n\n" + summary_text(rows_of_table(body)) + "\n## Every kernel\n" + body;
}

// "nvcc: Cuda compilation tools, release 13.0, V13.0.88" from `nvcc --version`.
std::string nvcc_release(const std::string& nvcc) {
  const ProcessResult r = run_process({nvcc, "--version"});
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);)
    if (line.find("release ") != std::string::npos) return "nvcc: " + line;
  return "nvcc: unknown";
}

// The first line where two texts differ, for the failure message.
std::string first_difference(const std::string& a, const std::string& b) {
  std::istringstream x(a), y(b);
  std::string l, m;
  for (int n = 1;; ++n) {
    const bool more_x = static_cast<bool>(std::getline(x, l)), more_y = static_cast<bool>(std::getline(y, m));
    if (!more_x && !more_y) return "";
    if (!more_x || !more_y || l != m)
      return "line " + std::to_string(n) + " of the section:\n  table: " + (more_x ? l : "(end)") +
             "\n  built: " + (more_y ? m : "(end)");
  }
}

// The architectures the test builds for: one real target, sm_75 (KILN_CUDA_TEST_ARCH may name
// others, e.g. "sm_75,sm_90", to see what they change; the table is compared for sm_75 only).
std::vector<std::string> test_architectures() {
  const char* env = std::getenv("KILN_CUDA_TEST_ARCH");
  std::vector<std::string> archs;
  std::istringstream in(env && *env ? env : "sm_75");
  for (std::string a; std::getline(in, a, ',');) archs.push_back(a);
  return checked_cuda_architectures(archs);
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
  std::map<std::string, std::string> fixture_of;  // graph name → fixture case
  const std::size_t step = static_cast<std::size_t>(parts) * every();
  for (std::size_t k = static_cast<std::size_t>(part); k < cases.size(); k += step) {
    graphs.emplace_back(&cases[k].graph, "c" + std::to_string(k));
    fixture_of["c" + std::to_string(k)] = cases[k].name;
  }
  REQUIRE(!graphs.empty());
  CompileOptions o = test_compile_options();
  o.backend = "cuda";
  const std::string name = "cuda_conformance_" + std::to_string(part);
  const GeneratedLibrary lib = emit_bundle(graphs, name, o);
  // The driver's nvcc command (what `kiln compile --backend cuda` runs) with ptxas's report; host
  // code at -O1 (it is the C++ backend's, checked at -O2 elsewhere); device code at ptxas's
  // default -O3, whose register allocation is what the spill check is about.
  BuildOptions build;
  build.cxx = nvcc;
  build.opt_level = "-O1";
  build.cuda_arch = test_architectures();
  build.cxxflags = {"-Xptxas", "-v"};
  build.use_cache = false;
  build.cache_dir = KILN_TEST_CACHE_DIR;  // (where nvcc's identity is remembered)
  const auto start = std::chrono::steady_clock::now();
  BuildResult built;
  try {
    built = build_library(lib, build);
  } catch (const CompileFailure& e) {
    FAIL("nvcc failed: " << e.what());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::error_code ec;
  fs::remove_all(fs::path(built.library_path).parent_path(), ec);  // the no-cache build folder
  std::string archs;
  for (const auto& a : build.cuda_arch) archs += (archs.empty() ? "" : ",") + a;
  MESSAGE(graphs.size() << " of " << cases.size() << " fixture graphs (shard " << part << "/" << parts << "; "
                        << kernels << " distinct kernels and host forms in all) built by nvcc for " << archs << " in "
                        << static_cast<int>(seconds) << " s");
  // ptxas -v: one "N bytes stack frame, N bytes spill stores, M bytes spill loads" line per
  // function (kernels and any device function not inlined).
  std::istringstream lines(built.compiler_output);
  int compiled = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("spill stores") == std::string::npos) continue;
    ++compiled;
    CHECK_MESSAGE(line.find(" 0 bytes spill stores, 0 bytes spill loads") != std::string::npos, line);
  }
  CHECK(compiled > 0);
  const std::vector<PtxasFunction> report = parse_ptxas_report(built.compiler_output);
  for (const PtxasFunction& f : report)
    CHECK_MESSAGE(f.spill_store_bytes + f.spill_load_bytes == 0, f.name << " spills on " << f.arch);
  const std::vector<TableRow> rows = table_rows(report, fixture_of, kernels_by_name(lib.source));

  // The table (docs/cuda_kernels.md): only for the set ctest builds, every case in two shards.
  const char* filter = std::getenv("KILN_FIXTURE_FILTER");
  if ((filter && *filter) || parts != 2 || archs != "sm_75" || every() != 1) {
    MESSAGE("docs/cuda_kernels.md not compared: it is made by the two ctest shards of every fixture case for sm_75");
    return;
  }
  const std::string section = section_text(part, parts, graphs.size(), archs, rows);
  const std::string release = nvcc_release(nvcc);
  const char* update = std::getenv("KILN_UPDATE_GOLDEN");
  if (update && *update) {
    // Both shards rewrite their own section of one file: one at a time.
    const std::string lock_path = std::string(KILN_TEST_CACHE_DIR) + "/cuda_kernels.lock";
    fs::create_directories(KILN_TEST_CACHE_DIR, ec);
    const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::flock(fd, LOCK_EX) == 0);
    const std::string text = updated_table(read_text(kTablePath), part, parts, release, section);
    std::ofstream(kTablePath, std::ios::binary | std::ios::trunc) << text;
    ::close(fd);
    MESSAGE("wrote shard " << part << " of docs/cuda_kernels.md (" << rows.size() << " kernels)");
    return;
  }
  const std::string table = read_text(kTablePath);
  REQUIRE_MESSAGE(!table.empty(), "docs/cuda_kernels.md is missing: KILN_UPDATE_GOLDEN=1 ctest -R cuda_nvcc_build -j2");
  if (table.find("\n" + release + "\n") == std::string::npos) {
    MESSAGE("docs/cuda_kernels.md not compared: it was made by another nvcc release than this " << release);
    return;
  }
  const std::string written = part_of(table, section_begin(part, parts), section_end(part, parts));
  const bool up_to_date = written == section;  // (not in the CHECK: doctest would print both)
  CHECK_MESSAGE(up_to_date, "docs/cuda_kernels.md is out of date for shard "
                                        << part << " (the kernels changed): regenerate it with KILN_UPDATE_GOLDEN=1 "
                                           "ctest -R cuda_nvcc_build -j2 and read its diff\n"
                                        << first_difference(written, section));
}

TEST_CASE("nvcc: the ptxas report is read per kernel and architecture") {
  const std::string report =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function '_Z11kiln_copy_1Pd' for 'sm_75'\n"
      "ptxas info    : Function properties for _Z11kiln_copy_1Pd\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 8 registers, used 0 barriers, 360 bytes cmem[0]\n"
      "ptxas info    : Function properties for _Z6helperi\n"
      "    16 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Compiling entry function '_ZN54_GLOBAL__N__40c63e53_21_cuda_conformance_0_cu_2b184d1014kiln_put_int64EPllllllllll' for 'sm_75'\n"
      "ptxas info    : Function properties for _ZN54_GLOBAL__N__40c63e53_21_cuda_conformance_0_cu_2b184d1014kiln_put_int64EPllllllllll\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 10 registers, used 0 barriers, 360 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function '_Z21foo_run_graph_s0_tilePfi' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z21foo_run_graph_s0_tilePfi\n"
      "    24 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : Used 40 registers, used 1 barriers, 1024 bytes smem\n"
      "ptxas info    : Compile time = 1.347 ms\n";
  const std::vector<PtxasFunction> f = parse_ptxas_report(report);
  REQUIRE(f.size() == 3);
  CHECK(f[1].name == "kiln_put_int64");  // in an anonymous namespace, whose name holds a hash
  CHECK(f[1].registers == 10);
  CHECK(f[0].name == "kiln_copy_1");
  CHECK(f[0].arch == "sm_75");
  CHECK(f[0].registers == 8);
  CHECK(f[0].shared_bytes == 0);
  CHECK(f[0].spill_store_bytes == 0);
  CHECK(f[2].name == "foo_run_graph_s0_tile");
  CHECK(f[2].arch == "sm_90");
  CHECK(f[2].registers == 40);
  CHECK(f[2].shared_bytes == 1024);
  CHECK(f[2].stack_bytes == 24);
  CHECK(f[2].spill_store_bytes == 8);
  CHECK(f[2].spill_load_bytes == 12);
}

TEST_CASE("nvcc: --cuda-arch entries are checked before they reach nvcc") {
  CHECK(checked_cuda_architectures({}) == default_cuda_architectures());
  CHECK(checked_cuda_architectures({"sm_90a", "compute_100f", "sm_75", "sm_75"}) ==
        std::vector<std::string>{"sm_90a", "compute_100f", "sm_75"});
  CHECK(nvcc_gencode_flags({"sm_75", "compute_90"}) ==
        std::vector<std::string>{"-gencode", "arch=compute_75,code=sm_75", "-gencode", "arch=compute_90,code=compute_90"});
  CHECK(nvcc_gencode_flags(default_cuda_architectures()) ==
        std::vector<std::string>{"-gencode", "arch=compute_75,code=sm_75", "-gencode", "arch=compute_80,code=sm_80",
                                 "-gencode", "arch=compute_90,code=[sm_90,compute_90]"});
  for (const char* bad : {"", "sm75", "sm_7", "sm_0750", "sm_75,sm_80", "sm_75 -o x", "compute_90;x", "-Xptxas",
                          "sm_90ab", "sm_075", "native", "all", "SM_75"}) {
    CAPTURE(bad);
    try {
      checked_cuda_architectures({bad});
      FAIL("accepted");
    } catch (const UserError& e) {
      CHECK(std::string(e.what()).find("--cuda-arch takes GPU architectures") != std::string::npos);
    }
  }
}

#ifdef KILN_TEST_CUDA
namespace {

// The cuda side of call_on_device (device_call.h): kiln/cuda.hpp's uploads (transposed and
// sliced views stay strided on the device) and downloads, on the default stream.
struct CudaSide {
  bool attach(kiln_context*) { return true; }
  cuda::DeviceTensor upload(const Array& a) { return cuda::to_device(a.dltensor()); }
  cuda::DeviceTensor empty(DLDataType dtype, const std::vector<int64_t>& shape) { return cuda::empty(dtype, shape); }
  Array download(const DLTensor& t) {
    CHECK(cuda::device_type_code(t.device) == kDLCUDA);
    Array a = Array::zeros(*from_dlpack(t.dtype), Shape(t.shape, t.shape + t.ndim));
    cuda::to_host(t, a.data());
    return a;
  }
};

// Runs graph `name` of a cuda library on host arrays, both call paths (the opencl harness's twin).
CallResult call_cuda(const Library& so, const std::string& name, const std::vector<Array>& inputs, bool into) {
  CudaSide side;
  return call_on_device(so.graph(name), inputs, into, side);
}

// The current device's architecture ("sm_86"): the harness builds for it alone.
std::string device_architecture() {
  int ordinal = 0;
  cudaDeviceProp prop{};
  cuda::check(cudaGetDevice(&ordinal), "cudaGetDevice");
  cuda::check(cudaGetDeviceProperties(&prop, ordinal), "cudaGetDeviceProperties");
  return "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
}

}  // namespace
#endif

TEST_CASE("cuda: the conformance graphs run on a CUDA device") {
#ifndef KILN_TEST_CUDA
  MESSAGE("skipped: no CUDA device (kiln_tests was built without the CUDA toolkit, so it has no CUDA harness)");
#else
  const int devices = cuda::device_count();
  if (devices == 0) {
    MESSAGE("skipped: no CUDA device (cudaGetDeviceCount finds none). With one, this case runs every fixture case "
            "the GPU backends claim through --backend cuda (inputs uploaded with their layout, both call paths), "
            "compared with NumPy and the reference evaluator");
    return;
  }
  const std::string nvcc = find_nvcc();
  REQUIRE_MESSAGE(!nvcc.empty(), "a CUDA device is present but nvcc is not (set CUDACXX)");
  // As the opencl harness: one nvcc build per bundle of 48 cases, for this device only; the
  // cases the backend refuses at compile time are counted (docs/op_coverage.md lists why).
  CompileOptions o = test_compile_options();
  o.backend = "cuda";
  o.build.cxx = nvcc;
  o.build.opt_level = "-O1";  // host code; the kernels keep ptxas's -O3
  o.build.cuda_arch = {device_architecture()};
  static const std::vector<std::string> ops = gpu_backend_ops();
  int refused = 0;
  const auto claims = [&](const FixtureCase& c) {
    // Draws are the GPU's Philox streams, not NumPy's: their laws are test_gpu_random.cpp's.
    for (const Apply* node : c.graph.toposort())
      if (std::find(ops.begin(), ops.end(), std::string(node->op().name())) == ops.end() || is_impure(node->op()))
        return false;
    try {
      emit_bundle({{&c.graph, "probe"}}, "probe", o);
      return true;
    } catch (const NotImplementedError&) {
      ++refused;
      return false;
    }
  };
  check_fixtures_compiled(o, claims, call_cuda, 48);
  MESSAGE(devices << " CUDA device(s), built for " << o.build.cuda_arch[0] << "; " << refused
                  << " cases of GPU ops refused at compile time");
#endif
}

#ifdef KILN_TEST_CUDA
TEST_CASE("cuda: kiln/cuda.hpp reports a missing device in CUDA's words instead of crashing") {
  if (cuda::device_count() > 0) {
    MESSAGE("skipped: a CUDA device is present (the run harness above uses the helpers)");
    return;
  }
  Array x = Array::zeros(DType::Float64, {3, 4});
  try {
    cuda::DeviceTensor d = cuda::to_device(x.dltensor());
    FAIL("to_device succeeded without a device");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).rfind("to_device: ", 0) == 0);
    CHECK(std::string(e.what()).find("failed (") != std::string::npos);
  }
  DLTensor cpu = x.dltensor();
  CHECK_THROWS_AS(cuda::to_host(cpu, x.data()), std::invalid_argument);
  // A CUDA library with no device: its context exists and every call fails with the reason.
  if (find_nvcc().empty()) {
    MESSAGE("skipped: no nvcc for the library part (set CUDACXX)");
    return;
  }
  GraphBuilder g("nodev");
  auto v = g.input("x", DType::Float64, {-1});
  g.output(v + 1.0, "y");
  FunctionGraph fg = g.build();
  CompileOptions o = test_compile_options();
  o.backend = "cuda";
  o.build.cxx = find_nvcc();
  o.build.opt_level = "-O1";
  o.build.cuda_arch = {"sm_75"};
  const BuildResult built = compile_bundle({{&fg, "nodev"}}, "cuda_nodev", o);
  Library so(built.library_path);
  const kiln_graph_info& info = so.graph("nodev");
  kiln_context* ctx = info.context_create();
  REQUIRE(ctx);
  DLTensor in{};
  int64_t shape[1] = {3};
  in.device = DLDevice{kDLCUDA, 0};
  in.ndim = 1;
  in.dtype = DLDataType{kDLFloat, 64, 1};
  in.shape = shape;
  DLManagedTensor* out[2] = {};
  CHECK(info.call(ctx, &in, out) == KILN_ERR_DEVICE);
  CHECK(std::string(info.context_last_error(ctx)).find("CUDA is unavailable") != std::string::npos);
  info.context_destroy(ctx);
}
#endif
