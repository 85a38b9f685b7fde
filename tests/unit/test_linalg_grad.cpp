// Gradients of the linear-algebra ops by finite differences (verify_grad: pullback and
// pushforward, the latter by each op's own rule or the double-Lop fallback). Ops that read one
// triangle of their input (Cholesky, Eigh, SolveTriangular, CholeskySolve) are checked on the
// raw input, which is what pins PyTensor's convention down: perturbing the unread triangle
// changes nothing, and the gradient there is zero. Solve's sym/pos/tridiagonal structures and
// hermitian pinv follow PyTensor's dense formulas, which hold for perturbations that keep the
// structure, so those are checked through a symmetrising (or band) wrapper.
#include <doctest/doctest.h>

#include <random>

#include "api/elementwise.h"
#include "grad/grad.h"
#include "grad_check.h"
#include "linalg_data.h"
#include "ir/error.h"
#include "ops/array_util.h"
#include "ops/blockwise.h"
#include "ops/dimshuffle.h"
#include "ops/linalg/linalg.h"
#include "ops/reduce.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

// A symmetric positive definite n x n matrix (or a batch of them).
Array spd_point(std::int64_t n, std::mt19937& rng, Shape batch = {}) {
  batch.push_back(n);
  batch.push_back(n);
  return spd_matrices(batch, rng);
}

// A general well-conditioned matrix: random plus 3 on the diagonal.
Array general_point(std::int64_t n, std::mt19937& rng, std::int64_t m = -1) {
  const std::int64_t cols = m < 0 ? n : m;
  Array a = random_array(DType::Float64, {n, cols}, rng, {-1, 1});
  for (std::int64_t i = 0; i < std::min(n, cols); ++i) a.data<double>()[i * cols + i] += 3.0;
  return a;
}

Array random_point(const Shape& shape, std::mt19937& rng) { return random_array(DType::Float64, shape, rng, {-1, 1}); }

Var symmetrize(const Var& x) { return (x + mT(x)) * 0.5; }

// Eigenvectors and singular vectors are unique only up to sign, and LAPACK's choice can flip
// under a perturbation: each column (axis -2) or row (axis -1) times the sign of its sum is
// continuous, and has the same gradient where it is.
Var sign_fixed(const Var& v, int axis) {
  const int n = v->ndim();
  const Var s = sgn(sum(v, n + axis));
  std::vector<int> order;
  for (int d = 0; d < n - 1; ++d) order.push_back(d);
  order.insert(order.begin() + (n + axis), DimShuffle::kNewAxis);
  return v * dimshuffle(s, order);
}

}  // namespace

TEST_CASE("linalg grad: Cholesky reads one triangle (PyTensor's convention), also batched") {
  std::mt19937 rng(1);
  for (bool lower : {true, false}) {
    CAPTURE(lower);
    Check c;
    c.point = {spd_point(4, rng)};
    verify_grad([lower](const VarList& x) { return cholesky(x[0], lower); }, {{4, 4}}, c);
  }
  Check c;
  c.point = {spd_point(3, rng, {2})};
  verify_grad([](const VarList& x) { return cholesky(x[0]); }, {{2, 3, 3}}, c);
}

