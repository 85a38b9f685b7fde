// Strings from a graph never become code (issue 14, finding 1). Three levels: the escapers of
// codegen/c_names.h keep their outputs inside their places for any bytes; the injection the
// issue found (names closing the header's /** */ comment) stays inert; and a graph whose every
// name slot holds hostile strings generates, token for token, the code of a twin graph with
// plain names, and a library that exports exactly the eight entry points.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "codegen/c_names.h"
#include "compiled.h"
#include "cxx_tokens.h"
#include "driver/process.h"
#include "driver/sanitize.h"
#include "io/graph_load.h"

using namespace kiln;
using namespace kiln::testing;
namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

// A marker file that an injected system() call would create. Short: the header's comment kept
// only 40 characters of a name, so a longer payload failed to compile instead of running.
std::string marker_path() {
  char path[32];
  std::snprintf(path, sizeof path, "/tmp/k%05d", static_cast<int>(::getpid() % 100000));
  return path;
}

// Strings aimed at every way text could leave its place in C++ or assembler source.
std::vector<std::string> adversarial_strings() {
  const std::string marker = marker_path();
  std::vector<std::string> s = {
      "*/int system(const char*);/*",
      "*/int p=system(\"touch " + marker + "\");/*",
      "asm(R\"(.incbin \"/etc/passwd\")\")",
      ")\"; int q = system(\"touch " + marker + "\"); //",
      "R\"x(", ")x\"", "\")\";",
      "a\\\nint r = system(\"touch " + marker + "\");",  // a backslash-newline continuing a // comment
      "trailing backslash\\",
      "?\?/\nint t = system(\"touch " + marker + "\");",  // ??/ is a backslash as a trigraph
      "?\?=define x ?\?( ?\?) ?\?< ?\?> ?\?' ?\?! ?\?-",
      "\"", "'", "\\\"", "\\\\", "\\x41\\101\\u0041\\U0001F600",
      std::string("nul\0inside", 10), std::string(1, '\0'),
      "bidi \xE2\x80\xAE" "evil\xE2\x80\xAC", "line\xE2\x80\xA8separator\xE2\x80\xA9", "\xff\xfe\xc0\x80 bad utf-8",
      "{{name}}", "{{{abi_header}}}", "{{#inputs}}x{{/inputs}}", "}}{{", "{{=<% %>=}}",
      "\n#include </etc/passwd>\n", "\r\n#define call exit\r\n", "<%:include %> %:%: <: :>",
      "%s%n%n%n%n", "errno", "linux", "KILN_OK", "int32_t", "DLTensor", "std", "main", "class", "_Z3foov",
      "__attribute__((constructor))", "0abc", "_", "__", "*/", "/*", "//", "*", "/", "x/", "*x", "-->",
      ".section .text\n.globl evil\nevil: ret", "#", "\t\v\f\x1b[31mred\x1b[0m",
  };
  std::string big;
  for (int i = 0; big.size() < 5000; ++i) big += s[static_cast<std::size_t>(i) % s.size()];
  s.push_back(big);
  return s;
}

// Random bytes, and random splices of the adversarial strings (fixed seed: the same each run).
std::vector<std::string> random_strings(std::size_t count) {
  std::mt19937 rng(14);
  const auto pieces = adversarial_strings();
  std::vector<std::string> out;
  for (std::size_t i = 0; i < count; ++i) {
    std::string s;
    const int len = static_cast<int>(rng() % 48);
    for (int k = 0; k < len; ++k) {
      if (i % 2 == 0)
        s += static_cast<char>(rng() % 256);
      else
        s += pieces[rng() % pieces.size()].substr(0, 1 + rng() % 6);
    }
    out.push_back(s);
  }
  return out;
}

bool is_octal(char c) { return c >= '0' && c <= '7'; }

// The bytes a literal made of plain characters and three-digit octal escapes stands for;
// false when it holds anything else.
bool decode_octal_literal(const std::string& lit, std::string& bytes) {
  if (lit.size() < 2 || lit.front() != '"' || lit.back() != '"') return false;
  bytes.clear();
  for (std::size_t i = 1; i + 1 < lit.size(); ++i) {
    if (lit[i] == '\\') {
      if (i + 3 >= lit.size() || !is_octal(lit[i + 1]) || !is_octal(lit[i + 2]) || !is_octal(lit[i + 3]))
        return false;
      bytes += static_cast<char>(((lit[i + 1] - '0') << 6) | ((lit[i + 2] - '0') << 3) | (lit[i + 3] - '0'));
      i += 3;
    } else if (lit[i] == '"' || lit[i] < 0x20 || lit[i] > 0x7e) {
      return false;
    } else {
      bytes += lit[i];
    }
  }
  return true;
}

}  // namespace

