#include "rewrite/pipeline.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "ir/error.h"
#include "rewrite/blas.h"
#include "rewrite/database.h"
#include "rewrite/fusion.h"
#include "rewrite/inline_op_from_graph.h"
#include "rewrite/scan_inner.h"
#include "rewrite/inplace.h"
#include "rewrite/merge.h"

namespace kiln {

namespace {

using Selection = std::pair<std::vector<std::string>, std::vector<std::string>>;  // include, exclude

struct Pass {
  std::string name;
  std::vector<std::string> tags;  ///< the tags that select the pass as a whole
  std::function<RewriteStats(FunctionGraph&, const PipelineOptions&)> run;
  std::string needs = {};  ///< the capability the ops it introduces need (PipelineOptions::capabilities)
};

bool capable(const std::optional<std::vector<std::string>>& capabilities, const std::string& needs) {
  return needs.empty() || !capabilities || std::find(capabilities->begin(), capabilities->end(), needs) != capabilities->end();
}

// An equilibrium pass over the local rewrites tagged `tag`, then a merge.
Pass equilibrium_pass(const std::string& name) {
  return Pass{name, {name}, [name](FunctionGraph& fg, const PipelineOptions& o) {
                RewriteStats stats = apply_until_equilibrium(fg, select_rewrites(name, o.include, o.exclude), o.verify);
                stats.merge(merge_duplicates(fg));
                return stats;
              }};
}

// The BLAS rules with the canonicalize ones (which clean up the DimShuffles they leave).
RewriteStats blas_pass(FunctionGraph& fg, const PipelineOptions& o) {
  static const std::vector<NodeRewrite> rules = blas_rules();
  std::vector<const NodeRewrite*> selected = select_rewrites("canonicalize", o.include, o.exclude);
  for (const auto& r : rules) {
    bool excluded = false;
    for (const auto& t : o.exclude) excluded = excluded || r.has_tag(t) || r.name == t;
    if (!excluded) selected.push_back(&r);
  }
  RewriteStats stats = apply_until_equilibrium(fg, selected, o.verify);
  stats.merge(merge_duplicates(fg));
  return stats;
}

RewriteStats fusion_pass(FunctionGraph& fg, const PipelineOptions&) {
  RewriteStats stats = fuse_elemwise(fg);
  stats.merge(fuse_reductions(fg));
  stats.merge(merge_duplicates(fg));
  return stats;
}

// The default pipeline, in order. OpFromGraph nodes are inlined first, so that every rewrite
// sees their inner ops. BLAS runs before fusion: its rules look for the plain add/mul nodes
// around a dot, which fusion would turn into Composites.
const std::vector<Pass>& passes() {
  static const std::vector<Pass> list = {
      Pass{"inline", {"inline"}, [](FunctionGraph& fg, const PipelineOptions&) { return inline_op_from_graphs(fg); }},
      Pass{"merge", {"merge"}, [](FunctionGraph& fg, const PipelineOptions&) { return merge_duplicates(fg); }},
      equilibrium_pass("canonicalize"),
      equilibrium_pass("stabilize"),
      equilibrium_pass("specialize"),
      Pass{"blas", {"blas"}, blas_pass, "blas"},
      Pass{"fusion", {"fusion"}, fusion_pass},
      Pass{"inplace", {"inplace"}, [](FunctionGraph& fg, const PipelineOptions&) { return make_inplace(fg); }},
  };
  return list;
}

// Records every replacement made while it is alive into `report`, under the pass name it
// currently holds.
class ReplacementRecorder {
 public:
  ReplacementRecorder(FunctionGraph& fg, PipelineReport& report, bool enabled) : fg_(fg), enabled_(enabled) {
    if (!enabled) return;
    fg.set_change_listener([this, &report](const GraphChange& change) {
      ReplacementRecord r{pass, change.reason, {}, {}};
      for (const ApplyPtr& n : change.removed) r.removed.push_back({n->op().str(), n->origins()});
      for (const Apply* n : change.added) r.added.push_back({n->op().str(), n->origins()});
      report.replacements.push_back(std::move(r));
    });
  }
  ~ReplacementRecorder() {
    if (enabled_) fg_.set_change_listener({});
  }
  ReplacementRecorder(const ReplacementRecorder&) = delete;
  ReplacementRecorder& operator=(const ReplacementRecorder&) = delete;

