// A lexer for preprocessed C++ (the output of `c++ -E -P`), for tests that compare the code two
// graphs generate token by token: identifiers, numbers, string and character literals (with
// encoding prefixes; raw strings), punctuators by longest match, and directive lines (#pragma)
// as one token each. Whitespace and comments separate tokens and are dropped.
#pragma once

#include <string>
#include <vector>

namespace kiln::testing {

struct CxxToken {
  enum Kind { Identifier, Number, String, Char, Punctuator, Directive, Invalid } kind;
  std::string text;  ///< the token's spelling (a string literal's prefix and quotes included)
};

/// The tokens of `source`; a byte that starts no token becomes an Invalid token.
std::vector<CxxToken> cxx_tokens(const std::string& source);

/// The first place where two token lists differ when string literals are compared by kind
/// (prefix, raw or not) only, their contents ignored; "" when they agree.
std::string first_token_difference(const std::vector<CxxToken>& a, const std::vector<CxxToken>& b);

}  // namespace kiln::testing
