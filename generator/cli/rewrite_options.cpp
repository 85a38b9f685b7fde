#include "cli/rewrite_options.h"

#include "codegen/backend.h"

namespace kiln::cli {

void add_rewrite_options(CLI::App* cmd, CompileOptions& options) {
  std::string tags;
  for (const auto& t : known_rewrite_tags()) tags += (tags.empty() ? "" : ", ") + t;
  std::string passes;
  for (const auto& p : pipeline_pass_names()) passes += (passes.empty() ? "" : ", ") + p;
  cmd->add_option("--include", options.rewrites.include, "run only the rewrites bearing these tags (" + tags + ")");
  cmd->add_option("--exclude", options.rewrites.exclude, "never run the rewrites bearing these tags");
  cmd->add_option("--dump-after", options.rewrites.dump_after,
                  "print the graph (dprint) to stderr after a pass (" + passes + ")");
  cmd->add_flag("--no-rewrite", [&options](std::int64_t) { options.rewrite = false; },
                "compile the graph exactly as written");
}

void add_backend_option(CLI::App* cmd, CompileOptions& options) {
  std::string names;
  for (const std::string& b : backend_names()) names += (names.empty() ? "" : ", ") + b;
  cmd->add_option("--backend", options.backend,
                  "the backend that generates the code: " + names + " (default cpp; see kiln backends)");
}

}  // namespace kiln::cli
