// Calls two kiln-generated graphs through their typed C++ headers and prints the results
// (expected_output.txt holds what NumPy computes for the same inputs; see make_weights.py).
#include <cstdio>
#include <exception>

#include "logreg_predict.h"
#include "mlp.h"

int main() {
  try {
    // Logistic regression: prob = sigmoid(X @ w + b), label = prob > 0.5.
    kiln::Tensor X = kiln::Tensor::from<double>({0.5, 1.0, -1.0, 2.0, 0.5, 1.0, -1.0, -0.5, 2.0, 1.0, 1.0, 1.0}, {4, 3});
    kiln::Tensor w = kiln::Tensor::from<double>({1.5, -2.0, 0.5});
    logreg_predict_outputs lr = logreg_predict(X, w, -0.3);
    std::printf("logreg_predict prob:");
    for (double p : lr.prob.to_vector<double>()) std::printf(" %.4f", p);
    std::printf("\nlogreg_predict label:");
    for (bool l : lr.label.to_vector<bool>()) std::printf(" %d", l ? 1 : 0);
    std::printf("\n");

    // The MLP's weights are inside the library; only the input goes in.
    kiln::Tensor x = kiln::Tensor::from<float>(
        {0.1f, 0.2f, 0.3f, 0.4f, 1.0f, -1.0f, 0.5f, -0.5f, -0.3f, 0.8f, -0.6f, 0.2f, 2.0f, 1.0f, 0.0f, -1.0f}, {4, 4});
    mlp_outputs out = mlp(x);
    for (int64_t i = 0; i < out.probs.shape(0); ++i) {
      std::printf("mlp row %lld: probs", static_cast<long long>(i));
      for (int64_t j = 0; j < out.probs.shape(1); ++j) std::printf(" %.4f", out.probs.at<float>({i, j}));
      std::printf(" label %lld\n", static_cast<long long>(out.label.at<int64_t>({i})));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
  return 0;
}
