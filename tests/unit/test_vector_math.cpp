// Vectorised math in compiled code (issue 7): every libm function that
// templates/cpp/prologue/vector_math.hpp gives a SIMD variant, in float64 and float32, compiled
// (one bundle) and run on contiguous inputs long enough for the vector loop: random values over
// the whole finite range and common ranges, plus special values (NaN, ±inf, ±0, subnormals,
// near overflow and underflow, domain edges). NaN, inf and zero results must match the reference
// evaluator (std:: libm) exactly; finite results within a few ULP of it. Where kiln links
// SLEEF, the library must really call the vector variants (_ZGV* functions).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "api/elementwise.h"
#include "api/graph_builder.h"
#include "codegen/cpp/vector_math_select.h"
#include "codegen/embedded_files.h"
#include "compiled.h"
#include "driver/process.h"
#include "eval/evaluator.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

struct MathFn {
  std::string name;  // libm's name (double precision)
  int arity;
  std::function<Var(const Var&, const Var&)> build;
  int max_ulp;  // allowed distance from glibc's result (both are off the exact value)
  std::vector<DType> dtypes = {f64, f32};  // those whose loops call a vector variant
};

// The distance allowed from glibc's libm: libmvec's functions (the default path) are within
// 4 ULP of the exact value, glibc's within about 1, so at most 5 apart; SLEEF's (atan2, pow)
// within 1 ULP, so at most 2 apart. test_vector_accuracy.cpp holds each path to its own bound
// against the exact value.
const std::vector<MathFn>& functions() {
  static const std::vector<MathFn> fns = {
      {"exp", 1, [](const Var& x, const Var&) { return exp(x); }, 5},
      {"exp2", 1, [](const Var& x, const Var&) { return exp2(x); }, 5},
      {"expm1", 1, [](const Var& x, const Var&) { return expm1(x); }, 5},
      {"log", 1, [](const Var& x, const Var&) { return log(x); }, 5},
      {"log2", 1, [](const Var& x, const Var&) { return log2(x); }, 5},
      {"log10", 1, [](const Var& x, const Var&) { return log10(x); }, 5},
      {"log1p", 1, [](const Var& x, const Var&) { return log1p(x); }, 5},
      {"sin", 1, [](const Var& x, const Var&) { return sin(x); }, 5},
      {"cos", 1, [](const Var& x, const Var&) { return cos(x); }, 5},
      {"tan", 1, [](const Var& x, const Var&) { return tan(x); }, 5},
      {"asin", 1, [](const Var& x, const Var&) { return arcsin(x); }, 5},
      {"acos", 1, [](const Var& x, const Var&) { return arccos(x); }, 5},
      {"atan", 1, [](const Var& x, const Var&) { return arctan(x); }, 5},
      {"tanh", 1, [](const Var& x, const Var&) { return tanh(x); }, 5},
      {"atanh", 1, [](const Var& x, const Var&) { return arctanh(x); }, 5},
      {"erf", 1, [](const Var& x, const Var&) { return erf(x); }, 5},
      {"erfc", 1, [](const Var& x, const Var&) { return erfc(x); }, 5},
      {"pow", 2, [](const Var& x, const Var& y) { return pow(x, y); }, 2, {f32}},
      {"atan2", 2, [](const Var& x, const Var& y) { return arctan2(x, y); }, 2},
  };
  return fns;
}

// Values where libm implementations go wrong: non-finite, zeros, subnormals, the ends of the
// finite range, overflow and underflow of exp, the edges of log1p/asin/atanh's domains.
template <class T>
std::vector<T> special_values() {
  using L = std::numeric_limits<T>;
  const bool single = sizeof(T) == 4;
  std::vector<T> v = {L::quiet_NaN(), -L::quiet_NaN(), L::infinity(), -L::infinity(), T(0), -T(0),
                      L::denorm_min(), -L::denorm_min(), L::min(), -L::min(), L::min() / 3, L::max(), -L::max(),
                      T(1), T(-1), T(0.5), T(-0.5), T(2), T(3), T(-3), T(1e-8), T(-1e-8),
                      std::nextafter(T(1), T(0)), std::nextafter(T(-1), T(0)), std::nextafter(T(1), T(2)),
                      std::nextafter(T(-1), T(-2)), T(10), T(30), T(-30)};
  // exp's overflow and underflow thresholds, exp2's, and just inside/outside them.
  for (double edge : single ? std::vector<double>{88.72, 88.73, -87.3, -103.97, -104.0, 127.99, 128.0, -149.0, -150.0}
                            : std::vector<double>{709.78, 709.79, -708.39, -745.13, -745.14, 1023.99, 1024.0, -1074.0,
                                                  -1075.0})
    v.push_back(static_cast<T>(edge));
  // The edges of kiln's float kernels' ranges (vector_math.hpp), where lanes change over to
  // glibc's scalar functions: exp's |x| <= 87.3, sin and cos's |x| <= 2^16, log's normal inputs.
  if (single)
    for (float edge : {87.3f, -87.3f, 65536.0f, -65536.0f, 0x1p-126f})
      for (float x : {std::nextafter(edge, -INFINITY), edge, std::nextafter(edge, INFINITY)}) v.push_back(x);
  v.push_back(single ? T(1e37) : T(1e300));  // log1p's scaled range (vector_math.hpp)
  v.push_back(single ? T(3e38) : T(1e308));
  return v;
}

