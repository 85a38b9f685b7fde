// verify_grad (PyTensor's): central finite differences in float64 against an expression's
// pullback (grad) and pushforward (Rop), shared by the gradient tests.
#pragma once

#include <functional>
#include <random>
#include <vector>

#include "ir/fgraph.h"

namespace kiln::testing {

/// The interval random test inputs are drawn from.
struct Domain {
  double lo = -1.0, hi = 1.0;
};

/// Uniform random values in `dom`, converted to dtype `dt`.
Array random_array(DType dt, const Shape& shape, std::mt19937& rng, Domain dom);
/// Every element as a double, in C order.
std::vector<double> values_of(const Array& a);
/// The first element of the graph's first output.
double evaluate_scalar(const FunctionGraph& fg, const std::vector<Array>& inputs);
/// |a - b| <= tol * (1 + |b|).
bool close(double a, double b, double tol);

/// Options of one verify_grad call.
struct Check {
  Domain domain;
  std::vector<Array> point;  ///< fixed inputs instead of random ones
  double eps = 1e-6;
  double tol = 1e-5;
  bool pushforward = true;
};

/// An expression of float64 inputs.
using GradFn = std::function<Var(const VarList&)>;

/// For a random cotangent w of f's output, d<w, f>/dx from grad() must match central finite
/// differences, and (unless check.pushforward is false) the pushforward along random tangents
/// must match (f(x + eps t) - f(x - eps t)) / 2 eps, element by element (doctest CHECKs).
void verify_grad(const GradFn& f, const std::vector<Shape>& shapes, const Check& check = {});

}  // namespace kiln::testing
