// Node positions and edge routes for `kiln view`: kiln's own layered (Sugiyama-style) layout,
// used when Graphviz is not installed, for inner graphs, and when Graphviz takes too long.
// Graphs flow top to bottom: an edge u -> v (u produces a value v reads) points down.
#pragma once

#include <utility>
#include <vector>

namespace kiln::view {

/// What a layout needs to know: each node's box and the edges between nodes.
struct LayoutInput {
  std::vector<double> width;   ///< per node, pixels
  std::vector<double> height;  ///< per node, pixels
  std::vector<std::pair<int, int>> edges;  ///< (from, to) node indices; duplicates allowed
};

struct Point {
  double x = 0;
  double y = 0;
};

/// Positions (box centres) and edge routes, in pixels, origin at the top left.
struct Layout {
  std::vector<Point> center;  ///< per node
  /// Per input edge, from the bottom of the source box to the top of the target box: cubic
  /// Bézier control points p0 c1 c2 p1 [c1 c2 p2 ...] (Graphviz), or with `routes` the points
  /// the edge passes through, to be drawn with bezier_through (kiln's layout; a third of the
  /// numbers).
  std::vector<std::vector<Point>> edge_path;
  bool routes = false;
  double width = 0;
  double height = 0;
};

/// kiln's layered layout: longest-path layering balanced toward shorter edges, long edges
/// routed through one shared chain of bend points per source node, barycentre sweeps to reduce
/// crossings (keeping the best order found), and x positions that pull each node toward its
/// neighbours without overlaps (isotonic regression per layer). Linear-ish in nodes plus bend
/// points; a 5,000-node graph takes well under a second. Cycles (never in a valid graph) are
/// tolerated: their back edges are drawn as plain curves.
Layout layered_layout(const LayoutInput& input);

/// Cubic Bézier control points through `points` (vertical tangents at each point), the way
/// edges are drawn between layers.
std::vector<Point> bezier_through(const std::vector<Point>& points);

}  // namespace kiln::view
