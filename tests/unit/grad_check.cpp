#include "grad_check.h"

#include <cmath>

#include <doctest/doctest.h>

#include "api/elementwise.h"
#include "eval/evaluator.h"
#include "grad/grad.h"
#include "ops/array_util.h"
#include "ops/reduce.h"

namespace kiln::testing {

Array random_array(DType dt, const Shape& shape, std::mt19937& rng, Domain dom) {
  Array a = Array::empty(DType::Float64, shape);
  std::uniform_real_distribution<double> dist(dom.lo, dom.hi);
  for (std::int64_t i = 0; i < a.size(); ++i) a.data<double>()[i] = dist(rng);
  return astype(a, dt);
}

std::vector<double> values_of(const Array& a) {
  Array c = astype(a, DType::Float64);
  return std::vector<double>(c.data<double>(), c.data<double>() + c.size());
}

double evaluate_scalar(const FunctionGraph& fg, const std::vector<Array>& inputs) {
  return values_of(evaluate(fg, inputs)[0])[0];
}

bool close(double a, double b, double tol) { return std::abs(a - b) <= tol * (1 + std::abs(b)); }

void verify_grad(const GradFn& f, const std::vector<Shape>& shapes, const Check& check) {
  std::mt19937 rng(42);
  VarList xs;
  for (std::size_t i = 0; i < shapes.size(); ++i)
    xs.push_back(make_input(TensorType(DType::Float64, shapes[i]), "x" + std::to_string(i)));
  Var out = f(xs);
  REQUIRE(is_float(out->dtype()));
  // A random cotangent; an input whose lengths are known only at run time gets a cotangent
  // through a sum of the output times a random scalar-per-element pattern (sin of a counter).
  Var cost;
  if (out->type().fully_static()) {
    Array w_value = random_array(out->dtype(), out->shape(), rng, {});
    cost = out->ndim() == 0 ? out * make_constant(w_value) : sum(out * make_constant(w_value));
  } else {
    cost = sum(out * cos(out));
  }
  // An input the output does not depend on (second's first) has a zero gradient.
  GradOptions options;
  options.disconnected = GradOptions::Disconnected::Zero;
  VarList grads = grad(cost, xs, options);
  for (std::size_t i = 0; i < xs.size(); ++i) CHECK(grads[i]->type().ndim() == xs[i]->ndim());

  std::vector<Array> point = check.point;
  for (std::size_t i = point.size(); i < shapes.size(); ++i) {
    Shape concrete = shapes[i];
    for (auto& len : concrete)
      if (len == kUnknownLength) len = 3;  // a length known only at run time
    point.push_back(random_array(DType::Float64, concrete, rng, check.domain));
  }
  FunctionGraph cost_fg(xs, {cost});
  VarList grad_outs = grads;
  FunctionGraph grad_fg(xs, grad_outs);
  grad_fg.verify();
  std::vector<Array> g = evaluate(grad_fg, point);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    REQUIRE(g[i].shape() == point[i].shape());
    std::vector<double> gi = values_of(g[i]);
    for (std::int64_t j = 0; j < point[i].size(); ++j) {
      std::vector<Array> plus = point, minus = point;
      plus[i] = astype(point[i], DType::Float64).copy();
      minus[i] = astype(point[i], DType::Float64).copy();
      plus[i].data<double>()[j] += check.eps;
      minus[i].data<double>()[j] -= check.eps;
      double fd = (evaluate_scalar(cost_fg, plus) - evaluate_scalar(cost_fg, minus)) / (2 * check.eps);
      CHECK_MESSAGE(close(gi[static_cast<std::size_t>(j)], fd, check.tol),
                    "input " << i << " element " << j << ": pullback " << gi[static_cast<std::size_t>(j)]
                             << " vs finite differences " << fd);
    }
  }
  if (!check.pushforward) return;
  VarList ts;
  std::vector<Array> t_values;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    ts.push_back(make_input(xs[i]->type(), "t" + std::to_string(i)));
    t_values.push_back(random_array(DType::Float64, point[i].shape(), rng, {}));
  }
  Var jvp = Rop({out}, xs, ts, options)[0];
  CHECK(jvp->ndim() == out->ndim());
  VarList all_inputs = xs;
  all_inputs.insert(all_inputs.end(), ts.begin(), ts.end());
  FunctionGraph jvp_fg(all_inputs, {jvp});
  std::vector<Array> args = point;
  args.insert(args.end(), t_values.begin(), t_values.end());
  std::vector<double> jv = values_of(evaluate(jvp_fg, args)[0]);
  FunctionGraph out_fg(xs, {out});
  std::vector<Array> plus, minus;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    Array p = astype(point[i], DType::Float64).copy(), m = p.copy();
    std::vector<double> t = values_of(t_values[i]);
    for (std::int64_t j = 0; j < p.size(); ++j) {
      p.data<double>()[j] += check.eps * t[static_cast<std::size_t>(j)];
      m.data<double>()[j] -= check.eps * t[static_cast<std::size_t>(j)];
    }
    plus.push_back(p);
    minus.push_back(m);
  }
  std::vector<double> fp = values_of(evaluate(out_fg, plus)[0]), fm = values_of(evaluate(out_fg, minus)[0]);
  REQUIRE(jv.size() == fp.size());
  for (std::size_t j = 0; j < jv.size(); ++j) {
    double fd = (fp[j] - fm[j]) / (2 * check.eps);
    CHECK_MESSAGE(close(jv[j], fd, check.tol), "output element " << j << ": pushforward " << jv[j]
                                                                  << " vs finite differences " << fd);
  }
}

}  // namespace kiln::testing
