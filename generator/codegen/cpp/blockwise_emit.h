// What the emitters of Blockwise nodes share (emit_dot.cpp's products, emit_linalg.cpp's linear
// algebra): the batch dimensions, which broadcast like Elemwise's (only static-1 ones), and the
// run-time checks that every core dimension name has one length, with the reference evaluator's
// words.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "codegen/cpp/backend.h"
#include "ops/blockwise.h"

namespace kiln {

/// Sets "batch_dims" (items d, lengths, broadcastable, n_in: kg::broadcast_length's arguments
/// for each of the `nb` batch dimensions over all inputs) and "static_broadcast" (items k, d:
/// input k is statically 1 in batch dimension d, its stride there becomes 0).
void set_blockwise_batch_data(const NodeEmitContext& c, int nb, TemplateData& data);

/// Each core dimension name takes its length from its first occurrence (input, dimension);
/// `checks` holds (failure condition, status expression) for every later one, in input order.
struct BlockwiseCoreDims {
  std::map<std::string, std::pair<int, int>> first;
  std::vector<std::pair<std::string, std::string>> checks;
};
BlockwiseCoreDims blockwise_core_dims(const NodeEmitContext& c, const GufuncSignature& sig, int nb);

/// Sets "checks" (items mismatch, failure) from (condition, status expression) pairs.
void set_checks(const std::vector<std::pair<std::string, std::string>>& checks, TemplateData& data);

}  // namespace kiln
