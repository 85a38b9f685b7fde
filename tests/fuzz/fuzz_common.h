// Shared by the libFuzzer targets: a folder of small .npy files that fuzzed graphs may name
// ({"npy": "f64.npy"}), made once per process.
#pragma once

#include <string>

namespace kiln::fuzz {

/// A folder holding f64.npy (3 doubles), i64.npy (2x2 int64), b.npy (bool, 0-d) and a
/// subfolder sub/ with one more, for graphs to name. Created on first use.
const std::string& npy_folder();

}  // namespace kiln::fuzz
