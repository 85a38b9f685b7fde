#include "cxx_tokens.h"

#include <algorithm>
#include <cstring>

namespace kiln::testing {

namespace {

bool ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (c & 0x80); }
bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }
bool digit(char c) { return c >= '0' && c <= '9'; }

// Longest first.
const char* const kPunctuators[] = {
    "%:%:", "...", "<=>", "<<=", ">>=", "->*", "::", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&",
    "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", ".*", "##", "<:", ":>", "<%", "%>", "%:", "{", "}",
    "[", "]", "(", ")", ";", ":", "?", ".", "+", "-", "*", "/", "%", "^", "&", "|", "~", "!", "=", "<", ">",
    ",", "#"};

// The end of a quoted literal starting at s[i] (the opening quote), or npos when unterminated.
std::size_t quoted_end(const std::string& s, std::size_t i) {
  const char q = s[i];
  for (std::size_t k = i + 1; k < s.size(); ++k) {
    if (s[k] == '\\') {
      ++k;
      continue;
    }
    if (s[k] == '\n') return std::string::npos;
    if (s[k] == q) return k + 1;
  }
  return std::string::npos;
}

// The end of a raw string literal whose R" starts at s[i], or npos.
std::size_t raw_end(const std::string& s, std::size_t i) {
  const std::size_t open = s.find('(', i + 2);
  if (open == std::string::npos || open - (i + 2) > 16) return std::string::npos;
  const std::string close = ")" + s.substr(i + 2, open - (i + 2)) + "\"";
  const std::size_t end = s.find(close, open + 1);
  return end == std::string::npos ? end : end + close.size();
}

}  // namespace

std::vector<CxxToken> cxx_tokens(const std::string& s) {
  std::vector<CxxToken> out;
  bool line_start = true;
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    if (c == '\n') {
      line_start = true;
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++i;
      continue;
    }
    if (s.compare(i, 2, "//") == 0) {
      i = std::min(s.find('\n', i), s.size());
      continue;
    }
    if (s.compare(i, 2, "/*") == 0) {
      const std::size_t end = s.find("*/", i + 2);
      i = end == std::string::npos ? s.size() : end + 2;
      continue;
    }
    const bool at_line_start = line_start;
    line_start = false;
    if (c == '#' && at_line_start) {
      const std::size_t end = std::min(s.find('\n', i), s.size());
      out.push_back({CxxToken::Directive, s.substr(i, end - i)});
      i = end;
      continue;
    }
    if (ident_start(c)) {
      std::size_t k = i;
      while (k < s.size() && ident_char(s[k])) ++k;
      const std::string word = s.substr(i, k - i);
      // An encoding prefix directly before a quote makes one literal token.
      static const char* const kPrefixes[] = {"u8R", "uR", "UR", "LR", "R", "u8", "u", "U", "L"};
      if (k < s.size() && (s[k] == '"' || s[k] == '\'') &&
          std::any_of(std::begin(kPrefixes), std::end(kPrefixes), [&](const char* p) { return word == p; })) {
        const bool raw = word.back() == 'R' && s[k] == '"';
        const std::size_t end = raw ? raw_end(s, k - 1) : quoted_end(s, k);
        if (end != std::string::npos) {
          out.push_back({s[k] == '"' ? CxxToken::String : CxxToken::Char, s.substr(i, end - i)});
          i = end;
          continue;
        }
      }
      out.push_back({CxxToken::Identifier, word});
      i = k;
      continue;
    }
    if (digit(c) || (c == '.' && i + 1 < s.size() && digit(s[i + 1]))) {
      // A pp-number: digits, letters, '.', '\'' separators and signed exponents.
      std::size_t k = i + 1;
      while (k < s.size()) {
        if ((s[k] == '+' || s[k] == '-') && std::strchr("eEpP", s[k - 1])) {
          ++k;
        } else if (ident_char(s[k]) || s[k] == '.' || (s[k] == '\'' && k + 1 < s.size() && ident_char(s[k + 1]))) {
          ++k;
        } else {
          break;
        }
      }
      out.push_back({CxxToken::Number, s.substr(i, k - i)});
      i = k;
      continue;
    }
    if (c == '"' || c == '\'') {
      const std::size_t end = quoted_end(s, i);
      if (end != std::string::npos) {
        out.push_back({c == '"' ? CxxToken::String : CxxToken::Char, s.substr(i, end - i)});
        i = end;
        continue;
      }
    }
    bool matched = false;
    for (const char* p : kPunctuators) {
      const std::size_t n = std::strlen(p);
      if (s.compare(i, n, p) == 0) {
        out.push_back({CxxToken::Punctuator, p});
        i += n;
        matched = true;
        break;
      }
    }
    if (!matched) out.push_back({CxxToken::Invalid, std::string(1, s[i++])});
  }
  return out;
}

std::string first_token_difference(const std::vector<CxxToken>& a, const std::vector<CxxToken>& b) {
  // A string literal's kind: its spelling up to the opening quote, plus "raw" for R"...".
  const auto literal_kind = [](const std::string& text) { return text.substr(0, text.find('"')); };
  const auto context = [](const std::vector<CxxToken>& t, std::size_t i) {
    std::string s;
    for (std::size_t k = i >= 8 ? i - 8 : 0; k < std::min(t.size(), i + 8); ++k)
      s += (k == i ? " >>" : " ") + t[k].text.substr(0, 60) + (k == i ? "<<" : "");
    return s;
  };
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    if (i >= a.size() || i >= b.size())
      return "token " + std::to_string(i) + ": one stream ends (" + std::to_string(a.size()) + " vs " +
             std::to_string(b.size()) + " tokens)";
    const bool same = a[i].kind == b[i].kind && (a[i].kind == CxxToken::String
                                                     ? literal_kind(a[i].text) == literal_kind(b[i].text)
                                                     : a[i].text == b[i].text);
    if (!same) return "token " + std::to_string(i) + ":" + context(a, i) + "\n  vs" + context(b, i);
  }
  return "";
}

}  // namespace kiln::testing
