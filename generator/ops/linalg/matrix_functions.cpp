#include "ops/linalg/matrix_functions.h"

#include "ops/math.h"
#include "ops/grad_util.h"
#include "ir/error.h"
#include "ops/array_util.h"
#include "ops/dot.h"
#include "ops/join.h"
#include "ops/shape.h"
#include "ops/subtensor.h"

namespace kiln {

using kiln_linalg::Status;

namespace {

const TensorType& square_input(const Op& op, const VarList& inputs) {
  require_input_count(op, inputs, 1);
  const TensorType& x = linalg_input(op, inputs, 0, 2);
  square_static_length(op, x, 0);
  return x;
}

}  // namespace

// --- MatrixInverse ------------------------------------------------------------------------------

std::vector<TensorType> MatrixInverse::infer_types(const VarList& inputs) const {
  const TensorType& x = square_input(*this, inputs);
  const std::int64_t n = square_static_length(*this, x, 0);
  return {TensorType(linalg_output_dtype({x.dtype}), {n, n})};
}

void MatrixInverse::perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  const std::int64_t n = square_length(inputs[0]);
  const DType dt = node.output_ptr(0)->dtype();
  Array a = matrix_copy(inputs[0], dt);
  visit_real(dt, [&](auto t) {
    using T = decltype(t);
    const int ni = lapack_dim(n);
    KernelWork w(dt, kiln_linalg::inverse_work<T>(ni));
    check_status(kiln_linalg::inverse<T>(ni, a.data<T>(), std::max(ni, 1), w.r<T>(), w.i()));
  });
  outputs[0] = a;
}

std::vector<ShapeVars> MatrixInverse::infer_shape(const Apply&, const std::vector<ShapeVars>& input_shapes) const {
  return {input_shapes[0]};
}

std::vector<GradTerm> MatrixInverse::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& xi = node.output(0);
  return {linalg_grad_term(-mT(mm(mm(xi, mT(output_grads[0])), xi)), node.input(0))};
}

std::vector<GradTerm> MatrixInverse::pushforward(const Apply& node, const VarList& input_tangents) const {
  if (!input_tangents[0]) return {GradTerm::disconnected()};
  const Var& xi = node.output(0);
  return {GradTerm::of(-mm(mm(xi, input_tangents[0]), xi))};
}

// --- MatrixPinv ---------------------------------------------------------------------------------

std::vector<TensorType> MatrixPinv::infer_types(const VarList& inputs) const {
  require_input_count(*this, inputs, 1);
  const TensorType& x = linalg_input(*this, inputs, 0, 2);
  if (hermitian_) square_static_length(*this, x, 0);
  return {TensorType(linalg_output_dtype({x.dtype}), {x.shape[1], x.shape[0]})};
}

void MatrixPinv::perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  const DType dt = node.output_ptr(0)->dtype();
  const std::int64_t m = inputs[0].shape(0), n = inputs[0].shape(1);
  if (hermitian_) square_length(inputs[0]);
  Array a = matrix_copy(inputs[0], dt);
  Array out = Array::empty(dt, {n, m});
  visit_real(dt, [&](auto t) {
    using T = decltype(t);
    const int mi = lapack_dim(m), ni = lapack_dim(n);
    KernelWork w(dt, kiln_linalg::pinv_work<T>(mi, ni, hermitian_));
    check_status(kiln_linalg::pinv<T>(mi, ni, a.data<T>(), hermitian_, out.data<T>(), w.r<T>(), w.i()));
  });
  outputs[0] = out;
}

std::vector<ShapeVars> MatrixPinv::infer_shape(const Apply&, const std::vector<ShapeVars>& input_shapes) const {
  return {{input_shapes[0][1], input_shapes[0][0]}};
}

// PyTensor's (the derivative of the Moore-Penrose inverse, Golub & Pereyra):
// (-X+ V^T X+ + X+ X+^T V (I - X X+) + (I - X+ X) V X+^T X+)^T.
std::vector<GradTerm> MatrixPinv::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& x = node.input(0);
  const Var& z = node.output(0);
  const Var& gz = output_grads[0];
  const Var x_z = mm(x, z), z_x = mm(z, x);
  const Var grad = -mm(mm(z, mT(gz)), z) + mm(mm(mm(z, mT(z)), gz), identity_like(x_z) - x_z) +
                   mm(mm(mm(identity_like(z_x) - z_x, gz), mT(z)), z);
  return {linalg_grad_term(mT(grad), x)};
}

// --- Det, SLogDet -------------------------------------------------------------------------------

std::vector<TensorType> Det::infer_types(const VarList& inputs) const {
  const TensorType& x = square_input(*this, inputs);
  return {TensorType(linalg_output_dtype({x.dtype}), {})};
}

namespace {

// (sign, log|det|) of a square matrix, computed in `dt`.
std::pair<Array, Array> slogdet_arrays(const Array& x, DType dt) {
  const std::int64_t n = square_length(x);
  Array a = matrix_copy(x, dt);
  Array sign = Array::empty(dt, {}), logdet = Array::empty(dt, {});
  visit_real(dt, [&](auto t) {
    using T = decltype(t);
    const int ni = lapack_dim(n);
    std::vector<int> ipiv(static_cast<std::size_t>(std::max(ni, 1)));
    check_status(kiln_linalg::slogdet<T>(ni, a.data<T>(), std::max(ni, 1), ipiv.data(), sign.data<T>()[0],
                                         logdet.data<T>()[0]));
  });
  return {sign, logdet};
}

}  // namespace

