#include "cli/rewrite_options.h"

#include <algorithm>
#include <iostream>

#include "ir/error.h"
#include "print/dprint.h"
#include "rewrite/inline_op_from_graph.h"

namespace kiln::cli {

void add_rewrite_options(CLI::App* cmd, RewriteArgs& args) {
  std::string tags;
  for (const auto& t : known_rewrite_tags()) tags += (tags.empty() ? "" : ", ") + t;
  std::string passes;
  for (const auto& p : pipeline_pass_names()) passes += (passes.empty() ? "" : ", ") + p;
  cmd->add_option("--include", args.include, "run only the rewrites bearing these tags (" + tags + ")");
  cmd->add_option("--exclude", args.exclude, "never run the rewrites bearing these tags");
  cmd->add_option("--dump-after", args.dump_after, "print the graph (dprint) to stderr after a pass (" + passes + ")");
  cmd->add_flag("--no-rewrite", args.no_rewrite, "compile the graph exactly as written");
}

PipelineReport apply_rewrites(FunctionGraph& fg, const RewriteArgs& args) {
  if (args.no_rewrite) {
    // "Exactly as written" still means OpFromGraph nodes inlined: code generation has none.
    PipelineReport report;
    report.passes.emplace_back("inline", inline_op_from_graphs(fg));
    return report;
  }
  auto known = known_rewrite_tags();
  for (const auto* list : {&args.include, &args.exclude})
    for (const auto& t : *list)
      if (std::find(known.begin(), known.end(), t) == known.end())
        throw UserError("unknown rewrite tag \"" + t + "\"");
  if (!args.include.empty()) return rewrite_graph(fg, args.include, args.exclude);
  PipelineOptions o;
  o.exclude = args.exclude;
  o.dump_after = args.dump_after;
  o.dump = [](const std::string& pass, const FunctionGraph& g) {
    DprintOptions d;
    d.print_destroy_map = true;
    d.print_view_map = true;
    std::cerr << "--- after " << pass << " ---\n" << dprint(g, d);
  };
  return run_pipeline(fg, o);
}

}  // namespace kiln::cli
