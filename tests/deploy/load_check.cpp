// Loads kiln-generated libraries at run time through kiln/loader.hpp, for the deployment tests.
//   kiln_load_check table LIB GRAPH COUNT   GRAPH(i, s) = (table[i], sum(table * s)) where
//                                           table[k] = (k % 1000) * 0.5 has COUNT elements
//   kiln_load_check abi LIB GRAPH           the loader must refuse GRAPH's ABI version
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kiln/loader.hpp"

namespace {

int check_table(const char* path, const char* graph, long long count) {
  kiln::Library lib(path);
  kiln::Function f(lib.graph(graph));
  f.set_num_threads(2);
  long long full = count / 1000, rest = count % 1000;
  double expected_sum = static_cast<double>(full) * 249750.0 + 0.25 * static_cast<double>(rest * (rest - 1));
  int failures = 0;
  for (long long i : {0LL, 1LL, 999LL, 1000LL, count / 2 + 7, count - 1}) {
    auto out = f({kiln::Tensor::scalar<int64_t>(i), kiln::Tensor::scalar<double>(2.0)});
    double got = out.at(0).item<double>(), want = static_cast<double>(i % 1000) * 0.5;
    double sum = out.at(1).item<double>();
    if (got != want || sum != 2.0 * expected_sum) {
      std::fprintf(stderr, "%s(%lld): got (%g, %.17g), expected (%g, %.17g)\n", graph, i, got, sum, want,
                   2.0 * expected_sum);
      ++failures;
    }
  }
  if (failures) return 1;
  std::printf("%s: %lld-element constant read back correctly (sum %.1f)\n", graph, count, expected_sum);
  return 0;
}

int check_abi_refused(const char* path, const char* graph) {
  kiln::Library lib(path);
  try {
    lib.graph(graph);
  } catch (const kiln::LoadError& e) {
    std::printf("refused: %s\n", e.what());
    return std::string(e.what()).find("ABI version") != std::string::npos ? 0 : 1;
  }
  std::fprintf(stderr, "%s: a graph of another ABI version was accepted\n", graph);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "table" && argc == 5) return check_table(argv[2], argv[3], std::atoll(argv[4]));
    if (mode == "abi" && argc == 4) return check_abi_refused(argv[2], argv[3]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln_load_check: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "usage: %s table LIB GRAPH COUNT | abi LIB GRAPH\n", argv[0]);
  return 1;
}
