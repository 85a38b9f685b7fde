// Files the generator carries in its binary: the templates/ tree and the runtime headers that
// generated code embeds (generated at build time by cmake/embed_files.cmake).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kiln {

struct EmbeddedFile {
  std::string_view path;  ///< relative to the source root, e.g. "templates/cpp/graph.cpp.mustache"
  std::string_view text;
};

const std::vector<EmbeddedFile>& embedded_files();

/// The text of an embedded file; throws InternalError when there is none.
std::string_view embedded_file(std::string_view path);

/// An embedded header split for inclusion in generated code: its <system> includes (hoisted
/// to the top of the file) and its body without #pragma once and "kiln/..." includes.
struct EmbeddedText {
  std::vector<std::string> includes;
  std::string body;
};
EmbeddedText split_embedded(std::string_view path);

/// Appends the include lines of `more` that `all` lacks, in order.
void add_includes(std::vector<std::string>& all, const std::vector<std::string>& more);

}  // namespace kiln
