#include "codegen/cpp/special_math_select.h"

#include <cctype>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "codegen/embedded_files.h"
#include "ir/error.h"

namespace kiln {

namespace {

constexpr std::string_view kPieceDir = "runtime/include/kiln/runtime/special/";

struct Piece {
  std::vector<std::string> includes;  // embedded paths of the special pieces it #includes
  std::set<std::string> functions;    // the kiln_special functions it defines for double
};

// Every piece, by embedded path: its `#include "kiln/runtime/special/..."` lines and the names
// of its `inline double NAME(` definitions (each public function has a double overload).
const std::map<std::string, Piece>& pieces() {
  static const std::map<std::string, Piece> all = [] {
    std::map<std::string, Piece> out;
    for (const EmbeddedFile& file : embedded_files()) {
      if (file.path.substr(0, kPieceDir.size()) != kPieceDir) continue;
      Piece piece;
      std::istringstream in{std::string(file.text)};
      std::string line;
      const std::string include = "#include \"kiln/runtime/special/", define = "inline double ";
      while (std::getline(in, line)) {
        if (line.rfind(include, 0) == 0) {
          piece.includes.push_back(std::string(kPieceDir) + line.substr(include.size(), line.rfind('"') - include.size()));
        } else if (line.rfind(define, 0) == 0) {
          const std::size_t open = line.find('(');
          if (open != std::string::npos) piece.functions.insert(line.substr(define.size(), open - define.size()));
        }
      }
      out[std::string(file.path)] = std::move(piece);
    }
    return out;
  }();
  return all;
}

}  // namespace

std::vector<std::string> special_math_pieces(const std::vector<std::string>& code) {
  const std::string prefix = "kiln_special::";
  std::set<std::string> called;
  for (const std::string& text : code) {
    for (std::size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at + 1)) {
      std::size_t end = at + prefix.size();
      while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_')) ++end;
      called.insert(text.substr(at + prefix.size(), end - at - prefix.size()));
    }
  }
  std::vector<std::string> order;
  std::set<std::string> placed;
  std::function<void(const std::string&)> place = [&](const std::string& path) {
    if (!placed.insert(path).second) return;
    const auto piece = pieces().find(path);
    KILN_INTERNAL_ASSERT(piece != pieces().end(), "no embedded special-function piece " + path);
    for (const std::string& dependency : piece->second.includes) place(dependency);
    order.push_back(path);
  };
  for (const std::string& name : called) {
    bool found = false;
    for (const auto& [path, piece] : pieces()) {
      if (!piece.functions.count(name)) continue;
      place(path);
      found = true;
      break;
    }
    KILN_INTERNAL_ASSERT(found, "generated code calls kiln_special::" + name + ", which no special piece defines");
  }
  return order;
}

}  // namespace kiln
