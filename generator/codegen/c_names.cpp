#include "codegen/c_names.h"

#include <set>

namespace kiln {

namespace {
const std::set<std::string>& reserved_words() {
  static const std::set<std::string> words = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
      "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
      "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
      "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast",
      "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
      "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
      "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
      "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
      "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
      "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
      "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq", "_Bool", "_Complex",
      "restrict", "main", "kiln", "kg", "std", "NULL", "errno", "assert"};
  return words;
}
}  // namespace

std::string c_identifier(const std::string& s, const std::string& fallback) {
  std::string out;
  for (unsigned char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out += ok ? static_cast<char>(c) : '_';
  }
  if (out.size() > 64) out.resize(64);
  if (out.empty() || out.find_first_not_of('_') == std::string::npos) out = fallback;
  if (out[0] >= '0' && out[0] <= '9') out = "g_" + out;
  // Leading underscore + capital, or double underscores, are reserved in C/C++.
  if (out[0] == '_') out = "g" + out;
  for (std::size_t p; (p = out.find("__")) != std::string::npos;) out.erase(p, 1);
  if (reserved_words().count(out)) out += "_";
  return out;
}

std::string c_string_literal(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '?': out += "\\?"; break;  // no trigraphs, even for old compilers
      default:
        if (c < 0x20 || c >= 0x7f) {
          const char digits[] = "01234567";
          out += '\\';
          out += digits[(c >> 6) & 7];
          out += digits[(c >> 3) & 7];
          out += digits[c & 7];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string comment_text(const std::string& s, std::size_t max_len) {
  std::string out;
  for (unsigned char c : s) {
    if (out.size() >= max_len) {
      out += "...";
      break;
    }
    out += (c >= 0x20 && c < 0x7f && c != '\\') ? static_cast<char>(c) : '?';
  }
  return out;
}

}  // namespace kiln
