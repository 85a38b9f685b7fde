#include "print/view_html.h"

#include "codegen/embedded_files.h"
#include "codegen/render.h"
#include "ir/error.h"

namespace kiln::view {

std::string script_json(const nlohmann::json& j) {
  const std::string text = j.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  // '<', '>' and '&' occur only inside JSON strings, where an escape means the same character.
  for (char c : text) {
    if (c == '<') out += "\\u003c";
    else if (c == '>') out += "\\u003e";
    else if (c == '&') out += "\\u0026";
    else out += c;
  }
  return out;
}

std::string html_text(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string view_html(const nlohmann::json& model) {
  const std::string js(embedded_file("templates/view/view.js"));
  const std::string css(embedded_file("templates/view/view.css"));
  // The page's own code is inlined as it is: it must not be able to end its element early.
  KILN_INTERNAL_ASSERT(js.find("</") == std::string::npos, "templates/view/view.js holds \"</\"");
  KILN_INTERNAL_ASSERT(css.find("</") == std::string::npos, "templates/view/view.css holds \"</\"");
  TemplateData data;
  const std::string title = model.value("title", std::string("graph"));
  data.set("title", html_text(title.empty() ? "graph" : title));
  data.set("css", css);
  data.set("js", js);
  data.set("data", script_json(model));
  return render_template("templates/view/page.html.mustache", data);
}

}  // namespace kiln::view
