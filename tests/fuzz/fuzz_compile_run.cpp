// libFuzzer target: a tiny graph file all the way through — load, rewrite, generate C++,
// compile it, load the library and call it — against the reference evaluator. Inputs are made
// from the graph's types (unknown lengths 0 to 4) with values from a generator seeded by the
// graph's bytes. Findings: anything but a UserError escaping kiln; generated code that does not
// compile; a call that crashes or trips a sanitizer (in a sanitized kiln the generated library
// is built with ASan and UBSan too, driver/sanitize.h); the library failing where the
// evaluator succeeds, or returning other shapes, dtypes or values.
//
// Each input costs a compile (about a second), so this target finds in hours what the loader's
// finds in seconds; its corpus (tests/fuzz/corpus/compile_run) holds small working graphs.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

#include "compile/compile.h"
#include "driver/build.h"
#include "driver/cache_maintenance.h"
#include "eval/evaluator.h"
#include "fuzz_common.h"
#include "io/graph_load.h"
#include "ir/error.h"
#include "kiln/loader.hpp"
#include "kiln/runtime/array_print.hpp"
#include "rewrite/pipeline.h"

namespace {

using namespace kiln;

constexpr std::size_t kMaxNodes = 16;
constexpr std::int64_t kMaxStaticLength = 16;
constexpr std::int64_t kMaxConstantElements = 4096;

[[noreturn]] void finding(const std::string& what, const std::string& text) {
  std::fprintf(stderr, "\n==== kiln fuzz finding: %s\n---- graph:\n%s\n", what.c_str(), text.c_str());
  std::abort();
}

BuildOptions fuzz_build_options() {
  BuildOptions o;
  const char* dir = std::getenv("KILN_FUZZ_CACHE");
  o.cache_dir = dir && *dir ? dir
                            : (std::filesystem::temp_directory_path() / "kiln-fuzz-cache").string();
  o.march = "none";
  return o;
}

// Small values for a dtype: indices and lengths near the edges for integers, specials for floats.
Array random_input(const TensorType& type, std::mt19937_64& rng) {
  Shape shape;
  for (auto d : type.shape) shape.push_back(d == kUnknownLength ? static_cast<std::int64_t>(rng() % 5) : d);
  Array a = Array::zeros(type.dtype, shape);
  const std::int64_t n = a.size();
  visit_real_dtype(type.dtype, [&](auto t) {
    using T = decltype(t);
    T* p = a.data<T>();
    for (std::int64_t i = 0; i < n; ++i) {
      const unsigned r = static_cast<unsigned>(rng() % 16);
      if constexpr (std::is_same_v<T, bool>) {
        p[i] = r % 2 == 1;
      } else if constexpr (std::is_floating_point_v<T>) {
        const double specials[] = {0.0, -0.0, 1.0, -1.0, NAN, INFINITY, -INFINITY, 1e-300};
        p[i] = static_cast<T>(r < 8 ? specials[r] : (static_cast<double>(rng() % 2001) - 1000.0) / 250.0);
      } else {
        p[i] = static_cast<T>(static_cast<std::int64_t>(rng() % 9) - 3);
      }
    }
  });
  return a;
}

// Whether a graph is small enough: few nodes, small static lengths and constants.
bool tiny(const FunctionGraph& fg) {
  if (fg.num_nodes() > kMaxNodes || fg.inputs().size() > 4) return false;
  for (const auto& in : fg.inputs())
    for (auto d : in->shape())
      if (d > kMaxStaticLength) return false;
  for (Apply* node : fg.toposort()) {
    for (const auto& v : node->inputs())
      if (v->is_constant() && v->value().size() > kMaxConstantElements) return false;
    for (int o = 0; o < node->num_outputs(); ++o)
      for (auto d : node->output_ptr(o)->shape())
        if (d > 4 * kMaxConstantElements) return false;
  }
  return true;
}

bool same_values(const Array& a, const Array& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  bool same = true;
  Array ca = a.contiguous(), cb = b.contiguous();
  visit_real_dtype(a.dtype(), [&](auto t) {
    using T = decltype(t);
    for (std::int64_t i = 0; i < ca.size() && same; ++i) {
      const T x = ca.data<T>()[i], y = cb.data<T>()[i];
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(x) || std::isnan(y)) {
          same = std::isnan(x) && std::isnan(y);
        } else if (x != y) {
          const double tol = std::is_same_v<T, float> ? 1e-4 : 1e-9;
          const double scale = std::max({1.0, std::fabs(double(x)), std::fabs(double(y))});
          same = std::isfinite(double(x)) && std::isfinite(double(y)) && std::fabs(double(x) - double(y)) <= tol * scale;
        }
      } else {
        same = x == y;
      }
    }
  });
  return same;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  FunctionGraph fg;
  try {
    fg = load_graph_text(text, kiln::fuzz::npy_folder(), "fuzz.json");
  } catch (const UserError&) {
    return 0;
  }
  if (!tiny(fg)) return 0;
  std::mt19937_64 rng(std::hash<std::string>{}(text));
  std::vector<Array> inputs;
  for (const auto& in : fg.inputs()) inputs.push_back(random_input(in->type(), rng));

  std::vector<Array> expected;
  std::string eval_error;
  try {
    expected = evaluate(fg, inputs);
  } catch (const NotImplementedError&) {
    return 0;
  } catch (const UserError& e) {
    eval_error = e.what();
  }

  GeneratedLibrary lib;
  try {
    CompileOptions options;
    options.name = "fuzzed";
    lib = emit(fg.clone(), options).sources;
  } catch (const NotImplementedError&) {
    return 0;
  } catch (const UserError& e) {
    finding(std::string("a graph that loads fails to compile: ") + e.what(), text);
  }
  BuildResult built;
  try {
    built = build_library(lib, fuzz_build_options());
  } catch (const UserError& e) {
    finding(std::string("generated code does not build: ") + e.what(), text);
  }
  static int builds = 0;
  if (++builds % 200 == 0) clean_cache(fuzz_build_options().cache_dir, std::uint64_t{256} << 20, true);

  Library so(built.library_path);
  const kiln_graph_info& info = so.graph("fuzzed");
  std::vector<DLTensor> dl;
  for (const auto& a : inputs) dl.push_back(a.dltensor());
  if (dl.empty()) dl.resize(1);
  kiln_context* ctx = info.context_create();
  std::vector<DLManagedTensor*> owned(fg.outputs().size() + 1, nullptr);
  const int32_t status = info.call(ctx, dl.data(), owned.data());
  const std::string error = info.context_last_error(ctx);
  info.context_destroy(ctx);
  std::vector<Array> got;
  for (std::size_t k = 0; status == KILN_OK && k < fg.outputs().size(); ++k) {
    std::shared_ptr<void> owner(owned[k], [](void* p) {
      auto* m = static_cast<DLManagedTensor*>(p);
      m->deleter(m);
    });
    got.push_back(Array::from_dlpack(owned[k]->dl_tensor, owner).copy());
  }
  if (eval_error.empty() && status != KILN_OK)
    finding("the evaluator succeeds but the library fails: " + error, text);
  if (!eval_error.empty() && status == KILN_OK)
    finding("the evaluator fails (" + eval_error + ") but the library succeeds", text);
  for (std::size_t k = 0; k < got.size(); ++k)
    if (!same_values(expected[k], got[k]))
      finding("output " + std::to_string(k) + " differs: evaluator " + format_array(expected[k]) + ", library " +
                  format_array(got[k]),
              text);
  return 0;
}
