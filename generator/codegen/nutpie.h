// The nutpie entry point (kiln compile --nutpie): the C callback the nutpie sampler calls for a
// model's log density and its gradient,
//   int64_t NAME_nutpie_logp(uint64_t dim, const double* x, double* grad, double* logp, void* user_data)
// over a graph x -> (logp, gradient), what kiln.pymc.compile_logp exports. Each calling thread
// gets its own context (nutpie runs chains on several threads); return codes follow nutpie's
// own compiled callbacks (docs/python.md, "The nutpie entry point").
#pragma once

#include <string>

#include "codegen/backend.h"
#include "ir/fgraph.h"

namespace kiln {

/// Refuses (UserError) a graph that is not one float64 vector in, a float64 scalar and a
/// float64 vector of the same length out, or a backend without the entry point's template.
void check_nutpie_graph(const FunctionGraph& fg, const Backend& backend);

/// The definitions of NAME_nutpie_logp and NAME_nutpie_last_error (appended to NAME's source).
std::string nutpie_entry_point_source(const Backend& backend, const std::string& name);

/// Their declarations (in NAME.h's extern "C" block).
std::string nutpie_entry_point_declarations(const std::string& name);

}  // namespace kiln
