// W6: call overhead of log(1 + x) on a length-3 vector (samples/log1p.json), in ns per call
// through the C ABI: call_into with caller-provided outputs, and call with kiln-allocated
// outputs released through their deleter.
#include <cmath>

#include "common.hpp"
#include "kiln/runtime/array.hpp"

namespace bench {
namespace {

template <typename T>
struct Data {
  T x[3] = {T(0.5), T(1), T(2)};
  T y[3] = {};
  Dl x_dl{x, {3}}, y_dl{y, {3}};
  static Data& get() {
    static Data d;
    return d;
  }
};

template <typename T>
std::string name() {
  return std::string("w6_log1p_") + dtype_name<T>();
}

template <typename T>
std::string check_values(const T* got) {
  const auto& d = Data<T>::get();
  T want[3];
  for (int i = 0; i < 3; ++i) want[i] = std::log1p(d.x[i]);
  return compare("kiln W6 vs log1p", got, want, 3, 4 * rtol<T>(), 0);
}

template <typename T>
void register_w6() {
  add(bench_name<T>("W6", "kiln", 1), [](benchmark::State& st) {
    auto& d = Data<T>::get();
    KilnGraph g(name<T>());
    auto in = dl_array({&d.x_dl});
    auto out = dl_array({&d.y_dl});
    const std::string& err = checked_once(name<T>() + "/kiln", [&] {
      g.call_into(in, out);
      return check_values(d.y);
    });
    if (!err.empty()) return st.SkipWithError(err.c_str());
    time_kiln_call_into(st, g, 1, in, out);
  })->Unit(benchmark::kNanosecond);
  add(bench_name<T>("W6", "kiln_call", 1), [](benchmark::State& st) {
    auto& d = Data<T>::get();
    KilnGraph g(name<T>());
    auto in = dl_array({&d.x_dl});
    const kiln_graph_info& info = g.info();
    DLManagedTensor* outs[1] = {nullptr};
    const std::string& err = checked_once(name<T>() + "/kiln_call", [&] {
      int32_t s = info.call(g.ctx(), in.data(), outs);
      if (s != KILN_OK) return std::string(info.context_last_error(g.ctx()));
      std::string e = check_values(static_cast<const T*>(outs[0]->dl_tensor.data));
      outs[0]->deleter(outs[0]);
      return e;
    });
    if (!err.empty()) return st.SkipWithError(err.c_str());
    for (auto _ : st) {
      if (info.call(g.ctx(), in.data(), outs) != KILN_OK) {
        st.SkipWithError(info.context_last_error(g.ctx()));
        break;
      }
      outs[0]->deleter(outs[0]);
    }
  })->Unit(benchmark::kNanosecond);
  add(bench_name<T>("W6", "eval", 1), [](benchmark::State& st) {
    auto& d = Data<T>::get();
    for (auto _ : st) benchmark::DoNotOptimize(evaluate_graph(name<T>() + ".json", {&d.x_dl}));
  })->Unit(benchmark::kNanosecond);
}

}  // namespace

void register_overhead() {
  register_w6<double>();
  register_w6<float>();
}

}  // namespace bench
