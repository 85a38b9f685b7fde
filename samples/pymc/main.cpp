// Calls the radon model's log density and gradient that radon.py compiled with kiln, through
// the generated radon.h (no Python, no kiln): reads the point from x.txt, prints logp and the
// gradient in the same format as radon.py's python.txt.
//
//   c++ -std=c++17 main.cpp -I OUT -L OUT -lradon -Wl,-rpath,OUT -o radon_main
//   ./radon_main OUT/x.txt
#include <cstdio>
#include <fstream>
#include <iostream>
#include <vector>

#include "radon.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: radon_main x.txt\n";
    return 1;
  }
  std::ifstream in(argv[1]);
  std::vector<double> values;
  for (double v; in >> v;) values.push_back(v);
  if (values.empty()) {
    std::cerr << "no numbers in " << argv[1] << "\n";
    return 1;
  }
  try {
    radon_outputs out = radon(kiln::Tensor::from(values));  // logp (0-d) and dlogp (like x)
    std::printf("%.17g\n", out.logp.item<double>());
    std::vector<double> grad = out.dlogp.to_vector<double>();
    for (std::size_t i = 0; i < grad.size(); ++i) std::printf(i ? " %.17g" : "%.17g", grad[i]);
    std::printf("\n");
  } catch (const kiln::CallError& e) {
    std::cerr << "radon failed: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
