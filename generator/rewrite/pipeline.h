// The default rewrite pipeline: one ordered list of passes in pipeline.cpp, read top to bottom
// (merge, canonicalize, stabilize, specialize, fusion, BLAS, in-place), each a function from
// graph to graph; --include/--exclude TAG select them and --dump-after=PASS prints the graph
// after a pass.
#pragma once

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "rewrite/rewriter.h"

namespace kiln {

struct PipelineOptions {
  /// Only rewrites bearing one of these tags (empty: the default pipeline, everything).
  std::vector<std::string> include;
  /// Never the rewrites bearing these tags.
  std::vector<std::string> exclude;
  /// Pass names after which `dump` is called with the graph.
  std::vector<std::string> dump_after;
  std::function<void(const std::string& pass, const FunctionGraph&)> dump;
  /// Check the graph's invariants after every pass (tests); refused replacements throw.
  bool verify = false;
  /// What the code generator can compile beyond the basic ops (a backend's capabilities): a
  /// pass that introduces ops needing a capability runs only when it is listed ("blas": the
  /// BLAS pass makes Gemv, Gemm and Ger). Unset: everything.
  std::optional<std::vector<std::string>> capabilities;
  /// Fill PipelineReport::replacements.
  bool record_replacements = false;
};

/// One replacement a pass made: the nodes it removed and the nodes it brought in, each as its
/// op and origins (what `kiln view --rewritten` shows for each pass).
struct ReplacementRecord {
  struct Node {
    std::string op;  ///< Op::str(), e.g. "Gemv{no_inplace}"
    Origins origins;
  };
  std::string pass;
  std::string rule;  ///< the rewrite's name ("gemv", "merge", "fusion", ...)
  std::vector<Node> removed;
  std::vector<Node> added;
};

struct PipelineReport {
  std::vector<std::pair<std::string, RewriteStats>> passes;  ///< per pass, in order
  std::vector<double> seconds;                                ///< wall time per pass (run_pipeline)
  std::vector<ReplacementRecord> replacements;  ///< in order, with record_replacements
};

/// The names of the passes, in order.
std::vector<std::string> pipeline_pass_names();

/// Every tag some rewrite bears (for --help and validation).
std::vector<std::string> known_rewrite_tags();

/// Runs the pipeline on `fg` in place.
PipelineReport run_pipeline(FunctionGraph& fg, const PipelineOptions& options = {});

/// PyTensor's rewrite_graph(g, include=...): only the local rewrites and passes bearing one of
/// the tags, to a fixpoint (and, with `capabilities`, only those the target can compile).
PipelineReport rewrite_graph(FunctionGraph& fg, const std::vector<std::string>& include,
                             const std::vector<std::string>& exclude = {},
                             const std::optional<std::vector<std::string>>& capabilities = std::nullopt);

}  // namespace kiln
