#include "io/output_names.h"

#include <map>

namespace kiln {

namespace {
std::string safe_file_stem(const std::string& name) {
  std::string s;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '-' || c == '.';
    s += ok ? c : '_';
  }
  while (!s.empty() && s[0] == '.') s[0] = '_';
  if (s.size() > 100) s.resize(100);
  return s;
}
}  // namespace

std::string output_display_name(const FunctionGraph& fg, std::size_t k) {
  const auto& out = fg.outputs()[k];
  if (k < fg.output_names().size() && !fg.output_names()[k].empty()) return fg.output_names()[k];
  if (!out->name().empty()) return out->name();
  return out->file_id();
}

std::vector<std::string> output_file_names(const FunctionGraph& fg) {
  std::vector<std::string> stems;
  for (std::size_t k = 0; k < fg.outputs().size(); ++k) stems.push_back(safe_file_stem(output_display_name(fg, k)));
  std::map<std::string, int> count;
  for (const auto& s : stems) ++count[s];
  std::vector<std::string> files;
  for (std::size_t i = 0; i < stems.size(); ++i) {
    bool positional = stems[i].empty() || count[stems[i]] > 1 || stems[i].rfind("output_", 0) == 0;
    files.push_back((positional ? "output_" + std::to_string(i) : stems[i]) + ".npy");
  }
  return files;
}

}  // namespace kiln
