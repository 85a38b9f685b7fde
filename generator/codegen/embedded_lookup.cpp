#include "codegen/embedded_files.h"

#include <algorithm>
#include <sstream>

#include "ir/error.h"

namespace kiln {

std::string_view embedded_file(std::string_view path) {
  for (const auto& f : embedded_files())
    if (f.path == path) return f.text;
  throw InternalError("no embedded file " + std::string(path));
}

EmbeddedText split_embedded(std::string_view path) {
  EmbeddedText e;
  std::istringstream in{std::string(embedded_file(path))};
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("#pragma once", 0) == 0 || line.rfind("#include \"", 0) == 0) continue;
    if (line.rfind("#include <", 0) == 0) {
      e.includes.push_back(line);
      continue;
    }
    e.body += line + "\n";
  }
  return e;
}

void add_includes(std::vector<std::string>& all, const std::vector<std::string>& more) {
  for (const auto& inc : more)
    if (std::find(all.begin(), all.end(), inc) == all.end()) all.push_back(inc);
}

}  // namespace kiln
