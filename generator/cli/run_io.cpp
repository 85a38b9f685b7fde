#include "cli/run_io.h"

#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include "io/array_print.h"
#include "ir/error.h"
#include "kiln/runtime/npy.hpp"

namespace kiln::cli {

namespace fs = std::filesystem;

std::vector<Array> read_inputs(const FunctionGraph& fg, const std::vector<std::string>& args) {
  std::vector<Array> values(fg.inputs().size());
  std::vector<bool> given(fg.inputs().size(), false);
  for (const auto& arg : args) {
    auto eq = arg.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UserError("--input takes NAME=FILE.npy, got \"" + arg + "\"");
    std::string key = arg.substr(0, eq), path = arg.substr(eq + 1);
    int found = -1;
    for (std::size_t i = 0; i < fg.inputs().size() && found < 0; ++i)
      if (fg.inputs()[i]->file_id() == key) found = static_cast<int>(i);
    if (found < 0) {
      for (std::size_t i = 0; i < fg.inputs().size(); ++i) {
        if (fg.inputs()[i]->name() != key) continue;
        if (found >= 0) throw UserError("input name \"" + key + "\" is ambiguous; use the input's id");
        found = static_cast<int>(i);
      }
    }
    if (found < 0) {
      std::string known;
      for (const auto& in : fg.inputs())
        known += " " + (in->file_id().empty() ? in->name() : in->file_id());
      throw UserError("the graph has no input \"" + key + "\" (inputs:" + known + ")");
    }
    if (given[static_cast<std::size_t>(found)]) throw UserError("input \"" + key + "\" is given twice");
    given[static_cast<std::size_t>(found)] = true;
    values[static_cast<std::size_t>(found)] = npy::load(path);
  }
  for (std::size_t i = 0; i < given.size(); ++i)
    if (!given[i])
      throw UserError("missing --input for graph input " + fg.inputs()[i]->label() + " of type " +
                      fg.inputs()[i]->type().str());
  return values;
}

namespace {
std::string safe_file_stem(const std::string& name) {
  std::string s;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '-' || c == '.';
    s += ok ? c : '_';
  }
  while (!s.empty() && s[0] == '.') s[0] = '_';
  if (s.size() > 100) s.resize(100);
  return s;
}
}  // namespace

std::vector<std::string> output_file_names(const FunctionGraph& fg) {
  std::vector<std::string> stems;
  for (std::size_t i = 0; i < fg.outputs().size(); ++i) {
    const auto& out = fg.outputs()[i];
    std::string name = i < fg.output_names().size() && !fg.output_names()[i].empty() ? fg.output_names()[i]
                       : !out->name().empty()                                     ? out->name()
                                                                                  : out->file_id();
    stems.push_back(safe_file_stem(name));
  }
  std::map<std::string, int> count;
  for (const auto& s : stems) ++count[s];
  std::vector<std::string> files;
  for (std::size_t i = 0; i < stems.size(); ++i) {
    bool positional = stems[i].empty() || count[stems[i]] > 1 || stems[i].rfind("output_", 0) == 0;
    files.push_back((positional ? "output_" + std::to_string(i) : stems[i]) + ".npy");
  }
  return files;
}

void report_outputs(const FunctionGraph& fg, const std::vector<Array>& outputs,
                    const std::string& output_dir) {
  auto files = output_file_names(fg);
  if (!output_dir.empty()) {
    std::error_code ec;
    fs::create_directories(output_dir, ec);
    if (ec) throw npy::NpyError("cannot create output directory " + output_dir + ": " + ec.message());
  }
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    std::string label = files[i].substr(0, files[i].size() - 4);
    const Array& a = outputs[i];
    std::cout << label << " = ";
    if (a.size() <= 100)
      std::cout << format_array(a) << "\n";
    else
      std::cout << dtype_name(a.dtype()) << " array of shape " << shape_str(a.shape()) << "\n"
                << format_array(a) << "\n";
    if (!output_dir.empty()) npy::save((fs::path(output_dir) / files[i]).string(), a);
  }
}

}  // namespace kiln::cli
