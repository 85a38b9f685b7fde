#include "ops/blas.h"

#include <stdexcept>

#include "ir/error.h"
#include "ops/array_util.h"
#include "ops/dot.h"
#include "ops/math.h"
#include "ops/dimshuffle.h"
#include "ops/reduce.h"
#include "ops/blockwise.h"

namespace kiln {

bool blas_ignores_initial(const Apply& node) {
  const Variable& b = *node.input(4);
  if (!b.is_constant()) return false;
  const double v = scalar_to_double(b.value());
  return node.output_ptr(0)->dtype() == DType::Float32 ? static_cast<float>(v) == 0.0f : v == 0.0;
}

namespace {

// Type checks shared by the BLAS ops; messages name the op, the input's position and its role
// ("Gemv{no_inplace}: input 2 (A) must be a matrix (rank 2), got ...").
class InputChecker {
 public:
  InputChecker(const Op& op, const VarList& inputs, std::vector<const char*> roles)
      : op_(op), inputs_(inputs), roles_(std::move(roles)) {
    if (inputs_.size() != roles_.size()) {
      std::string list;
      for (const char* r : roles_) list += (list.empty() ? "" : ", ") + std::string(r);
      type_error(op_, "takes " + std::to_string(roles_.size()) + " inputs (" + list + "), got " +
                          std::to_string(inputs_.size()));
    }
  }

  const TensorType& type(int i) const { return inputs_[static_cast<std::size_t>(i)]->type(); }

  std::string who(int i) const {
    return "input " + std::to_string(i) + " (" + roles_[static_cast<std::size_t>(i)] + ")";
  }

  void rank(int i, int r) const {
    if (type(i).ndim() == r) return;
    static const char* kinds[] = {"a 0-d scalar", "a vector", "a matrix"};
    type_error(op_, who(i) + " must be " + kinds[r] + " (rank " + std::to_string(r) + "), got " +
                        type(i).str());
  }

  void floating(int i) const {
    if (!is_float(type(i).dtype))
      type_error(op_, who(i) + " must have a float dtype (float32 or float64), got " +
                          std::string(dtype_name(type(i).dtype)));
  }

  void same_dtype(const std::vector<int>& which) const {
    bool same = true;
    for (int i : which) same = same && type(i).dtype == type(which[0]).dtype;
    if (same) return;
    std::string names, dtypes;
    for (int i : which) {
      names += (names.empty() ? "" : ", ") + std::string(roles_[static_cast<std::size_t>(i)]);
      dtypes += (dtypes.empty() ? "" : ", ") + std::string(dtype_name(type(i).dtype));
    }
    type_error(op_, "inputs " + names + " must have one dtype, got " + dtypes);
  }

  /// The static length two dimensions share; refuses two different known lengths.
  std::int64_t length(std::int64_t a, std::int64_t b, const std::string& what) const {
    try {
      return merge_static_length(a, b);
    } catch (const std::invalid_argument& e) {
      type_error(op_, what + " differ: " + e.what());
    }
  }

