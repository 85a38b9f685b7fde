// W11 (issue 18): the AR(1) log-likelihood written with Scan over 10^5 observations. The Scan
// carries a running sum as its sit-sot state, so each step depends on the last and the loop
// stays a loop; kiln calls the compiled inner graph once per step with its buffers planned
// once. The hand-written loop is what a C++ programmer writes for the same sum.
#include <cmath>

#include "common.hpp"
#include "kiln/runtime/array.hpp"

namespace bench {
namespace {

constexpr int64_t kSteps = 100000;

template <typename T>
T w11_hand(const T* __restrict y, T phi, T sigma) {
  T acc = 0;
  for (int64_t t = 1; t < kSteps; ++t) {
    T z = (y[t] - phi * y[t - 1]) / sigma;
    acc = acc - T(0.5) * z * z;
  }
  const T n1 = static_cast<T>(kSteps - 1);
  return acc - n1 * (std::log(sigma) + static_cast<T>(0.5 * std::log(2 * M_PI)));
}

template <typename T>
struct Data {
  Buffer<T> y{kSteps}, phi{1}, sigma{1}, out{1};
  T hand_out = 0;
  Dl y_dl{y.data(), {kSteps}}, phi_dl{phi.data(), {}}, sigma_dl{sigma.data(), {}}, out_dl{out.data(), {}};
  Data() {
    // An AR(1) path with phi = 0.8, sigma = 0.5: the likelihood's terms stay of one size.
    Buffer<T> noise{kSteps};
    fill_uniform(noise, -0.5, 0.5, 11);
    phi[0] = T(0.8);
    sigma[0] = T(0.5);
    y[0] = 0;
    for (int64_t t = 1; t < kSteps; ++t) y[t] = phi[0] * y[t - 1] + noise[t];
  }
  static Data& get() {
    static Data d;
    return d;
  }
};

template <typename T>
std::string file() {
  return std::string("w11_ar1_scan_") + dtype_name<T>();
}

// Both sides add the 10^5 terms in the same order, but the compiler may contract or round each
// term differently (fma): the tolerance is the dtype's, widened for a sum of 10^5 terms.
template <typename T>
constexpr double w11_rtol() {
  return rtol<T>() * 300;
}

template <typename T>
void register_w11() {
  add(bench_name<T>("W11", "kiln", 1), [](benchmark::State& st) {
    auto& d = Data<T>::get();
    KilnGraph g(file<T>());
    auto in = dl_array({&d.y_dl, &d.phi_dl, &d.sigma_dl});
    auto out = dl_array({&d.out_dl});
    // A plain store, then a compiler barrier. Google Benchmark 1.7's DoNotOptimize of a double
    // lvalue ("+m,r") lost the store under GCC 12: the check read hand_out as 0.
    auto hand = [&] {
      d.hand_out = w11_hand(d.y.data(), d.phi[0], d.sigma[0]);
      benchmark::ClobberMemory();
    };
    const std::string& err = checked_once(file<T>() + "/kiln", [&] {
      g.set_num_threads(1);
      g.call_into(in, out);
      hand();
      return compare("kiln W11 vs hand-written", d.out.data(), &d.hand_out, 1, w11_rtol<T>(), 0.0);
    });
    if (!err.empty()) return st.SkipWithError(err.c_str());
    time_kiln_and_hand(st, g, 1, in, out, hand);
  });
}

template <typename T>
void register_eval() {
  add(bench_name<T>("W11", "eval", 1), [](benchmark::State& st) {
    auto& d = Data<T>::get();
    std::string err;
    for (auto _ : st) {
      auto out = evaluate_graph(file<T>() + ".json", {&d.y_dl, &d.phi_dl, &d.sigma_dl});
      st.PauseTiming();
      err = checked_once(file<T>() + "/eval", [&] {
        T want = w11_hand(d.y.data(), d.phi[0], d.sigma[0]);
        return compare("evaluator W11 vs hand-written", array_values(out[0]).data(), &want, 1, w11_rtol<T>(), 0.0);
      });
      st.ResumeTiming();
    }
    if (!err.empty()) st.SkipWithError(err.c_str());
  })->Iterations(1)->Repetitions(1);
}

}  // namespace

void register_scan() {
  register_w11<double>();
  register_w11<float>();
  register_eval<double>();
  register_eval<float>();
}

}  // namespace bench
