#include "ops/linalg/structure.h"

#include "ops/math.h"
#include "ops/grad_util.h"
#include "ir/error.h"
#include "ops/array_util.h"
#include "ops/dimshuffle.h"
#include "ops/dot.h"
#include "ops/reduce.h"
#include "ops/reshape.h"
#include "ops/scalar/scalar_op.h"
#include "ops/shape.h"
#include "ops/subtensor.h"

namespace kiln {

// --- KroneckerProduct -----------------------------------------------------------------------------

namespace {

constexpr int kMaxKronRank = 16;  // the kernel's index arrays

std::string dim_names(const std::string& prefix, int n) {
  std::string s = "(";
  for (int d = 0; d < n; ++d) s += (d ? "," : "") + prefix + std::to_string(d);
  return s + ")";
}

// A shape padded with leading ones to rank n.
Shape padded(const Shape& s, int n) {
  Shape out(static_cast<std::size_t>(n) - s.size(), 1);
  out.insert(out.end(), s.begin(), s.end());
  return out;
}

std::int64_t static_product(std::int64_t a, std::int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a == kUnknownLength || b == kUnknownLength ? kUnknownLength : a * b;
}

}  // namespace

std::string KroneckerProduct::gufunc_signature(const std::vector<int>& input_ranks) const {
  const int n = std::max(input_ranks.at(0), input_ranks.at(1));
  return dim_names("i", input_ranks[0]) + "," + dim_names("j", input_ranks[1]) + "->" + dim_names("k", n);
}

std::vector<TensorType> KroneckerProduct::infer_types(const VarList& inputs) const {
  require_input_count(*this, inputs, 2);
  const TensorType& a = inputs[0]->type();
  const TensorType& b = inputs[1]->type();
  if (a.ndim() + b.ndim() <= 2)
    type_error(*this, "the inputs' dimensions must add up to 3 or more, got " + std::to_string(a.ndim()) + " and " +
                          std::to_string(b.ndim()));
  const int n = std::max(a.ndim(), b.ndim());
  if (n > kMaxKronRank) type_error(*this, "inputs of rank above 16 are not supported");
  const Shape ap = padded(a.shape, n), bp = padded(b.shape, n);
  Shape shape;
  for (int d = 0; d < n; ++d)
    shape.push_back(static_product(ap[static_cast<std::size_t>(d)], bp[static_cast<std::size_t>(d)]));
  return {TensorType(upcast(a.dtype, b.dtype), shape)};
}

void KroneckerProduct::perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  const DType dt = node.output_ptr(0)->dtype();
  // Both operands in the output's dtype first (kron converts each element the same way): one
  // instantiation per dtype, not one per triple of dtypes (which took two minutes to compile).
  const Array a = astype(inputs[0], dt);
  const Array b = astype(inputs[1], dt);
  const int n = std::max(a.ndim(), b.ndim());
  const Shape ashape = padded(a.shape(), n), bshape = padded(b.shape(), n);
  const Shape astr = padded(a.strides(), n), bstr = padded(b.strides(), n);  // strides of padded ones unused
  Shape shape;
  for (int d = 0; d < n; ++d) shape.push_back(ashape[static_cast<std::size_t>(d)] * bshape[static_cast<std::size_t>(d)]);
  Array out = Array::zeros(dt, shape);
  visit_dtype(dt, [&](auto t) {
    using T = decltype(t);
    kiln_linalg::kron<T>(n, ashape.data(), astr.data(), a.data<T>(), bshape.data(), bstr.data(), b.data<T>(),
                         out.data<T>());
  });
  outputs[0] = out;
}

std::vector<ShapeVars> KroneckerProduct::infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const {
  const int n = node.output(0)->ndim();
  ShapeVars out;
  for (int d = 0; d < n; ++d) {
    const int da = d - (n - node.input(0)->ndim()), db = d - (n - node.input(1)->ndim());
    if (da < 0)
      out.push_back(input_shapes[1][static_cast<std::size_t>(db)]);
    else if (db < 0)
      out.push_back(input_shapes[0][static_cast<std::size_t>(da)]);
    else
      out.push_back(input_shapes[0][static_cast<std::size_t>(da)] * input_shapes[1][static_cast<std::size_t>(db)]);
  }
  return {out};
}

// out[i * B + j] = a[i] b[j] per dimension: the cotangent reshaped to interleaved (A_0, B_0, A_1,
// B_1, ...) dimensions, times the other operand, summed over that operand's dimensions.
std::vector<GradTerm> KroneckerProduct::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& a = node.input(0);
  const Var& b = node.input(1);
  const int n = node.output(0)->ndim();
  const Var ap = expand_dims_left(a, n - a->ndim());
  const Var bp = expand_dims_left(b, n - b->ndim());
  std::vector<IntArg> interleaved;
  std::vector<int> a_order, b_order, a_axes, b_axes;
  for (int d = 0; d < n; ++d) {
    interleaved.emplace_back(shape_i(ap, d));
    interleaved.emplace_back(shape_i(bp, d));
    a_order.insert(a_order.end(), {d, DimShuffle::kNewAxis});
    b_order.insert(b_order.end(), {DimShuffle::kNewAxis, d});
    a_axes.push_back(2 * d);
    b_axes.push_back(2 * d + 1);
  }
  const Var G = reshape(output_grads[0], IntList(interleaved));
  const auto shrink = [&](const Var& g, const Var& x) {  // drop the padding dimensions
    if (x->ndim() == n) return linalg_grad_term(g, x);
    std::vector<IntArg> lengths;
    for (int d = 0; d < x->ndim(); ++d) lengths.emplace_back(shape_i(x, d));
    return linalg_grad_term(reshape(g, IntList(lengths)), x);
  };
  const Var ga = sum(G * dimshuffle(bp, b_order), b_axes);
  const Var gb = sum(G * dimshuffle(ap, a_order), a_axes);
  return {shrink(ga, a), shrink(gb, b)};
}