void Det::perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  const DType dt = node.output_ptr(0)->dtype();
  // Named members, not a structured binding: C++17 lambdas cannot capture bindings (clang refuses).
  const auto sign_logdet = slogdet_arrays(inputs[0], dt);
  const Array& sign = sign_logdet.first;
  const Array& logdet = sign_logdet.second;
  Array out = Array::empty(dt, {});
  visit_real(dt, [&](auto t) {
    using T = decltype(t);
    out.data<T>()[0] = sign.data<T>()[0] * std::exp(logdet.data<T>()[0]);  // as NumPy computes it
  });
  outputs[0] = out;
}

std::vector<ShapeVars> Det::infer_shape(const Apply&, const std::vector<ShapeVars>&) const { return {{}}; }

std::vector<GradTerm> Det::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& x = node.input(0);
  return {linalg_grad_term(output_grads[0] * node.output(0) * mT(matrix_inverse(x)), x)};
}

std::vector<TensorType> SLogDet::infer_types(const VarList& inputs) const {
  const TensorType& x = square_input(*this, inputs);
  const DType dt = linalg_output_dtype({x.dtype});
  return {TensorType(dt, {}), TensorType(dt, {})};
}

void SLogDet::perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  auto [sign, logdet] = slogdet_arrays(inputs[0], node.output_ptr(0)->dtype());
  outputs = {sign, logdet};
}

std::vector<ShapeVars> SLogDet::infer_shape(const Apply&, const std::vector<ShapeVars>&) const { return {{}, {}}; }

std::vector<GradTerm> SLogDet::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& x = node.input(0);
  if (!output_grads[1]) return {GradTerm::of(zeros_like(x))};
  return {linalg_grad_term(output_grads[1] * mT(matrix_inverse(x)), x)};
}

// --- Expm ---------------------------------------------------------------------------------------

std::vector<TensorType> Expm::infer_types(const VarList& inputs) const {
  const TensorType& x = square_input(*this, inputs);
  const std::int64_t n = square_static_length(*this, x, 0);
  return {TensorType(linalg_output_dtype({x.dtype}), {n, n})};
}

void Expm::perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  const std::int64_t n = square_length(inputs[0]);
  const DType dt = node.output_ptr(0)->dtype();
  const Array a = astype(inputs[0], dt);
  Array out = Array::empty(dt, {n, n});
  visit_real(dt, [&](auto t) {
    using T = decltype(t);
    const int ni = lapack_dim(n);
    KernelWork w(dt, kiln_linalg::expm_work<T>(ni));
    check_status(kiln_linalg::expm<T>(ni, a.data<T>(), std::max(ni, 1), out.data<T>(), w.r<T>(), w.i()));
  });
  outputs[0] = out;
}

std::vector<ShapeVars> Expm::infer_shape(const Apply&, const std::vector<ShapeVars>& input_shapes) const {
  return {input_shapes[0]};
}

// PyTensor's: the Fréchet derivative's adjoint is the upper-right block of
// expm([[A^T, G], [0, A^T]]) (Mathias 1996).
std::vector<GradTerm> Expm::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& A = node.input(0);
  const Var& G = output_grads[0];
  const Var At = mT(A);
  const Var aug = join(0, {join(1, {At, G}), join(1, {zeros_like(A, At->dtype()), At})});
  const Var n = shape_i(A, 0);
  return {linalg_grad_term(subtensor(expm(aug), {slice(none, n), slice(n)}), A)};
}

// --- builders -----------------------------------------------------------------------------------

Var matrix_inverse(const Var& x) { return apply_linalg1(std::make_shared<MatrixInverse>(), {x}, {2}); }
Var pinv(const Var& x, bool hermitian) { return apply_linalg1(std::make_shared<MatrixPinv>(hermitian), {x}, {2}); }
Var det(const Var& x) { return apply_linalg1(std::make_shared<Det>(), {x}, {2}); }
VarList slogdet(const Var& x) { return apply_linalg(std::make_shared<SLogDet>(), {x}, {2}); }
Var expm(const Var& x) { return apply_linalg1(std::make_shared<Expm>(), {x}, {2}); }

// --- graph-file factories -------------------------------------------------------------------------

OpPtr matrix_inverse_from_props(PropReader& props, const std::vector<TensorType>&) {
  props.finish();
  return std::make_shared<MatrixInverse>();
}

OpPtr matrix_pinv_from_props(PropReader& props, const std::vector<TensorType>&) {
  const bool hermitian = props.get_bool("hermitian", false);
  props.finish();
  return std::make_shared<MatrixPinv>(hermitian);
}

OpPtr det_from_props(PropReader& props, const std::vector<TensorType>&) {
  props.finish();
  return std::make_shared<Det>();
}

OpPtr slogdet_from_props(PropReader& props, const std::vector<TensorType>&) {
  props.finish();
  return std::make_shared<SLogDet>();
}

OpPtr expm_from_props(PropReader& props, const std::vector<TensorType>&) {
  props.finish();
  return std::make_shared<Expm>();
}

}  // namespace kiln
