// Every emitter of the C++ backend (one codegen/cpp/emit_<family>.cpp per op family).
#pragma once

#include "codegen/cpp/backend.h"

namespace kiln {

std::string emit_elemwise(const NodeEmitContext& c);
std::string emit_dimshuffle(const NodeEmitContext& c);
std::string emit_shape(const NodeEmitContext& c);
std::string emit_shape_i(const NodeEmitContext& c);

}  // namespace kiln
