#include "ops/dot.h"

#include <algorithm>
#include <stdexcept>

#include "ir/error.h"
#include "kiln/runtime/scalar_math.hpp"
#include "ops/array_util.h"
#include "ops/blockwise.h"
#include "ops/dimshuffle.h"
#include "ops/elemwise.h"
#include "ops/scalar/scalar_op.h"
#include "ops/math.h"
#include "ops/grad_util.h"

namespace kiln {

// --- the kernel ----------------------------------------------------------------------------

namespace {

template <typename T>
void matmul_loop(const Array& x, const Array& y, Array& out) {
  const std::int64_t m = x.shape(0), k = x.shape(1), n = y.shape(1);
  const std::int64_t xs0 = x.strides()[0], xs1 = x.strides()[1];
  const std::int64_t ys0 = y.strides()[0], ys1 = y.strides()[1];
  const std::int64_t os0 = out.strides()[0], os1 = out.strides()[1];
  const T* xp = x.data<T>();
  const T* yp = y.data<T>();
  T* op = out.data<T>();
  using A = kiln_scalar::arithmetic_t<T>;  // float16 accumulates in float32 (NumPy's HALF_dot)
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      A acc = A(0);
      for (std::int64_t p = 0; p < k; ++p) {
        if constexpr (kiln_scalar::is_complex_v<A>)  // NumPy's complex product
          acc += kiln_scalar::c_mul(xp[i * xs0 + p * xs1], yp[p * ys0 + j * ys1]);
        else
          acc = kiln_scalar::wrap_add(
              acc, kiln_scalar::wrap_mul(A(xp[i * xs0 + p * xs1]), A(yp[p * ys0 + j * ys1])));
      }
      op[i * os0 + j * os1] = T(acc);
    }
  }
}

// A 1-d operand seen as a matrix: x as one row (1, k), y as one column (k, 1).
Array as_row(const Array& v) { return v.view({1, v.shape(0)}, {0, v.strides()[0]}); }
Array as_column(const Array& v) { return v.view({v.shape(0), 1}, {v.strides()[0], 0}); }

}  // namespace

void matmul_2d_into(const Array& x, const Array& y, Array& out) {
  KILN_INTERNAL_ASSERT(x.ndim() == 2 && y.ndim() == 2 && out.ndim() == 2,
                       "matmul_2d_into needs matrices");
  KILN_INTERNAL_ASSERT(x.dtype() == y.dtype() && x.dtype() == out.dtype(),
                       "matmul_2d_into needs one dtype");
  KILN_INTERNAL_ASSERT(
      x.shape(1) == y.shape(0) && out.shape(0) == x.shape(0) && out.shape(1) == y.shape(1),
      "matmul_2d_into: shapes do not fit");
  visit_dtype(x.dtype(), [&](auto t) { matmul_loop<decltype(t)>(x, y, out); });
}

Array dot_arrays(const Array& x, const Array& y, DType dtype) {
  const std::int64_t kx = x.shape(x.ndim() - 1);
  const std::int64_t ky = y.shape(0);
  if (kx != ky)
    throw RuntimeFailure("inner dimensions do not match: x has shape " + shape_str(x.shape()) +
                         ", y has shape " + shape_str(y.shape()) + " (" + std::to_string(kx) +
                         " != " + std::to_string(ky) + ")");
  const Array xa = x.dtype() == dtype ? x : astype(x, dtype);
  const Array ya = y.dtype() == dtype ? y : astype(y, dtype);
  const Array x2 = xa.ndim() == 1 ? as_row(xa) : xa;
  const Array y2 = ya.ndim() == 1 ? as_column(ya) : ya;
  Array out = Array::empty(dtype, {x2.shape(0), y2.shape(1)});
  matmul_2d_into(x2, y2, out);
  Shape shape;
  if (x.ndim() == 2) shape.push_back(x.shape(0));
  if (y.ndim() == 2) shape.push_back(y.shape(1));
  return out.view(shape, c_strides(shape));
}

std::int64_t merge_static_length(std::int64_t a, std::int64_t b) {
  if (a == kUnknownLength) return b;
  if (b == kUnknownLength || a == b) return a;
  throw std::invalid_argument(std::to_string(a) + " != " + std::to_string(b));
}

// --- Dot -----------------------------------------------------------------------------------

std::vector<TensorType> Dot::infer_types(const VarList& inputs) const {
  if (inputs.size() != 2) type_error(*this, "takes 2 inputs, got " + std::to_string(inputs.size()));
  const TensorType& x = inputs[0]->type();
  const TensorType& y = inputs[1]->type();
  for (int i = 0; i < 2; ++i) {
    const TensorType& t = inputs[static_cast<std::size_t>(i)]->type();
    if (t.ndim() != 1 && t.ndim() != 2)
      type_error(*this, "input " + std::to_string(i) +
                            " must have rank 1 or 2 (a vector or a matrix), got " + t.str() +
                            " (use matmul or Blockwise for batched products)");
  }
  try {
    merge_static_length(x.shape.back(), y.shape.front());
  } catch (const std::invalid_argument&) {
    type_error(*this, "inner dimensions do not match: input 0 has shape " + x.shape_str() +
                          ", input 1 has shape " + y.shape_str());
  }
  Shape shape(x.shape.begin(), x.shape.end() - 1);
  if (y.ndim() == 2) shape.push_back(y.shape[1]);
  return {TensorType(upcast(x.dtype, y.dtype), shape)};
}

