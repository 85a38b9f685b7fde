#include "driver/build.h"
#include "driver/build_key.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>

#include "codegen/backend.h"
#include "driver/cache_maintenance.h"
#include "driver/emit_files.h"
#include "driver/nvcc.h"
#include "driver/process.h"
#include "driver/sanitize.h"
#include "ir/error.h"
#include "util/sha256.h"
#include "kiln/version.h"

namespace kiln {

namespace fs = std::filesystem;

namespace {

void write_file(const fs::path& path, const void* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw IoError("cannot write " + path.string());
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) throw UserError("error writing " + path.string());
}

void write_file(const fs::path& path, const std::string& text) { write_file(path, text.data(), text.size()); }

// The compiler executable `cxx` names (a path, or a name looked up in PATH), symlinks
// resolved; empty when it cannot be found.
fs::path compiler_executable(const std::string& cxx) { return find_executable(cxx); }

// What identifies the compiler in cache keys: its `--version` text. Running it costs a process
// start on every `kiln compile`, a good part of a cache hit, so the text is remembered in the
// cache folder under the executable's path, size and modification time (an upgrade changes
// them). Wrappers such as ccache, whose real compiler can change behind them, are asked each time.
std::string compiler_identity(const std::string& cxx, const fs::path& cache_root) {
  static std::map<std::string, std::string> memo;  // per compiler and cache folder
  static std::mutex memo_mutex;                      // builds may run on several threads
  std::lock_guard<std::mutex> lock(memo_mutex);
  const std::string memo_key = cxx + "\n" + cache_root.string();
  auto it = memo.find(memo_key);
  if (it != memo.end()) return it->second;
  std::error_code ec;
  fs::path exe = compiler_executable(cxx);
  fs::path remembered;
  if (!exe.empty() && exe.filename().string().find("ccache") == std::string::npos) {
    auto size = fs::file_size(exe, ec);
    auto mtime = fs::last_write_time(exe, ec).time_since_epoch().count();
    if (!ec) {
      Sha256 h;
      h.update(exe.string()).update("\n").update(std::to_string(size)).update("\n").update(std::to_string(mtime));
      remembered = cache_root / "compilers" / h.hex_digest();
      std::string text;
      if (read_file(remembered.string(), text) && !text.empty()) return memo.emplace(memo_key, text).first->second;
    }
  }
  ProcessResult r = run_process({cxx, "--version"});
  if (r.exit_code != 0)
    throw CompileFailure("cannot run the C++ compiler \"" + cxx + "\": " + r.output +
                         " (set --cxx or $CXX)");
  if (!remembered.empty()) {
    // Written to a temporary name and renamed, so concurrent kiln processes never read half a file.
    fs::create_directories(remembered.parent_path(), ec);
    fs::path tmp = remembered;
    tmp += "." + std::to_string(getpid()) + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary);
      out << r.output;
    }
    fs::rename(tmp, remembered, ec);
    if (ec) fs::remove(tmp, ec);
  }
  return memo.emplace(memo_key, r.output).first->second;
}

std::string unique_suffix();

// The system headers every generated source of the cpp backend includes (its templates and
// always-present prologue pieces), precompiled once per compiler and flags into the cache and
// given to each compile with -include: parsing them is about a fifth of a cold compile (W7 in
// bench/). The generated source keeps its own #includes (no-ops after these), so it still
// compiles on its own; the object code is the same byte for byte.
const char kPrecompiledHeader[] =
    "// kiln: system headers of generated code, precompiled once per compiler and flags (driver/build.cpp)\n"
    "#include <algorithm>\n#include <atomic>\n#include <cblas.h>\n#include <climits>\n#include <cmath>\n"
    "#include <cstdarg>\n#include <cstdint>\n#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n"
    "#include <dlfcn.h>\n#include <dlpack/dlpack.h>\n#include <initializer_list>\n#include <iterator>\n"
    "#include <limits>\n#include <new>\n#include <numeric>\n#include <omp.h>\n#include <stdint.h>\n"
    "#include <sys/mman.h>\n#include <type_traits>\n#include <unistd.h>\n";