std::vector<GradTerm> KroneckerProduct::pushforward(const Apply& node, const VarList& input_tangents) const {
  VarList parts;
  if (input_tangents[0]) parts.push_back(kron(input_tangents[0], node.input(1)));
  if (input_tangents[1]) parts.push_back(kron(node.input(0), input_tangents[1]));
  if (parts.empty() || !is_float(node.output(0)->dtype())) return {GradTerm::disconnected()};
  return {GradTerm::of(add_terms(parts))};
}

// --- BlockDiagonal ------------------------------------------------------------------------------

BlockDiagonal::BlockDiagonal(int n_inputs) : n_inputs_(n_inputs) {
  if (n_inputs < 2) throw UserError("BlockDiagonal: n_inputs must be 2 or more, got " + std::to_string(n_inputs));
}

std::string BlockDiagonal::gufunc_signature(const std::vector<int>&) const {
  std::string s;
  for (int i = 0; i < n_inputs_; ++i)
    s += (i ? "," : "") + std::string("(m") + std::to_string(i) + ",n" + std::to_string(i) + ")";
  return s + "->(m,n)";
}

std::vector<TensorType> BlockDiagonal::infer_types(const VarList& inputs) const {
  require_input_count(*this, inputs, static_cast<std::size_t>(n_inputs_));
  std::vector<DType> dtypes;
  std::int64_t rows = 0, cols = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const TensorType& t = linalg_input(*this, inputs, i, 2);
    dtypes.push_back(t.dtype);
    rows = (rows == kUnknownLength || t.shape[0] == kUnknownLength) ? kUnknownLength : rows + t.shape[0];
    cols = (cols == kUnknownLength || t.shape[1] == kUnknownLength) ? kUnknownLength : cols + t.shape[1];
  }
  return {TensorType(upcast(dtypes), {rows, cols})};
}

void BlockDiagonal::perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  std::int64_t rows = 0, cols = 0;
  for (const Array& x : inputs) {
    rows += x.shape(0);
    cols += x.shape(1);
  }
  const DType dt = node.output_ptr(0)->dtype();
  Array out = Array::zeros(dt, {rows, cols});
  std::int64_t r0 = 0, c0 = 0;
  for (const Array& x : inputs) {
    Array block = out.view({x.shape(0), x.shape(1)}, out.strides(), r0 * cols + c0);
    astype(x, dt).copy_into(block);
    r0 += x.shape(0);
    c0 += x.shape(1);
  }
  outputs[0] = out;
}

std::vector<ShapeVars> BlockDiagonal::infer_shape(const Apply&, const std::vector<ShapeVars>& input_shapes) const {
  Var rows = input_shapes[0][0], cols = input_shapes[0][1];
  for (std::size_t i = 1; i < input_shapes.size(); ++i) {
    rows = rows + input_shapes[i][0];
    cols = cols + input_shapes[i][1];
  }
  return {{rows, cols}};
}

std::vector<GradTerm> BlockDiagonal::pullback(const Apply& node, const VarList& output_grads) const {
  std::vector<GradTerm> terms;
  Var r0 = int64_constant(0), c0 = int64_constant(0);
  for (int i = 0; i < node.num_inputs(); ++i) {
    const Var& x = node.input(i);
    const Var r1 = r0 + shape_i(x, 0), c1 = c0 + shape_i(x, 1);
    terms.push_back(linalg_grad_term(subtensor(output_grads[0], {slice(r0, r1), slice(c0, c1)}), x));
    r0 = r1;
    c0 = c1;
  }
  return terms;
}

std::vector<GradTerm> BlockDiagonal::pushforward(const Apply& node, const VarList& input_tangents) const {
  std::vector<int> all;
  for (int i = 0; i < node.num_inputs(); ++i) all.push_back(i);
  return linear_pushforward(node, input_tangents, all);
}

// --- builders and factories -----------------------------------------------------------------------

Var kron(const Var& a, const Var& b) {
  if (!a || !b) throw UserError("kron: null operand");
  return apply1(std::make_shared<KroneckerProduct>(), {a, b});
}

Var block_diag(const VarList& matrices) {
  if (matrices.empty()) throw UserError("block_diag: no matrices");
  if (matrices.size() == 1) return matrices[0];
  return apply_linalg1(std::make_shared<BlockDiagonal>(static_cast<int>(matrices.size())), matrices,
                       std::vector<int>(matrices.size(), 2));
}

OpPtr kronecker_product_from_props(PropReader& props, const std::vector<TensorType>&) {
  props.raw("inner");  // 3.x writes it as an OpFromGraph; kiln uses its own definition
  props.raw("name");
  props.finish();
  return std::make_shared<KroneckerProduct>();
}

OpPtr block_diagonal_from_props(PropReader& props, const std::vector<TensorType>& input_types) {
  const std::int64_t n = props.has("n_inputs") ? props.get_int("n_inputs")
                                               : static_cast<std::int64_t>(input_types.size());
  props.finish();
  if (n < 2 || n > 1 << 20) props.fail("n_inputs", "must be 2 or more, got " + std::to_string(n));
  return std::make_shared<BlockDiagonal>(static_cast<int>(n));
}

}  // namespace kiln