 private:
  const Op& op_;
  const VarList& inputs_;
  std::vector<const char*> roles_;
};

// Calls f(T{}) for the float C++ type of dt (the BLAS ops only take float dtypes).
template <typename F>
void visit_float(DType dt, F&& f) {
  if (dt == DType::Float32)
    f(float{});
  else
    f(double{});
}

template <typename T>
T scalar_of(const Array& a) {
  return static_cast<T>(scalar_to_double(a));
}

template <typename T>
T at(const Array& v, std::int64_t i) {
  return v.data<T>()[i * v.strides()[0]];
}

template <typename T>
T at(const Array& m, std::int64_t i, std::int64_t j) {
  return m.data<T>()[i * m.strides()[0] + j * m.strides()[1]];
}

// b*c + a*p elementwise over the contiguous product p (in place); c is not read when b == 0.
template <typename T, typename Get>
void scale_and_accumulate(Array& p, const Array& a, const Array& b, Get c) {
  const T alpha = scalar_of<T>(a), beta = scalar_of<T>(b);
  T* data = p.data<T>();
  for (std::int64_t i = 0, n = p.size(); i < n; ++i)
    data[i] = beta == T(0) ? alpha * data[i] : beta * c(i) + alpha * data[i];
}

}  // namespace

// --- Gemv ----------------------------------------------------------------------------------

std::vector<TensorType> Gemv::infer_types(const VarList& inputs) const {
  InputChecker c(*this, inputs, {"y", "a", "A", "x", "b"});
  const int ranks[] = {1, 0, 2, 1, 0};
  for (int i = 0; i < 5; ++i) {
    c.rank(i, ranks[i]);
    c.floating(i);
  }
  c.same_dtype({0, 2, 3});
  const std::int64_t rows =
      c.length(c.type(2).shape[0], c.type(0).shape[0], "the rows of A and the length of y");
  c.length(c.type(2).shape[1], c.type(3).shape[0], "the columns of A and the length of x");
  return {TensorType(c.type(0).dtype, {rows})};
}

void Gemv::perform(const Apply& node, const std::vector<Array>& inputs,
                   std::vector<Array>& outputs) const {
  const Array &y = inputs[0], &a = inputs[1], &A = inputs[2], &x = inputs[3], &b = inputs[4];
  if (A.shape(0) != y.shape(0) || A.shape(1) != x.shape(0))
    throw RuntimeFailure("incompatible shapes for b*y + a*A@x: y has shape " +
                         shape_str(y.shape()) + ", A has shape " + shape_str(A.shape()) +
                         ", x has shape " + shape_str(x.shape()));
  const DType dt = node.output_ptr(0)->dtype();
  Array out = dot_arrays(A, x, dt);
  visit_float(dt, [&](auto t) {
    using T = decltype(t);
    scale_and_accumulate<T>(out, a, b, [&](std::int64_t i) { return at<T>(y, i); });
  });
  outputs[0] = out;
}

std::vector<ShapeVars> Gemv::infer_shape(const Apply&,
                                         const std::vector<ShapeVars>& input_shapes) const {
  return {input_shapes[0]};
}

// --- Gemm ----------------------------------------------------------------------------------

std::vector<TensorType> Gemm::infer_types(const VarList& inputs) const {
  InputChecker c(*this, inputs, {"z", "a", "x", "y", "b"});
  const int ranks[] = {2, 0, 2, 2, 0};
  for (int i = 0; i < 5; ++i) {
    c.rank(i, ranks[i]);
    c.floating(i);
  }
  c.same_dtype({0, 1, 2, 3, 4});
  const TensorType &z = c.type(0), &x = c.type(2), &y = c.type(3);
  const std::int64_t rows = c.length(z.shape[0], x.shape[0], "the rows of z and x");
  const std::int64_t cols = c.length(z.shape[1], y.shape[1], "the columns of z and y");
  c.length(x.shape[1], y.shape[0], "the columns of x and the rows of y");
  return {TensorType(z.dtype, {rows, cols})};
}

void Gemm::perform(const Apply& node, const std::vector<Array>& inputs,
                   std::vector<Array>& outputs) const {
  const Array &z = inputs[0], &a = inputs[1], &x = inputs[2], &y = inputs[3], &b = inputs[4];
  if (z.shape(0) != x.shape(0) || z.shape(1) != y.shape(1) || x.shape(1) != y.shape(0))
    throw RuntimeFailure("incompatible shapes for b*z + a*x@y: z has shape " +
                         shape_str(z.shape()) + ", x has shape " + shape_str(x.shape()) +
                         ", y has shape " + shape_str(y.shape()));
  const DType dt = node.output_ptr(0)->dtype();
  Array out = dot_arrays(x, y, dt);
  const std::int64_t n = out.shape(1);
  visit_float(dt, [&](auto t) {
    using T = decltype(t);
    scale_and_accumulate<T>(out, a, b, [&](std::int64_t i) { return at<T>(z, i / n, i % n); });
  });
  outputs[0] = out;
}

std::vector<ShapeVars> Gemm::infer_shape(const Apply&,
                                         const std::vector<ShapeVars>& input_shapes) const {
  return {input_shapes[0]};
}

// --- Ger -----------------------------------------------------------------------------------

std::vector<TensorType> Ger::infer_types(const VarList& inputs) const {
  InputChecker c(*this, inputs, {"A", "a", "x", "y"});
  const int ranks[] = {2, 0, 1, 1};
  for (int i = 0; i < 4; ++i) {
    c.rank(i, ranks[i]);
    c.floating(i);
  }
  c.same_dtype({0, 1, 2, 3});
  const TensorType& A = c.type(0);
  const std::int64_t rows =
      c.length(A.shape[0], c.type(2).shape[0], "the rows of A and the length of x");
  const std::int64_t cols =
      c.length(A.shape[1], c.type(3).shape[0], "the columns of A and the length of y");
  return {TensorType(A.dtype, {rows, cols})};
}

void Ger::perform(const Apply& node, const std::vector<Array>& inputs,
                  std::vector<Array>& outputs) const {
  const Array &A = inputs[0], &a = inputs[1], &x = inputs[2], &y = inputs[3];
  if (A.shape(0) != x.shape(0) || A.shape(1) != y.shape(0))
    throw RuntimeFailure("incompatible shapes for A + a*outer(x, y): A has shape " +
                         shape_str(A.shape()) + ", x has shape " + shape_str(x.shape()) +
                         ", y has shape " + shape_str(y.shape()));
  const DType dt = node.output_ptr(0)->dtype();
  const std::int64_t m = A.shape(0), n = A.shape(1);
  Array out = Array::empty(dt, {m, n});
  visit_float(dt, [&](auto t) {
    using T = decltype(t);
    const T alpha = scalar_of<T>(a);
    T* o = out.data<T>();
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j)
        o[i * n + j] = at<T>(A, i, j) + alpha * (at<T>(x, i) * at<T>(y, j));
  });
  outputs[0] = out;
}

