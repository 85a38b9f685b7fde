#include "driver/sanitize.h"

namespace kiln {

std::vector<std::string> generated_code_sanitizer_flags() {
#ifdef KILN_SANITIZE_GENERATED
  return {"-fsanitize=address,undefined", "-fno-sanitize-recover=undefined", "-fno-omit-frame-pointer", "-O1"};
#else
  return {};
#endif
}

std::string sanitized_build_compiler() {
#ifdef KILN_SANITIZE_CXX
  return KILN_SANITIZE_CXX;
#else
  return "";
#endif
}

}  // namespace kiln
