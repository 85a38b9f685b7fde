// Deployment pieces that need no CMake: large constants as NAME_data.S (.incbin) with escaped
// paths, the depfile `kiln emit --depfile` writes, and the files a graph depends on.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "compile/compile.h"
#include "../unit/compiled.h"
#include "driver/emit_files.h"
#include "io/graph_load.h"

using namespace kiln;

namespace {

// y = table[i] for a float64 table of `n` elements, table[k] = k.
FunctionGraph table_graph(int n, const std::string& name = "deploy_table") {
  std::string values;
  for (int k = 0; k < n; ++k) values += (k ? "," : "") + std::to_string(k);
  std::string text = R"({"format": "kiln-graph", "version": 1, "name": ")" + name + R"(",
    "variables": [
      {"id": "i", "name": "i", "type": {"dtype": "int64", "shape": []}},
      {"id": "table", "type": {"dtype": "float64", "shape": [)" + std::to_string(n) + R"(]}, "value": [)" + values + R"(]},
      {"id": "y", "name": "y", "type": {"dtype": "float64", "shape": []}}],
    "nodes": [{"op": "Subtensor", "props": {"idx_list": [{"index": "input"}]}, "inputs": ["table", "i"], "outputs": ["y"]}],
    "inputs": ["i"], "outputs": ["y"]})";
  return load_graph_text(text, "");
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The sources of a graph as given (no rewriting), under `name`.
GeneratedLibrary sources_of(FunctionGraph fg, const std::string& name = "") {
  CompileOptions options;
  options.rewrite = false;
  options.name = name;
  return emit(std::move(fg), options).sources;
}

}  // namespace

TEST_CASE("deploy: small constants stay inline, large ones become prefixed, hidden blobs") {
  GeneratedLibrary small = sources_of(table_graph(16));
  CHECK(small.blobs.empty());
  GeneratedLibrary large = sources_of(table_graph(1024), "big_one");
  REQUIRE(large.blobs.size() == 1);
  const DataBlob& blob = large.blobs[0];
  CHECK(blob.symbol.rfind("big_one_", 0) == 0);
  CHECK(blob.file_name == blob.symbol + ".bin");
  CHECK(blob.data.nbytes() == 1024 * sizeof(double));
  CHECK(blob.data.data<double>()[1000] == 1000.0);
  CHECK(large.source.find("visibility(\"hidden\")") != std::string::npos);
  CHECK(large.source.find("1000, 1001") == std::string::npos);  // no initialiser list
  std::string s = data_assembly(large, "/data");
  CHECK(s.find(".hidden " + blob.symbol) != std::string::npos);
  CHECK(s.find(".incbin \"/data/" + blob.file_name + "\"") != std::string::npos);
  CHECK(s.find(blob.sha256) != std::string::npos);
}

TEST_CASE("deploy: the .incbin path is escaped for the preprocessor and the assembler") {
  GeneratedLibrary lib = sources_of(table_graph(1024), "esc");
  std::string s = data_assembly(lib, "/a \"b\"\\c\n#d'e?f");
  CHECK(s.find(".incbin \"/a \\042b\\042\\134c\\012\\043d\\047e\\077f/esc_") != std::string::npos);
  CHECK(s.find("\"b\"") == std::string::npos);
}

TEST_CASE("deploy: a depfile escapes spaces, '#' and '$', and refuses line breaks") {
  auto dir = std::filesystem::temp_directory_path() / "kiln-deploy-depfile";
  std::filesystem::create_directories(dir);
  write_depfile((dir / "x.d").string(), {"/o/a b.h", "/o/c.cpp"}, {"/g/graph#1.json", "/g/w$.npy"});
  CHECK(read_text(dir / "x.d") == "/o/a\\ b.h /o/c.cpp: \\\n  /g/graph\\#1.json \\\n  /g/w$$.npy\n");
  CHECK_THROWS_AS(write_depfile((dir / "y.d").string(), {"/o/a.h"}, {"/g/bad\nname"}), UserError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("deploy: a graph depends on its file and the .npy files its constants name") {
  std::string mlp = std::string(KILN_SOURCE_DIR) + "/samples/cmake-consumer/mlp.json";
  std::vector<std::string> files = graph_input_files(mlp);
  REQUIRE(files.size() == 5);
  CHECK(files[0] == std::filesystem::path(mlp).lexically_normal().string());
  CHECK(files[1].find("/samples/cmake-consumer/weights/W1.npy") != std::string::npos);
  CHECK(files[4].find("/weights/b2.npy") != std::string::npos);
}

TEST_CASE("deploy compiled: a large constant assembled from a folder with quotes and spaces") {
  // The driver assembles the .bin from its build folder under the cache: make that path hostile.
  CompileOptions options = testing::test_compile_options();
  options.build.cache_dir = (std::filesystem::path(KILN_TEST_CACHE_DIR) / "deploy \"q\" $x #y 'z' \\w").string();
  std::filesystem::remove_all(options.build.cache_dir);  // a cache hit would skip the assembler
  options.name = "deploy_blob";
  Artifacts compiled = compile(table_graph(2048), options);
  REQUIRE(compiled.sources.blobs.size() == 1);
  const BuildResult& built = compiled.build;
  Library so(built.library_path);
  const kiln_graph_info& info = so.graph("deploy_blob");
  for (std::int64_t i : {0, 7, 2047, -1}) {
    Array index = Array::empty(DType::Int64, {});
    index.data<std::int64_t>()[0] = i;
    testing::CallResult r = testing::call_compiled(info, {index});
    REQUIRE(r.status == KILN_OK);
    CHECK(r.outputs.at(0).data<double>()[0] == static_cast<double>(i < 0 ? 2048 + i : i));
  }
}