std::vector<ShapeVars> Ger::infer_shape(const Apply&,
                                        const std::vector<ShapeVars>& input_shapes) const {
  return {input_shapes[0]};
}

// --- Dot22 and Dot22Scalar -----------------------------------------------------------------

namespace {
TensorType dot22_type(const InputChecker& c) {
  const TensorType &x = c.type(0), &y = c.type(1);
  c.length(x.shape[1], y.shape[0], "the columns of x and the rows of y");
  return TensorType(x.dtype, {x.shape[0], y.shape[1]});
}
}  // namespace

std::vector<TensorType> Dot22::infer_types(const VarList& inputs) const {
  InputChecker c(*this, inputs, {"x", "y"});
  for (int i = 0; i < 2; ++i) {
    c.rank(i, 2);
    c.floating(i);
  }
  c.same_dtype({0, 1});
  return {dot22_type(c)};
}

void Dot22::perform(const Apply& node, const std::vector<Array>& inputs,
                    std::vector<Array>& outputs) const {
  outputs[0] = dot_arrays(inputs[0], inputs[1], node.output_ptr(0)->dtype());
}

std::vector<ShapeVars> Dot22::infer_shape(const Apply&,
                                          const std::vector<ShapeVars>& input_shapes) const {
  return {{input_shapes[0][0], input_shapes[1][1]}};
}

std::vector<TensorType> Dot22Scalar::infer_types(const VarList& inputs) const {
  InputChecker c(*this, inputs, {"x", "y", "a"});
  const int ranks[] = {2, 2, 0};
  for (int i = 0; i < 3; ++i) {
    c.rank(i, ranks[i]);
    c.floating(i);
  }
  c.same_dtype({0, 1, 2});
  return {dot22_type(c)};
}

void Dot22Scalar::perform(const Apply& node, const std::vector<Array>& inputs,
                          std::vector<Array>& outputs) const {
  const DType dt = node.output_ptr(0)->dtype();
  Array out = dot_arrays(inputs[0], inputs[1], dt);
  visit_float(dt, [&](auto t) {
    using T = decltype(t);
    const T alpha = scalar_of<T>(inputs[2]);
    T* data = out.data<T>();
    for (std::int64_t i = 0, n = out.size(); i < n; ++i) data[i] = alpha * data[i];
  });
  outputs[0] = out;
}

std::vector<ShapeVars> Dot22Scalar::infer_shape(const Apply&,
                                                const std::vector<ShapeVars>& input_shapes) const {
  return {{input_shapes[0][0], input_shapes[1][1]}};
}

// --- builders ------------------------------------------------------------------------------

Var gemv(const Var& y, const Var& a, const Var& A, const Var& x, const Var& b) {
  return apply1(std::make_shared<Gemv>(), {y, a, A, x, b});
}

