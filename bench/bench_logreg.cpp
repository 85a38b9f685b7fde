// W4: one logistic-regression training step (loss, p and both gradients, from `kiln grad` of
// samples/logistic_regression/loss.json) on X of 1,000,000 x 20.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common.hpp"
#include "kiln/runtime/array.hpp"
#include "sleef_simd.hpp"
#define KILN_BENCH_HAND_NS hand
#include "hand_loops.hpp"
#include "fastmath_loops.hpp"

namespace bench {
namespace {

using namespace w4;


template <typename T>
struct Outputs {
  Buffer<T> loss{1}, p{kN}, gw{kD}, gb{1};
  Dl loss_dl{loss.data(), {}}, p_dl{p.data(), {kN}}, gw_dl{gw.data(), {kD}}, gb_dl{gb.data(), {}};
  std::vector<DLTensor> dl() const { return dl_array({&loss_dl, &p_dl, &gw_dl, &gb_dl}); }
};

template <typename T>
struct Data {
  Buffer<T> X{kN * kD}, y{kN}, w{kD}, b{1};
  Dl X_dl{X.data(), {kN, kD}}, y_dl{y.data(), {kN}}, w_dl{w.data(), {kD}}, b_dl{b.data(), {}};
  Outputs<T> kiln, hand;
  Data() {
    fill_uniform(X, -1.0, 1.0, 4);
    fill_uniform(w, -1.0, 1.0, 5);
    b[0] = T(0.1);
    // Labels from a noisy linear rule, so the loss is neither 0 nor huge.
    Buffer<T> noise(kN);
    fill_uniform(noise, -1.0, 1.0, 6);
    for (int64_t i = 0; i < kN; ++i) {
      T z = b[0];
      for (int64_t j = 0; j < kD; ++j) z += X[i * kD + j] * w[j];
      y[i] = z + noise[i] > 0 ? T(1) : T(0);
    }
  }
  std::vector<DLTensor> in() const { return dl_array({&X_dl, &y_dl, &w_dl, &b_dl}); }
  void hand_step(Outputs<T>& o, int threads) {
    hand::w4_hand(X.data(), y.data(), w.data(), b[0], o.p.data(), o.loss.data(), o.gw.data(), o.gb.data(), threads);
  }
  static Data& get() {
    static Data d;
    return d;
  }
};

template <typename T>
std::string name() {
  return std::string("w4_logreg_") + dtype_name<T>();
}

// Sums over 10^6 terms in a different order: float32 needs a loose tolerance (kiln's gemv
// accumulates in float32).
template <typename T>
constexpr double tol() {
  return sizeof(T) == 8 ? 1e-8 : 2e-3;
}

// Compares the four outputs (loss, p, grad_w, grad_b) with the hand-written ones; gradients
// get an absolute floor relative to their largest entry.
template <typename T>
std::string compare_outputs(const char* what, const std::vector<std::vector<double>>& got, const Outputs<T>& want) {
  double gmax = 0;
  for (int64_t j = 0; j < kD; ++j) gmax = std::max(gmax, std::fabs(double(want.gw[j])));
  std::string w = what;
  std::string e = compare((w + " loss").c_str(), got[0].data(), want.loss.data(), 1, tol<T>(), 0);
  if (e.empty()) e = compare((w + " p").c_str(), got[1].data(), want.p.data(), kN, tol<T>(), tol<T>() * 1e-3);
  if (e.empty()) e = compare((w + " grad_w").c_str(), got[2].data(), want.gw.data(), kD, tol<T>(), tol<T>() * gmax);
  if (e.empty()) e = compare((w + " grad_b").c_str(), got[3].data(), want.gb.data(), 1, tol<T>(), tol<T>() * gmax);
  return e;
}

template <typename T>
std::vector<std::vector<double>> values(const Outputs<T>& o) {
  return {{double(o.loss[0])}, std::vector<double>(o.p.data(), o.p.data() + kN),
          std::vector<double>(o.gw.data(), o.gw.data() + kD), {double(o.gb[0])}};
}

template <typename T>
void register_w4(int threads) {
  add(bench_name<T>("W4", "kiln", threads), [threads](benchmark::State& st) {
    auto& d = Data<T>::get();
    KilnGraph g(name<T>());
    auto in = d.in();
    auto out = d.kiln.dl();
    const std::string& err = checked_once(name<T>() + "/kiln", [&] {
      if (g.info().num_outputs != 4) return std::string("the grad graph should have 4 outputs (loss, p, grad_w, grad_b)");
      g.set_num_threads(threads);
      g.call_into(in, out);
      d.hand_step(d.hand, threads);
      return compare_outputs("kiln W4 vs hand-written", values(d.kiln), d.hand);
    });
    if (!err.empty()) return st.SkipWithError(err.c_str());
    time_kiln_and_hand(st, g, threads, in, out, [&] { d.hand_step(d.hand, threads); });
  });
  // Against the step compiled with -ffast-math (libmvec): issue 20's target.
  add(bench_name<T>("W4", "kiln_fastmath", threads), [threads](benchmark::State& st) {
    auto& d = Data<T>::get();
    KilnGraph g(name<T>());
    auto in = d.in();
    auto out = d.kiln.dl();
    Outputs<T>& o = d.hand;
    time_kiln_and_hand(st, g, threads, in, out, [&] {
      fast::w4(d.X.data(), d.y.data(), d.w.data(), d.b[0], o.p.data(), o.loss.data(), o.gw.data(), o.gb.data(), threads);
    });
  });
}

template <typename T>
void register_eval() {
  add(bench_name<T>("W4", "eval", 1), [](benchmark::State& st) {
    auto& d = Data<T>::get();
    std::string err;
    for (auto _ : st) {
      auto out = evaluate_graph(name<T>() + ".json", {&d.X_dl, &d.y_dl, &d.w_dl, &d.b_dl});
      st.PauseTiming();
      err = checked_once(name<T>() + "/eval", [&] {
        if (out.size() != 4) return std::string("the grad graph should have 4 outputs");
        d.hand_step(d.hand, 2);
        std::vector<std::vector<double>> got;
        for (const auto& a : out) got.push_back(array_values(a));
        return compare_outputs("evaluator W4 vs hand-written", got, d.hand);
      });
      st.ResumeTiming();
    }
    if (!err.empty()) st.SkipWithError(err.c_str());
  })->Iterations(1)->Repetitions(1);
}

}  // namespace

void register_logreg() {
  for (int t : {1, 2}) {
    register_w4<double>(t);
    register_w4<float>(t);
  }
  register_eval<double>();
  register_eval<float>();
}

}  // namespace bench
