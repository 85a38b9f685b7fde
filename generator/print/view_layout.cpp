#include "print/view_layout.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>

namespace kiln::view {

namespace {

constexpr double kNodeGap = 24;   // horizontal space between neighbours in a layer
constexpr double kRankGap = 44;   // vertical space between layers
constexpr double kBendWidth = 8;  // the room a bend point of a long edge takes in its layer
constexpr double kMargin = 16;

// The layered graph: real nodes, then bend points ("dummies") of long edges.
struct Vertex {
  int rank = 0;
  double width = 0;
  double height = 0;
  bool bend = false;
  double x = 0;
  std::vector<int> up;    // neighbours one layer above
  std::vector<int> down;  // neighbours one layer below
};

class LayeredLayout {
 public:
  explicit LayeredLayout(const LayoutInput& in) : in_(in), n_(static_cast<int>(in.width.size())) {}

  Layout run() {
    rank_nodes();
    add_bend_points();
    order_layers();
    place_x();
    return finish();
  }

 private:
  // --- 1. layers: longest path from the sources, then each node moved toward the side where
  // it has more edges (shorter edges in total), as far as its neighbours allow.
  void rank_nodes() {
    out_.assign(static_cast<std::size_t>(n_), {});
    in_edges_.assign(static_cast<std::size_t>(n_), {});
    for (const auto& [u, v] : in_.edges) {
      if (u == v) continue;
      out_[static_cast<std::size_t>(u)].push_back(v);
      in_edges_[static_cast<std::size_t>(v)].push_back(u);
    }
    for (auto* lists : {&out_, &in_edges_})
      for (auto& l : *lists) {
        std::sort(l.begin(), l.end());
        l.erase(std::unique(l.begin(), l.end()), l.end());
      }
    topo_ = topological_order();
    rank_.assign(static_cast<std::size_t>(n_), 0);
    std::vector<char> placed(static_cast<std::size_t>(n_), 0);
    for (int v : topo_) {
      int r = 0;
      for (int u : in_edges_[static_cast<std::size_t>(v)])
        if (placed[static_cast<std::size_t>(u)]) r = std::max(r, rank_[static_cast<std::size_t>(u)] + 1);
      rank_[static_cast<std::size_t>(v)] = r;
      placed[static_cast<std::size_t>(v)] = 1;
    }
    for (int sweep = 0; sweep < 2; ++sweep) {
      for (auto it = topo_.rbegin(); it != topo_.rend(); ++it) balance(*it, true);
      for (int v : topo_) balance(v, false);
    }
  }

  // Kahn's algorithm, smallest index first; on a cycle the smallest remaining node goes next.
  std::vector<int> topological_order() const {
    std::vector<int> missing(static_cast<std::size_t>(n_));
    for (int v = 0; v < n_; ++v) missing[static_cast<std::size_t>(v)] = static_cast<int>(in_edges_[static_cast<std::size_t>(v)].size());
    std::vector<int> order;
    std::vector<char> done(static_cast<std::size_t>(n_), 0);
    std::vector<int> ready;  // a min-heap of node indices
    auto push = [&](int v) {
      ready.push_back(v);
      std::push_heap(ready.begin(), ready.end(), std::greater<>());
    };
    for (int v = 0; v < n_; ++v)
      if (missing[static_cast<std::size_t>(v)] == 0) push(v);
    int next_forced = 0;
    while (static_cast<int>(order.size()) < n_) {
      int v;
      if (!ready.empty()) {
        std::pop_heap(ready.begin(), ready.end(), std::greater<>());
        v = ready.back();
        ready.pop_back();
        if (done[static_cast<std::size_t>(v)]) continue;
      } else {
        while (done[static_cast<std::size_t>(next_forced)]) ++next_forced;
        v = next_forced;
      }
      done[static_cast<std::size_t>(v)] = 1;
      order.push_back(v);
      for (int w : out_[static_cast<std::size_t>(v)])
        if (--missing[static_cast<std::size_t>(w)] == 0 && !done[static_cast<std::size_t>(w)]) push(w);
    }
    return order;
  }

  void balance(int v, bool downward) {
    const auto& ins = in_edges_[static_cast<std::size_t>(v)];
    const auto& outs = out_[static_cast<std::size_t>(v)];
    int& r = rank_[static_cast<std::size_t>(v)];
    if (downward && outs.size() > ins.size()) {
      int hi = INT32_MAX;
      for (int w : outs) hi = std::min(hi, rank_[static_cast<std::size_t>(w)] - 1);
      if (hi != INT32_MAX && hi > r) r = hi;
    } else if (!downward && ins.size() > outs.size()) {
      int lo = 0;
      for (int u : ins) lo = std::max(lo, rank_[static_cast<std::size_t>(u)] + 1);
      if (lo < r) r = lo;
    }
  }