TEST_CASE("security: each escaper's output stays in its place whatever the bytes") {
  std::vector<std::string> inputs = adversarial_strings();
  for (const auto& s : random_strings(4000)) inputs.push_back(s);
  for (const std::string& s : inputs) {
    CAPTURE(s);
    const std::string id = c_identifier(s, "fallback");
    CHECK(!id.empty());
    CHECK(id.size() <= 64);
    CHECK(!(id[0] >= '0' && id[0] <= '9'));
    CHECK(id[0] != '_');
    CHECK(id.find("__") == std::string::npos);
    CHECK(id.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == std::string::npos);
    CHECK(c_identifier(id, "other") == id);  // its own identifier (the twin graphs below use that)

    const std::string lit = c_string_literal(s);
    std::string decoded;
    CHECK(decode_octal_literal(lit, decoded));
    CHECK(decoded == s);
    CHECK(lit.find('?') == std::string::npos);
    const auto tokens = cxx_tokens(lit);
    REQUIRE(tokens.size() == 1);
    CHECK(tokens[0].kind == CxxToken::String);

    const std::string asm_lit = asm_string_literal(s);
    CHECK(decode_octal_literal(asm_lit, decoded));
    CHECK(decoded == s);
    CHECK(asm_lit.find("//") == std::string::npos);
    CHECK(asm_lit.find("/*") == std::string::npos);

    const std::string comment = comment_text(s, 200);
    CHECK(comment.size() <= 205);  // 200, "...", a space at each end
    for (char c : comment) CHECK((c >= 0x20 && c < 0x7f && c != '\\'));
    CHECK(comment.find("*/") == std::string::npos);
    CHECK(comment.find("/*") == std::string::npos);
    CHECK(comment.find("??") == std::string::npos);
    // Between comment markers it stays one comment, and nothing follows it.
    CHECK(cxx_tokens("/*" + comment + "*/").empty());
    CHECK(cxx_tokens("/**" + comment + "**/").empty());
    CHECK(cxx_tokens("//" + comment + "\n").empty());
  }
  CHECK(c_identifier("errno") == "errno_");
  CHECK(c_identifier("KILN_OK") == "g_KILN_OK");
  CHECK(c_identifier("int32_t") == "int32_t_");
  CHECK(c_identifier("logreg_predict") == "logreg_predict");
  CHECK(c_identifier("X") == "X");
  CHECK(unique_c_identifiers({"a*", "a/", "a_"}, "input") == std::vector<std::string>{"a_", "a_2", "a_3"});
  CHECK(unique_c_identifiers({"*", ""}, "input", {"input0"}) == std::vector<std::string>{"input0_2", "input1"});
}

TEST_CASE("security: names that close the header's comment inject no code (compiled)") {
  // Finding 1: `/** inputs: ... */` in NAME.h held names as they were, so these two names
  // declared system() and called it when the library was loaded.
  fs::remove(marker_path());
  const std::string text = Json{
      {"format", "kiln-graph"}, {"version", 1}, {"name", "injection_probe"},
      {"variables", Json::array({
          Json{{"id", "a"}, {"name", "*/int system(const char*);/*"}, {"type", {{"dtype", "float64"}, {"shape", {3}}}}},
          Json{{"id", "b"}, {"name", "*/int p=system(\"touch " + marker_path() + "\");/*"},
               {"type", {{"dtype", "float64"}, {"shape", {3}}}}},
          Json{{"id", "c"}, {"name", "asm(R\"(.incbin \"/etc/passwd\")\")"}, {"type", {{"dtype", "float64"}, {"shape", {3}}}}}})},
      {"nodes", Json::array({Json{{"op", "add"}, {"inputs", {"a", "b"}}, {"outputs", {"c"}}}})},
      {"inputs", {"a", "b"}}, {"outputs", {"c"}}}.dump();
  FunctionGraph fg = load_graph_text(text, "");
  GeneratedLibrary lib = emit(fg.clone(), test_compile_options()).sources;
  BuildResult built = build_library(lib, test_build_options());
  {
    Library so(built.library_path);
    Array a = Array::zeros(DType::Float64, {3}), b = Array::zeros(DType::Float64, {3});
    a.data<double>()[1] = 1.5;
    CallResult r = call_compiled(so.graph("injection_probe"), {a, b});
    REQUIRE(r.status == KILN_OK);
    CHECK(r.outputs[0].data<double>()[1] == 1.5);
  }
  CHECK_FALSE(fs::exists(marker_path()));
  // The names are still there, as comment text: no token of the header is "system".
  CHECK(lib.header.find("int p=system") != std::string::npos);
  for (const CxxToken& t : cxx_tokens(lib.header)) CHECK(t.text != "system");
}

