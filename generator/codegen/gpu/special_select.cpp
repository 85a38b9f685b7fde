#include "codegen/gpu/special_select.h"

#include <iterator>
#include <set>
#include <sstream>

#include "codegen/embedded_files.h"
#include "ir/error.h"

namespace kiln {

namespace {

constexpr std::string_view kSpecialFile = "templates/gpu/special_math.h";

struct GpuSpecialPiece {
  std::string name;
  std::vector<std::string> needs;
  std::string text;
};

struct GpuSpecialFile {
  std::string header;
  std::vector<GpuSpecialPiece> pieces;
};

// templates/gpu/special_math.h cut at its `// @piece NAME [needs A B ...]` lines.
const GpuSpecialFile& gpu_special_file() {
  static const GpuSpecialFile file = [] {
    GpuSpecialFile out;
    std::istringstream in{std::string(embedded_file(kSpecialFile))};
    const std::string marker = "// @piece ";
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind(marker, 0) == 0) {
        std::istringstream words(line.substr(marker.size()));
        GpuSpecialPiece piece;
        words >> piece.name;
        std::string word;
        if (words >> word) {
          KILN_INTERNAL_ASSERT(word == "needs", std::string(kSpecialFile) + ": bad piece line: " + line);
          while (words >> word) piece.needs.push_back(word);
        }
        out.pieces.push_back(std::move(piece));
        continue;
      }
      (out.pieces.empty() ? out.header : out.pieces.back().text) += line + "\n";
    }
    return out;
  }();
  return file;
}

bool special_piece_called(const std::vector<std::string>& code, const std::string& name) {
  const std::string as_double = "kiln_" + name + "_double(", as_float = "kiln_" + name + "_float(";
  for (const std::string& text : code)
    if (text.find(as_double) != std::string::npos || text.find(as_float) != std::string::npos) return true;
  return false;
}

}  // namespace

std::string gpu_special_functions(const std::vector<std::string>& device_code, const std::string& qualifier) {
  const GpuSpecialFile& file = gpu_special_file();
  std::set<std::string> wanted;
  for (const GpuSpecialPiece& piece : file.pieces)
    if (special_piece_called(device_code, piece.name)) wanted.insert(piece.name);
  if (wanted.empty()) return "";
  // Pieces name what they need; a needed piece comes earlier in the file, so one backward pass
  // closes the set.
  for (auto it = file.pieces.rbegin(); it != file.pieces.rend(); ++it) {
    if (!wanted.count(it->name)) continue;
    for (const std::string& need : it->needs) {
      bool earlier = false;
      for (auto before = std::next(it); before != file.pieces.rend() && !earlier; ++before) earlier = before->name == need;
      KILN_INTERNAL_ASSERT(earlier, std::string(kSpecialFile) + ": piece " + it->name + " needs " + need +
                                        ", which is not defined before it");
      wanted.insert(need);
    }
  }
  std::string out = file.header + "#define KILN_SPECIAL_FN " + qualifier + "\n";
  for (const GpuSpecialPiece& piece : file.pieces)
    if (wanted.count(piece.name)) out += "// " + piece.name + "\n" + piece.text;
  return out;
}

std::string gpu_random_functions(const std::vector<std::string>& device_code, const std::string& mulhi) {
  bool called = false;
  for (const std::string& text : device_code)
    called = called || text.find("kiln_rv_") != std::string::npos || text.find("kiln_philox_") != std::string::npos;
  if (!called) return "";
  return "#define KILN_MULHI64 " + mulhi + "\n" + std::string(embedded_file("templates/gpu/random_math.h"));
}

}  // namespace kiln
