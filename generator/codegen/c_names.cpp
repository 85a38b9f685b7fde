#include "codegen/c_names.h"

#include <cstring>
#include <set>

namespace kiln {

namespace {

// Spellings an identifier from a graph must not take: C and C++ keywords, names the generated
// code and its headers use, and lowercase macros of common C libraries and compilers.
const std::set<std::string>& taken_spellings() {
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
      "restrict", "main", "kg", "std", "errno", "assert", "linux", "unix", "i386", "stdin",
      "stdout", "stderr", "offsetof", "alloca", "major", "minor", "makedev", "setjmp", "va_arg",
      "va_start", "va_end", "va_copy", "complex", "imaginary", "noreturn"};
  return words;
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool ends_with(const std::string& s, const char* suffix) {
  const std::size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// Three or more capitals and no lowercase letter: a macro by convention (EOF, INT64_MAX).
bool looks_like_macro(const std::string& s) {
  int capitals = 0;
  for (char c : s) {
    if (c >= 'a' && c <= 'z') return false;
    if (c >= 'A' && c <= 'Z') ++capitals;
  }
  return capitals >= 3;
}

// Spellings that would mean something else with a '_' after them: keywords, names the
// generated code uses, macros, POSIX type names.
bool needs_suffix(const std::string& id) { return taken_spellings().count(id) || ends_with(id, "_t"); }

// Spellings that need a "g_" before them: not identifiers (a leading digit), reserved ("_X"),
// kiln's and DLPack's names, macros by convention.
bool needs_prefix(const std::string& id) {
  return (id[0] >= '0' && id[0] <= '9') || id[0] == '_' || starts_with(id, "kiln") || starts_with(id, "KILN") ||
         starts_with(id, "DL") || starts_with(id, "kDL") || looks_like_macro(id);
}

bool is_ascii_alnum(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

void append_octal(std::string& out, unsigned char c) {
  const char digits[] = "01234567";
  out += '\\';
  out += digits[(c >> 6) & 7];
  out += digits[(c >> 3) & 7];
  out += digits[c & 7];
}

}  // namespace

std::string c_identifier(const std::string& s, const std::string& fallback) {
  // [A-Za-z0-9_] only, no "__" (reserved); at most `limit` of them.
  const auto clean = [](const std::string& text, std::size_t limit) {
    std::string out;
    for (unsigned char c : text) {
      const char kept = is_ascii_alnum(c) ? static_cast<char>(c) : '_';
      if (kept == '_' && !out.empty() && out.back() == '_') continue;
      if (out.size() == limit) break;
      out += kept;
    }
    return out;
  };
  const auto fix = [&](std::string id) {
    if (id.find_first_not_of('_') == std::string::npos) id = fallback.empty() ? "g" : clean(fallback, 32);
    if (needs_prefix(id)) id = (id[0] == '_' ? "g" : "g_") + id;
    if (needs_suffix(id)) id += "_";
    return id;
  };
  // At most 64 characters. The result is its own c_identifier: clean, and neither rule applies
  // to it again (a "g_" prefix has a lowercase letter; no taken spelling ends in '_').
  constexpr std::size_t kMax = 64;
  std::string id = fix(clean(s, kMax));
  if (id.size() > kMax) id = fix(clean(s, kMax - 3));
  return id;
}

std::string c_string_literal(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    // Printable ASCII except '"' and '\\' (they would end the literal or start an escape) and
    // '?' (trigraphs, in compilers that still read them).
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '?')
      out += static_cast<char>(c);
    else
      append_octal(out, c);
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
    char ch = (c >= 0x20 && c < 0x7f && c != '\\') ? static_cast<char>(c) : '?';
    if (ch == '?' && !out.empty() && out.back() == '?') continue;  // no "??" (trigraphs)
    // "*/" would end a block comment, "/*" start a nested one (-Wcomment).
    if (!out.empty() && ((ch == '/' && out.back() == '*') || (ch == '*' && out.back() == '/'))) out += ' ';
    out += ch;
  }
  // Nor may the text form "/*" or "*/" with the comment markers around it.
  if (!out.empty() && (out.front() == '/' || out.front() == '*')) out.insert(out.begin(), ' ');
  if (!out.empty() && (out.back() == '/' || out.back() == '*')) out += ' ';
  return out;
}

std::vector<std::string> unique_c_identifiers(const std::vector<std::string>& names, const std::string& fallback,
                                              std::set<std::string> taken) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string base = c_identifier(names[i], fallback + std::to_string(i));
    const std::string sep = base.back() == '_' ? "" : "_";
    std::string id = base;
    for (int n = 2; taken.count(id); ++n) id = base + sep + std::to_string(n);
    taken.insert(id);
    out.push_back(id);
  }
  return out;
}

std::string asm_string_literal(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    // "//" would start a comment for the C preprocessor the .S file goes through.
    const bool doubled_slash = c == '/' && out.back() == '/';
    if ((is_ascii_alnum(c) || std::strchr("/_.-+,:=@%~ ", c)) && c != '\0' && !doubled_slash)
      out += static_cast<char>(c);
    else
      append_octal(out, c);
  }
  return out + "\"";
}

}  // namespace kiln
