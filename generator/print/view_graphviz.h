// Graphviz's `dot` as the layout engine of `kiln view`, when it is installed. Nothing from the
// graph reaches dot: nodes are numbered boxes of a given size ("n12 [width=1.5, height=0.4]"),
// so no name needs escaping; labels are drawn by the page. dot runs without a shell, under
// coreutils' `timeout`, and its positions are read back from `-Tplain`.
#pragma once

#include <optional>
#include <string>

#include "print/view_layout.h"

namespace kiln::view {

/// Graphviz's layout of `input` (same units and conventions as layered_layout), or nothing
/// when dot is not installed, fails, or takes longer than `timeout_seconds`; then `why_not`
/// says which.
std::optional<Layout> graphviz_layout(const LayoutInput& input, double timeout_seconds, std::string& why_not);

/// The dot source graphviz_layout runs (exposed for tests).
std::string graphviz_source(const LayoutInput& input);

/// Reads dot's `-Tplain` output for a graph written by graphviz_source; nothing when it is not
/// well-formed or does not cover every node and edge.
std::optional<Layout> parse_graphviz_plain(const std::string& text, const LayoutInput& input);

}  // namespace kiln::view
