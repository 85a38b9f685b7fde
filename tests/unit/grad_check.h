// verify_grad, PyTensor's gradient check: the pullback and the pushforward of a graph built by
// a function of float64 inputs against central finite differences, with the helpers around it.
// Used by the gradient tests of every op family (test_grad.cpp, test_grad_special.cpp).
#pragma once

#include <functional>
#include <random>
#include <vector>

#include "ir/fgraph.h"
#include "kiln/runtime/array.hpp"

namespace kiln::testing {

/// The graph under test, from its inputs.
using GradFn = std::function<Var(const VarList&)>;

/// Where random inputs are drawn from (uniformly).
struct GradDomain {
  double lo = -1.0, hi = 1.0;
};

/// Options of one verify_grad call.
struct GradCheck {
  GradDomain domain;
  std::vector<Array> point;  ///< fixed inputs instead of random ones
  double eps = 1e-6;         ///< finite-difference step
  double tol = 1e-5;         ///< |a - b| <= tol (1 + |b|)
  bool pushforward = true;
};

/// Random values of dtype dt, uniform in dom.
Array grad_random_array(DType dt, const Shape& shape, std::mt19937& rng, GradDomain dom);
/// The elements of a as doubles, in C order.
std::vector<double> grad_values_of(const Array& a);
/// The first element of fg's first output at `inputs`.
double grad_evaluate_scalar(const FunctionGraph& fg, const std::vector<Array>& inputs);
/// |a - b| <= tol (1 + |b|).
bool grad_close(double a, double b, double tol);

/// PyTensor's verify_grad: for a random cotangent w of f's output, d<w, f>/dx from grad() must
/// match central finite differences, and the pushforward along random tangents t must match
/// (f(x + eps t) - f(x - eps t)) / 2 eps, element by element (doctest CHECKs).
void verify_grad(const GradFn& f, const std::vector<Shape>& shapes, const GradCheck& check = {});

}  // namespace kiln::testing
