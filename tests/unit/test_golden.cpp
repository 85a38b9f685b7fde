// Golden generated sources ("process replay", as tinygrad's refactors are checked): the
// sources kiln generates for a fixed set of graphs (tests/golden/cases.txt) must match the
// files checked in under tests/golden/ byte for byte, so a refactor proves it changed no
// generated code, and a change that does shows its diff. scripts/update-golden rewrites them
// (KILN_UPDATE_GOLDEN=1).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "../backend/plain_backend.h"
#include "compile/compile.h"
#include "driver/emit_files.h"
#include "driver/process.h"
#include "grad/grad.h"
#include "io/graph_load.h"
#include "ir/error.h"

using namespace kiln;
namespace fs = std::filesystem;

namespace {

const fs::path kRoot = KILN_SOURCE_DIR;
const fs::path kGoldenDir = kRoot / "tests" / "golden";
const fs::path kActualDir = KILN_GOLDEN_ACTUAL_DIR;

struct GoldenCase {
  std::string name;
  std::string graph;                 ///< relative to the source root
  std::vector<std::string> options;  ///< grad=..., jacobian=..., no-rewrite, backend=...
};

std::vector<GoldenCase> read_cases() {
  std::ifstream in(kGoldenDir / "cases.txt");
  REQUIRE_MESSAGE(in, "cannot read tests/golden/cases.txt");
  std::vector<GoldenCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    GoldenCase c;
    if (!(words >> c.name) || c.name[0] == '#') continue;
    const bool has_graph = static_cast<bool>(words >> c.graph);
    REQUIRE_MESSAGE(has_graph, "cases.txt: no graph for " << c.name);
    for (std::string o; words >> o;) c.options.push_back(o);
    cases.push_back(c);
  }
  return cases;
}

// "COST:W1,W2" -> the variable names.
std::pair<std::string, std::vector<std::string>> split_spec(const std::string& spec) {
  const auto colon = spec.find(':');
  REQUIRE_MESSAGE(colon != std::string::npos, "expected COST:WRT,... in " << spec);
  std::vector<std::string> wrt;
  std::istringstream list(spec.substr(colon + 1));
  for (std::string w; std::getline(list, w, ',');) wrt.push_back(w);
  return {spec.substr(0, colon), wrt};
}

Var named(const FunctionGraph& fg, const std::string& name) {
  for (Variable* v : fg.variables())
    if (v->name() == name || v->file_id() == name) return fg.handle(v);
  FAIL("no variable " << name << " in graph " << fg.name());
  return nullptr;
}

// The graph a case compiles: the file, plus the derivatives its options ask for.
FunctionGraph case_graph(const GoldenCase& c) {
  FunctionGraph fg = load_graph_file((kRoot / c.graph).string());
  VarList outputs = fg.outputs();
  std::vector<std::string> names = fg.output_names();
  for (const auto& o : c.options) {
    if (o.rfind("grad=", 0) == 0) {
      auto [cost, wrt] = split_spec(o.substr(5));
      VarList w;
      for (const auto& n : wrt) w.push_back(named(fg, n));
      VarList g = grad(named(fg, cost), w);
      for (std::size_t i = 0; i < g.size(); ++i) {
        outputs.push_back(g[i]);
        names.push_back("grad_" + wrt[i]);
      }
    } else if (o.rfind("jacobian=", 0) == 0) {
      auto [expr, wrt] = split_spec(o.substr(9));
      outputs.push_back(jacobian(named(fg, expr), named(fg, wrt.at(0))));
      names.push_back("jacobian");
    } else {
      REQUIRE_MESSAGE((o == "no-rewrite" || o.rfind("backend=", 0) == 0),
                      "unknown option " << o << " of golden case " << c.name);
    }
  }
  if (outputs.size() == fg.outputs().size()) return fg;
  FunctionGraph out(fg.inputs(), outputs, fg.name());
  out.set_output_names(names);
  return out;
}

bool has_option(const GoldenCase& c, const std::string& option) {
  return std::find(c.options.begin(), c.options.end(), option) != c.options.end();
}

// File name -> bytes, as the case generates them now.
std::vector<std::pair<std::string, std::string>> generated_files(const GoldenCase& c) {
  CompileOptions options;
  options.name = c.name;
  options.rewrite = !has_option(c, "no-rewrite");
  for (const auto& o : c.options)
    if (o.rfind("backend=", 0) == 0) options.backend = o.substr(8);
  const GeneratedLibrary lib = emit(case_graph(c), options).sources;
  return {{c.name + ".h", lib.header},
          {lib.source_file, lib.source},
          {c.name + "_main.cpp", lib.main_program},
          {c.name + "_data.S", data_assembly(lib, "")}};
}

std::string read_text(const fs::path& path) {
  std::string text;
  if (!read_file(path.string(), text)) return "<missing>";
  return text;
}

// `diff -u` of the checked-in file and the generated one, at most `max_lines` lines.
std::string unified_diff(const fs::path& golden, const fs::path& actual, std::size_t max_lines = 80) {
  ProcessResult r = run_process({"diff", "-u", golden.string(), actual.string()});
  if (r.exit_code < 0) return "(no diff program; compare the files yourself)";
  std::istringstream in(r.output);
  std::string out, line;
  std::size_t n = 0;
  while (std::getline(in, line) && n++ < max_lines) out += line + "\n";
  if (std::getline(in, line)) out += "[... more lines: diff -u " + golden.string() + " " + actual.string() + "]\n";
  return out;
}

}  // namespace

TEST_CASE("golden: generated sources match tests/golden byte for byte") {
  const char* update_env = std::getenv("KILN_UPDATE_GOLDEN");
  const bool update = update_env && std::string(update_env) == "1";
  testing::register_plain_backend();  // a case may use the tests' second backend
  std::vector<GoldenCase> cases = read_cases();
  CHECK(cases.size() >= 30);
  std::set<std::string> listed;
  int changed = 0;
  for (const GoldenCase& c : cases) {
    INFO("golden case " << c.name << " (" << c.graph << ")");
    CHECK_MESSAGE(listed.insert(c.name).second, "case listed twice");
    std::vector<std::pair<std::string, std::string>> files;
    try {
      files = generated_files(c);
    } catch (const std::exception& e) {
      FAIL_CHECK("cannot generate: " << e.what());
      continue;
    }
    for (const auto& [file, text] : files) {
      const fs::path golden = kGoldenDir / c.name / file;
      if (read_text(golden) == text) continue;
      ++changed;
      if (update) {
        fs::create_directories(golden.parent_path());
        write_file_if_changed(golden.string(), text, false);
        MESSAGE("updated tests/golden/" << c.name << "/" << file);
        continue;
      }
      const fs::path actual = kActualDir / c.name / file;
      fs::create_directories(actual.parent_path());
      write_file_if_changed(actual.string(), text, false);
      FAIL_CHECK("tests/golden/" << c.name << "/" << file << " differs from what kiln generates now "
                                 << "(regenerate with scripts/update-golden and say why in the commit):\n"
                                 << unified_diff(golden, actual));
    }
  }
  // Folders of cases no longer listed.
  for (const auto& entry : fs::directory_iterator(kGoldenDir)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || name == "graphs" || listed.count(name)) continue;
    if (update) {
      fs::remove_all(entry.path());
      MESSAGE("removed tests/golden/" << name);
    } else {
      FAIL_CHECK("tests/golden/" << name << " belongs to no case in cases.txt (scripts/update-golden removes it)");
    }
  }
  if (update) MESSAGE(changed << " golden file(s) rewritten");
}
