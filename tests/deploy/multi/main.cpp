// Calls four kiln-generated libraries linked into one program (see CMakeLists.txt).
#include <cstdio>
#include <exception>

#include "g_logreg.h"
#include "g_mlp.h"
#include "g_table_d.h"
#include "g_table_s.h"

int main() {
  try {
    kiln::Tensor X = kiln::Tensor::from<double>({1.0, 0.0, 0.0, 0.0, 1.0, 0.0}, {2, 3});
    kiln::Tensor w = kiln::Tensor::from<double>({2.0, -2.0, 0.0});
    g_logreg_outputs lr = g_logreg(X, w, 0.0);
    std::printf("g_logreg: %.4f %.4f\n", lr.prob.at<double>({0}), lr.prob.at<double>({1}));

    kiln::Tensor x = kiln::Tensor::from<float>({0.1f, 0.2f, 0.3f, 0.4f}, {1, 4});
    g_mlp_outputs m = g_mlp(x);
    std::printf("g_mlp: %.4f %.4f %.4f\n", m.probs.at<float>({0, 0}), m.probs.at<float>({0, 1}),
                m.probs.at<float>({0, 2}));

    g_table_s_outputs s = g_table_s(1234, 1.0);
    g_table_d_outputs d = g_table_d(4321, 2.0);
    std::printf("g_table_s: %.1f %.1f\n", s.y.item<double>(), s.total.item<double>());
    std::printf("g_table_d: %.1f %.1f\n", d.y.item<double>(), d.total.item<double>());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "four: %s\n", e.what());
    return 1;
  }
  return 0;
}