// Mixed random values: any finite bit pattern (the whole range), then [-1, 1], [-20, 20] and
// [-800, 800], in turn.
template <class T>
std::vector<T> random_values(std::mt19937_64& rng, std::size_t n) {
  std::vector<T> v;
  std::uniform_real_distribution<double> unit(-1, 1);
  while (v.size() < n) {
    T x;
    switch (v.size() % 4) {
      case 0: {
        using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
        const Bits bits = static_cast<Bits>(rng());
        std::memcpy(&x, &bits, sizeof x);
        if (!std::isfinite(x)) continue;
        break;
      }
      case 1: x = static_cast<T>(unit(rng)); break;
      case 2: x = static_cast<T>(20 * unit(rng)); break;
      default: x = static_cast<T>(800 * unit(rng)); break;
    }
    v.push_back(x);
  }
  return v;
}

// Inputs of one function: specials (for two operands, every pair of them), then random values.
template <class T>
std::vector<Array> inputs_for(int arity, std::mt19937_64& rng) {
  const std::vector<T> sp = special_values<T>();
  std::vector<T> x, y;
  if (arity == 1) {
    x = sp;
  } else {
    for (T a : sp)
      for (T b : sp) {
        x.push_back(a), y.push_back(b);
      }
  }
  const std::vector<T> rx = random_values<T>(rng, 4096), ry = random_values<T>(rng, 4096);
  x.insert(x.end(), rx.begin(), rx.end());
  if (arity == 2) {
    // Shuffled, so that random pairs mix the ranges.
    std::vector<T> shuffled = ry;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    y.insert(y.end(), shuffled.begin(), shuffled.end());
  }
  std::vector<Array> out;
  for (const auto* values : {&x, &y}) {
    if (values->empty()) continue;
    Array a = Array::empty(sizeof(T) == 8 ? f64 : f32, {static_cast<std::int64_t>(values->size())});
    std::memcpy(a.data(), values->data(), values->size() * sizeof(T));
    out.push_back(std::move(a));
  }
  return out;
}

// Distance in representable values between two finite numbers of one type.
template <class T>
std::int64_t ulp_distance(T a, T b) {
  using Bits = std::conditional_t<sizeof(T) == 8, std::int64_t, std::int32_t>;
  auto ordered = [](T v) {
    Bits bits;
    std::memcpy(&bits, &v, sizeof v);
    return bits < 0 ? static_cast<std::int64_t>(std::numeric_limits<Bits>::min()) - bits : static_cast<std::int64_t>(bits);
  };
  const std::int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

// Compares element by element; returns the largest ULP distance, and reports mismatches.
template <class T>
std::int64_t compare(const std::string& what, const std::vector<Array>& inputs, const Array& got, const Array& want,
                     int max_ulp) {
  std::int64_t worst = 0;
  int reported = 0;
  for (std::int64_t i = 0; i < want.size(); ++i) {
    const T g = got.data<T>()[i], w = want.data<T>()[i];
    bool ok;
    if (std::isnan(w) || std::isinf(w) || w == 0)
      ok = (std::isnan(w) && std::isnan(g)) || (!std::isnan(w) && g == w && std::signbit(g) == std::signbit(w));
    else
      ok = std::isfinite(g) && ulp_distance(g, w) <= max_ulp;
    if (std::isfinite(w) && std::isfinite(g) && w != 0) worst = std::max(worst, ulp_distance(g, w));
    if (!ok && reported++ < 5) {
      std::ostringstream call;
      call.precision(std::numeric_limits<T>::max_digits10);
      call << what << "(";
      for (std::size_t k = 0; k < inputs.size(); ++k) call << (k ? ", " : "") << inputs[k].data<T>()[i];
      call << ") = " << g << ", reference " << w;
      FAIL_CHECK(call.str());
    }
  }
  return worst;
}

}  // namespace

