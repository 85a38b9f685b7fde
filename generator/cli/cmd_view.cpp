// kiln view: an interactive page of a graph (and, with --rewritten, of the graph the rewrite
// pipeline makes of it, side by side with what each pass replaced). One self-contained HTML
// file; generator/print/view_model.cpp builds its data, templates/view/ holds the page.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "compile/compile.h"
#include "io/graph_load.h"
#include "ir/error.h"
#include "print/view_html.h"
#include "print/view_model.h"
#include "rewrite/pipeline.h"

namespace kiln::cli {

void add_view_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "view", "Write an interactive HTML page of a graph (pan, zoom, search, collapse, types on hover)");
  struct Args {
    std::string file;
    std::string out;
    bool rewritten = false;
    std::string layout = "auto";
    double timeout = 10;
    std::vector<std::string> exclude;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("FILE", args->file, "graph file (.json)")->required();
  cmd->add_option("-o,--output", args->out, "the page to write (default: FILE's name with .html, here)");
  cmd->add_flag("--rewritten", args->rewritten,
                "show the graph after the default rewrite pipeline beside the graph as written, with what each "
                "pass replaced");
  cmd->add_option("--exclude", args->exclude, "with --rewritten: never run the rewrites bearing these tags");
  cmd->add_option("--layout", args->layout,
                  "auto (Graphviz's dot when installed, else kiln's layered layout), dot, or kiln")
      ->check(CLI::IsMember({"auto", "dot", "kiln"}));
  cmd->add_option("--layout-timeout", args->timeout, "seconds dot may take per graph before kiln lays it out itself")
      ->check(CLI::PositiveNumber);
  cmd->callback([&exit_code, args] {
    exit_code = run_guarded([&] {
      const std::string text = read_graph_file(args->file);
      FunctionGraph fg = load_graph_text(text, graph_file_folder(args->file), args->file);
      view::ViewOptions options;
      options.title = fg.name();
      options.source = args->file;
      options.layout = args->layout == "dot"    ? view::LayoutEngine::Graphviz
                       : args->layout == "kiln" ? view::LayoutEngine::Kiln
                                                : view::LayoutEngine::Auto;
      options.graphviz_timeout = args->timeout;
      options.variable_pointers = view::variable_pointers(text);
      view::ViewGraphs graphs;
      graphs.written = &fg;
      std::optional<FunctionGraph> rewritten;
      PipelineReport report;
      if (args->rewritten) {
        rewritten = fg.clone();
        CompileOptions co;  // the default backend's pipeline, as kiln compile runs it
        co.rewrites.exclude = args->exclude;
        co.rewrites.record_replacements = true;
        report = rewrite_for_backend(*rewritten, co);
        graphs.rewritten = &*rewritten;
        graphs.report = &report;
      } else if (!args->exclude.empty()) {
        throw UsageError("--exclude selects rewrites: use it with --rewritten");
      }
      std::string note;
      const std::string html = view::view_html(view::view_model(graphs, options, note));
      std::string out = args->out;
      if (out.empty()) out = std::filesystem::path(args->file).stem().string() + ".html";
      std::ofstream f(out, std::ios::binary | std::ios::trunc);
      f << html;
      f.close();
      if (!f) {
        std::cerr << "kiln: error: cannot write " << out << "\n";
        return exit_code::kIoError;
      }
      std::cout << "wrote " << out << ": " << fg.num_nodes() << " nodes"
                << (rewritten ? " (" + std::to_string(rewritten->num_nodes()) + " after rewrites)" : std::string())
                << ", " << (html.size() + 1023) / 1024 << " KiB, layout: " << note << "\n";
      return exit_code::kOk;
    });
  });
}

}  // namespace kiln::cli