// The precompiled kPrecompiledHeader for a compile with `cxx` and `flags`: the path to give
// -include (GCC then reads PATH.gch next to it), built into cache_root/pch/<key>/ when missing;
// "" where there is none (not GCC, a ccache wrapper, or the header failed to build: the compile
// then parses the headers itself).
std::string precompiled_header(const std::string& cxx, const std::string& identity, const std::vector<std::string>& flags,
                               const fs::path& cache_root) {
  if (identity.find("Free Software Foundation") == std::string::npos || identity.find("clang") != std::string::npos ||
      cxx.find("ccache") != std::string::npos)
    return "";
  Sha256 h;
  h.update("kiln precompiled header v1\n").update(identity).update(cxx).update(kPrecompiledHeader);
  for (const auto& f : flags) h.update("\n").update(f);
  const fs::path dir = cache_root / "pch" / h.hex_digest();
  const fs::path header = dir / "kiln_pch.hpp";
  std::error_code ec;
  if (fs::exists(dir / "kiln_pch.hpp.gch", ec)) return header.string();
  // Built in a folder of its own and renamed into place: concurrent builders race harmlessly.
  const fs::path work = cache_root / "tmp" / ("pch-" + unique_suffix());
  fs::create_directories(work, ec);
  if (ec) return "";
  write_file(work / "kiln_pch.hpp", std::string(kPrecompiledHeader));
  std::vector<std::string> cmd = {cxx};
  cmd.insert(cmd.end(), flags.begin(), flags.end());
  cmd.insert(cmd.end(), {"-x", "c++-header", (work / "kiln_pch.hpp").string(), "-o", (work / "kiln_pch.hpp.gch").string()});
  const bool built = run_process(cmd).exit_code == 0;
  if (built) {
    fs::create_directories(dir.parent_path(), ec);
    fs::rename(work, dir, ec);
  }
  fs::remove_all(work, ec);
  return built && fs::exists(dir / "kiln_pch.hpp.gch", ec) ? header.string() : "";
}

std::string unique_suffix() {
  std::random_device rd;
  return std::to_string(getpid()) + "-" + std::to_string(rd()) + "-" +
         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
}