TEST_CASE("compiled vector math: accuracy and special values of vectorised libm functions") {
  std::vector<FunctionGraph> graphs;
  std::vector<std::pair<const FunctionGraph*, std::string>> named;
  graphs.reserve(functions().size() * 2);  // stable addresses for `named`
  for (const MathFn& fn : functions())
    for (DType dt : fn.dtypes) {
      GraphBuilder g(fn.name);
      Var x = g.input("x", dt, {-1});
      Var y = fn.arity == 2 ? g.input("y", dt, {-1}) : x;
      g.output(fn.build(x, y), "out");
      graphs.push_back(g.build());
      named.emplace_back(&graphs.back(), fn.name + "_" + std::string(dtype_name(dt)));
    }
  const BuildResult built = build_bundle(named, "vector_math");
  Library so(built.library_path);

  std::mt19937_64 rng(7);
  std::size_t k = 0;
  for (const MathFn& fn : functions())
    for (DType dt : fn.dtypes) {
      const std::string graph_name = named[k].second;
      const FunctionGraph& fg = graphs[k++];
      INFO(graph_name);
      const std::vector<Array> inputs = dt == f64 ? inputs_for<double>(fn.arity, rng) : inputs_for<float>(fn.arity, rng);
      const std::vector<Array> expected = evaluate(fg, inputs);
      for (bool into : {false, true}) {
        CallResult r = call_compiled(so.graph(graph_name), inputs, into);
        REQUIRE_MESSAGE(r.status == KILN_OK, kiln_status_name(r.status) << ": " << r.error);
        const std::int64_t worst = dt == f64 ? compare<double>(graph_name, inputs, r.outputs[0], expected[0], fn.max_ulp)
                                             : compare<float>(graph_name, inputs, r.outputs[0], expected[0], fn.max_ulp);
        if (!into) MESSAGE(graph_name << ": at most " << worst << " ULP from libm");
      }
      // One element per call: every value through the scalar code that handles a loop's last
      // elements (kiln's own scalar log1p in float, libm's elsewhere).
      for (std::int64_t i = 0; i < inputs[0].size(); ++i) {
        std::vector<Array> one;
        for (const Array& in : inputs) {
          Array a = Array::empty(in.dtype(), {1});
          std::memcpy(a.data(), static_cast<const char*>(in.data()) + i * in.itemsize(), in.itemsize());
          one.push_back(std::move(a));
        }
        CallResult r = call_compiled(so.graph(graph_name), one, true);
        REQUIRE_MESSAGE(r.status == KILN_OK, kiln_status_name(r.status) << ": " << r.error);
        Array want = Array::empty(expected[0].dtype(), {1});
        std::memcpy(want.data(), static_cast<const char*>(expected[0].data()) + i * want.itemsize(), want.itemsize());
        if (dt == f64)
          compare<double>(graph_name + " (scalar)", one, r.outputs[0], want, fn.max_ulp);
        else
          compare<float>(graph_name + " (scalar)", one, r.outputs[0], want, fn.max_ulp);
      }
    }

  // With vector math (and GCC on x86-64, which reads the SIMD declarations), each function's loop
  // must call a vector variant, _ZGV<isa>N<lanes>v[v]_<name>[f]: libmvec's (through the PLT) or
  // one defined (hidden) in the library by vector_math.hpp: look for the calls in its disassembly.
  const std::string cxx = resolve_compiler(test_build_options());
  const bool gcc = run_process({cxx, "--version"}).output.find("clang") == std::string::npos;
#if defined(__x86_64__)
  if ((have_sleef_vector_math() || have_libmvec_vector_math()) && gcc) {
    ProcessResult dis = run_process({"objdump", "-d", "--no-show-raw-insn", built.library_path});
    REQUIRE(dis.exit_code == 0);
    std::set<std::string> vector_calls;
    std::istringstream lines(dis.output);
    for (std::string line; std::getline(lines, line);) {
      const auto pos = line.find("<_ZGV");
      if (line.find("call") == std::string::npos || pos == std::string::npos) continue;
      std::string sym = line.substr(pos + 1, line.find('>', pos) - pos - 1);
      sym = sym.substr(0, sym.find('@'));  // libmvec's through the PLT: _ZGVdN4v_sin@plt
      vector_calls.insert(sym.substr(sym.find('_', 4) + 1));  // the libm name after _ZGVdN4v_
    }
    for (const MathFn& fn : functions())
      for (DType dt : fn.dtypes) {
        // Float log1p calls kiln's kiln_vm_log1pf, whose variants forward to log1pf's.
        const std::string name = fn.name == "log1p" && dt == f32 ? "kiln_vm_log1pf" : fn.name + (dt == f32 ? "f" : "");
        CHECK_MESSAGE(vector_calls.count(name), "no call of a vector variant of " << name);
      }
    // The variants defined here are kiln's own (float exp, log, sin, cos on targets with FMA) or
    // forward to SLEEF (atan2, pow; float exp, log, sin, cos elsewhere) or libmvec; none is
    // exported (another library's could otherwise take their place).
    ProcessResult dump = run_process({"objdump", "-p", "-T", built.library_path});
    if (have_sleef_vector_math()) CHECK(dump.output.find("libsleef.so") != std::string::npos);
    if (have_libmvec_vector_math()) CHECK(dump.output.find("libmvec.so") != std::string::npos);
    std::istringstream symbols(dump.output);
    for (std::string line; std::getline(symbols, line);)
      if (line.find("_ZGV") != std::string::npos) CHECK_MESSAGE(line.find("*UND*") != std::string::npos, line);
  } else {
    MESSAGE("kiln was built without libmvec and SLEEF or the compiler is not GCC: scalar libm calls, no vector check");
  }
#endif
}

