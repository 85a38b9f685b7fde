// W5: MLP forward relu(X @ W1 + b1) @ W2 + b2 with X 4096x512, W1 512x512, W2 512x10.
#include <cblas.h>

#include <algorithm>

#include "common.hpp"
#include "kiln/runtime/array.hpp"

namespace bench {
namespace {

constexpr int64_t kM = 4096, kK = 512, kH = 512, kO = 10;

void gemm(int64_t m, int64_t n, int64_t k, const double* a, const double* b, double* c) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a, k, b, n, 0.0, c, n);
}
void gemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
}

// Hand-written: two direct CBLAS gemms and one bias+relu loop (and the small bias add).
template <typename T>
void w5_hand(const T* X, const T* W1, const T* b1, const T* W2, const T* b2, T* H, T* out, int threads) {
  openblas_set_num_threads(threads);
  gemm(kM, kH, kK, X, W1, H);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < kM; ++i) {
    T* __restrict h = H + i * kH;
#pragma omp simd
    for (int64_t j = 0; j < kH; ++j) h[j] = std::max(h[j] + b1[j], T(0));
  }
  gemm(kM, kO, kH, H, W2, out);
  for (int64_t i = 0; i < kM; ++i)
#pragma omp simd
    for (int64_t j = 0; j < kO; ++j) out[i * kO + j] += b2[j];
}

template <typename T>
struct Data {
  Buffer<T> X{kM * kK}, W1{kK * kH}, b1{kH}, W2{kH * kO}, b2{kO}, H{kM * kH}, out_kiln{kM * kO}, out_hand{kM * kO};
  Dl X_dl{X.data(), {kM, kK}}, W1_dl{W1.data(), {kK, kH}}, b1_dl{b1.data(), {kH}}, W2_dl{W2.data(), {kH, kO}},
      b2_dl{b2.data(), {kO}}, out_dl{out_kiln.data(), {kM, kO}};
  Data() {
    fill_uniform(X, -1.0, 1.0, 7);
    fill_uniform(W1, -0.1, 0.1, 8);
    fill_uniform(b1, -0.1, 0.1, 9);
    fill_uniform(W2, -0.1, 0.1, 10);
    fill_uniform(b2, -0.1, 0.1, 11);
  }
  std::vector<const Dl*> inputs() const { return {&X_dl, &W1_dl, &b1_dl, &W2_dl, &b2_dl}; }
  void hand(int threads) {
    w5_hand(X.data(), W1.data(), b1.data(), W2.data(), b2.data(), H.data(), out_hand.data(), threads);
  }
  static Data& get() {
    static Data d;
    return d;
  }
};

template <typename T>
std::string name() {
  return std::string("w5_mlp_") + dtype_name<T>();
}

// Outputs are O(1); BLAS blocking differs between the two calls, so compare with an absolute floor.
template <typename T>
constexpr double atol() {
  return sizeof(T) == 8 ? 1e-11 : 1e-4;
}

template <typename T>
void register_w5(int threads) {
  add(bench_name<T>("W5", "kiln", threads), [threads](benchmark::State& st) {
    auto& d = Data<T>::get();
    KilnGraph g(name<T>());
    auto in = dl_array(d.inputs());
    auto out = dl_array({&d.out_dl});
    const std::string& err = checked_once(name<T>() + "/kiln", [&] {
      g.set_num_threads(threads);
      g.call_into(in, out);
      d.hand(threads);
      return compare("kiln W5 vs hand-written", d.out_kiln.data(), d.out_hand.data(), kM * kO, 4 * rtol<T>(),
                     atol<T>());
    });
    if (!err.empty()) return st.SkipWithError(err.c_str());
    time_kiln_and_hand(st, g, threads, in, out, [&] { d.hand(threads); });
  });
}

template <typename T>
void register_eval() {
  add(bench_name<T>("W5", "eval", 1), [](benchmark::State& st) {
    auto& d = Data<T>::get();
    std::string err;
    for (auto _ : st) {
      auto out = evaluate_graph(name<T>() + ".json", d.inputs());
      st.PauseTiming();
      err = checked_once(name<T>() + "/eval", [&] {
        d.hand(2);
        return compare("evaluator W5 vs hand-written", array_values(out[0]).data(), d.out_hand.data(), kM * kO,
                       4 * rtol<T>(), atol<T>());
      });
      st.ResumeTiming();
    }
    if (!err.empty()) st.SkipWithError(err.c_str());
  })->Iterations(1)->Repetitions(1);
}

}  // namespace

void register_mlp() {
  for (int t : {1, 2}) {
    register_w5<double>(t);
    register_w5<float>(t);
  }
  register_eval<double>();
  register_eval<float>();
}

}  // namespace bench
