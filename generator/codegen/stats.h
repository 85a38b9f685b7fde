// What compiling a graph involves, for `kiln compile --stats`: kernels and views as a backend
// lowers them, fused nodes, intermediates and workspace buffers.
#pragma once

#include <cstdint>

#include "ir/fgraph.h"

namespace kiln {

struct Backend;

struct GraphStats {
  int kernels = 0;            ///< nodes that compute (not views)
  int views = 0;              ///< nodes that are views of their input
  int scalar_ops = 0;         ///< scalar operations inside Elemwise/reduction nodes (Composites counted inside)
  int fused_nodes = 0;        ///< Elemwise nodes whose scalar op is a Composite
  int intermediates = 0;      ///< values held in the workspace
  int inplace = 0;            ///< values computed into their input's buffer
  int slots = 0;              ///< workspace buffers after sharing by liveness
  std::int64_t static_bytes = 0;  ///< bytes of intermediates whose shapes are static
  int dynamic_intermediates = 0;  ///< intermediates whose size is known only at run time
  int row_block_passes = 0;   ///< row-block groups (codegen/row_block_fusion.h): one read of X each
};

/// The statistics of `fg` lowered for `backend`.
GraphStats graph_stats(const FunctionGraph& fg, const Backend& backend);

}  // namespace kiln