namespace {

// A graph holding `strings` in every name slot: the graph's name, input names and ids, the ids
// and names of intermediates and outputs (outputs without a name are shown by their id), the
// message and exception type of assertions, an x- extra. With `twin`, each string is replaced
// by a plain one that maps to the same identifier (where the string becomes one) or by
// "plainN" (where it only becomes literal or comment text), so both graphs must generate the
// same tokens but for the contents of string literals.
struct NameSlots {
  std::string graph_name;
  std::vector<std::string> input_names, input_ids, temp_names, temp_ids, output_names, output_ids, msgs, exc_types;
};

NameSlots fill_slots(const std::vector<std::string>& strings, std::size_t inputs) {
  NameSlots n;
  std::size_t next = 0;
  auto take = [&] { return strings[next++ % strings.size()]; };
  n.graph_name = take();
  for (std::size_t k = 0; k < inputs; ++k) {
    n.input_names.push_back(take());
    n.input_ids.push_back("in" + std::to_string(k) + take());
    n.temp_names.push_back(take());
    n.temp_ids.push_back("t" + std::to_string(k) + take());
    n.output_names.push_back(k % 2 == 0 ? take() : "");  // odd outputs: shown by their id
    n.output_ids.push_back(k % 2 == 0 ? "o" + std::to_string(k) + take() : take() + "#" + std::to_string(k));
    n.msgs.push_back(take());
    std::string exc = take();
    n.exc_types.push_back(exc.empty() ? "E" : exc);
  }
  return n;
}

NameSlots plain_twin(const NameSlots& h) {
  NameSlots t;
  int plain = 0;
  auto literal_only = [&](const std::string&) { return "plain" + std::to_string(plain++); };
  t.graph_name = c_identifier(h.graph_name);
  t.input_names = unique_c_identifiers(h.input_names, "input");
  std::vector<std::string> shown;  // what names the outputs in generated code
  for (std::size_t k = 0; k < h.output_ids.size(); ++k)
    shown.push_back(h.output_names[k].empty() ? h.output_ids[k] : h.output_names[k]);
  shown = unique_c_identifiers(shown, "output");
  for (std::size_t k = 0; k < h.input_names.size(); ++k) {
    t.input_ids.push_back(literal_only(h.input_ids[k]));
    t.temp_names.push_back(literal_only(h.temp_names[k]));
    t.temp_ids.push_back(literal_only(h.temp_ids[k]));
    t.output_names.push_back(h.output_names[k].empty() ? "" : shown[k]);
    t.output_ids.push_back(h.output_names[k].empty() ? shown[k] : literal_only(h.output_ids[k]));
    t.msgs.push_back(literal_only(h.msgs[k]));
    t.exc_types.push_back(literal_only(h.exc_types[k]));
  }
  return t;
}

// Per input k: t_k = exp(in_k); out_k = CheckAndRaise(t_k, flag). Output 0 also meets a
// constant large enough for NAME_data.S (600 doubles).
std::string graph_text(const NameSlots& n) {
  Json vars = Json::array(), nodes = Json::array(), ins = Json::array(), outs = Json::array();
  const Json vec = {{"dtype", "float64"}, {"shape", {600}}};
  vars.push_back({{"id", "flag"}, {"name", "flag"}, {"type", {{"dtype", "bool"}, {"shape", Json::array()}}}});
  Json big = Json::array();
  for (int i = 0; i < 600; ++i) big.push_back(i * 0.5);
  vars.push_back({{"id", n.msgs[0] + "#const"}, {"name", n.msgs[0]}, {"type", vec}, {"value", big}});
  for (std::size_t k = 0; k < n.input_names.size(); ++k) {
    vars.push_back({{"id", n.input_ids[k]}, {"name", n.input_names[k]}, {"type", vec}});
    vars.push_back({{"id", n.temp_ids[k]}, {"name", n.temp_names[k]}, {"type", vec}});
    Json out = {{"id", n.output_ids[k]}, {"type", vec}};
    if (!n.output_names[k].empty()) out["name"] = n.output_names[k];
    vars.push_back(out);
    std::string source = n.input_ids[k];
    if (k == 0) {
      vars.push_back({{"id", "scaled"}, {"type", vec}});
      nodes.push_back({{"op", "mul"}, {"inputs", {source, n.msgs[0] + "#const"}}, {"outputs", {"scaled"}}});
      source = "scaled";
    }
    nodes.push_back({{"op", "exp"}, {"inputs", {source}}, {"outputs", {n.temp_ids[k]}}});
    nodes.push_back({{"op", "CheckAndRaise"},
                     {"props", {{"msg", n.msgs[k]}, {"exc_type", n.exc_types[k]}}},
                     {"inputs", {n.temp_ids[k], "flag"}},
                     {"outputs", {n.output_ids[k]}}});
    ins.push_back(n.input_ids[k]);
    outs.push_back(n.output_ids[k]);
  }
  ins.push_back("flag");
  outs.push_back(n.input_ids[0]);  // an input as an output: the copy path
  return Json{{"format", "kiln-graph"}, {"version", 1},      {"name", n.graph_name}, {"variables", vars},
              {"nodes", nodes},        {"inputs", ins},     {"outputs", outs},     {"x-note", n.msgs[1]}}
      .dump(-1, ' ', false, Json::error_handler_t::replace);
}

// `c++ -E -P` of `file` in `dir` with the flags generated code is built with.
std::string preprocess(const fs::path& dir, const std::string& file, const std::vector<std::string>& extra = {}) {
  const BuildOptions options = test_build_options();
  std::vector<std::string> argv = {resolve_compiler(options)};
  for (const auto& f : generated_code_flags(options)) argv.push_back(f);
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.insert(argv.end(), {"-E", "-P", "-I", dir.string(), (dir / file).string()});
  ProcessResult r = run_process(argv);
  INFO(r.output.substr(0, 4000));
  REQUIRE(r.exit_code == 0);
  return r.output;
}

void write_sources(const fs::path& dir, const GeneratedLibrary& lib) {
  fs::create_directories(dir);
  std::ofstream(dir / (lib.name + ".h"), std::ios::binary) << lib.header;
  std::ofstream(dir / (lib.name + ".cpp"), std::ios::binary) << lib.source;
  // The C++ layer of NAME.h, which NAME.cpp leaves out (KILN_C_ABI_ONLY).
  std::ofstream(dir / "uses_header.cpp") << "#include \"" << lib.name << ".h\"\n";
}

}  // namespace

