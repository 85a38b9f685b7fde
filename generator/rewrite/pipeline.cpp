#include "rewrite/pipeline.h"

#include <algorithm>
#include <set>

#include "ir/error.h"
#include "rewrite/database.h"
#include "rewrite/merge.h"

namespace kiln {

namespace {

using Selection = std::pair<std::vector<std::string>, std::vector<std::string>>;  // include, exclude

struct Pass {
  std::string name;
  std::vector<std::string> tags;  ///< the tags that select the pass as a whole
  std::function<RewriteStats(FunctionGraph&, const PipelineOptions&)> run;
};

// An equilibrium pass over the local rewrites tagged `tag`, then a merge.
Pass equilibrium_pass(const std::string& name) {
  return Pass{name, {name}, [name](FunctionGraph& fg, const PipelineOptions& o) {
                RewriteStats stats = apply_until_equilibrium(fg, select_rewrites(name, o.include, o.exclude), o.verify);
                stats.merge(merge_duplicates(fg));
                return stats;
              }};
}

// The default pipeline, in order.
const std::vector<Pass>& passes() {
  static const std::vector<Pass> list = {
      Pass{"merge", {"merge"}, [](FunctionGraph& fg, const PipelineOptions&) { return merge_duplicates(fg); }},
      equilibrium_pass("canonicalize"),
      equilibrium_pass("stabilize"),
      equilibrium_pass("specialize"),
  };
  return list;
}

bool selected(const Pass& p, const PipelineOptions& o) {
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
  for (const auto& pass : passes()) {
    if (!selected(pass, options)) continue;
    RewriteStats stats = pass.run(fg, options);
    if (options.verify) fg.verify();
    report.passes.emplace_back(pass.name, stats);
    if (options.dump && std::find(options.dump_after.begin(), options.dump_after.end(), pass.name) != options.dump_after.end())
      options.dump(pass.name, fg);
  }
  return report;
}

PipelineReport rewrite_graph(FunctionGraph& fg, const std::vector<std::string>& include,
                             const std::vector<std::string>& exclude) {
  PipelineReport report;
  PipelineOptions o;
  o.include = include;
  o.exclude = exclude;
  auto wants = [&](const std::string& tag) { return std::find(include.begin(), include.end(), tag) != include.end(); };
  if (wants("merge")) report.passes.emplace_back("merge", merge_duplicates(fg));
  RewriteStats stats = apply_until_equilibrium(fg, select_rewrites("", include, exclude));
  report.passes.emplace_back("local rewrites", stats);
  return report;
}

}  // namespace kiln
