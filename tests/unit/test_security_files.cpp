// Files a graph names are read through one gate (io/safe_file.h) before anything else reads
// them (issue 14, finding 4): `kiln compile`'s direct-mode cache read {"npy": ...} files before
// the loader checked them, so a link to /dev/zero read until memory ran out, a FIFO hung the
// compile and a folder gave an internal error.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "driver/process.h"
#include "io/graph_load.h"
#include "io/safe_file.h"
#include "ir/error.h"
#include "kiln/runtime/npy.hpp"

using namespace kiln;
namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

// A folder with a graph whose constant reads `npy`, plus regular.npy and the hostile files.
struct NpyGraphFolder {
  fs::path dir;
  explicit NpyGraphFolder(const std::string& name) : dir(fs::path(KILN_TEST_CACHE_DIR) / ("files-" + name)) {
    fs::remove_all(dir);
    fs::create_directories(dir / "folder.npy");
    Array a = Array::zeros(DType::Float64, {3});
    npy::save((dir / "regular.npy").string(), a);
    fs::create_symlink("regular.npy", dir / "inside_link.npy");
    fs::create_symlink("/dev/zero", dir / "zero.npy");
    REQUIRE(::mkfifo((dir / "fifo.npy").c_str(), 0600) == 0);
  }
  ~NpyGraphFolder() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  // A graph y = x + c with c = {"npy": npy}; returns its path.
  std::string graph(const std::string& npy) const {
    const Json vec = {{"dtype", "float64"}, {"shape", {3}}};
    const fs::path path = dir / ("g_" + fs::path(npy).stem().string() + ".json");
    std::ofstream(path) << Json{{"format", "kiln-graph"},
                                {"version", 1},
                                {"name", "reads_npy"},
                                {"variables", Json::array({{{"id", "x"}, {"type", vec}},
                                                           {{"id", "c"}, {"type", vec}, {"value", {{"npy", npy}}}},
                                                           {{"id", "y"}, {"type", vec}}})},
                                {"nodes", Json::array({{{"op", "add"}, {"inputs", {"x", "c"}}, {"outputs", {"y"}}}})},
                                {"inputs", {"x"}},
                                {"outputs", {"y"}}}
                              .dump();
    return path.string();
  }
};

// Runs kiln with a time limit (a FIFO must not hang it).
ProcessResult run_kiln(std::vector<std::string> args) {
  args.insert(args.begin(), {"timeout", "120", KILN_BINARY});
  return run_process(args);
}

}  // namespace

TEST_CASE("security: files named by a graph are read only when regular and inside its folder") {
  NpyGraphFolder f("gate");
  const std::string base = f.dir.string();
  CHECK(read_graph_relative_file(base, "regular.npy", "/p").size() > 0);
  CHECK(read_graph_relative_file(base, "inside_link.npy", "/p") == read_graph_relative_file(base, "regular.npy", "/p"));
  for (const char* bad : {"zero.npy", "fifo.npy", "folder.npy", "missing.npy", "../files-gate/regular.npy/..",
                          "/etc/passwd", "", "../../../../../../etc/passwd"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(read_graph_relative_file(base, bad, "/variables/1/value/npy"),
                         doctest::Contains("/variables/1/value/npy"), UserError);
  }
  CHECK_THROWS_WITH_AS(read_graph_relative_file(base, "fifo.npy", "/w"), doctest::Contains("a FIFO"), UserError);
  CHECK_THROWS_WITH_AS(read_graph_relative_file(base, "folder.npy", "/w"), doctest::Contains("a folder"), UserError);
  CHECK_THROWS_WITH_AS(read_graph_relative_file(base, "zero.npy", "/w"), doctest::Contains("outside"), UserError);
  CHECK_THROWS_WITH_AS(read_graph_relative_file(base, "regular.npy", "/w", 16), doctest::Contains("too large"), UserError);
  // A graph file the user names may be a pipe, within a limit; never a folder.
  CHECK_THROWS_WITH_AS(read_named_file("/dev/zero", 1 << 20), doctest::Contains("more than"), UserError);
  CHECK_THROWS_WITH_AS(read_named_file((f.dir / "folder.npy").string()), doctest::Contains("folder"), UserError);
  CHECK(read_named_file((f.dir / "regular.npy").string()) == read_graph_relative_file(base, "regular.npy", "/p"));
}

TEST_CASE("security: kiln compile refuses npy links to devices, FIFOs and folders before its cache (compiled)") {
  NpyGraphFolder f("compile");
  const std::string cache = (f.dir / "cache").string(), out = (f.dir / "out").string();
  for (const char* npy : {"zero.npy", "fifo.npy", "folder.npy"}) {
    CAPTURE(npy);
    const std::string graph = f.graph(npy);
    for (std::vector<std::string> cmd : {std::vector<std::string>{"compile", graph, "-o", out, "--cache-dir", cache},
                                         {"compile", graph, "-o", out, "--no-cache"},
                                         {"emit", graph, "-o", out},
                                         {"validate", graph}}) {
      CAPTURE(cmd[0]);
      ProcessResult r = run_kiln(cmd);
      CHECK(r.exit_code == 2);  // a refused graph: not 124 (hung), 70 (internal) or killed
      CHECK(r.output.find("/variables/1/value/npy") != std::string::npos);
    }
  }
  // A link inside the folder to a regular file is fine, and so is the direct-mode hit after it.
  const std::string graph = f.graph("inside_link.npy");
  for (int round = 0; round < 2; ++round) {
    ProcessResult r = run_kiln({"compile", graph, "-o", out, "--cache-dir", cache});
    INFO(r.output);
    CHECK(r.exit_code == 0);
  }
  // A graph file that is a folder is refused.
  ProcessResult r = run_kiln({"validate", (f.dir / "folder.npy").string()});
  CHECK(r.exit_code == 4);  // an I/O error (README's exit codes)
  CHECK(r.output.find("folder") != std::string::npos);
}
