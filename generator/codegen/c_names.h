// The one way strings from outside — graph files (graph, variable and output names, ids,
// assert messages, exception type names, op props) and command lines (--name, folders) —
// reach generated source. Pick the function by where the text lands; nothing else may paste
// such a string into code, a template value, or the assembler file:
//
//   an identifier (symbol prefix, parameter, member)  c_identifier
//   a C/C++ string literal, quotes included           c_string_literal
//   a // or /* */ comment                              comment_text
//   a string in NAME_data.S (.incbin path)            asm_string_literal
//
// Each output is safe in its place for ANY input bytes, by construction, not by listing bad
// inputs: it is built only from characters that cannot end, extend or leave that place under
// C++ or assembler preprocessing in any language mode (no backslash, so no line splices or
// universal-character names; no "*/"; no "??" trigraphs; no quotes in literals; no newlines,
// NUL or other control bytes; nothing outside printable ASCII, so no bidi overrides (U+202E),
// line separators (U+2028) or homoglyphs). Mustache values are never re-parsed, so "{{" in a
// name is plain text. tests/unit/test_security_escaping.cpp checks these properties on random
// and adversarial strings and compiles graphs whose every name slot holds such strings.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace kiln {

/// A C/C++ identifier from any string: [A-Za-z0-9_] kept, other bytes become '_', runs of '_'
/// collapse, a leading digit or '_' gets a prefix, at most 64 characters; `fallback` when
/// nothing is left. Spellings that could mean something else in generated code get a '_'
/// suffix: keywords, kiln's and DLPack's names (kiln*, KILN*, kg, DL*, kDL*), POSIX type names
/// (*_t), common macros (errno, linux, ...) and anything without a lowercase letter of three
/// or more characters (a macro by convention: EOF, INT64_MAX).
std::string c_identifier(const std::string& s, const std::string& fallback = "graph");

/// c_identifier of each name, made unique among themselves and `taken` by "_2", "_3", ...
/// suffixes (`fallback` + index for names that leave nothing).
std::vector<std::string> unique_c_identifiers(const std::vector<std::string>& names, const std::string& fallback,
                                              std::set<std::string> taken = {});

/// A C/C++ string literal (with its quotes) holding exactly the bytes of `s`: letters, digits,
/// space and punctuation other than '"', '\\' and '?' stay; every other byte becomes a
/// three-digit octal escape (so no escape can absorb a following digit).
std::string c_string_literal(const std::string& s);

/// Text safe inside a // or a /* */ comment: printable ASCII except backslash; other bytes
/// (and so every non-ASCII character) become '?', runs of '?' collapse (no trigraphs), and a
/// '/' next to '*' is set apart by a space (no comment ends or starts). Cut to `max_len`
/// characters plus "...".
std::string comment_text(const std::string& s, std::size_t max_len = 120);

/// A string literal for the assembler (NAME_data.S, which goes through the C preprocessor):
/// letters, digits and "/_.-+,:=@%~ " stay, except a '/' after a '/'; every other byte
/// becomes a three-digit octal escape.
std::string asm_string_literal(const std::string& s);

}  // namespace kiln
