#include "cli/run_io.h"

#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include "cli/commands.h"
#include "io/output_names.h"
#include "io/value_json.h"
#include "kiln/runtime/array_print.hpp"
#include "ir/error.h"
#include "kiln/runtime/npy.hpp"
#include "util/suggest.h"

namespace kiln::cli {

namespace fs = std::filesystem;

namespace {

// A value written on the command line: a number, true/false, nan/inf, or a nested list.
bool is_inline_value(const std::string& text) {
  if (text.empty()) return false;
  if (text[0] == '[' || text == "true" || text == "false" || text == "nan" || text == "inf" ||
      text == "-inf")
    return true;
  const Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_number();
}

// An inline value as an array of the input's type (its dtype; its rank must match).
Array parse_inline_value(const std::string& arg, const std::string& text, const Variable& input) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    if (text != "nan" && text != "inf" && text != "-inf")
      throw UsageError("--input " + arg + ": \"" + text + "\" is neither a number, a list nor a file");
    j = text;
  }
  try {
    return parse_value(j, input.type(), "");
  } catch (const UserError& e) {
    throw UsageError("--input " + arg + ": not a value of type " + input.type().str() + " (" + e.what() + ")");
  }
}

}  // namespace

std::vector<Array> read_inputs(const FunctionGraph& fg, const std::vector<std::string>& args) {
  std::vector<Array> values(fg.inputs().size());
  std::vector<bool> given(fg.inputs().size(), false);
  for (const auto& arg : args) {
    auto eq = arg.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--input takes NAME=FILE.npy or NAME=VALUE, got \"" + arg + "\"");
    std::string key = arg.substr(0, eq), value = arg.substr(eq + 1);
    int found = -1;
    for (std::size_t i = 0; i < fg.inputs().size() && found < 0; ++i)
      if (fg.inputs()[i]->file_id() == key) found = static_cast<int>(i);
    if (found < 0) {
      for (std::size_t i = 0; i < fg.inputs().size(); ++i) {
        if (fg.inputs()[i]->name() != key) continue;
        if (found >= 0) throw UsageError("input name \"" + key + "\" is ambiguous; use the input's id");
        found = static_cast<int>(i);
      }
    }
    if (found < 0) {
      std::string known;
      std::vector<std::string> names;
      for (const auto& in : fg.inputs()) {
        known += " " + (in->file_id().empty() ? in->name() : in->file_id());
        if (!in->name().empty()) names.push_back(in->name());
        if (!in->file_id().empty()) names.push_back(in->file_id());
      }
      throw UsageError("the graph has no input \"" + key + "\"" + did_you_mean(key, names) +
                       " (inputs:" + known + ")");
    }
    const auto k = static_cast<std::size_t>(found);
    if (given[k]) throw UsageError("input \"" + key + "\" is given twice");
    given[k] = true;
    values[k] = is_inline_value(value) ? parse_inline_value(arg, value, *fg.inputs()[k]) : npy::load(value);
  }
  for (std::size_t i = 0; i < given.size(); ++i)
    if (!given[i])
      throw UsageError("missing --input for graph input " + fg.inputs()[i]->label() + " of type " +
                       fg.inputs()[i]->type().str());
  return values;
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