  // --- 2. long edges: one chain of bend points per source node, down to its lowest consumer;
  // each consumer leaves the chain one layer above itself.
  void add_bend_points() {
    vs_.resize(static_cast<std::size_t>(n_));
    for (int v = 0; v < n_; ++v) {
      Vertex& x = vs_[static_cast<std::size_t>(v)];
      x.rank = rank_[static_cast<std::size_t>(v)];
      x.width = in_.width[static_cast<std::size_t>(v)];
      x.height = in_.height[static_cast<std::size_t>(v)];
    }
    chain_start_.assign(static_cast<std::size_t>(n_), -1);
    for (int u = 0; u < n_; ++u) {
      const int ru = rank_[static_cast<std::size_t>(u)];
      int lowest = ru + 1;
      for (int v : out_[static_cast<std::size_t>(u)]) lowest = std::max(lowest, rank_[static_cast<std::size_t>(v)]);
      int prev = u;
      for (int r = ru + 1; r < lowest; ++r) {
        int b = static_cast<int>(vs_.size());
        Vertex bend;
        bend.rank = r;
        bend.width = kBendWidth;
        bend.bend = true;
        vs_.push_back(bend);
        if (r == ru + 1) chain_start_[static_cast<std::size_t>(u)] = b;
        link(prev, b);
        prev = b;
      }
    }
    for (int u = 0; u < n_; ++u)
      for (int v : out_[static_cast<std::size_t>(u)]) {
        const int ru = rank_[static_cast<std::size_t>(u)], rv = rank_[static_cast<std::size_t>(v)];
        if (rv == ru + 1) link(u, v);
        else if (rv > ru + 1) link(chain_start_[static_cast<std::size_t>(u)] + (rv - ru - 2), v);
      }
  }

  void link(int a, int b) {
    vs_[static_cast<std::size_t>(a)].down.push_back(b);
    vs_[static_cast<std::size_t>(b)].up.push_back(a);
  }

  // --- 3. order within layers: barycentre sweeps down and up, keeping the order with the
  // fewest crossings.
  void order_layers() {
    int max_rank = 0;
    for (const Vertex& v : vs_) max_rank = std::max(max_rank, v.rank);
    layers_.assign(static_cast<std::size_t>(max_rank + 1), {});
    // Real nodes in topological order, each followed by its chain: related nodes start close.
    std::vector<char> seen(vs_.size(), 0);
    for (int v : topo_) {
      add_to_layer(v, seen);
      int b = chain_start_[static_cast<std::size_t>(v)];
      while (b >= 0) {
        add_to_layer(b, seen);
        const auto& down = vs_[static_cast<std::size_t>(b)].down;
        int next = -1;
        for (int d : down)
          if (vs_[static_cast<std::size_t>(d)].bend) next = d;
        b = next;
      }
    }
    pos_.assign(vs_.size(), 0);
    renumber();
    auto best = layers_;
    std::int64_t best_crossings = crossings();
    const int iterations = vs_.size() > 40000 ? 4 : 12;
    int stale = 0;
    for (int it = 0; it < iterations && best_crossings > 0 && stale < 4; ++it) {
      sweep(it % 2 == 0);
      std::int64_t c = crossings();
      if (c < best_crossings) {
        best_crossings = c;
        best = layers_;
        stale = 0;
      } else {
        ++stale;
      }
    }
    layers_ = std::move(best);
    renumber();
  }

  void add_to_layer(int v, std::vector<char>& seen) {
    if (seen[static_cast<std::size_t>(v)]) return;
    seen[static_cast<std::size_t>(v)] = 1;
    layers_[static_cast<std::size_t>(vs_[static_cast<std::size_t>(v)].rank)].push_back(v);
  }

  void renumber() {
    for (const auto& layer : layers_)
      for (std::size_t i = 0; i < layer.size(); ++i) pos_[static_cast<std::size_t>(layer[i])] = static_cast<double>(i);
  }

  void sweep(bool downward) {
    const int count = static_cast<int>(layers_.size());
    std::vector<std::pair<double, int>> keyed;
    for (int k = 1; k < count; ++k) {
      const int r = downward ? k : count - 1 - k;
      auto& layer = layers_[static_cast<std::size_t>(r)];
      keyed.clear();
      for (int v : layer) {
        const auto& nb = downward ? vs_[static_cast<std::size_t>(v)].up : vs_[static_cast<std::size_t>(v)].down;
        double key = pos_[static_cast<std::size_t>(v)];
        if (!nb.empty()) {
          double sum = 0;
          for (int w : nb) sum += pos_[static_cast<std::size_t>(w)];
          key = sum / static_cast<double>(nb.size());
        }
        keyed.emplace_back(key, v);
      }
      std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      for (std::size_t i = 0; i < keyed.size(); ++i) {
        layer[i] = keyed[i].second;
        pos_[static_cast<std::size_t>(layer[i])] = static_cast<double>(i);
      }
    }
  }