TEST_CASE("security: hostile strings in every name slot generate the tokens of plain names (compiled)") {
  fs::remove(marker_path());
  // Graph files hold UTF-8: invalid bytes arrive as U+FFFD, as a JSON writer would send them.
  std::vector<std::string> strings;
  for (const auto& list : {adversarial_strings(), random_strings(24)})
    for (const auto& s : list)
      strings.push_back(Json::parse(Json(s).dump(-1, ' ', false, Json::error_handler_t::replace)).get<std::string>());
  // Names that map onto the words the generated header itself declares would be renamed by
  // the header's own rules for both graphs alike, but differently (the twin's already are).
  const std::set<std::string> header_words = {"ctx_", "ins", "outs", "status", "f", "name"};
  strings.erase(std::remove_if(strings.begin(), strings.end(),
                               [&](const std::string& s) { return header_words.count(c_identifier(s, "x")) > 0; }),
                strings.end());
  const std::size_t inputs = (strings.size() + 7) / 8;  // each input takes 8 strings
  const NameSlots hostile = fill_slots(strings, inputs), twin = plain_twin(hostile);
  // Input 0 is also the last output: its name must give the same identifier in both roles.
  REQUIRE(c_identifier(hostile.input_names[0], "a") == c_identifier(hostile.input_names[0], "b"));
  const std::string hostile_text = graph_text(hostile), twin_text = graph_text(twin);
  FunctionGraph hostile_fg = load_graph_text(hostile_text, "");
  FunctionGraph twin_fg = load_graph_text(twin_text, "");
  const GeneratedLibrary hostile_lib = emit(hostile_fg.clone(), test_compile_options()).sources,
                         twin_lib = emit(twin_fg.clone(), test_compile_options()).sources;
  REQUIRE(hostile_lib.name == twin_lib.name);
  REQUIRE(hostile_lib.blobs.size() == 1);
  CHECK(data_assembly(hostile_lib, "/some/dir") == data_assembly(twin_lib, "/some/dir"));

  const fs::path work = fs::path(KILN_TEST_CACHE_DIR) / "security-names";
  fs::remove_all(work);
  write_sources(work / "hostile", hostile_lib);
  write_sources(work / "twin", twin_lib);
  for (const std::string& name : {hostile_lib.name + ".cpp", std::string("uses_header.cpp")}) {
    CAPTURE(name);
    const auto a = cxx_tokens(preprocess(work / "hostile", name));
    const auto b = cxx_tokens(preprocess(work / "twin", name));
    CHECK(a.size() > 1000);
    CHECK(first_token_difference(a, b) == "");
    for (const auto& t : a) CHECK(t.kind != CxxToken::Invalid);
  }
  // The typed C++ layer compiles with hostile parameter and member names.
  {
    const BuildOptions options = test_build_options();
    ProcessResult r = run_process({resolve_compiler(options), "-std=c++17", "-fsyntax-only", "-I",
                                   (work / "hostile").string(), (work / "hostile" / "uses_header.cpp").string()});
    INFO(r.output.substr(0, 4000));
    CHECK(r.exit_code == 0);
  }

  // The library exports the eight entry points and nothing else, and runs.
  BuildResult built = build_library(hostile_lib, test_build_options());
  ProcessResult nm = run_process({"nm", "-D", "--defined-only", built.library_path});
  REQUIRE(nm.exit_code == 0);
  std::set<std::string> exported, expected;
  std::istringstream lines(nm.output);
  // UBSan's function-type check (a sanitized kiln builds sanitized libraries) exports the
  // typeinfo of the function types it checks: _ZTIF... and _ZTSF..., not ours.
  const bool sanitized = !generated_code_sanitizer_flags().empty();
  for (std::string line; std::getline(lines, line);) {
    const std::size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    const std::string symbol = line.substr(space + 1);
    if (sanitized && (symbol.rfind("_ZTIF", 0) == 0 || symbol.rfind("_ZTSF", 0) == 0)) continue;
    exported.insert(symbol);
  }
  for (const char* entry : {"info", "context_create", "context_destroy", "context_set_num_threads",
                            "context_last_error", "call", "output_shapes", "call_into"})
    expected.insert(hostile_lib.name + "_" + entry);
  CHECK(exported == expected);

  Library so(built.library_path);
  const kiln_graph_info& info = so.graph(hostile_lib.name);
  CHECK(std::string(info.graph_name) == std::string(hostile.graph_name.c_str()));  // up to a NUL
  REQUIRE(info.num_inputs == static_cast<int32_t>(inputs + 1));
  for (std::size_t k = 0; k < inputs; ++k) CHECK(std::string(info.inputs[k].name) == hostile.input_names[k].c_str());
  std::vector<Array> args;
  for (std::size_t k = 0; k < inputs; ++k) args.push_back(Array::zeros(DType::Float64, {600}));
  Array flag = Array::zeros(DType::Bool, {});
  args.push_back(flag);
  for (bool into : {false, true}) {
    CallResult r = call_compiled(info, args, into);
    CHECK(r.status == KILN_ERR_ASSERT);
    // The first assertion's exception type and message, byte for byte (up to a NUL).
    const std::string expected_message = hostile.exc_types[0] + (hostile.msgs[0].empty() ? "" : ": " + hostile.msgs[0]);
    CHECK(r.error.find(std::string(expected_message.c_str()).substr(0, 200)) != std::string::npos);
    CHECK(r.error.find(" -> ") != std::string::npos);  // after the node's label
  }
  *args.back().data<bool>() = true;
  CallResult ok = call_compiled(info, args);
  REQUIRE(ok.status == KILN_OK);
  CHECK(ok.outputs[1].data<double>()[7] == 1.0);  // exp(0)
  CHECK_FALSE(fs::exists(marker_path()));
}
