// What `kiln --version` prints: kiln's own version and what the libraries it builds depend on
// — the C++ compiler, BLAS, SLEEF, the C ABI and the graph-file format versions it reads —
// so a bug report says everything that shapes generated code.
#include <sstream>

#include "cli/commands.h"
#include "driver/build.h"
#include "kiln/kiln.h"
#include "kiln/version.h"

#if __has_include(<sleef.h>)
#include <sleef.h>
#endif

// OpenBLAS, which kiln and generated libraries link, describes its build.
extern "C" char* openblas_get_config(void);

namespace kiln::cli {

namespace {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string compiler_line() {
  try {
    const BuildOptions defaults;
    return resolve_compiler(defaults) + ": " + first_line(compiler_identity(defaults));
  } catch (const UserError& e) {
    return std::string("not usable (") + e.what() + ")";
  }
}

std::string sleef_line() {
  if (!have_sleef_vector_math()) return "not found when kiln was built (generated loops call scalar libm)";
#if defined(SLEEF_VERSION_MAJOR)
  return "SLEEF " + std::to_string(SLEEF_VERSION_MAJOR) + "." + std::to_string(SLEEF_VERSION_MINOR) + "." +
         std::to_string(SLEEF_VERSION_PATCHLEVEL) + " (vectorised math in generated loops)";
#else
  return "libsleef (vectorised math in generated loops; header version unknown)";
#endif
}

}  // namespace

std::string version_text() {
  std::ostringstream out;
  out << "kiln " << KILN_VERSION_STRING << "\n"
      << "compiler: " << compiler_line() << "\n"
      << "BLAS: " << openblas_get_config() << "\n"
      << "SLEEF: " << sleef_line() << "\n"
      << "vector math: " << vector_math_path(BuildOptions{}) << "\n"
      << "C ABI version: " << KILN_ABI_VERSION << "\n"
      << "graph format versions: 1, 2 (read); kiln writes the lowest that can say a graph";
  return out.str();
}

}  // namespace kiln::cli
