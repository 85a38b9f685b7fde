#include "driver/nvcc.h"

#include <cxxabi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "driver/process.h"
#include "ir/error.h"

namespace kiln {

const std::vector<std::string>& default_cuda_architectures() {
  static const std::vector<std::string> archs = {"sm_75", "sm_80", "sm_90", "compute_90"};
  return archs;
}

namespace {

// Whether `arch` is sm_NN or compute_NN (two or three digits, then at most one of a/f).
bool is_cuda_architecture(const std::string& arch) {
  std::size_t at = 0;
  if (arch.rfind("sm_", 0) == 0)
    at = 3;
  else if (arch.rfind("compute_", 0) == 0)
    at = 8;
  else
    return false;
  std::size_t digits = 0;
  while (at + digits < arch.size() && arch[at + digits] >= '0' && arch[at + digits] <= '9') ++digits;
  if (digits < 2 || digits > 3 || arch[at] == '0') return false;
  const std::size_t rest = at + digits;
  return rest == arch.size() || (rest + 1 == arch.size() && (arch[rest] == 'a' || arch[rest] == 'f'));
}

// The number written just before `word` in `line` ("Used 32 registers" → 32), or 0.
std::int64_t number_before(const std::string& line, const std::string& word) {
  const std::size_t at = line.find(word);
  if (at == std::string::npos) return 0;
  std::size_t start = at;
  while (start > 0 && line[start - 1] >= '0' && line[start - 1] <= '9') --start;
  return start == at ? 0 : std::strtoll(line.c_str() + start, nullptr, 10);
}

// The text between the first `open` after `from` and the next `close` ("" when absent).
std::string between(const std::string& line, const std::string& open, const std::string& close, std::size_t from = 0) {
  const std::size_t a = line.find(open, from);
  if (a == std::string::npos) return "";
  const std::size_t b = line.find(close, a + open.size());
  return b == std::string::npos ? "" : line.substr(a + open.size(), b - a - open.size());
}

// A kernel's identifier from its symbol: the demangled name without its parameters and scopes
// ("_ZN..._GLOBAL__N_...11kiln_copy_1EPKhPh..." → kiln_copy_1; the anonymous namespace's
// name holds a hash of the file); the symbol itself when it is not a C++ name (extern "C").
std::string kernel_identifier(const std::string& symbol) {
  int status = -1;
  char* demangled = abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !demangled) {
    std::free(demangled);
    return symbol;
  }
  std::string name(demangled);
  std::free(demangled);
  for (std::size_t at; (at = name.find("(anonymous namespace)::")) != std::string::npos;) name.erase(at, 23);
  name = name.substr(0, name.find('('));
  const std::size_t scope = name.rfind("::");
  return scope == std::string::npos ? name : name.substr(scope + 2);
}

}  // namespace

std::vector<std::string> checked_cuda_architectures(const std::vector<std::string>& architectures) {
  if (architectures.empty()) return default_cuda_architectures();
  std::vector<std::string> out;
  for (const std::string& arch : architectures) {
    if (!is_cuda_architecture(arch))
      throw UserError("--cuda-arch takes GPU architectures such as sm_75, sm_80, sm_90 (machine code) or compute_90 "
                      "(PTX), comma-separated; \"" +
                      arch + "\" is not one");
    if (std::find(out.begin(), out.end(), arch) == out.end()) out.push_back(arch);
  }
  return out;
}

std::vector<std::string> nvcc_gencode_flags(const std::vector<std::string>& checked_architectures) {
  // One -gencode per virtual architecture, so that each is compiled to PTX once (cicc), then
  // assembled for its real targets (ptxas) and/or kept as PTX.
  std::vector<std::pair<std::string, std::vector<std::string>>> by_virtual;
  for (const std::string& arch : checked_architectures) {
    const std::string number = arch.substr(arch.rfind("compute_", 0) == 0 ? 8 : 3);
    auto it = std::find_if(by_virtual.begin(), by_virtual.end(), [&](const auto& v) { return v.first == number; });
    if (it == by_virtual.end()) it = by_virtual.insert(by_virtual.end(), {number, {}});
    it->second.push_back(arch);
  }
  std::vector<std::string> flags;
  for (const auto& [number, codes] : by_virtual) {
    std::string code = codes.size() == 1 ? codes[0] : "[";
    for (std::size_t i = 0; codes.size() > 1 && i < codes.size(); ++i) code += (i ? "," : "") + codes[i];
    if (codes.size() > 1) code += "]";
    flags.push_back("-gencode");
    flags.push_back("arch=compute_" + number + ",code=" + code);
  }
  return flags;
}

std::vector<std::string> nvcc_library_flags(const BuildOptions& options) {
  // -diag-suppress: variables declared but unused (177) and unsigned comparisons with zero (186)
  // are what generic templates instantiated for every dtype write; they are not bugs.
  std::vector<std::string> flags = {"-std=c++17",   options.opt_level, "-Xcompiler", "-fPIC,-fvisibility=hidden",
                                    "-diag-suppress", "177,186",        "-cudart",    "shared"};
  for (std::string& flag : nvcc_gencode_flags(checked_cuda_architectures(options.cuda_arch)))
    flags.push_back(std::move(flag));
  if (options.fast_math) flags.push_back("--use_fast_math");
  flags.insert(flags.end(), options.cxxflags.begin(), options.cxxflags.end());
  return flags;
}

std::string find_nvcc(const BuildOptions& options) {
  if (!options.cxx.empty()) return find_executable(options.cxx).empty() ? "" : options.cxx;
  if (const char* env = std::getenv("CUDACXX"); env && *env) return find_executable(env).empty() ? "" : env;
  if (!find_executable("nvcc").empty()) return "nvcc";
  const std::string usual = "/usr/local/cuda/bin/nvcc";
  return access(usual.c_str(), X_OK) == 0 ? usual : "";
}

std::vector<PtxasFunction> parse_ptxas_report(const std::string& nvcc_output) {
  std::vector<PtxasFunction> out;
  std::string symbol, properties_of;  // the entry being compiled; whose properties come next
  std::istringstream lines(nvcc_output);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("Compiling entry function '") != std::string::npos) {
      symbol = between(line, "Compiling entry function '", "'");
      PtxasFunction f;
      f.name = kernel_identifier(symbol);
      f.arch = between(line, "for '", "'", line.find("Compiling entry function '") + 26 + symbol.size());
      out.push_back(std::move(f));
      properties_of.clear();
    } else if (line.find("Function properties for ") != std::string::npos) {
      const std::size_t at = line.find("Function properties for ") + 24;
      properties_of = line.substr(at);
      while (!properties_of.empty() && (properties_of.back() == '\r' || properties_of.back() == ' '))
        properties_of.pop_back();
    } else if (line.find("bytes stack frame") != std::string::npos) {
      if (!out.empty() && properties_of == symbol) {
        out.back().stack_bytes = number_before(line, " bytes stack frame");
        out.back().spill_store_bytes = number_before(line, " bytes spill stores");
        out.back().spill_load_bytes = number_before(line, " bytes spill loads");
      }
      properties_of.clear();
    } else if (line.find(" registers") != std::string::npos && line.find("Used ") != std::string::npos) {
      if (!out.empty() && !symbol.empty()) {
        out.back().registers = static_cast<int>(number_before(line, " registers"));
        out.back().shared_bytes = number_before(line, " bytes smem");
      }
      symbol.clear();
    }
  }
  return out;
}

}  // namespace kiln