  std::string pass;

 private:
  FunctionGraph& fg_;
  bool enabled_;
};

bool selected(const Pass& p, const PipelineOptions& o) {
  if (p.name == "inline") return true;  // code generation has no OpFromGraph: never skipped
  if (!capable(o.capabilities, p.needs)) return false;
  for (const auto& t : o.exclude)
    if (p.name == t || std::find(p.tags.begin(), p.tags.end(), t) != p.tags.end()) return false;
  return true;
}

}  // namespace

std::vector<std::string> pipeline_pass_names() {
  std::vector<std::string> names;
  for (const auto& p : passes()) names.push_back(p.name);
  return names;
}

std::vector<std::string> known_rewrite_tags() {
  std::set<std::string> tags;
  for (const auto& p : passes()) tags.insert(p.tags.begin(), p.tags.end());
  for (const auto& r : all_node_rewrites()) tags.insert(r.tags.begin(), r.tags.end());
  for (const auto& r : blas_rules()) tags.insert(r.tags.begin(), r.tags.end());
  return {tags.begin(), tags.end()};
}

PipelineReport run_pipeline(FunctionGraph& fg, const PipelineOptions& options) {
  for (const auto& d : options.dump_after) {
    auto names = pipeline_pass_names();
    if (std::find(names.begin(), names.end(), d) == names.end()) {
      std::string all;
      for (const auto& n : names) all += " " + n;
      throw UserError("--dump-after: no pass named \"" + d + "\" (passes:" + all + ")");
    }
  }
  PipelineReport report;
  ReplacementRecorder recorder(fg, report, options.record_replacements);
  for (const auto& pass : passes()) {
    if (!selected(pass, options)) continue;
    recorder.pass = pass.name;
    auto start = std::chrono::steady_clock::now();
    RewriteStats stats = pass.run(fg, options);
    report.seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (options.verify) fg.verify();
    report.passes.emplace_back(pass.name, stats);
    if (options.dump && std::find(options.dump_after.begin(), options.dump_after.end(), pass.name) != options.dump_after.end())
      options.dump(pass.name, fg);
  }
  // Scan step functions: the same pipeline (selection, capabilities, checks), without dumps.
  PipelineOptions inner = options;
  inner.dump_after.clear();
  inner.record_replacements = false;
  RewriteStats stats = rewrite_scan_inner_graphs(fg, [&](FunctionGraph& g) { run_pipeline(g, inner); });
  if (stats.total() > 0) report.passes.emplace_back("scan inner graphs", stats);
  return report;
}

PipelineReport rewrite_graph(FunctionGraph& fg, const std::vector<std::string>& include,
                             const std::vector<std::string>& exclude,
                             const std::optional<std::vector<std::string>>& capabilities) {
  PipelineReport report;
  PipelineOptions o;
  o.include = include;
  o.exclude = exclude;
  auto wants = [&](const std::string& tag) { return std::find(include.begin(), include.end(), tag) != include.end(); };
  report.passes.emplace_back("inline", inline_op_from_graphs(fg));
  if (wants("merge")) report.passes.emplace_back("merge", merge_duplicates(fg));
  std::vector<const NodeRewrite*> rules = select_rewrites("", include, exclude);
  static const std::vector<NodeRewrite> blas = blas_rules();
  if (wants("blas") && capable(capabilities, "blas"))
    for (const auto& r : blas) rules.push_back(&r);
  RewriteStats stats = apply_until_equilibrium(fg, rules);
  report.passes.emplace_back("local rewrites", stats);
  // Canonical forms expose new duplicates (a + b and b + a): merge once more.
  if (wants("merge")) report.passes.emplace_back("merge", merge_duplicates(fg));
  if (wants("fusion")) report.passes.emplace_back("fusion", fusion_pass(fg, o));
  if (wants("inplace")) report.passes.emplace_back("inplace", make_inplace(fg));
  return report;
}

}  // namespace kiln
