// W10: the gather-add of a hierarchical model, y = mu[idx] + x, with 10^6 elements and 10^4
// groups. kiln compiles the AdvancedSubtensor (PyTensor 3.x's idx_list=(0,)) into the add's
// loop (gather fusion, codegen/gather_fusion.h): mu[idx] is never stored, and each index is
// checked as the loop reads it. The hand-written loop reads mu[idx[i]] with no checks at all.
#include <random>

#include "common.hpp"
#include "kiln/runtime/array.hpp"

namespace bench {
namespace {

constexpr int64_t kN = 1000000, kGroups = 10000;

template <typename T>
void w10_hand(const T* __restrict mu, const int64_t* __restrict idx, const T* __restrict x, T* __restrict y,
             int threads) {
#pragma omp parallel for simd schedule(static) num_threads(threads)
  for (int64_t i = 0; i < kN; ++i) y[i] = mu[idx[i]] + x[i];
}

template <typename T>
struct Data {
  Buffer<T> mu{kGroups}, x{kN}, y_kiln{kN}, y_hand{kN};
  Buffer<int64_t> idx{kN};
  Dl mu_dl{mu.data(), {kGroups}}, idx_dl{idx.data(), {kN}}, x_dl{x.data(), {kN}}, y_dl{y_kiln.data(), {kN}};
  Data() {
    fill_uniform(mu, -3.0, 3.0, 8);
    fill_uniform(x, -1.0, 1.0, 9);
    std::mt19937_64 rng(10);
    std::uniform_int_distribution<int64_t> group(0, kGroups - 1);
    for (int64_t i = 0; i < kN; ++i) idx[static_cast<std::size_t>(i)] = group(rng);
  }
  static Data& get() {
    static Data d;
    return d;
  }
};

template <typename T>
std::string file() {
  return std::string("w10_gather_add_") + dtype_name<T>();
}

template <typename T>
void register_w10(int threads) {
  add(bench_name<T>("W10", "kiln", threads), [threads](benchmark::State& st) {
    auto& d = Data<T>::get();
    KilnGraph g(file<T>());
    auto in = dl_array({&d.mu_dl, &d.idx_dl, &d.x_dl});
    auto out = dl_array({&d.y_dl});
    auto hand = [&] { w10_hand(d.mu.data(), d.idx.data(), d.x.data(), d.y_hand.data(), threads); };
    const std::string& err = checked_once(file<T>() + "/kiln", [&] {
      g.set_num_threads(threads);
      g.call_into(in, out);
      hand();
      return compare("kiln W10 vs hand-written", d.y_kiln.data(), d.y_hand.data(), kN, rtol<T>(), 0.0);
    });
    if (!err.empty()) return st.SkipWithError(err.c_str());
    time_kiln_and_hand(st, g, threads, in, out, hand);
  });
}

template <typename T>
void register_eval() {
  add(bench_name<T>("W10", "eval", 1), [](benchmark::State& st) {
    auto& d = Data<T>::get();
    std::string err;
    for (auto _ : st) {
      auto out = evaluate_graph(file<T>() + ".json", {&d.mu_dl, &d.idx_dl, &d.x_dl});
      st.PauseTiming();
      err = checked_once(file<T>() + "/eval", [&] {
        w10_hand(d.mu.data(), d.idx.data(), d.x.data(), d.y_hand.data(), 2);
        return compare("evaluator W10 vs hand-written", array_values(out[0]).data(), d.y_hand.data(), kN, rtol<T>(),
                       0.0);
      });
      st.ResumeTiming();
    }
    if (!err.empty()) st.SkipWithError(err.c_str());
  })->Iterations(1)->Repetitions(1);
}

}  // namespace

void register_gather() {
  for (int t : {1, 2}) {
    register_w10<double>(t);
    register_w10<float>(t);
  }
  register_eval<double>();
  register_eval<float>();
}

}  // namespace bench
