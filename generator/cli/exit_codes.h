// kiln's exit codes (documented in README.md; scripts may rely on them).
#pragma once

namespace kiln::exit_code {
constexpr int kOk = 0;
constexpr int kUsage = 1;           ///< bad command line
constexpr int kInvalidGraph = 2;    ///< the graph file is refused (format, types, ops)
constexpr int kRuntimeFailure = 3;  ///< evaluation or a compiled call failed (shape, index, assert)
constexpr int kIoError = 4;         ///< a file could not be read or written, or a bad .npy
constexpr int kNotImplemented = 5;  ///< the graph uses something kiln does not implement yet
constexpr int kCompileFailure = 6;  ///< the system compiler failed on generated code
constexpr int kInternalError = 70;  ///< a bug in kiln
}  // namespace kiln::exit_code