Var gemm(const Var& z, const Var& a, const Var& x, const Var& y, const Var& b) {
  return apply1(std::make_shared<Gemm>(), {z, a, x, y, b});
}

Var ger(const Var& A, const Var& a, const Var& x, const Var& y) {
  return apply1(std::make_shared<Ger>(), {A, a, x, y});
}

Var dot22(const Var& x, const Var& y) { return apply1(std::make_shared<Dot22>(), {x, y}); }

Var dot22scalar(const Var& x, const Var& y, const Var& a) {
  return apply1(std::make_shared<Dot22Scalar>(), {x, y, a});
}

// --- graph-file factories (in-place props are accepted and ignored by PropReader::finish) ---

OpPtr gemv_from_props(PropReader& props, const std::vector<TensorType>&) {
  props.finish();
  return std::make_shared<Gemv>(false);
}

OpPtr cgemv_from_props(PropReader& props, const std::vector<TensorType>&) {
  props.finish();
  return std::make_shared<Gemv>(true);
}

OpPtr gemm_from_props(PropReader& props, const std::vector<TensorType>&) {
  props.finish();
  return std::make_shared<Gemm>();
}

OpPtr ger_from_props(PropReader& props, const std::vector<TensorType>&) {
  props.finish();
  return std::make_shared<Ger>(false);
}

OpPtr cger_from_props(PropReader& props, const std::vector<TensorType>&) {
  props.finish();
  return std::make_shared<Ger>(true);
}

OpPtr dot22_from_props(PropReader& props, const std::vector<TensorType>&) {
  props.finish();
  return std::make_shared<Dot22>();
}

OpPtr dot22scalar_from_props(PropReader& props, const std::vector<TensorType>&) {
  props.finish();
  return std::make_shared<Dot22Scalar>();
}

// --- gradients (the driver differentiates these linear pullbacks for forward mode) -----------

std::vector<GradTerm> Gemv::pullback(const Apply& node, const VarList& output_grads) const {
  const Var &y = node.input(0), &a = node.input(1), &A = node.input(2), &x = node.input(3),
            &b = node.input(4);
  const Var& g = output_grads[0];
  return {GradTerm::of(g * b), GradTerm::of(sum(g * dot(A, x))), GradTerm::of(a * outer(g, x)),
          GradTerm::of(a * dot(transpose(A), g)), GradTerm::of(sum(g * y))};
}

std::vector<GradTerm> Gemm::pullback(const Apply& node, const VarList& output_grads) const {
  const Var &z = node.input(0), &a = node.input(1), &x = node.input(2), &y = node.input(3),
            &b = node.input(4);
  const Var& g = output_grads[0];
  return {GradTerm::of(g * b), GradTerm::of(sum(g * dot(x, y))),
          GradTerm::of(a * dot(g, transpose(y))), GradTerm::of(a * dot(transpose(x), g)),
          GradTerm::of(sum(g * z))};
}

std::vector<GradTerm> Ger::pullback(const Apply& node, const VarList& output_grads) const {
  const Var &a = node.input(1), &x = node.input(2), &y = node.input(3);
  const Var& g = output_grads[0];
  return {GradTerm::of(g), GradTerm::of(sum(g * outer(x, y))), GradTerm::of(a * dot(g, y)),
          GradTerm::of(a * dot(transpose(g), x))};
}

std::vector<GradTerm> Dot22::pullback(const Apply& node, const VarList& output_grads) const {
  const Var &x = node.input(0), &y = node.input(1);
  const Var& g = output_grads[0];
  return {GradTerm::of(dot(g, transpose(y))), GradTerm::of(dot(transpose(x), g))};
}

std::vector<GradTerm> Dot22Scalar::pullback(const Apply& node, const VarList& output_grads) const {
  const Var &x = node.input(0), &y = node.input(1), &a = node.input(2);
  const Var& g = output_grads[0];
  return {GradTerm::of(a * dot(g, transpose(y))), GradTerm::of(a * dot(transpose(x), g)),
          GradTerm::of(sum(g * dot(x, y)))};
}

// --- batching rule (vectorize_graph) ---------------------------------------------------------

std::optional<VarList> Dot22::vectorize(const Apply& node, const VarList& batched_inputs) const {
  return blockwise(node.op_ptr(), dot_gufunc_signature(2, 2), batched_inputs);
}

}  // namespace kiln
