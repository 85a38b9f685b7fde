// The training loop of the logistic-regression sample, shared by train.cpp and kiln's tests:
// a generated data set (two classes separated by a random hyperplane, with label noise), and
// plain gradient descent that calls the compiled `kiln grad` graph once per step. That graph
// returns, in order, the loss, the predicted probabilities p, and the gradients of the loss
// with respect to w and b — value and gradient from one call, sharing their intermediates.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "kiln/loader.hpp"

namespace logreg {

struct Dataset {
  std::int64_t rows = 0, features = 0;
  std::vector<double> X;  ///< rows x features, row-major
  std::vector<double> y;  ///< 0 or 1
};

/// `rows` points with standard normal features; the label is the side of a random hyperplane
/// (through a random offset) they fall on, flipped for about 5% of the points.
inline Dataset make_dataset(std::int64_t rows, std::int64_t features, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<double> w_true(static_cast<std::size_t>(features));
  for (double& v : w_true) v = normal(rng);
  const double b_true = 0.5 * normal(rng);
  Dataset d;
  d.rows = rows;
  d.features = features;
  for (std::int64_t i = 0; i < rows; ++i) {
    double z = b_true;
    for (std::int64_t j = 0; j < features; ++j) {
      double x = normal(rng);
      d.X.push_back(x);
      z += x * w_true[static_cast<std::size_t>(j)];
    }
    bool label = z > 0;
    if (uniform(rng) < 0.05) label = !label;
    d.y.push_back(label ? 1.0 : 0.0);
  }
  return d;
}

struct Result {
  std::vector<double> losses;             ///< the loss before each step, and after the last
  std::int64_t confusion[2][2] = {{0, 0}, {0, 0}};  ///< [true label][predicted label]
  double accuracy = 0;
};

/// `steps` steps of gradient descent with learning rate `lr` from w = 0, b = 0.
inline Result train(const kiln_graph_info& step, const Dataset& d, int steps, double lr) {
  kiln::Function f(step);
  kiln::Tensor X = kiln::Tensor::from(d.X, {d.rows, d.features});
  kiln::Tensor y = kiln::Tensor::from(d.y);
  kiln::Tensor w = kiln::Tensor::zeros(KILN_FLOAT64, {d.features});
  kiln::Tensor b = kiln::Tensor::scalar(0.0);
  Result r;
  for (int s = 0;; ++s) {
    std::vector<kiln::Tensor> out = f({X, y, w, b});  // loss, p, grad_w, grad_b
    r.losses.push_back(out[0].item<double>());
    if (s == steps) {
      const double* p = out[1].data<double>();
      std::int64_t right = 0;
      for (std::int64_t i = 0; i < d.rows; ++i) {
        const int truth = d.y[static_cast<std::size_t>(i)] > 0.5, predicted = p[i] > 0.5;
        ++r.confusion[truth][predicted];
        right += truth == predicted;
      }
      r.accuracy = d.rows ? static_cast<double>(right) / static_cast<double>(d.rows) : 0.0;
      return r;
    }
    const double* gw = out[2].data<double>();
    for (std::int64_t j = 0; j < d.features; ++j) w.data<double>()[j] -= lr * gw[j];
    b.data<double>()[0] -= lr * out[3].item<double>();
  }
}

}  // namespace logreg
