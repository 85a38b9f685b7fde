// Calling a library kiln built, with Arrays in and out: what `kiln run` and `kiln bisect` do.
#pragma once

#include <string>
#include <vector>

#include "compile/compile.h"
#include "kiln/runtime/array.hpp"

namespace kiln {

/// Loads `built` and calls its graph once on `inputs` with `threads` threads. A failing call
/// is a RuntimeFailure "<status>: <the library's message>" (which names the node).
std::vector<Array> call_built_library(const Artifacts& built, const std::vector<Array>& inputs, int threads = 1);

}  // namespace kiln
