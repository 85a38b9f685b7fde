// W1 y = exp(sin(x)) + 0.5 log1p(x*x) and W2 sum(x*x), on 2^24 elements.
#include <omp.h>

#include <cmath>

#include "common.hpp"
#include "kiln/runtime/array.hpp"
#include "sleef_simd.hpp"
#define KILN_BENCH_HAND_NS hand
#include "hand_loops.hpp"
#include "fastmath_loops.hpp"

namespace bench {

template <typename T>
void w1_libm(const T* __restrict x, T* __restrict y, int64_t n, int threads);

namespace {

constexpr int64_t kN = int64_t(1) << 24;


// The accumulator kiln uses for a sum (float64 for float32 inputs too, as PyTensor's acc_dtype).
using Acc = double;

// Hand-written W2: each thread sums its contiguous chunk into 16 independent accumulators
// (four AVX2 vectors), so the adds are not one latency chain; x*x is never stored.
template <typename T>
Acc w2_hand(const T* __restrict x, int64_t n, int threads) {
  constexpr int L = 16;
  Acc total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
  {
    int nt = omp_get_num_threads(), t = omp_get_thread_num();
    int64_t lo = n * t / nt, hi = n * (t + 1) / nt;
    Acc acc[L] = {};
    int64_t i = lo;
    for (; i + L <= hi; i += L)
#pragma omp simd
      for (int j = 0; j < L; ++j) acc[j] += Acc(x[i + j] * x[i + j]);
    for (; i < hi; ++i) acc[0] += Acc(x[i] * x[i]);
    Acc s = 0;
    for (int j = 0; j < L; ++j) s += acc[j];
    total += s;
  }
  return total;
}

template <typename T>
struct Data {
  Buffer<T> x{kN}, y_kiln{kN}, y_hand{kN}, s_kiln{1};
  Dl x_dl{x.data(), {kN}}, y_dl{y_kiln.data(), {kN}}, s_dl{s_kiln.data(), {}};
  Data() { fill_uniform(x, -10.0, 10.0, 1); }
  static Data& get() {
    static Data d;
    return d;
  }
};

template <typename T>
std::string w1_file() {
  return std::string("w1_elemwise_") + dtype_name<T>();
}
template <typename T>
std::string w2_file() {
  return std::string("w2_sumsq_") + dtype_name<T>();
}

template <typename T>
void register_w1(int threads) {
  add(bench_name<T>("W1", "kiln", threads), [threads](benchmark::State& st) {
    auto& d = Data<T>::get();
    KilnGraph g(w1_file<T>());
    auto in = dl_array({&d.x_dl});
    auto out = dl_array({&d.y_dl});
    const std::string& err = checked_once(w1_file<T>() + "/kiln", [&] {
      g.set_num_threads(threads);
      g.call_into(in, out);
      hand::w1_hand(d.x.data(), d.y_hand.data(), kN, threads);
      return compare("kiln W1 vs hand-written", d.y_kiln.data(), d.y_hand.data(), kN, 4 * rtol<T>(), 0);
    });
    if (!err.empty()) return st.SkipWithError(err.c_str());
    time_kiln_and_hand(st, g, threads, in, out, [&] { hand::w1_hand(d.x.data(), d.y_hand.data(), kN, threads); });
  });
  // The same graph against the loop compiled with -ffast-math (libmvec): issue 20's target.
  add(bench_name<T>("W1", "kiln_fastmath", threads), [threads](benchmark::State& st) {
    auto& d = Data<T>::get();
    KilnGraph g(w1_file<T>());
    auto in = dl_array({&d.x_dl});
    auto out = dl_array({&d.y_dl});
    time_kiln_and_hand(st, g, threads, in, out, [&] { fast::w1(d.x.data(), d.y_hand.data(), kN, threads); });
  });
  add(bench_name<T>("W1", "hand_libm", threads), [threads](benchmark::State& st) {
    auto& d = Data<T>::get();
    for (auto _ : st) {
      w1_libm(d.x.data(), d.y_hand.data(), kN, threads);
      benchmark::ClobberMemory();
    }
  });
}

template <typename T>
void register_w2(int threads) {
  add(bench_name<T>("W2", "kiln", threads), [threads](benchmark::State& st) {
    auto& d = Data<T>::get();
    KilnGraph g(w2_file<T>());
    auto in = dl_array({&d.x_dl});
    auto out = dl_array({&d.s_dl});
    const std::string& err = checked_once(w2_file<T>() + "/kiln", [&] {
      g.set_num_threads(threads);
      g.call_into(in, out);
      T want = static_cast<T>(w2_hand(d.x.data(), kN, threads));
      return compare("kiln W2 vs hand-written", d.s_kiln.data(), &want, 1, 4 * rtol<T>(), 0);
    });
    if (!err.empty()) return st.SkipWithError(err.c_str());
    time_kiln_and_hand(st, g, threads, in, out, [&] { benchmark::DoNotOptimize(w2_hand(d.x.data(), kN, threads)); });
  });
}

// The reference evaluator, checked against the hand-written result (so the baseline is right too).
template <typename T>
void register_eval() {
  add(bench_name<T>("W1", "eval", 1), [](benchmark::State& st) {
    auto& d = Data<T>::get();
    std::string err;
    for (auto _ : st) {
      auto out = evaluate_graph(w1_file<T>() + ".json", {&d.x_dl});
      st.PauseTiming();
      err = checked_once(w1_file<T>() + "/eval", [&] {
        hand::w1_hand(d.x.data(), d.y_hand.data(), kN, 2);
        return compare("evaluator W1 vs hand-written", array_values(out[0]).data(), d.y_hand.data(), kN,
                       4 * rtol<T>(), 0);
      });
      st.ResumeTiming();
    }
    if (!err.empty()) st.SkipWithError(err.c_str());
  })->Iterations(1)->Repetitions(1);
  add(bench_name<T>("W2", "eval", 1), [](benchmark::State& st) {
    auto& d = Data<T>::get();
    std::string err;
    for (auto _ : st) {
      auto out = evaluate_graph(w2_file<T>() + ".json", {&d.x_dl});
      st.PauseTiming();
      err = checked_once(w2_file<T>() + "/eval", [&] {
        double want = w2_hand(d.x.data(), kN, 2);
        return compare("evaluator W2 vs hand-written", array_values(out[0]).data(), &want, 1, 4 * rtol<T>(), 0);
      });
      st.ResumeTiming();
    }
    if (!err.empty()) st.SkipWithError(err.c_str());
  })->Iterations(1)->Repetitions(1);
}

}  // namespace

void register_elemwise() {
  for (int t : {1, 2}) {
    register_w1<double>(t);
    register_w1<float>(t);
    register_w2<double>(t);
    register_w2<float>(t);
  }
  register_eval<double>();
  register_eval<float>();
}

}  // namespace bench