TEST_CASE("vector math selection: the SIMD declarations of the functions generated code calls") {
  // Direct calls and calls made inside kiln_scalar functions (softplus calls
  // exp and log1p; erfcx calls exp and erfc through its own body).
  const auto called = called_math_functions(
      {"const double t0 = std::sin(x);\nconst float t1 = std::log1p(y);", "kiln_scalar::softplus(z)",
       "kiln_scalar::erfcx(w)"});
  for (const char* fn : {"sin", "log1p", "exp", "erfc"}) CHECK_MESSAGE(called.count(fn) == 1, fn);
  // Generated code's log1p is kiln_vm::log1p (float log1p has kiln's own scalar body).
  CHECK(called_math_functions({"const float t0 = kiln_vm::log1p(x);"}) == std::set<std::string>{"log1p"});
  CHECK(called.count("tanh") == 0);
  CHECK(called.count("softplus") == 0);  // kiln_scalar's own functions are followed, not listed

  std::string body(embedded_file("templates/cpp/prologue/vector_math.hpp"));
  const std::string kept = select_vector_math(body, {"exp", "atan2"});
  CHECK(kept.find("KILN_VM_1(exp, u10, MVEC, KILN)") != std::string::npos);
  CHECK(kept.find("KILN_VM_2(atan2, u10, SLEEF, SLEEF)") != std::string::npos);
  CHECK(kept.find("KILN_VM_1(sin, u10, MVEC, KILN)") == std::string::npos);
  CHECK(kept.find("KILN_VM_2_FLOAT_ONLY(pow, u10, SLEEF)") == std::string::npos);
  CHECK(kept.find("KILN_VM_1_LOG1P(log1p, u10, MVEC, MVEC)") == std::string::npos);
  CHECK(select_vector_math(body, {"log1p"}).find("KILN_VM_1_LOG1P(log1p, u10, MVEC, MVEC)") != std::string::npos);
  CHECK(kept.find("#define KILN_VM_1(fn, u, dsrc, fsrc)") != std::string::npos);  // the macros stay
  // kiln's own float kernels only where exp, log, sin or cos is called.
  CHECK(kept.find("namespace kiln_vm_f32") != std::string::npos);
  const std::string no_kernels = select_vector_math(body, {"atan2", "tanh"});
  CHECK(no_kernels.find("namespace kiln_vm_f32") == std::string::npos);
  CHECK(no_kernels.find("// KILN_VM_KERNELS(exp") == std::string::npos);
  CHECK(no_kernels.find("#endif  // KILN_VM_KERNELS") == std::string::npos);
  CHECK(no_kernels.find("#define KILN_VM_1(fn, u, dsrc, fsrc)") != std::string::npos);
  CHECK(select_vector_math(body, {"cos"}).find("namespace kiln_vm_f32") != std::string::npos);
  // Every KILN_VM_* line of the header names a function (the selection parses "(name,").
  std::istringstream lines(body);
  std::string line;
  int entries = 0;
  while (std::getline(lines, line))
    if (line.rfind("KILN_VM_1(", 0) == 0 || line.rfind("KILN_VM_1_LOG1P(", 0) == 0 ||
        line.rfind("KILN_VM_2(", 0) == 0 || line.rfind("KILN_VM_2_FLOAT_ONLY(", 0) == 0) {
      ++entries;
      CHECK(line.find(',') != std::string::npos);
    }
  CHECK(entries == 19);  // 17 one-operand functions, atan2, pow (float)
}
