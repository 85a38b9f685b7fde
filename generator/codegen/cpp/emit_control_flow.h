// The C++ backend's control-flow emitters (emit_control_flow.cpp).
#pragma once

#include <string>

#include "codegen/cpp/backend.h"

namespace kiln {

/// IfElse's template data, the same on every backend: `cond`, and for each branch (`then`,
/// `else`) one copy per output (`ndim`, `out`, `src` — the branch's value — and `alloc`).
TemplateData ifelse_data(const NodeEmitContext& c);

/// IfElse: copies the values of the branch taken into the outputs. The nodes of each branch
/// ran before it, inside an `if` on the same condition (codegen/source.cpp opens them).
std::string emit_ifelse(const NodeEmitContext& c);

/// Scan's template data (templates/cpp/ops/control_scan.mustache) over tensors of
/// `tensor_class` (kg::Tensor on the host, kg::DTensor on a GPU backend, whose runtime gives
/// kg::scan's pieces their device overloads), calling `step_fn` once per step; no inline step.
TemplateData scan_data(const NodeEmitContext& c, const std::string& tensor_class, const std::string& step_fn);

/// Scan: its step function (emitted by codegen/source.cpp) called once per step on rows of
/// buffers planned once per call in the node's scratch slot (emit_scan.cpp).
std::string emit_scan(const NodeEmitContext& c);

}  // namespace kiln
