// Input and output conventions shared by `kiln eval` and `kiln run`: inputs are given as
// NAME=FILE.npy (or NAME=VALUE: a number, true/false, nan/inf or a nested list such as
// [1,2], typed by the input's type) where NAME is a graph input's id or name; each output is written to
// DIR/<its name, or id, made safe as a file name>.npy (output_<i>.npy where names clash), and
// small outputs are printed.
#pragma once

#include <string>
#include <vector>

#include "ir/fgraph.h"

namespace kiln::cli {

/// Reads the inputs named by NAME=FILE or NAME=VALUE arguments, in fg.inputs() order. Throws
/// UsageError for an unknown (with the closest name), ambiguous, repeated or missing input.
std::vector<Array> read_inputs(const FunctionGraph& fg, const std::vector<std::string>& args);

/// Prints each output ("y = [...]" for small ones, a summary for big ones) and, when
/// `output_dir` is not empty, writes them there as .npy files.
void report_outputs(const FunctionGraph& fg, const std::vector<Array>& outputs,
                    const std::string& output_dir);

}  // namespace kiln::cli
