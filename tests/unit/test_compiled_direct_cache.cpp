// `kiln compile`'s direct mode (driver/direct_cache.h): a second run of an unchanged command
// copies the build-cache entry without loading the graph or generating code; any change to the
// graph, a .npy constant it names or an option misses.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "driver/direct_cache.h"
#include "driver/process.h"
#include "kiln/runtime/npy.hpp"

using namespace kiln;
namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void save_scale(const fs::path& path, double a, double b, double c) {
  Array scale = Array::zeros(DType::Float64, {3});
  scale.data<double>()[0] = a;
  scale.data<double>()[1] = b;
  scale.data<double>()[2] = c;
  npy::save(path.string(), scale);
}

}  // namespace

TEST_CASE("compiled: kiln compile's direct mode serves an unchanged command from the cache without generating code") {
  const fs::path work = fs::path(KILN_TEST_CACHE_DIR) / "direct_mode";
  fs::remove_all(work);
  fs::create_directories(work / "graph");
  const fs::path cache = work / "cache", out = work / "out", graph = work / "graph" / "scaled.json";
  std::ofstream(graph) << R"({"format": "kiln-graph", "version": 1, "name": "scaled",
    "variables": [
      {"id": "x", "name": "x", "type": {"dtype": "float64", "shape": [3]}},
      {"id": "scale", "type": {"dtype": "float64", "shape": [3]}, "value": {"npy": "scale.npy"}},
      {"id": "y", "name": "y", "type": {"dtype": "float64", "shape": [3]}}],
    "nodes": [{"op": "Elemwise", "props": {"scalar_op": "mul"}, "inputs": ["x", "scale"], "outputs": ["y"]}],
    "inputs": ["x"], "outputs": ["y"]})";
  save_scale(work / "graph" / "scale.npy", 2.0, 3.0, 4.0);
  auto compile = [&](std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {KILN_BINARY, "compile", graph.string(), "-o", out.string(), "--cache-dir",
                                     cache.string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    ProcessResult r = run_process(argv);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    return r.output;
  };
  auto cached = [](const std::string& output) { return output.find("(cached)") != std::string::npos; };

  CHECK_FALSE(cached(compile()));
  const std::string source = read_text(out / "scaled.cpp");
  CHECK(source.find("0x1p+1, 0x1.8p+1, 0x1p+2") != std::string::npos);  // the constant 2, 3, 4, inline
  REQUIRE(fs::exists(cache / "direct"));

  // Mark the build-cache entry's source: only a direct hit copies it instead of writing the
  // source it generates.
  fs::path entry;
  for (const auto& e : fs::recursive_directory_iterator(cache))
    if (e.path().filename() == "scaled.cpp" && e.path().parent_path().parent_path().parent_path() == cache)
      entry = e.path().parent_path();
  REQUIRE_FALSE(entry.empty());
  std::ofstream(entry / "scaled.cpp", std::ios::app) << "// marked\n";
  const auto before = fs::last_write_time(out / "libscaled.so");
  CHECK(cached(compile()));
  CHECK(read_text(out / "scaled.cpp") == source + "// marked\n");
  CHECK(fs::last_write_time(out / "libscaled.so") >= before);  // touched: build systems see it fresh

  // An entry that lost a file is not served.
  BuildOptions options;
  options.cache_dir = cache.string();
  const std::string text = read_text(graph);
  // The one record so far is named by its key.
  DirectCacheKey key;
  for (const auto& e : fs::recursive_directory_iterator(cache / "direct"))
    if (e.is_regular_file()) key.key = e.path().filename().string();
  REQUIRE(key.key.size() == 64);
  auto hit = direct_cache_lookup(key, options, false);
  REQUIRE(hit.has_value());
  CHECK(hit->name == "scaled");
  CHECK(fs::path(hit->entry_dir) == entry);
  CHECK_FALSE(direct_cache_lookup(key, options, /*program=*/true).has_value());
  fs::rename(entry / "scaled.h", entry / "scaled.h.away");
  CHECK_FALSE(direct_cache_lookup(key, options, false).has_value());
  fs::rename(entry / "scaled.h.away", entry / "scaled.h");
  // A .npy path outside the graph's folder is never read for a key.
  const std::string escaping = text.substr(0, text.find("scale.npy")) + "../scale.npy" +
                               text.substr(text.find("scale.npy") + 9);
  CHECK(direct_cache_key(escaping, graph.parent_path().string(), options, "").key.empty());

  // An option outside the build options is part of the key.
  // No rewrite of this graph carries the tag: the same source, a build-cache hit, but a
  // direct-mode miss, so the output is the generated source.
  CHECK(cached(compile({"--exclude", "blas"})));
  CHECK(read_text(out / "scaled.cpp") == source);

  // --stats always loads and rewrites: it prints what they did.
  const std::string output = compile({"--stats"});
  CHECK(output.find("kernels (computing nodes)") != std::string::npos);
  CHECK(read_text(out / "scaled.cpp") == source);

  // The bytes of a .npy constant are part of the key.
  save_scale(work / "graph" / "scale.npy", 2.0, 3.0, 5.0);
  CHECK_FALSE(cached(compile()));
  CHECK(read_text(out / "scaled.cpp").find("0x1p+1, 0x1.8p+1, 0x1.4p+2") != std::string::npos);
}
