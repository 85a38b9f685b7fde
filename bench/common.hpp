// Shared pieces of kiln's benchmarks: where bench/run put things (environment), aligned data
// buffers, DLTensors over them, compiled graphs loaded through the C ABI, the reference
// evaluator, and the once-per-workload correctness check that keeps a broken kernel from
// posting a good time.
//
// Benchmark names are "W<k>/<variant>/<dtype>/threads:<n>"; bench/report.py reads them.
#pragma once

#include <benchmark/benchmark.h>
#include <dlpack/dlpack.h>
#include <sys/mman.h>

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/kiln.h"
#include "kiln/loader.hpp"

namespace kiln {
class Array;
}

namespace bench {

/// The value of an environment variable bench/run sets; throws a clear error when missing.
std::string env_required(const char* name);

/// Folder holding the compiled graphs (lib<NAME>.so), $KILN_BENCH_LIBS.
inline const std::string& lib_dir() {
  static const std::string d = env_required("KILN_BENCH_LIBS");
  return d;
}
/// Folder holding the graph files as compiled (including W4's `kiln grad` output), $KILN_BENCH_GRAPHS.
inline const std::string& graph_dir() {
  static const std::string d = env_required("KILN_BENCH_GRAPHS");
  return d;
}

template <typename T>
constexpr const char* dtype_name() {
  return sizeof(T) == 8 ? "float64" : "float32";
}
template <typename T>
DLDataType dl_dtype() {
  return DLDataType{std::is_integral_v<T> ? static_cast<uint8_t>(kDLInt) : static_cast<uint8_t>(kDLFloat),
                    static_cast<uint8_t>(8 * sizeof(T)), 1};
}

/// The benchmark name "W1/kiln/float64/threads:2".
template <typename T>
std::string bench_name(const std::string& workload, const std::string& variant, int threads) {
  return workload + "/" + variant + "/" + dtype_name<T>() + "/threads:" + std::to_string(threads);
}

/// A 2 MiB-aligned buffer that asks for huge pages and is touched once at creation, so page
/// faults never land in a timed loop.
template <typename T>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::size_t n) : n_(n) {
    constexpr std::size_t kAlign = std::size_t(2) << 20;
    std::size_t bytes = (n * sizeof(T) + kAlign - 1) / kAlign * kAlign;
    if (bytes == 0) bytes = kAlign;
    void* p = std::aligned_alloc(kAlign, bytes);
    if (!p) throw std::bad_alloc();
    ::madvise(p, bytes, MADV_HUGEPAGE);
    std::memset(p, 0, bytes);
    p_.reset(static_cast<T*>(p));
  }
  T* data() const { return p_.get(); }
  std::size_t size() const { return n_; }
  T& operator[](std::size_t i) const { return p_.get()[i]; }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> p_;
  std::size_t n_ = 0;
};

/// Fills with deterministic uniform values in [lo, hi).
template <typename T>
void fill_uniform(const Buffer<T>& b, double lo, double hi, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<T>(u(rng));
}

/// A DLTensor over caller memory that owns its shape array (not copyable: DLTensor points into it).
class Dl {
 public:
  template <typename T>
  Dl(T* data, std::vector<int64_t> shape) : shape_(std::move(shape)) {
    t_ = DLTensor{};
    t_.data = data;
    t_.device = DLDevice{kDLCPU, 0};
    t_.ndim = static_cast<int32_t>(shape_.size());
    t_.dtype = dl_dtype<T>();
    t_.shape = shape_.empty() ? nullptr : shape_.data();
  }
  Dl(const Dl&) = delete;
  Dl& operator=(const Dl&) = delete;
  const DLTensor& t() const { return t_; }

 private:
  std::vector<int64_t> shape_;
  DLTensor t_;
};

/// Copies the DLTensor headers of several Dl into the contiguous array the C ABI takes.
std::vector<DLTensor> dl_array(const std::vector<const Dl*>& ts);