TEST_CASE("linalg grad: Solve (gen; sym, pos and tridiagonal through structure-keeping wrappers)") {
  std::mt19937 rng(2);
  Check c;
  c.point = {general_point(4, rng), random_point({4, 2}, rng)};
  verify_grad([](const VarList& x) { return solve(x[0], x[1]); }, {{4, 4}, {4, 2}}, c);
  c.point = {general_point(3, rng), random_point({3}, rng)};
  verify_grad([](const VarList& x) { return solve(x[0], x[1], "gen", false, 1); }, {{3, 3}, {3}}, c);
  for (const char* assume : {"sym", "pos"}) {
    CAPTURE(assume);
    for (bool lower : {true, false}) {
      c.point = {spd_point(3, rng), random_point({3, 2}, rng)};
      verify_grad([&](const VarList& x) { return solve(symmetrize(x[0]), x[1], assume, lower); }, {{3, 3}, {3, 2}}, c);
    }
  }
  Array band = Array::zeros(DType::Float64, {4, 4});
  for (int i = 0; i < 4; ++i)
    for (int j = std::max(0, i - 1); j <= std::min(3, i + 1); ++j) band.data<double>()[i * 4 + j] = 1.0;
  c.point = {general_point(4, rng), random_point({4}, rng)};
  verify_grad([&](const VarList& x) { return solve(x[0] * make_constant(band), x[1], "tridiagonal", false, 1); },
              {{4, 4}, {4}}, c);
  // Batched, with A broadcast over b's batch.
  c.point = {general_point(3, rng), random_point({2, 3}, rng)};
  verify_grad([](const VarList& x) { return solve(expand_dims_left(x[0], 1), x[1], "gen", false, 1); }, {{3, 3}, {2, 3}},
              c);
}

TEST_CASE("linalg grad: SolveTriangular (lower, upper, unit diagonal, 2.26's trans) and CholeskySolve") {
  std::mt19937 rng(3);
  Check c;
  for (bool lower : {true, false})
    for (bool unit : {false, true})
      for (bool trans : {false, true}) {
        CAPTURE(lower);
        CAPTURE(unit);
        CAPTURE(trans);
        c.point = {general_point(4, rng), random_point({4, 2}, rng)};
        verify_grad([=](const VarList& x) { return solve_triangular(x[0], x[1], lower, unit, trans); },
                    {{4, 4}, {4, 2}}, c);
      }
  for (bool lower : {true, false}) {
    CAPTURE(lower);
    Array factor = general_point(3, rng);  // only one triangle is read; its diagonal is positive
    c.point = {factor, random_point({3}, rng)};
    verify_grad([=](const VarList& x) { return cho_solve(x[0], x[1], lower, 1); }, {{3, 3}, {3}}, c);
  }
}

TEST_CASE("linalg grad: LU (three forms), LUFactor, QR") {
  std::mt19937 rng(4);
  Check c;
  c.point = {general_point(4, rng)};
  verify_grad([](const VarList& x) {
    VarList plu = lu(x[0]);
    return plu[0] + plu[1] * 2.0 + plu[2];
  }, {{4, 4}}, c);
  verify_grad([](const VarList& x) {
    VarList plu = lu(x[0], false, true);
    return plu[1] + plu[2] * 3.0;
  }, {{4, 4}}, c);
  verify_grad([](const VarList& x) {
    VarList plu = lu(x[0], true);
    return plu[0] * 2.0 + plu[1];
  }, {{4, 4}}, c);
  verify_grad([](const VarList& x) { return lu_factor(x[0])[0]; }, {{4, 4}}, c);
  for (const char* mode : {"economic", "full", "r"}) {
    CAPTURE(mode);
    for (Shape shape : {Shape{5, 3}, Shape{3, 5}, Shape{3, 3}}) {
      if (std::string(mode) == "full" && shape[0] > shape[1]) continue;  // PyTensor's: not implemented
      c.point = {random_point(shape, rng)};
      verify_grad([=](const VarList& x) { return qr(x[0], mode).back(); }, {shape}, c);
      if (std::string(mode) != "r") verify_grad([=](const VarList& x) { return qr(x[0], mode)[0]; }, {shape}, c);
    }
  }
  VarList qrf = qr(make_input(TensorType(DType::Float64, {5, 3})), "full");
  CHECK_THROWS_AS(grad(sum(qrf[1]), {qrf[1]->owner()->input(0)}), NotImplementedError);
}

