#include "codegen/embedded_files.h"

#include "ir/error.h"

namespace kiln {

std::string_view embedded_file(std::string_view path) {
  for (const auto& f : embedded_files())
    if (f.path == path) return f.text;
  throw InternalError("no embedded file " + std::string(path));
}

}  // namespace kiln