  // Crossings between consecutive layers: inversions among edge endpoints (a Fenwick tree).
  std::int64_t crossings() const {
    std::int64_t total = 0;
    std::vector<std::pair<int, int>> ends;
    std::vector<int> tree;
    for (std::size_t r = 0; r + 1 < layers_.size(); ++r) {
      ends.clear();
      for (int v : layers_[r])
        for (int w : vs_[static_cast<std::size_t>(v)].down)
          ends.emplace_back(static_cast<int>(pos_[static_cast<std::size_t>(v)]), static_cast<int>(pos_[static_cast<std::size_t>(w)]));
      std::sort(ends.begin(), ends.end());
      const std::size_t m = layers_[r + 1].size();
      tree.assign(m + 1, 0);
      std::int64_t inserted = 0;
      for (const auto& e : ends) {
        // Edges already inserted whose lower end lies right of this one cross it.
        std::int64_t at_most = 0;
        for (int i = e.second + 1; i > 0; i -= i & -i) at_most += tree[static_cast<std::size_t>(i)];
        total += inserted - at_most;
        for (std::size_t i = static_cast<std::size_t>(e.second) + 1; i <= m; i += i & (~i + 1)) ++tree[i];
        ++inserted;
      }
    }
    return total;
  }

  // --- 4. x positions: each layer in turn moves toward its neighbours' positions, keeping
  // its order and gaps (weighted isotonic regression by pooling adjacent violators). Bend
  // points weigh more, so long edges run straight.
  void place_x() {
    for (auto& layer : layers_) {
      double x = 0;
      for (int v : layer) {
        Vertex& vx = vs_[static_cast<std::size_t>(v)];
        vx.x = x + vx.width / 2;
        x += vx.width + kNodeGap;
      }
    }
    const int count = static_cast<int>(layers_.size());
    for (int it = 0; it < 8; ++it) {
      const int mode = it < 6 ? it % 2 : 2;  // down, up, ..., then both
      for (int k = 0; k < count; ++k) {
        const int r = mode == 1 ? count - 1 - k : k;
        align_layer(layers_[static_cast<std::size_t>(r)], mode);
      }
    }
  }

  void align_layer(const std::vector<int>& layer, int mode) {
    const std::size_t k = layer.size();
    if (k == 0) return;
    std::vector<double> target(k), weight(k), offset(k);
    for (std::size_t i = 0; i < k; ++i) {
      const Vertex& v = vs_[static_cast<std::size_t>(layer[i])];
      double sum = 0;
      int count = 0;
      if (mode != 1)
        for (int w : v.up) sum += vs_[static_cast<std::size_t>(w)].x, ++count;
      if (mode != 0)
        for (int w : v.down) sum += vs_[static_cast<std::size_t>(w)].x, ++count;
      target[i] = count ? sum / count : v.x;
      weight[i] = (v.bend ? 4.0 : 1.0) * (count ? 1.0 : 0.25);
      offset[i] = i == 0 ? 0 : offset[i - 1] + (vs_[static_cast<std::size_t>(layer[i - 1])].width + v.width) / 2 + kNodeGap;
    }
    // Minimise sum weight * (x - target)^2 subject to x[i+1] - x[i] >= the gap: with
    // y = x - offset that is y non-decreasing, solved by pooling adjacent violators.
    struct Block {
      double w, wy;
      std::size_t size;
    };
    std::vector<Block> blocks;
    for (std::size_t i = 0; i < k; ++i) {
      blocks.push_back({weight[i], weight[i] * (target[i] - offset[i]), 1});
      while (blocks.size() > 1) {
        const Block& b = blocks.back();
        const Block& a = blocks[blocks.size() - 2];
        if (a.wy / a.w <= b.wy / b.w) break;
        Block merged{a.w + b.w, a.wy + b.wy, a.size + b.size};
        blocks.pop_back();
        blocks.back() = merged;
      }
    }
    std::size_t i = 0;
    for (const Block& b : blocks)
      for (std::size_t j = 0; j < b.size; ++j, ++i) vs_[static_cast<std::size_t>(layer[i])].x = b.wy / b.w + offset[i];
  }

