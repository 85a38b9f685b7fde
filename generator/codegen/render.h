// Rendering templates/ files with the kainjow Mustache engine. kiln generates C++, not HTML:
// nothing is HTML-escaped; values that come from graph files are made safe before they are put
// into template data (codegen/c_names.h).
#pragma once

#include <string>

#include <kainjow/mustache.hpp>

namespace kiln {

using TemplateData = kainjow::mustache::data;

/// Renders the embedded template at `path` (e.g. "templates/cpp/ops/elemwise.mustache").
/// Throws InternalError for a template that does not parse.
std::string render_template(const std::string& path, const TemplateData& data);

/// Renders templates/cpp/ops/<name>.mustache without the blank lines its empty sections leave.
std::string render_op_template(const std::string& name, const TemplateData& data);

/// Each non-empty line of `text` prefixed with `pad`; the result ends with a newline unless
/// empty (for multi-line code put into templates at some depth).
std::string indent_lines(const std::string& text, const std::string& pad);

/// A TemplateData list from strings, each item {"item": s, "last": bool}.
TemplateData string_list(const std::vector<std::string>& items);

}  // namespace kiln
