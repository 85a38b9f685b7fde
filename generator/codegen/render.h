// Rendering templates/ files with the kainjow Mustache engine. kiln generates C++, not HTML:
// nothing is HTML-escaped; values that come from graph files are made safe before they are put
// into template data (codegen/c_names.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <kainjow/mustache.hpp>

namespace kiln {

using TemplateData = kainjow::mustache::data;

/// Renders the embedded template at `path` (e.g. "templates/cpp/ops/elemwise.mustache").
/// Throws InternalError for a template that does not parse.
std::string render_template(const std::string& path, const TemplateData& data);

/// Renders a template given as text (a backend whose templates are not embedded in kiln, such
/// as the tests' own); `what` names it in errors.
std::string render_template_text(const std::string& text, const TemplateData& data, const std::string& what);

/// Renders templates/cpp/ops/<name>.mustache without the blank lines its empty sections leave.
std::string render_op_template(const std::string& name, const TemplateData& data);

/// Each non-empty line of `text` prefixed with `pad`; the result ends with a newline unless
/// empty (for multi-line code put into templates at some depth).
std::string indent_lines(const std::string& text, const std::string& pad);

/// The items joined with `sep` between them.
std::string join(const std::vector<std::string>& items, const std::string& sep = ", ");

/// The decimal text of an integer (template values and generated index expressions).
inline std::string str(std::int64_t v) { return std::to_string(v); }

/// An empty Mustache list (items are added with push_back).
inline TemplateData new_list() { return TemplateData{TemplateData::type::list}; }

/// A TemplateData list from strings, each item {"item": s, "last": bool}.
TemplateData string_list(const std::vector<std::string>& items);

}  // namespace kiln
