// The data behind `kiln view`'s page: every graph as vertices (inputs, constants, op nodes,
// outputs) with their types, origins, positions and inner graphs, the edges between them with
// their routes, and, for --rewritten, what each rewrite pass replaced. templates/view/view.js
// documents the same schema from the page's side.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "ir/fgraph.h"
#include "rewrite/pipeline.h"

namespace kiln::view {

enum class LayoutEngine {
  Auto,      ///< Graphviz's dot when installed (and quick enough), else kiln's layered layout
  Graphviz,  ///< dot, or an error when it is not available
  Kiln,      ///< kiln's layered layout
};

struct ViewOptions {
  std::string title;   ///< shown on the page (the graph's name)
  std::string source;  ///< the graph file as named on the command line
  LayoutEngine layout = LayoutEngine::Auto;
  double graphviz_timeout = 10;  ///< seconds, per graph
  /// Variable id -> its JSON pointer in the file ("/variables/3"), for inputs and constants.
  std::map<std::string, std::string> variable_pointers;
};

struct ViewGraphs {
  const FunctionGraph* written = nullptr;    ///< the graph as loaded
  const FunctionGraph* rewritten = nullptr;  ///< after the rewrite pipeline (--rewritten), or null
  const PipelineReport* report = nullptr;    ///< that pipeline's report, with its replacements
};

/// The page's data. `layout_note` receives which layout engine laid the graphs out (and why
/// not Graphviz, when it was not used). Throws UserError when LayoutEngine::Graphviz is asked
/// for and dot cannot lay the graph out.
nlohmann::json view_model(const ViewGraphs& graphs, const ViewOptions& options, std::string& layout_note);

/// Variable id -> "/variables/k" for the graph file text (empty when it does not parse).
std::map<std::string, std::string> variable_pointers(const std::string& graph_text);

}  // namespace kiln::view