void Dot::perform(const Apply& node, const std::vector<Array>& inputs,
                  std::vector<Array>& outputs) const {
  outputs[0] = dot_arrays(inputs[0], inputs[1], node.output_ptr(0)->dtype());
}

std::vector<ShapeVars> Dot::infer_shape(const Apply& node,
                                        const std::vector<ShapeVars>& input_shapes) const {
  const ShapeVars& xs = input_shapes[0];
  ShapeVars out(xs.begin(), xs.end() - 1);
  if (node.input(1)->ndim() == 2) out.push_back(input_shapes[1][1]);
  return {out};
}

// --- BatchedDot ----------------------------------------------------------------------------

std::vector<TensorType> BatchedDot::infer_types(const VarList& inputs) const {
  if (inputs.size() != 2) type_error(*this, "takes 2 inputs, got " + std::to_string(inputs.size()));
  const TensorType& x = inputs[0]->type();
  const TensorType& y = inputs[1]->type();
  for (int i = 0; i < 2; ++i)
    if (inputs[static_cast<std::size_t>(i)]->ndim() != 3)
      type_error(*this, "input " + std::to_string(i) +
                            " must have rank 3 (batch, rows, columns), got " +
                            inputs[static_cast<std::size_t>(i)]->type().str());
  std::int64_t batch = kUnknownLength;
  try {
    batch = merge_static_length(x.shape[0], y.shape[0]);
  } catch (const std::invalid_argument&) {
    type_error(*this, "batch lengths differ (BatchedDot does not broadcast): input 0 has shape " +
                          x.shape_str() + ", input 1 has shape " + y.shape_str());
  }
  try {
    merge_static_length(x.shape[2], y.shape[1]);
  } catch (const std::invalid_argument&) {
    type_error(*this, "inner dimensions do not match: input 0 has shape " + x.shape_str() +
                          ", input 1 has shape " + y.shape_str());
  }
  return {TensorType(upcast(x.dtype, y.dtype), {batch, x.shape[1], y.shape[2]})};
}

void BatchedDot::perform(const Apply& node, const std::vector<Array>& inputs,
                         std::vector<Array>& outputs) const {
  const DType dtype = node.output_ptr(0)->dtype();
  const Array& x0 = inputs[0];
  const Array& y0 = inputs[1];
  if (x0.shape(0) != y0.shape(0))
    throw RuntimeFailure("batch lengths differ: x has shape " + shape_str(x0.shape()) +
                         ", y has shape " + shape_str(y0.shape()));
  if (x0.shape(2) != y0.shape(1))
    throw RuntimeFailure("inner dimensions do not match: x has shape " + shape_str(x0.shape()) +
                         ", y has shape " + shape_str(y0.shape()));
  const Array x = x0.dtype() == dtype ? x0 : astype(x0, dtype);
  const Array y = y0.dtype() == dtype ? y0 : astype(y0, dtype);
  const std::int64_t batch = x.shape(0), m = x.shape(1), k = x.shape(2), n = y.shape(2);
  Array out = Array::empty(dtype, {batch, m, n});
  for (std::int64_t b = 0; b < batch; ++b) {
    Array xb = x.view({m, k}, {x.strides()[1], x.strides()[2]}, b * x.strides()[0]);
    Array yb = y.view({k, n}, {y.strides()[1], y.strides()[2]}, b * y.strides()[0]);
    Array ob = out.view({m, n}, {out.strides()[1], out.strides()[2]}, b * out.strides()[0]);
    matmul_2d_into(xb, yb, ob);
  }
  outputs[0] = out;
}

std::vector<ShapeVars> BatchedDot::infer_shape(const Apply&,
                                               const std::vector<ShapeVars>& input_shapes) const {
  return {{input_shapes[0][0], input_shapes[0][1], input_shapes[1][2]}};
}

// --- builders ------------------------------------------------------------------------------

namespace {
void require_operands(const char* fn, const Var& a, const Var& b) {
  if (!a || !b) throw UserError(std::string(fn) + ": null operand");
}

// The gufunc signature of a Dot whose operands have `x_core` and `y_core` (1 or 2) core
// dimensions: "(m,k),(k,n)->(m,n)", "(m,k),(k)->(m)", "(k),(k,n)->(n)" or "(k),(k)->()".
std::string dot_signature(int x_core, int y_core) {
  std::string out;
  if (x_core == 2) out += "m";
  if (y_core == 2) out += out.empty() ? "n" : ",n";
  return std::string(x_core == 2 ? "(m,k)" : "(k)") + "," + (y_core == 2 ? "(k,n)" : "(k)") +
         "->(" + out + ")";
}
}  // namespace

