// Names and strings from graph files on their way into generated source: identifiers are
// mangled to safe C identifiers, strings become escaped literals, comments lose anything that
// could end or extend them. Nothing from a graph file reaches generated code any other way.
#pragma once

#include <string>

namespace kiln {

/// A C identifier from any string: [A-Za-z0-9_] kept, other bytes become '_', a leading digit
/// or an empty result gets a prefix, C/C++ keywords and reserved spellings get a suffix.
std::string c_identifier(const std::string& s, const std::string& fallback = "graph");

/// A C/C++ string literal (with quotes) holding exactly the bytes of `s`: quotes, backslashes,
/// control and non-ASCII bytes are escaped (octal, so no escape can absorb a following digit).
std::string c_string_literal(const std::string& s);

/// Text safe inside a // comment: printable ASCII except backslash; others become '?'. Cut to
/// `max_len` characters.
std::string comment_text(const std::string& s, std::size_t max_len = 120);

}  // namespace kiln
