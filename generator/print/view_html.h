// `kiln view`'s page: one self-contained HTML file (templates/view/page.html.mustache with
// view.css and view.js inlined, and the graph data as JSON), nothing fetched from anywhere.
// A graph file is untrusted: its strings reach the page only as JSON inside a
// <script type="application/json"> element, escaped so that they cannot end it, and the
// page's script puts them into the document as text (textContent), never as markup.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kiln::view {

/// The page for a model from view_model().
std::string view_html(const nlohmann::json& model);

/// JSON text that is safe inside a <script> element: ASCII only (so U+2028 and U+2029 are
/// escapes), with '<', '>' and '&' written as \u003c, \u003e, \u0026. Invalid UTF-8 becomes
/// U+FFFD.
std::string script_json(const nlohmann::json& j);

/// Text safe in HTML element content and in quoted attribute values.
std::string html_text(const std::string& s);

}  // namespace kiln::view
