// Trains the logistic-regression sample: loads the library `kiln compile` built from
// train_step.json (the output of `kiln grad loss.json --cost loss --wrt w --wrt b`), runs 1,000
// steps of gradient descent on a generated data set, and prints the loss at the start and the
// end and the confusion matrix. Usage: train LIBRARY.so [GRAPH_NAME]
#include <cstdio>
#include <exception>
#include <string>

#include "train.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s LIBRARY.so [GRAPH_NAME (default logistic_regression_grad)]\n", argv[0]);
    return 1;
  }
  try {
    kiln::Library lib(argv[1]);
    const kiln_graph_info& step = lib.graph(argc > 2 ? argv[2] : "logistic_regression_grad");
    const logreg::Dataset data = logreg::make_dataset(400, 8, 1234);
    const logreg::Result r = logreg::train(step, data, 1000, 0.1);
    std::printf("loss: start %.6f, end %.6f (%zu evaluations)\n", r.losses.front(), r.losses.back(),
                r.losses.size());
    std::printf("confusion matrix (rows: true label, columns: predicted)\n");
    std::printf("          pred 0  pred 1\n");
    for (int t = 0; t < 2; ++t)
      std::printf("  true %d  %6lld  %6lld\n", t, static_cast<long long>(r.confusion[t][0]),
                  static_cast<long long>(r.confusion[t][1]));
    std::printf("accuracy: %.3f\n", r.accuracy);
    return r.losses.back() < r.losses.front() ? 0 : 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train: %s\n", e.what());
    return 1;
  }
}
