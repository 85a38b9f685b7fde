// A small checker of graphviz dot text, for tests (no graphviz needed): the text is one
// `digraph ID { ... }` of statements ending in ';', every double-quoted string is closed, holds
// no raw newline or control character and is valid UTF-8, braces and brackets balance, and every
// token is an ID, a quoted string, an edge operator or punctuation.
#pragma once

#include <cctype>
#include <optional>
#include <string>
#include <vector>

namespace kiln::testing {

/// Nothing when `dot` is well-formed as described above; else what is wrong and where.
inline std::optional<std::string> check_dot(const std::string& dot) {
  std::vector<std::string> tokens;
  for (std::size_t i = 0; i < dot.size();) {
    const auto c = static_cast<unsigned char>(dot[i]);
    if (std::isspace(c)) {
      ++i;
    } else if (c == '"') {
      std::size_t j = i + 1;
      for (; j < dot.size() && dot[j] != '"'; ++j) {
        const auto d = static_cast<unsigned char>(dot[j]);
        if (d < 0x20 || d == 0x7f) return "control character inside a quoted string at byte " + std::to_string(j);
        if (d == '\\') {
          if (j + 1 >= dot.size()) return std::string("backslash at the end of the text");
          ++j;
          continue;
        }
        if (d >= 0x80) {  // a UTF-8 sequence
          std::size_t n = (d >> 5) == 0x6 ? 2 : (d >> 4) == 0xe ? 3 : (d >> 3) == 0x1e ? 4 : 0;
          if (n == 0 || j + n > dot.size()) return "invalid UTF-8 at byte " + std::to_string(j);
          for (std::size_t k = 1; k < n; ++k)
            if ((static_cast<unsigned char>(dot[j + k]) >> 6) != 0x2)
              return "invalid UTF-8 at byte " + std::to_string(j);
          j += n - 1;
        }
      }
      if (j >= dot.size()) return "unterminated quoted string at byte " + std::to_string(i);
      tokens.push_back("\"");
      i = j + 1;
    } else if (std::isalnum(c) || c == '_') {
      std::size_t j = i;
      while (j < dot.size() && (std::isalnum(static_cast<unsigned char>(dot[j])) || dot[j] == '_' || dot[j] == '.'))
        ++j;
      tokens.push_back(dot.substr(i, j - i));
      i = j;
    } else if (dot.compare(i, 2, "->") == 0) {
      tokens.push_back("->");
      i += 2;
    } else if (std::string("{}[]=;,").find(static_cast<char>(c)) != std::string::npos) {
      tokens.push_back(std::string(1, static_cast<char>(c)));
      ++i;
    } else {
      return "unexpected character '" + std::string(1, static_cast<char>(c)) + "' at byte " + std::to_string(i);
    }
  }
  if (tokens.size() < 4 || tokens[0] != "digraph" || tokens[2] != "{" || tokens.back() != "}")
    return std::string("not of the form digraph ID { ... }");
  int braces = 0, brackets = 0;
  for (std::size_t k = 2; k < tokens.size(); ++k) {
    const std::string& t = tokens[k];
    if (t == "{") ++braces;
    if (t == "}") --braces;
    if (t == "[") ++brackets;
    if (t == "]") --brackets;
    if (braces < 0 || brackets < 0 || brackets > 1) return "unbalanced brackets at token " + std::to_string(k);
    if (braces == 0 && k + 1 != tokens.size()) return std::string("text after the closing brace");
    if (t == "}" && k + 1 < tokens.size() && tokens[k - 1] != ";" && tokens[k - 1] != "{")
      return std::string("a statement does not end with ';'");
  }
  if (braces != 0 || brackets != 0) return std::string("unbalanced braces");
  return std::nullopt;
}

}  // namespace kiln::testing
