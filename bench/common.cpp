#include "common.hpp"

#include <chrono>

#include "eval/evaluator.h"
#include "io/graph_load.h"

namespace bench {

std::string env_required(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) throw std::runtime_error(std::string("$") + name + " is not set: run the benchmarks through bench/run");
  return v;
}

std::vector<DLTensor> dl_array(const std::vector<const Dl*>& ts) {
  std::vector<DLTensor> out;
  for (const Dl* t : ts) out.push_back(t->t());
  return out;
}

KilnGraph::KilnGraph(const std::string& name) {
  // One Library per file for the whole run: dlopen once.
  static std::map<std::string, std::shared_ptr<kiln::Library>> libs;
  std::string path = lib_dir() + "/lib" + name + ".so";
  auto& lib = libs[path];
  if (!lib) lib = std::make_shared<kiln::Library>(path);
  lib_ = lib;
  info_ = &lib_->graph(name);
  ctx_ = info_->context_create();
  if (!ctx_) throw std::bad_alloc();
}

KilnGraph::~KilnGraph() {
  if (ctx_) info_->context_destroy(ctx_);
}

void KilnGraph::call_into(const std::vector<DLTensor>& in, std::vector<DLTensor>& out) {
  int32_t st = info_->call_into(ctx_, in.data(), out.data());
  if (st != KILN_OK)
    throw std::runtime_error(std::string(info_->name) + ": " + kiln_status_name(st) + ": " +
                             info_->context_last_error(ctx_));
}

std::vector<kiln::Array> evaluate_graph(const std::string& file, const std::vector<const Dl*>& inputs) {
  static std::map<std::string, std::unique_ptr<kiln::FunctionGraph>> graphs;
  auto& fg = graphs[file];
  if (!fg) fg = std::make_unique<kiln::FunctionGraph>(kiln::load_graph_file(graph_dir() + "/" + file));
  std::vector<kiln::Array> in;
  for (const Dl* t : inputs) in.push_back(kiln::Array::from_dlpack(t->t()));
  return kiln::evaluate(*fg, in);
}

std::vector<double> array_values(const kiln::Array& a) {
  kiln::Array c = a.is_c_contiguous() ? a : a.copy();
  std::vector<double> v(static_cast<std::size_t>(c.size()));
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (c.dtype() == kiln::DType::Float64)
      v[i] = c.data<double>()[i];
    else if (c.dtype() == kiln::DType::Float32)
      v[i] = c.data<float>()[i];
    else
      throw std::runtime_error("array_values: not a float array");
  }
  return v;
}

const std::string& checked_once(const std::string& key, const std::function<std::string()>& check) {
  static std::map<std::string, std::string> done;
  auto it = done.find(key);
  if (it != done.end()) return it->second;
  std::string msg;
  try {
    msg = check();
  } catch (const std::exception& e) {
    msg = e.what();
  }
  if (!msg.empty()) std::fprintf(stderr, "CHECK FAILED %s: %s\n", key.c_str(), msg.c_str());
  return done[key] = msg;
}

namespace {

// One untimed call_into with `threads` threads, so the context's workspace exists (steady
// state); false, with the benchmark skipped, when it fails.
bool warm_up(benchmark::State& state, KilnGraph& g, int threads, const std::vector<DLTensor>& in,
             std::vector<DLTensor>& out) {
  g.set_num_threads(threads);
  try {
    g.call_into(in, out);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return false;
  }
  return true;
}

}  // namespace

void time_kiln_call_into(benchmark::State& state, KilnGraph& g, int threads, const std::vector<DLTensor>& in,
                         std::vector<DLTensor>& out) {
  if (!warm_up(state, g, threads, in, out)) return;
  const kiln_graph_info& info = g.info();
  for (auto _ : state) {
    int32_t st = info.call_into(g.ctx(), in.data(), out.data());
    if (st != KILN_OK) {
      state.SkipWithError(info.context_last_error(g.ctx()));
      break;
    }
    benchmark::ClobberMemory();
  }
}

void time_kiln_and_hand(benchmark::State& state, KilnGraph& g, int threads, const std::vector<DLTensor>& in,
                        std::vector<DLTensor>& out, const std::function<void()>& hand) {
  if (!warm_up(state, g, threads, in, out)) return;
  hand();
  const kiln_graph_info& info = g.info();
  using Clock = std::chrono::steady_clock;
  Clock::duration kiln_time{}, hand_time{};
  const auto time_kiln = [&] {
    const auto t0 = Clock::now();
    const int32_t st = info.call_into(g.ctx(), in.data(), out.data());
    benchmark::ClobberMemory();
    kiln_time += Clock::now() - t0;
    return st == KILN_OK;
  };
  const auto time_hand = [&] {
    const auto t0 = Clock::now();
    hand();
    benchmark::ClobberMemory();
    hand_time += Clock::now() - t0;
  };
  bool kiln_first = true;
  for (auto _ : state) {
    if (!kiln_first) time_hand();
    const bool ok = time_kiln();
    if (kiln_first) time_hand();
    if (!ok) {
      state.SkipWithError(info.context_last_error(g.ctx()));
      return;
    }
    kiln_first = !kiln_first;
  }
  const auto ms = [](Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  state.counters["kiln_ms"] = benchmark::Counter(ms(kiln_time), benchmark::Counter::kAvgIterations);
  state.counters["hand_ms"] = benchmark::Counter(ms(hand_time), benchmark::Counter::kAvgIterations);
}

benchmark::internal::Benchmark* add(const std::string& name, std::function<void(benchmark::State&)> fn) {
  return benchmark::RegisterBenchmark(name.c_str(), [fn](benchmark::State& s) { fn(s); })
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  try {
    bench::register_elemwise();
    bench::register_softmax();
    bench::register_logreg();
    bench::register_mlp();
    bench::register_overhead();
    bench::register_compile();
    bench::register_linalg();
    bench::register_gather();
    bench::register_scan();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln_bench: %s\n", e.what());
    return 1;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
