#include "cli/run_io.h"

#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include "io/output_names.h"
#include "kiln/runtime/array_print.hpp"
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
