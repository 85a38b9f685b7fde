// Sanitized generated code. A kiln built with KILN_SANITIZE=ON (AddressSanitizer and
// UndefinedBehaviorSanitizer) compiles the libraries it generates with the same sanitizers and
// the same compiler, so that tests and fuzzers running in that kiln catch out-of-bounds access
// and undefined behaviour inside generated code too (the sanitizer runtime lives in the
// executable; a library built by another compiler would bring a second, incompatible one).
#pragma once

#include <string>
#include <vector>

namespace kiln {

/// Flags added to generated code's compile and link commands: the sanitizers (and -O1, which
/// compiles sanitized code much faster than -O3) in a sanitized kiln, nothing otherwise.
std::vector<std::string> generated_code_sanitizer_flags();

/// The compiler kiln itself was built with, in a sanitized kiln (the default compiler for
/// generated code there); empty otherwise.
std::string sanitized_build_compiler();

}  // namespace kiln
