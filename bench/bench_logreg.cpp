// W4: one logistic-regression training step (loss, p and both gradients, from `kiln grad` of
// samples/logistic_regression/loss.json) on X of 1,000,000 x 20.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common.hpp"
#include "kiln/runtime/array.hpp"
#include "sleef_simd.hpp"

namespace bench {
namespace {

constexpr int64_t kN = 1000000, kD = 20;
constexpr double kL2 = 0.01;  // the regulariser weight in loss.json
constexpr int64_t kBlock = 256;  // rows per block: the block of X stays in L1/L2 for its second use

using Acc = double;

// Hand-written fused step, one pass over X: per block of rows, z = X_blk w + b; then a
// SLEEF-vectorised loop computes p = sigmoid(z), the cross-entropy softplus(z) - y z and
// r = (p - y); then grad_w += X_blk^T r while the block is still in cache. Per-thread partial
// sums are added at the end.
template <typename T>
void w4_hand(const T* __restrict X, const T* __restrict y, const T* __restrict w, T b, T* __restrict p, T* loss,
             T* __restrict gw, T* gb, int threads) {
  Acc total_xent = 0, total_r = 0;
  Acc total_gw[kD] = {};
#pragma omp parallel num_threads(threads)
  {
    Acc gw_loc[kD] = {};
    Acc xent_loc = 0, r_loc = 0;
    alignas(64) T z[kBlock], r[kBlock];
#pragma omp for schedule(static)
    for (int64_t i0 = 0; i0 < kN; i0 += kBlock) {
      const int64_t m = std::min(kBlock, kN - i0);
      const T* __restrict Xb = X + i0 * kD;
      for (int64_t i = 0; i < m; ++i) {
        T s = b;
#pragma omp simd reduction(+ : s)
        for (int64_t j = 0; j < kD; ++j) s += Xb[i * kD + j] * w[j];
        z[i] = s;
      }
#pragma omp simd reduction(+ : xent_loc, r_loc)
      for (int64_t i = 0; i < m; ++i) {
        const T zi = z[i], yi = y[i0 + i];
        const T e = std::exp(-std::fabs(zi));       // in (0, 1]: no overflow
        const T pi = zi >= 0 ? T(1) / (T(1) + e) : e / (T(1) + e);
        p[i0 + i] = pi;
        xent_loc += Acc(std::max(zi, T(0)) + std::log1p(e) - yi * zi);  // softplus(z) - y z
        r[i] = pi - yi;
        r_loc += Acc(r[i]);
      }
      T gblk[kD] = {};
      for (int64_t i = 0; i < m; ++i)
#pragma omp simd
        for (int64_t j = 0; j < kD; ++j) gblk[j] += r[i] * Xb[i * kD + j];
      for (int64_t j = 0; j < kD; ++j) gw_loc[j] += gblk[j];
    }
#pragma omp critical
    {
      total_xent += xent_loc;
      total_r += r_loc;
      for (int64_t j = 0; j < kD; ++j) total_gw[j] += gw_loc[j];
    }
  }
  Acc sw = 0;
  for (int64_t j = 0; j < kD; ++j) sw += Acc(w[j]) * w[j];
  *loss = static_cast<T>(total_xent / kN + kL2 * sw);
  for (int64_t j = 0; j < kD; ++j) gw[j] = static_cast<T>(total_gw[j] / kN + 2 * kL2 * w[j]);
  *gb = static_cast<T>(total_r / kN);
}

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
    w4_hand(X.data(), y.data(), w.data(), b[0], o.p.data(), o.loss.data(), o.gw.data(), o.gb.data(), threads);
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
