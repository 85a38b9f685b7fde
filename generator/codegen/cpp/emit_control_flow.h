// The C++ backend's control-flow emitters (emit_control_flow.cpp).
#pragma once

#include <string>

#include "codegen/cpp/backend.h"

namespace kiln {

/// IfElse: copies the values of the branch taken into the outputs. The nodes of each branch
/// ran before it, inside an `if` on the same condition (codegen/source.cpp opens them).
std::string emit_ifelse(const NodeEmitContext& c);

}  // namespace kiln