/// A compiled graph (lib_dir()/lib<name>.so) with its own context, called through the C ABI.
class KilnGraph {
 public:
  explicit KilnGraph(const std::string& name);
  ~KilnGraph();
  KilnGraph(const KilnGraph&) = delete;
  KilnGraph& operator=(const KilnGraph&) = delete;

  const kiln_graph_info& info() const { return *info_; }
  kiln_context* ctx() const { return ctx_; }
  void set_num_threads(int n) { info_->context_set_num_threads(ctx_, n); }
  /// call_into; throws with the context's last error on failure.
  void call_into(const std::vector<DLTensor>& in, std::vector<DLTensor>& out);

 private:
  std::shared_ptr<kiln::Library> lib_;
  const kiln_graph_info* info_ = nullptr;
  kiln_context* ctx_ = nullptr;
};

/// Runs the graph file graph_dir()/<file> in the reference evaluator (the graph as written, no
/// rewrites); the graph is loaded once and kept.
std::vector<kiln::Array> evaluate_graph(const std::string& file, const std::vector<const Dl*>& inputs);
/// The contents of an evaluator output as doubles (C order).
std::vector<double> array_values(const kiln::Array& a);

/// Largest violation of |got - want| <= atol + rtol |want|, as a message ("" when all agree).
template <typename A, typename B>
std::string compare(const char* what, const A* got, const B* want, std::size_t n, double rtol, double atol) {
  double worst = 0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double g = static_cast<double>(got[i]), w = static_cast<double>(want[i]);
    if (std::isnan(g) && std::isnan(w)) continue;
    double excess = (std::isnan(g) || std::isnan(w)) ? INFINITY : std::fabs(g - w) - (atol + rtol * std::fabs(w));
    if (excess > worst) {
      worst = excess;
      at = i;
    }
  }
  if (worst <= 0) return "";
  char buf[160];
  std::snprintf(buf, sizeof buf, " differs at [%zu]: %.17g vs %.17g (rtol %g, atol %g)", at,
                static_cast<double>(got[at]), static_cast<double>(want[at]), rtol, atol);
  return std::string(what) + buf;
}

/// Runs `check` once per key (e.g. "W1/float64/kiln") and remembers its message; later calls
/// return the remembered one. An empty message means correct.
const std::string& checked_once(const std::string& key, const std::function<std::string()>& check);

/// The timed loop of a kiln benchmark: one untimed warm-up call (so the context's workspace
/// exists: steady state), then call_into per iteration.
void time_kiln_call_into(benchmark::State& state, KilnGraph& g, int threads, const std::vector<DLTensor>& in,
                         std::vector<DLTensor>& out);

/// The timed loop of a workload with a hand-written baseline (W1-W5, W10): kiln's call_into and
/// `hand` alternate call by call, which one goes first alternating too, each timed on its own,
/// so both run on the same machine. (This VM's speed drifts within one 0.3 s repetition, so
/// separate kiln and hand benchmarks, even interleaved, compare different machines.) One
/// untimed warm-up call of each first. The benchmark's own time is the pair's; the counters
/// kiln_ms and hand_ms are each side's mean per call, and report.py takes the ratio from them.
void time_kiln_and_hand(benchmark::State& state, KilnGraph& g, int threads, const std::vector<DLTensor>& in,
                        std::vector<DLTensor>& out, const std::function<void()>& hand);

/// Registers a benchmark timed on the wall clock (threads matter), in milliseconds.
benchmark::internal::Benchmark* add(const std::string& name, std::function<void(benchmark::State&)> fn);

/// Tolerances per dtype for the correctness checks (relative; absolute for values near 0).
template <typename T>
constexpr double rtol() {
  return sizeof(T) == 8 ? 1e-9 : 2e-5;
}

// Registration of each workload family (one .cpp each).
void register_elemwise();   // W1, W2
void register_softmax();    // W3
void register_logreg();     // W4
void register_mlp();        // W5
void register_overhead();   // W6
void register_compile();    // W7
void register_linalg();     // W8, W9
void register_gather();     // W10
void register_scan();       // W11

}  // namespace bench