TEST_CASE("linalg grad: inverse, pinv, det, slogdet, expm") {
  std::mt19937 rng(5);
  Check c;
  c.point = {general_point(4, rng)};
  verify_grad([](const VarList& x) { return matrix_inverse(x[0]); }, {{4, 4}}, c);
  verify_grad([](const VarList& x) { return det(x[0]); }, {{4, 4}}, c);
  verify_grad([](const VarList& x) { return slogdet(x[0])[1]; }, {{4, 4}}, c);
  verify_grad([](const VarList& x) { return expm(x[0] * 0.3); }, {{4, 4}}, c);
  verify_grad([](const VarList& x) { return expm(x[0] * 4.0); }, {{4, 4}}, c);  // scaling and squaring
  c.point = {general_point(5, rng, 3)};
  verify_grad([](const VarList& x) { return pinv(x[0]); }, {{5, 3}}, c);
  c.point = {general_point(3, rng, 5)};
  verify_grad([](const VarList& x) { return pinv(x[0]); }, {{3, 5}}, c);
  c.point = {spd_point(3, rng)};
  verify_grad([](const VarList& x) { return pinv(symmetrize(x[0]), true); }, {{3, 3}}, c);
}

TEST_CASE("linalg grad: Eigh, Eigvalsh (plain and generalized), SVD") {
  std::mt19937 rng(6);
  Check c;
  for (bool lower : {true, false}) {
    CAPTURE(lower);
    c.point = {spd_point(4, rng)};
    verify_grad([=](const VarList& x) { return eigh(x[0], lower)[0]; }, {{4, 4}}, c);
    verify_grad([=](const VarList& x) { return sign_fixed(eigh(x[0], lower)[1], -2); }, {{4, 4}}, c);
    verify_grad([=](const VarList& x) { return eigvalsh(x[0], lower); }, {{4, 4}}, c);
    c.point = {spd_point(3, rng), spd_point(3, rng)};
    verify_grad([=](const VarList& x) { return sign_fixed(eigh(x[0], lower, x[1])[1], -2); }, {{3, 3}, {3, 3}}, c);
    verify_grad([=](const VarList& x) { return eigvalsh(x[0], lower, x[1]); }, {{3, 3}, {3, 3}}, c);
  }
  for (Shape shape : {Shape{4, 3}, Shape{3, 4}, Shape{3, 3}}) {
    CAPTURE(shape_str(shape));
    c.point = {random_point(shape, rng)};
    verify_grad([](const VarList& x) { return svd(x[0], false, false)[0]; }, {shape}, c);
    verify_grad([=](const VarList& x) { return sign_fixed(svd(x[0], false, true)[0], -2); }, {shape}, c);
    verify_grad([=](const VarList& x) { return svd(x[0], false, true)[1]; }, {shape}, c);
    verify_grad([=](const VarList& x) { return sign_fixed(svd(x[0], false, true)[2], -1); }, {shape}, c);
  }
  VarList full = svd(make_input(TensorType(DType::Float64, {3, 3})), true, true);
  CHECK_THROWS_AS(grad(sum(full[0]), {full[0]->owner()->input(0)}), NotImplementedError);
}

TEST_CASE("linalg grad: KroneckerProduct and BlockDiagonal, batched ops") {
  std::mt19937 rng(7);
  verify_grad([](const VarList& x) { return kron(x[0], x[1]); }, {{2, 3}, {3, 2}});
  verify_grad([](const VarList& x) { return kron(x[0], x[1]); }, {{3}, {2, 2}});
  verify_grad([](const VarList& x) { return kron(x[0], x[1]); }, {{2, 1, 2}, {2, 3}});
  verify_grad([](const VarList& x) { return block_diag({x[0], x[1], x[2]}); }, {{2, 2}, {1, 3}, {3, 1}});
  Check c;
  c.point = {spd_point(3, rng, {2}), random_point({2, 3, 2}, rng)};
  verify_grad([](const VarList& x) { return solve(x[0], x[1]); }, {{2, 3, 3}, {2, 3, 2}}, c);
  c.point = {spd_point(3, rng, {2})};
  verify_grad([](const VarList& x) { return slogdet(x[0])[1]; }, {{2, 3, 3}}, c);
  verify_grad([](const VarList& x) { return sign_fixed(eigh(x[0])[1], -2); }, {{2, 3, 3}}, c);
}