  // --- 5. coordinates and edge routes.
  Layout finish() {
    double min_x = 0;
    bool first = true;
    for (const Vertex& v : vs_) {
      if (first || v.x - v.width / 2 < min_x) min_x = v.x - v.width / 2;
      first = false;
    }
    std::vector<double> layer_top(layers_.size()), layer_height(layers_.size(), 0);
    for (const Vertex& v : vs_) layer_height[static_cast<std::size_t>(v.rank)] = std::max(layer_height[static_cast<std::size_t>(v.rank)], v.height);
    double y = kMargin;
    for (std::size_t r = 0; r < layers_.size(); ++r) {
      layer_top[r] = y;
      y += layer_height[r] + kRankGap;
    }
    Layout out;
    out.routes = true;
    out.height = y - kRankGap + kMargin;
    auto centre = [&](int v) {
      const Vertex& x = vs_[static_cast<std::size_t>(v)];
      return Point{x.x - min_x + kMargin, layer_top[static_cast<std::size_t>(x.rank)] + layer_height[static_cast<std::size_t>(x.rank)] / 2};
    };
    for (int v = 0; v < n_; ++v) out.center.push_back(centre(v));
    for (std::size_t v = 0; v < vs_.size(); ++v)
      out.width = std::max(out.width, centre(static_cast<int>(v)).x + vs_[v].width / 2 + kMargin);
    for (const auto& [u, v] : in_.edges) {
      const Point a = out.center[static_cast<std::size_t>(u)], b = out.center[static_cast<std::size_t>(v)];
      const double hu = vs_[static_cast<std::size_t>(u)].height / 2, hv = vs_[static_cast<std::size_t>(v)].height / 2;
      std::vector<Point> pts{{a.x, a.y + hu}};
      const int ru = rank_[static_cast<std::size_t>(u)], rv = rank_[static_cast<std::size_t>(v)];
      if (rv <= ru) {  // a back edge (a cycle) or a self loop: a plain curve
        pts.push_back({b.x, b.y - hv});
        out.edge_path.push_back(pts);
        continue;
      }
      // The shared chain's bend points (those not on a straight stretch), then this edge's
      // own last bend and the target: every edge of a source starts with the same points.
      const std::vector<bool>& kept = trunk(u, centre);
      for (int r = ru + 1; r < rv; ++r)
        if (r == rv - 1 || kept[static_cast<std::size_t>(r - ru - 1)])
          pts.push_back(centre(chain_start_[static_cast<std::size_t>(u)] + (r - ru - 1)));
      pts.push_back({b.x, b.y - hv});
      out.edge_path.push_back(std::move(pts));
    }
    return out;
  }

  // Which bend points of u's chain its routes go through: those that do not lie (within a
  // pixel or two) on the line between the previous kept point and the next bend point.
  template <typename Centre>
  const std::vector<bool>& trunk(int u, const Centre& centre) {
    auto it = trunks_.find(u);
    if (it != trunks_.end()) return it->second;
    const int first = chain_start_[static_cast<std::size_t>(u)];
    std::vector<Point> pts;
    const Vertex& src = vs_[static_cast<std::size_t>(u)];
    pts.push_back({centre(u).x, centre(u).y + src.height / 2});
    for (int b = first; b >= 0;) {
      pts.push_back(centre(b));
      int next = -1;
      for (int d : vs_[static_cast<std::size_t>(b)].down)
        if (vs_[static_cast<std::size_t>(d)].bend) next = d;
      b = next;
    }
    std::vector<bool> kept(pts.size() - 1, true);
    Point last = pts[0];
    for (std::size_t i = 1; i + 1 < pts.size(); ++i) {
      const Point& p = pts[i];
      const Point& q = pts[i + 1];
      const double t = (q.y - last.y) == 0 ? 0 : (p.y - last.y) / (q.y - last.y);
      kept[i - 1] = std::abs(last.x + t * (q.x - last.x) - p.x) > 1.5;
      if (kept[i - 1]) last = p;
    }
    return trunks_.emplace(u, std::move(kept)).first->second;
  }

  const LayoutInput& in_;
  const int n_;
  std::vector<std::vector<int>> out_, in_edges_;
  std::vector<int> topo_;
  std::vector<int> rank_;
  std::vector<int> chain_start_;  // per real node, its first bend point (-1: none)
  std::vector<Vertex> vs_;
  std::vector<std::vector<int>> layers_;
  std::vector<double> pos_;
  std::map<int, std::vector<bool>> trunks_;  // per source with long edges: its kept bend points
};

}  // namespace

std::vector<Point> bezier_through(const std::vector<Point>& points) {
  std::vector<Point> out;
  if (points.empty()) return out;
  out.push_back(points[0]);
  for (std::size_t i = 1; i < points.size(); ++i) {
    const Point& a = points[i - 1];
    const Point& b = points[i];
    const double dy = (b.y - a.y) / 2;
    out.push_back({a.x, a.y + dy});
    out.push_back({b.x, b.y - dy});
    out.push_back(b);
  }
  return out;
}

Layout layered_layout(const LayoutInput& input) {
  if (input.width.empty()) return Layout{{}, {}, true, 2 * kMargin, 2 * kMargin};
  return LayeredLayout(input).run();
}

}  // namespace kiln::view
