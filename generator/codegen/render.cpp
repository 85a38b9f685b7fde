#include "codegen/render.h"

#include <map>
#include <memory>

#include "codegen/embedded_files.h"
#include "ir/error.h"

namespace kiln {

std::string render_template(const std::string& path, const TemplateData& data) {
  // Parsed templates are cached: a graph renders the same few templates many times.
  static std::map<std::string, std::unique_ptr<kainjow::mustache::mustache>> cache;
  auto it = cache.find(path);
  if (it == cache.end()) {
    auto tmpl = std::make_unique<kainjow::mustache::mustache>(std::string(embedded_file(path)));
    if (!tmpl->is_valid()) throw InternalError("template " + path + ": " + tmpl->error_message());
    tmpl->set_custom_escape([](const std::string& s) { return s; });
    it = cache.emplace(path, std::move(tmpl)).first;
  }
  std::string out = it->second->render(data);
  if (!it->second->is_valid()) throw InternalError("template " + path + ": " + it->second->error_message());
  return out;
}

std::string render_template_text(const std::string& text, const TemplateData& data, const std::string& what) {
  kainjow::mustache::mustache tmpl(text);
  tmpl.set_custom_escape([](const std::string& s) { return s; });
  std::string out = tmpl.is_valid() ? tmpl.render(data) : "";
  if (!tmpl.is_valid()) throw InternalError("template " + what + ": " + tmpl.error_message());
  return out;
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string s;
  for (std::size_t i = 0; i < items.size(); ++i) s += (i ? sep : "") + items[i];
  return s;
}

TemplateData string_list(const std::vector<std::string>& items) {
  TemplateData list{TemplateData::type::list};
  for (std::size_t i = 0; i < items.size(); ++i) {
    TemplateData item;
    item.set("item", items[i]);
    item.set("last", i + 1 == items.size());
    list.push_back(item);
  }
  return list;
}

std::string indent_lines(const std::string& text, const std::string& pad) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    out += (line.empty() ? "" : pad) + line + "\n";
    start = end + 1;
  }
  return out;
}

std::string render_op_template(const std::string& name, const TemplateData& data) {
  const std::string text = render_template("templates/cpp/ops/" + name + ".mustache", data);
  std::string out, line;
  for (char ch : text) {
    line += ch;
    if (ch != '\n') continue;
    if (line.find_first_not_of(" \n") != std::string::npos) out += line;
    line.clear();
  }
  if (line.find_first_not_of(' ') != std::string::npos) out += line;
  return out;
}

}  // namespace kiln