std::string tail_lines(const std::string& text, std::size_t max_lines) {
  std::vector<std::string> lines;
  std::string line;
  for (char c : text) {
    if (c == '\n') {
      lines.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  if (!line.empty()) lines.push_back(line);
  std::string out;
  std::size_t start = lines.size() > max_lines ? lines.size() - max_lines : 0;
  if (start) out += "[... " + std::to_string(start) + " lines ...]\n";
  for (std::size_t i = start; i < lines.size(); ++i) out += lines[i] + "\n";
  return out;
}

// The entry points every generated graph exports (templates/cpp/graph_impl.cpp.mustache).
const char* const kEntryPoints[] = {"info", "context_create", "context_destroy", "context_set_num_threads",
                                    "context_last_error", "call", "output_shapes", "call_into"};

std::string variant_prefix(const std::string& name, std::size_t k) { return name + "_v" + std::to_string(k); }

// Flags that compile NAME.cpp as variant k: its entry points renamed NAME_v<k>_* and hidden.
std::vector<std::string> variant_flags(const std::string& name, std::size_t k) {
  std::vector<std::string> flags = {"-DKILN_EXPORT=__attribute__((visibility(\"hidden\")))"};
  for (const char* entry : kEntryPoints)
    flags.push_back("-D" + name + "_" + entry + "=" + variant_prefix(name, k) + "_" + entry);
  return flags;
}

// The exported NAME_* entry points of a multi-variant library: the first variant the CPU
// supports is chosen once, and every call goes through its info struct.
std::string variant_dispatcher(const std::string& name, const std::vector<std::string>& variants) {
  std::string s = "// " + name + "_dispatch.cpp - generated by kiln: picks a -march variant when first used.\n"
                  "#include \"" + name + ".h\"\n\nextern \"C\" {\n";
  for (std::size_t k = 0; k < variants.size(); ++k)
    s += "__attribute__((visibility(\"hidden\"))) const kiln_graph_info* " + variant_prefix(name, k) + "_info(void);\n";
  // The variant index is picked once; NAME_variant() names it (kiln run -v prints it).
  s += "}\n\nnamespace {\nint chosen_index() {\n  static const int index = [] {\n"
       "    __builtin_cpu_init();\n";
  for (std::size_t k = 0; k + 1 < variants.size(); ++k)
    s += "    if (__builtin_cpu_supports(\"" + variants[k] + "\")) return " + std::to_string(k) + ";\n";
  s += "    return " + std::to_string(variants.size() - 1) + ";\n  }();\n  return index;\n}\n"
       "const kiln_graph_info* chosen() {\n  switch (chosen_index()) {\n";
  for (std::size_t k = 0; k + 1 < variants.size(); ++k)
    s += "    case " + std::to_string(k) + ": return " + variant_prefix(name, k) + "_info();\n";
  s += "    default: return " + variant_prefix(name, variants.size() - 1) + "_info();\n  }\n}\n"
       "const char* const variant_names[] = {";
  for (std::size_t k = 0; k < variants.size(); ++k) s += (k ? ", \"" : "\"") + variants[k] + "\"";
  s += "};\n}  // namespace\n\n"
       "extern \"C\" {\n"
       "KILN_EXPORT const char* " + name + "_variant(void) { return variant_names[chosen_index()]; }\n"
       "KILN_EXPORT const kiln_graph_info* " + name + "_info(void) { return chosen(); }\n"
       "KILN_EXPORT kiln_context* " + name + "_context_create(void) { return chosen()->context_create(); }\n"
       "KILN_EXPORT void " + name + "_context_destroy(kiln_context* c) { chosen()->context_destroy(c); }\n"
       "KILN_EXPORT void " + name + "_context_set_num_threads(kiln_context* c, int32_t n) {\n"
       "  chosen()->context_set_num_threads(c, n);\n}\n"
       "KILN_EXPORT const char* " + name + "_context_last_error(const kiln_context* c) {\n"
       "  return chosen()->context_last_error(c);\n}\n"
       "KILN_EXPORT int32_t " + name + "_call(kiln_context* c, const DLTensor* in, DLManagedTensor** out) {\n"
       "  return chosen()->call(c, in, out);\n}\n"
       "KILN_EXPORT int32_t " + name + "_output_shapes(kiln_context* c, const DLTensor* in, int64_t* shapes) {\n"
       "  return chosen()->output_shapes(c, in, shapes);\n}\n"
       "KILN_EXPORT int32_t " + name + "_call_into(kiln_context* c, const DLTensor* in, DLTensor* out) {\n"
       "  return chosen()->call_into(c, in, out);\n}\n"
       "}  // extern \"C\"\n";
  return s;
}

void check_variants(const GeneratedLibrary& lib, const std::vector<std::string>& variants) {
  if (variants.empty()) return;
  if (lib.header.empty()) throw UserError("--march-variants needs a library of one graph");
  for (const auto& v : variants)
    if (v != "x86-64" && v != "x86-64-v2" && v != "x86-64-v3" && v != "x86-64-v4")
      throw UserError("--march-variants takes x86-64 levels (x86-64, x86-64-v2, x86-64-v3, x86-64-v4), not \"" + v +
                      "\"");
}

}  // namespace

std::string resolve_compiler(const BuildOptions& options, const Toolchain& toolchain) {
  if (!options.cxx.empty()) return options.cxx;
  if (std::string sanitizing = sanitized_build_compiler(); !sanitizing.empty()) return sanitizing;
  const char* env = std::getenv(toolchain.compiler_env.c_str());
  return env && *env ? env : toolchain.default_compiler;
}

std::string resolve_cache_dir(const BuildOptions& options) {
  if (!options.cache_dir.empty()) return options.cache_dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return (fs::path(xdg) / "kiln").string();
  if (const char* home = std::getenv("HOME"); home && *home) return (fs::path(home) / ".cache" / "kiln").string();
  return (fs::temp_directory_path() / "kiln-cache").string();
}

std::string cache_entry_dir(const BuildOptions& options, const std::string& key) {
  return (fs::path(resolve_cache_dir(options)) / key.substr(0, 2) / key).string();
}

std::string compiler_identity(const BuildOptions& options) {
  return compiler_identity(resolve_compiler(options), resolve_cache_dir(options));
}

std::vector<std::string> generated_code_flags(const BuildOptions& options, const Toolchain& toolchain) {
  std::vector<std::string> flags = {"-std=c++17", options.opt_level, "-fPIC"};
  if (toolchain.openmp) flags.push_back("-fopenmp");
  flags.insert(flags.end(), {"-fvisibility=hidden", "-fno-math-errno"});
  // Under -ffast-math glibc declares libmvec's variants itself; vector_math.hpp steps aside.
  if (options.fast_math) {
    flags.push_back("-ffast-math");
  } else if (toolchain.vector_math && options.math_1ulp) {
    if (!have_sleef_vector_math())
      throw UserError("--math-1ulp needs SLEEF's libsleef (Debian: libsleef-dev), which was not found when kiln was built");
    flags.insert(flags.end(), {"-DKILN_SLEEF", "-DKILN_VM_1ULP"});
  } else if (toolchain.vector_math) {
    if (have_libmvec_vector_math()) flags.push_back("-DKILN_LIBMVEC");
    if (have_sleef_vector_math()) flags.push_back("-DKILN_SLEEF");
  }
  // "none" (or empty) leaves the compiler's default target: the portable baseline.
  if (!options.march.empty() && options.march != "none") flags.push_back("-march=" + options.march);
#if defined(__x86_64__)
  // Where the target has AVX-512, use its full width: GCC stops at 256 bits by default, and
  // vector math calls (exp, sin, log1p, ...) run twice as many lanes per call with 512 (W1 in
  // issue 7: ~1.7x). Without AVX-512 the option changes nothing.
  flags.push_back("-mprefer-vector-width=512");
#endif
  for (auto& flag : generated_code_sanitizer_flags()) flags.push_back(flag);
  flags.insert(flags.end(), options.cxxflags.begin(), options.cxxflags.end());
  return flags;
}

bool have_sleef_vector_math() {
#ifdef KILN_SLEEF_DIR
  return true;
#else
  return false;
#endif
}

bool have_libmvec_vector_math() {
#ifdef KILN_LIBMVEC
  return true;
#else
  return false;
#endif
}

std::string vector_math_path(const BuildOptions& options) {
  if (options.fast_math) return "-ffast-math: glibc's libmvec, without IEEE semantics (--fast-math)";
  const bool sleef = have_sleef_vector_math(), mvec = have_libmvec_vector_math();
  if (options.math_1ulp)
    return sleef ? "SLEEF 1-ULP everywhere (--math-1ulp)" : "--math-1ulp unavailable: kiln was built without libsleef";
  // Float32 exp/log/sin/cos: kiln's own kernels where the target has FMA (vector_math.hpp).
  if (mvec && sleef)
    return "libmvec + kiln + SLEEF (libmvec; kiln's own float32 exp/log/sin/cos (targets with FMA; SLEEF 1-ULP "
           "without FMA and for AVX-512); SLEEF 1-ULP for atan2, powf; --math-1ulp: SLEEF everywhere)";
  if (mvec)
    return "libmvec + kiln (libmvec; kiln's own float32 exp/log/sin/cos on targets with FMA; WARNING: no libsleef: "
           "without FMA and for AVX-512 those four are libmvec's, less accurate than NumPy's; no --math-1ulp)";
  if (sleef) return "SLEEF 1-ULP only (WARNING: no libmvec: about half the default path's speed)";
  return "scalar libm (WARNING: neither libmvec nor libsleef: math calls are not vectorised)";
}

// The folder of Debian's OpenMP build of OpenBLAS (package libopenblas0-openmp), or "" when
// it is not installed. It has the pthread build's soname, so a run path to it picks it at load
// time where present and changes nothing elsewhere (a deployed library falls back to the
// loader's usual search).
static std::string openblas_openmp_dir() {
#if defined(__x86_64__)
  const char* dir = "/usr/lib/x86_64-linux-gnu/openblas-openmp";
#elif defined(__aarch64__)
  const char* dir = "/usr/lib/aarch64-linux-gnu/openblas-openmp";
#else
  const char* dir = nullptr;
#endif
  std::error_code ec;
  return dir && fs::exists(fs::path(dir) / "libopenblas.so.0", ec) ? dir : "";
}

std::vector<std::string> generated_code_libraries(const GeneratedLibrary& lib, const BuildOptions& options) {
  const Toolchain& toolchain = find_backend(lib.backend).toolchain;
  std::vector<std::string> link;
  if (lib.needs_blas && toolchain.blas) {
    link.push_back("-lopenblas");
    // With OpenMP OpenBLAS, BLAS calls run on libgomp's threads like kiln's own loops instead
    // of a second pool whose idle threads spin against them (and kg::BlasThreads can give
    // each call the context's thread count without touching process-wide state).
    if (const std::string dir = openblas_openmp_dir(); !dir.empty()) link.push_back("-Wl,-rpath," + dir);
  }
#ifdef KILN_SLEEF_DIR
  // SLEEF's functions per instruction set, which vector_math.hpp's _ZGV* variants call.
  // --as-needed: code the header leaves scalar (clang) does not depend on SLEEF.
  if (!options.fast_math && toolchain.vector_math) {
    const std::string dir = KILN_SLEEF_DIR;
    if (dir.rfind("/usr/lib", 0) != 0 && dir.rfind("/lib", 0) != 0) link.push_back("-L" + dir);
    link.insert(link.end(), {"-Wl,--push-state,--as-needed", "-lsleef", "-Wl,--pop-state"});
  }
#endif
#ifdef KILN_LIBMVEC
  // libmvec's _ZGV* functions, which vector_math.hpp declares (libm.so's linker script adds it
  // as needed too; named here so that the dependency is explicit).
  if (!options.fast_math && !options.math_1ulp && toolchain.vector_math)
    link.insert(link.end(), {"-Wl,--push-state,--as-needed", "-lmvec", "-Wl,--pop-state"});
#endif
#if !defined(KILN_SLEEF_DIR) && !defined(KILN_LIBMVEC)
  (void)options;
  (void)toolchain;
#endif
  // The backend's own BLAS (CLBlast) for code that calls it, then the backend's libraries.
  // Linear algebra's own libraries (OpenBLAS's LAPACK, cuSOLVER on a GPU) only where the source
  // has it, so that a product alone does not depend on them.
  const bool linalg = lib.needs_blas && !toolchain.linalg_libraries.empty() &&
                      lib.source.find("kg::linalg::") != std::string::npos;
  const std::string libraries = (lib.needs_blas && !toolchain.blas_libraries.empty())
                                    ? toolchain.blas_libraries + " " + (linalg ? toolchain.linalg_libraries + " " : "") +
                                          toolchain.libraries
                                    : toolchain.libraries;
  for (std::size_t at = 0; at < libraries.size();) {
    const std::size_t end = std::min(libraries.find(' ', at), libraries.size());
    if (end > at) link.push_back(libraries.substr(at, end - at));
    at = end + 1;
  }
  link.push_back("-lm");
  return link;
}

// LLVM's lld links a generated library in a quarter of the time of GNU ld (0.04 s against 0.15 s
// of CPU for W7 in bench/), a good part of a cold compile, and unlike gold it exports nothing
// but the library's own symbols. Used where GCC or clang drives the link and ld.lld is
// installed (scripts/setup installs Debian's lld); otherwise the compiler's default linker.
static std::vector<std::string> fast_linker_flags(const std::string& identity) {
  const bool driver_takes_it = identity.find("Free Software Foundation") != std::string::npos ||
                               identity.find("clang version") != std::string::npos;
  if (!driver_takes_it || compiler_executable("ld.lld").empty()) return {};
  return {"-fuse-ld=lld"};
}

// The nvcc of a cuda build, after the checks that need no compiler; a clear error without one.
static std::string nvcc_for_build(const BuildOptions& options) {
  if (!options.march_variants.empty()) throw UserError("--march-variants is for the cpp backend's CPU code, not cuda");
  checked_cuda_architectures(options.cuda_arch);  // a bad --cuda-arch is refused before anything runs
  std::string nvcc = find_nvcc(options);
  if (nvcc.empty()) {
    const char* env = std::getenv("CUDACXX");
    const std::string looked = !options.cxx.empty() ? "--cxx " + options.cxx
                               : env && *env       ? "$CUDACXX " + std::string(env)
                                                   : "nvcc on PATH, /usr/local/cuda/bin/nvcc";
    throw CompileFailure("nvcc not found (looked for " + looked +
                         "): --backend cuda builds its .cu source with the CUDA toolkit's nvcc. Install the toolkit, "
                         "name nvcc with $CUDACXX or --cxx, or write the sources only with `kiln emit --backend cuda`");
  }
  return nvcc;
}

BuildResult build_library(const GeneratedLibrary& lib, const BuildOptions& options, bool program) {
  const Toolchain& toolchain = find_backend(lib.backend).toolchain;
  if (!toolchain.no_driver_build.empty())
    throw NotImplementedError("building " + lib.backend + " sources: " + toolchain.no_driver_build);
  // CUDA sources are built by nvcc with its own flags (driver/nvcc.h): no precompiled header,
  // no -march variants, no standalone program.
  const bool cuda = toolchain.language == "CUDA";
  if (!cuda && !options.cuda_arch.empty()) throw UserError("--cuda-arch is for --backend cuda");
  // The GPU backends take device tensors (kDLCUDA, kDLOpenCL); the program reads .npy files.
  if (program && (cuda || lib.backend == "opencl"))
    throw NotImplementedError("--program with --backend " + lib.backend +
                              ": the standalone program passes host (kDLCPU) tensors, which a " + lib.backend +
                              " library refuses; call the library with device tensors instead");
  const std::string cxx = cuda ? nvcc_for_build(options) : resolve_compiler(options, toolchain);
  check_variants(lib, options.march_variants);
  // With variants, what is not compiled per variant (dispatcher, data) targets the baseline.
  BuildOptions base = options;
  if (!options.march_variants.empty()) base.march = "none";
  const std::vector<std::string> flags = cuda ? nvcc_library_flags(options) : generated_code_flags(base, toolchain);
  std::vector<std::string> link = generated_code_libraries(lib, options);

  // The precompiled system headers (cache builds of one -march only): part of the key, as the
  // build depends on them (they are derived from the compiler, the flags and this text).
  const std::string identity = compiler_identity(cxx, resolve_cache_dir(options));
  // nvcc does not assemble: a CUDA library's constant data (NAME_data.S) is assembled by the
  // host C++ compiler into an object nvcc links.
  BuildOptions host_options;
  host_options.cache_dir = options.cache_dir;
  const std::string assembler = cuda && !lib.blobs.empty() ? resolve_compiler(host_options) : "";
  for (auto& flag : fast_linker_flags(identity)) link.push_back(std::move(flag));
  // Not with data (NAME_data.S goes through the same command, and -include would reach it).
  const bool use_pch = options.use_cache && options.march_variants.empty() && lib.backend == "cpp" && lib.blobs.empty();
  const std::string pch = use_pch ? precompiled_header(cxx, identity, flags, resolve_cache_dir(options)) : "";
  BuildKey key;
  key.add("kiln version", "kiln " KILN_VERSION_STRING);
  key.add("compiler", identity + "\n" + cxx);
  if (cuda)
    key.add("assembler", assembler.empty() ? std::string()
                                           : compiler_identity(assembler, resolve_cache_dir(options)) + "\n" + assembler);
  key.add("precompiled header", pch.empty() ? std::string() : std::string(kPrecompiledHeader));
  std::string flag_text;
  for (const auto& f : flags) flag_text += f + "\n";
  for (const auto& f : link) flag_text += "link " + f + "\n";
  for (const auto& v : options.march_variants) flag_text += "variant " + v + "\n";
  key.add("flags", flag_text);
  key.add("generated header", lib.header);
  key.add("generated source", lib.source);
  // The data file without its folder: it names each blob's sha256, so the key covers the bytes.
  key.add("constant data", lib.blobs.empty() ? std::string() : data_assembly(lib, ""));
  key.add("program", program ? lib.main_program : std::string());
  BuildResult result;
  result.key = key.digest();

  const std::string so_name = "lib" + lib.name + ".so";
  fs::path root = resolve_cache_dir(options);
  fs::path final_dir = cache_entry_dir(options, result.key);
  if (options.use_cache && fs::exists(final_dir / so_name) && (!program || fs::exists(final_dir / lib.name))) {
    touch_cache_entry(final_dir.string());
    result.library_path = (final_dir / so_name).string();
    if (program) result.program_path = (final_dir / lib.name).string();
    result.cache_hit = true;
    key.remember(root.string(), lib.name);
    return result;
  }
  if (options.use_cache) {
    result.miss_reason = key.explain_miss(root.string(), lib.name);
    key.remember(root.string(), lib.name);
  } else {
    result.miss_reason = "the cache is off (--no-cache)";
  }

  std::error_code ec;
  const fs::path tmp_root = options.use_cache ? root / "tmp" : fs::temp_directory_path() / "kiln-build";
  remove_stale_build_folders(tmp_root.string(), kStaleBuildFolderAge);  // left by killed compiles
  fs::path work = fs::absolute(tmp_root / (result.key.substr(0, 16) + "-" + unique_suffix()));
  fs::create_directories(work, ec);
  if (ec) throw IoError("cannot create build folder " + work.string() + ": " + ec.message());
  const BuildFolderLock in_use(work.string());  // until the build is over (cache_maintenance.h)
  write_file(work / (lib.name + ".h"), lib.header);
  write_file(work / lib.source_file, lib.source);
  // Large constants: raw .bin files pulled in by the assembler (.incbin) from an absolute path.
  const fs::path data_source = work / (lib.name + "_data.S");
  for (const DataBlob& blob : lib.blobs) write_file(work / blob.file_name, blob.data.data(), blob.data.nbytes());
  if (!lib.blobs.empty()) write_file(data_source, data_assembly(lib, work.string()));

  auto fail = [&](const std::string& what, const ProcessResult& pr) {
    throw CompileFailure(what + " failed (exit code " + std::to_string(pr.exit_code) + "); the generated sources are kept in " +
                         work.string() + "\n" + tail_lines(pr.output, 60));
  };
  // What the final command compiles and links: NAME.cpp, or one object per -march variant
  // plus the dispatcher that exports NAME_*.
  std::vector<std::string> inputs = {(work / lib.source_file).string()};
  if (!options.march_variants.empty()) {
    inputs.clear();
    for (std::size_t k = 0; k < options.march_variants.size(); ++k) {
      BuildOptions variant = options;
      variant.march = options.march_variants[k];
      std::vector<std::string> vcmd = {cxx};
      for (const auto& list : {generated_code_flags(variant, toolchain), variant_flags(lib.name, k)})
        vcmd.insert(vcmd.end(), list.begin(), list.end());
      const std::string object = (work / (variant_prefix(lib.name, k) + ".o")).string();
      vcmd.insert(vcmd.end(), {"-I", work.string(), "-c", (work / lib.source_file).string(), "-o", object});
      ProcessResult vr = run_process(vcmd);
      if (vr.exit_code != 0) fail("compiling the " + variant.march + " variant", vr);
      inputs.push_back(object);
    }
    write_file(work / (lib.name + "_dispatch.cpp"), variant_dispatcher(lib.name, options.march_variants));
    inputs.push_back((work / (lib.name + "_dispatch.cpp")).string());
  }
  // A two-part source (codegen/generated_library.h): its halves compiled at the same time.
  if (lib.two_part && options.march_variants.empty() && !cuda) {
    std::vector<std::vector<std::string>> parts;
    for (int part = 1; part <= 2; ++part) {
      std::vector<std::string> pcmd = {cxx};
      pcmd.insert(pcmd.end(), flags.begin(), flags.end());
      if (!pch.empty()) pcmd.insert(pcmd.end(), {"-include", pch});
      const std::string object = (work / (lib.name + "_part" + std::to_string(part) + ".o")).string();
      pcmd.insert(pcmd.end(), {"-DKILN_PART=" + std::to_string(part), "-I", work.string(), "-c",
                               (work / lib.source_file).string(), "-o", object});
      parts.push_back(std::move(pcmd));
    }
    const std::vector<ProcessResult> done = run_processes(parts);
    inputs.clear();
    for (std::size_t k = 0; k < done.size(); ++k) {
      if (done[k].exit_code != 0) fail("compiling the generated library (part " + std::to_string(k + 1) + ")", done[k]);
      result.compiler_output += done[k].output;
      inputs.push_back(parts[k].back());
    }
  }
  if (!assembler.empty()) {
    const std::string object = (work / (lib.name + "_data.o")).string();
    ProcessResult ar = run_process({assembler, "-c", data_source.string(), "-o", object});
    if (ar.exit_code != 0) fail("assembling the constant data", ar);
    inputs.push_back(object);
  } else if (!lib.blobs.empty()) {
    inputs.push_back(data_source.string());
  }

  std::vector<std::string> cmd = {cxx};
  cmd.insert(cmd.end(), flags.begin(), flags.end());
  if (!pch.empty()) cmd.insert(cmd.end(), {"-include", pch});
  cmd.insert(cmd.end(), {"-shared", "-I", work.string()});
  cmd.insert(cmd.end(), inputs.begin(), inputs.end());
  cmd.insert(cmd.end(), {"-o", (work / so_name).string()});
  cmd.insert(cmd.end(), link.begin(), link.end());
  ProcessResult r = run_process(cmd);
  if (r.exit_code != 0) fail("compiling the generated library", r);
  result.compiler_output += r.output;
  // The data is in the library now; the cache keeps no second copy.
  for (const DataBlob& blob : lib.blobs) fs::remove(work / blob.file_name, ec);
  fs::remove(data_source, ec);
  for (const auto& input : inputs)
    if (fs::path(input).extension() == ".o") fs::remove(input, ec);

  if (program) {
    write_file(work / (lib.name + "_main.cpp"), lib.main_program);
    std::vector<std::string> pcmd = {cxx, "-std=c++17", "-O2", "-I", work.string(),
                                     (work / (lib.name + "_main.cpp")).string(), "-o", (work / lib.name).string(),
                                     "-L", work.string(), "-l" + lib.name, "-Wl,-rpath,$ORIGIN"};
    for (auto& flag : generated_code_sanitizer_flags()) pcmd.push_back(flag);
    ProcessResult pr = run_process(pcmd);
    if (pr.exit_code != 0) fail("compiling the standalone program", pr);
  }

  if (!options.use_cache) {
    result.library_path = (work / so_name).string();
    if (program) result.program_path = (work / lib.name).string();
    return result;
  }
  // Publish: everything into the final folder by rename; the library goes last, so a reader
  // that sees it sees a complete entry. Concurrent builders of the same key race harmlessly.
  fs::create_directories(final_dir, ec);
  for (const auto& entry : fs::directory_iterator(work)) {
    if (entry.path().filename() == so_name) continue;
    fs::rename(entry.path(), final_dir / entry.path().filename(), ec);
  }
  fs::rename(work / so_name, final_dir / so_name, ec);
  if (ec) throw UserError("cannot publish " + so_name + " into the cache " + final_dir.string() + ": " + ec.message());
  fs::remove_all(work, ec);
  result.library_path = (final_dir / so_name).string();
  if (program) result.program_path = (final_dir / lib.name).string();
  return result;
}

}  // namespace kiln