Var dot(const Var& a, const Var& b) {
  require_operands("dot", a, b);
  if (a->ndim() == 0 || b->ndim() == 0) return elemwise1(ScalarOp(ScalarOpId::Mul), {a, b});
  return apply1(std::make_shared<Dot>(), {a, b});
}

Var matmul(const Var& a, const Var& b) {
  require_operands("matmul", a, b);
  for (const Var* v : {&a, &b})
    if ((*v)->ndim() == 0)
      throw UserError("matmul: operands must have rank 1 or more, got " + (*v)->type().str());
  if (a->ndim() <= 2 && b->ndim() <= 2) return apply1(std::make_shared<Dot>(), {a, b});
  return blockwise1(std::make_shared<Dot>(),
                    dot_signature(std::min(a->ndim(), 2), std::min(b->ndim(), 2)), {a, b});
}

Var batched_dot(const Var& a, const Var& b) {
  require_operands("batched_dot", a, b);
  if (a->ndim() == 3 && b->ndim() == 3) return apply1(std::make_shared<BatchedDot>(), {a, b});
  for (const Var* v : {&a, &b})
    if ((*v)->ndim() != 2 && (*v)->ndim() != 3)
      throw UserError(
          "batched_dot: operands must have rank 2 or 3 (a batch of vectors or matrices), got " +
          (*v)->type().str());
  // One batch dimension each: the core Dot sees vectors or matrices.
  return blockwise1(std::make_shared<Dot>(), dot_signature(a->ndim() - 1, b->ndim() - 1), {a, b});
}

Var outer(const Var& x, const Var& y) {
  require_operands("outer", x, y);
  if (x->ndim() != 1 || y->ndim() != 1)
    throw UserError("outer: operands must be vectors, got " + x->type().str() + " and " +
                    y->type().str());
  return dot(dimshuffle(x, {0, DimShuffle::kNewAxis}), dimshuffle(y, {DimShuffle::kNewAxis, 0}));
}

// --- graph-file factories ------------------------------------------------------------------

OpPtr dot_from_props(PropReader& props, const std::vector<TensorType>&) {
  props.finish();
  return std::make_shared<Dot>();
}

OpPtr batched_dot_from_props(PropReader& props, const std::vector<TensorType>&) {
  props.finish();
  return std::make_shared<BatchedDot>();
}

// --- gradients ------------------------------------------------------------------------------

namespace {

GradTerm dot_term(const Var& g, const Var& input) {
  if (is_discrete(input->dtype())) return GradTerm::disconnected();
  return GradTerm::of(cast_grad(g, input->dtype()));
}

}  // namespace

std::vector<GradTerm> Dot::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& x = node.input(0);
  const Var& y = node.input(1);
  const Var& g = output_grads[0];
  Var gx, gy;
  if (x->ndim() == 1 && y->ndim() == 1) {
    gx = g * y;
    gy = g * x;
  } else if (x->ndim() == 2 && y->ndim() == 1) {
    gx = outer(g, y);
    gy = dot(transpose(x), g);
  } else if (x->ndim() == 1) {
    gx = dot(y, g);
    gy = outer(x, g);
  } else {
    gx = dot(g, transpose(y));
    gy = dot(transpose(x), g);
  }
  return {dot_term(gx, x), dot_term(gy, y)};
}

std::vector<GradTerm> Dot::pushforward(const Apply& node, const VarList& input_tangents) const {
  VarList parts;
  if (input_tangents[0]) parts.push_back(dot(input_tangents[0], node.input(1)));
  if (input_tangents[1]) parts.push_back(dot(node.input(0), input_tangents[1]));
  if (parts.empty()) return {GradTerm::disconnected()};
  return {GradTerm::of(add_terms(parts))};
}

std::vector<GradTerm> BatchedDot::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& x = node.input(0);
  const Var& y = node.input(1);
  const Var& g = output_grads[0];
  return {dot_term(batched_dot(g, transpose(y, {0, 2, 1})), x),
          dot_term(batched_dot(transpose(x, {0, 2, 1}), g), y)};
}

// --- batching rule (vectorize_graph) ---------------------------------------------------------

std::string dot_gufunc_signature(int x_ndim, int y_ndim) {
  std::string x = x_ndim == 2 ? "(m,k)" : "(k)";
  std::string y = y_ndim == 2 ? "(k,n)" : "(k)";
  std::string out = std::string("(") + (x_ndim == 2 ? "m" : "") + (x_ndim == 2 && y_ndim == 2 ? "," : "") +
                    (y_ndim == 2 ? "n" : "") + ")";
  return x + "," + y + "->" + out;
}

std::optional<VarList> Dot::vectorize(const Apply& node, const VarList& batched_inputs) const {
  return blockwise(node.op_ptr(), dot_gufunc_signature(node.input(0)->ndim(), node.input(1)->ndim()), batched_inputs);
}

std::optional<VarList> BatchedDot::vectorize(const Apply&, const VarList& batched_inputs) const {
  return blockwise(std::make_shared<Dot>(), "(m,k),(k,n)->(m,n)", batched_inputs);
}

}  // namespace kiln
