// W3: row-wise log_softmax of a 10000 x 1000 matrix.
#include <cmath>
#include <limits>

#include "common.hpp"
#include "kiln/runtime/array.hpp"
#include "sleef_simd.hpp"
#define KILN_BENCH_HAND_NS hand
#include "hand_loops.hpp"
#include "fastmath_loops.hpp"

namespace bench {
namespace {

using w3::kRows;
using w3::kCols;


template <typename T>
struct Data {
  Buffer<T> x{kRows * kCols}, y_kiln{kRows * kCols}, y_hand{kRows * kCols};
  Dl x_dl{x.data(), {kRows, kCols}}, y_dl{y_kiln.data(), {kRows, kCols}};
  Data() { fill_uniform(x, -8.0, 8.0, 3); }
  static Data& get() {
    static Data d;
    return d;
  }
};

template <typename T>
std::string file() {
  return std::string("w3_logsoftmax_") + dtype_name<T>();
}

// log_softmax values are O(10) here; compare with an absolute floor scaled to that.
template <typename T>
constexpr double atol() {
  return sizeof(T) == 8 ? 1e-11 : 1e-4;
}

template <typename T>
void register_w3(int threads) {
  add(bench_name<T>("W3", "kiln", threads), [threads](benchmark::State& st) {
    auto& d = Data<T>::get();
    KilnGraph g(file<T>());
    auto in = dl_array({&d.x_dl});
    auto out = dl_array({&d.y_dl});
    const std::string& err = checked_once(file<T>() + "/kiln", [&] {
      g.set_num_threads(threads);
      g.call_into(in, out);
      hand::w3_hand(d.x.data(), d.y_hand.data(), threads);
      return compare("kiln W3 vs hand-written", d.y_kiln.data(), d.y_hand.data(), kRows * kCols, 4 * rtol<T>(),
                     atol<T>());
    });
    if (!err.empty()) return st.SkipWithError(err.c_str());
    time_kiln_and_hand(st, g, threads, in, out, [&] { hand::w3_hand(d.x.data(), d.y_hand.data(), threads); });
  });
  // Against the loop compiled with -ffast-math (libmvec): issue 20's target.
  add(bench_name<T>("W3", "kiln_fastmath", threads), [threads](benchmark::State& st) {
    auto& d = Data<T>::get();
    KilnGraph g(file<T>());
    auto in = dl_array({&d.x_dl});
    auto out = dl_array({&d.y_dl});
    time_kiln_and_hand(st, g, threads, in, out, [&] { fast::w3(d.x.data(), d.y_hand.data(), threads); });
  });
}

template <typename T>
void register_eval() {
  add(bench_name<T>("W3", "eval", 1), [](benchmark::State& st) {
    auto& d = Data<T>::get();
    std::string err;
    for (auto _ : st) {
      auto out = evaluate_graph(file<T>() + ".json", {&d.x_dl});
      st.PauseTiming();
      err = checked_once(file<T>() + "/eval", [&] {
        hand::w3_hand(d.x.data(), d.y_hand.data(), 2);
        return compare("evaluator W3 vs hand-written", array_values(out[0]).data(), d.y_hand.data(),
                       kRows * kCols, 4 * rtol<T>(), atol<T>());
      });
      st.ResumeTiming();
    }
    if (!err.empty()) st.SkipWithError(err.c_str());
  })->Iterations(1)->Repetitions(1);
}

}  // namespace

void register_softmax() {
  for (int t : {1, 2}) {
    register_w3<double>(t);
    register_w3<float>(t);
  }
  register_eval<double>();
  register_eval<float>();
}

}  // namespace bench
