#include "ops/random_permutation.h"

#include <algorithm>
#include <cstring>

#include "ir/error.h"
#include "kiln/runtime/random/core_variables.hpp"
#include "ops/alloc.h"
#include "ops/array_util.h"
#include "ops/math.h"
#include "ops/subtensor.h"

namespace kiln {

Json PermutationRandomVariable::props() const {
  return Json{{"name", "permutation"}, {"signature", signature_}, {"dtype", std::string(dtype_name(dtype_))}};
}

std::string PermutationRandomVariable::str() const { return rv_str("permutation", signature_); }

std::vector<TensorType> PermutationRandomVariable::infer_types(const VarList& inputs) const {
  if (inputs.size() != 3)
    type_error(*this, "takes 3 inputs (rng, size, x), got " + std::to_string(inputs.size()));
  const TensorType& x = inputs[2]->type();
  if (core_ndim_ == 0) {
    // permutation(n): PyTensor's rng_fn draws arange(n) whatever `size` says when x is 0-d.
    if (x.ndim() != 0 || !is_integer(x.dtype) || x.dtype == DType::Bool)
      type_error(*this, "with signature \"()->(x)\" x must be a 0-d integer, got " + x.str());
    if (inputs[1]->type().kind != TypeKind::None)
      throw NotImplementedError("PermutationRV of an integer with a size is not implemented in kiln (PyTensor 3.0 "
                                "draws one permutation whatever size says)");
    const auto n = constant_int(inputs[2]);
    return {rng_type(), TensorType(dtype_, {n ? std::max<std::int64_t>(*n, 0) : kUnknownLength})};
  }
  if (x.ndim() < core_ndim_)
    type_error(*this, "x has " + std::to_string(core_ndim_) + " core dimension(s) (signature " + signature_ +
                          "), got " + x.str());
  const int batch_ndim = x.ndim() - core_ndim_;
  const std::optional<Shape> sized = size_shape(inputs, batch_ndim);
  if (sized && static_cast<int>(sized->size()) != batch_ndim)
    throw NotImplementedError("PermutationRV with a size of length " + std::to_string(sized->size()) + " and x with " +
                              std::to_string(batch_ndim) +
                              " batch dimension(s) is not implemented in kiln (PyTensor 3.0's rng_fn then returns "
                              "draws whose shape is not its own output type's)");
  Shape out = sized.value_or(Shape(x.shape.begin(), x.shape.begin() + batch_ndim));
  if (sized)
    for (int d = 0; d < batch_ndim; ++d) {
      std::int64_t& o = out[out.size() - static_cast<std::size_t>(batch_ndim - d)];
      const std::int64_t n = x.shape[static_cast<std::size_t>(d)];
      if (o == kUnknownLength && n != 1) o = n;
      if (n != 1 && n != kUnknownLength && o != n)
        type_error(*this, "x's batch shape does not broadcast to size (length " + std::to_string(n) + " against " +
                              std::to_string(o) + ")");
    }
  out.insert(out.end(), x.shape.begin() + batch_ndim, x.shape.end());
  return {rng_type(), TensorType(dtype_, out)};
}

void PermutationRandomVariable::perform(const Apply& node, const std::vector<Array>& inputs,
                                        std::vector<Array>& outputs) const {
  kiln_random::Pcg64 g = generator_of(inputs[0]);
  const Array& x = inputs[2];
  Array draws;
  if (core_ndim_ == 0) {
    const std::int64_t n = std::max<std::int64_t>(*astype(x, DType::Int64).data<std::int64_t>(), 0);
    draws = Array::empty(DType::Int64, {n});
    kiln_random::core::permutation_rows(g, 1, n, draws.data<std::int64_t>());
  } else {
    const int bx = x.ndim() - core_ndim_;
    Shape batch(x.shape().begin(), x.shape().begin() + bx);
    if (node.input(1)->type().kind != TypeKind::None) {
      const Array sz = astype(inputs[1], DType::Int64);
      batch.assign(sz.data<std::int64_t>(), sz.data<std::int64_t>() + sz.size());
      for (std::int64_t n : batch)
        if (n < 0) throw RuntimeFailure("negative dimensions are not allowed (size " + shape_str(batch) + ")");
      for (int d = 0; d < bx; ++d) {
        const std::int64_t n = x.shape(d), o = batch[batch.size() - static_cast<std::size_t>(bx - d)];
        if (n != 1 && n != o)
          throw RuntimeFailure("shape mismatch: x's batch shape " + shape_str(x.shape()) + " does not broadcast to size " +
                               shape_str(batch));
      }
    }
    const int bn = static_cast<int>(batch.size());
    Shape full = batch;
    full.insert(full.end(), x.shape().begin() + bx, x.shape().end());
    const Array src = broadcast_to(x, full);
    const std::int64_t n = x.shape(bx), count = shape_size(batch);
    std::vector<std::int64_t> rows(static_cast<std::size_t>(std::max<std::int64_t>(count * n, 1)));
    kiln_random::core::permutation_rows(g, count, n, rows.data());
    draws = Array::empty(x.dtype(), full);
    std::vector<std::int64_t> from(full.size());
    draws.for_each_index([&](const std::int64_t* idx) {
      std::int64_t b = 0;
      for (int d = 0; d < bn; ++d) b = b * full[static_cast<std::size_t>(d)] + idx[d];
      std::copy(idx, idx + full.size(), from.begin());
      from[static_cast<std::size_t>(bn)] = rows[static_cast<std::size_t>(b * n + idx[bn])];
      std::memcpy(draws.element_ptr(idx), src.element_ptr(from.data()), draws.itemsize());
    });
  }
  outputs[0] = rng_value(g);
  outputs[1] = astype(draws, dtype_);
}

std::vector<ShapeVars> PermutationRandomVariable::infer_shape(const Apply& node,
                                                              const std::vector<ShapeVars>& input_shapes) const {
  const TensorType& t = node.output_ptr(1)->type();
  ShapeVars out;
  if (core_ndim_ == 0) {
    out.push_back(t.shape[0] != kUnknownLength ? int64_constant(t.shape[0])
                                               : maximum(to_int64(node.input(2)), int64_constant(0)));
    return {ShapeVars{int64_constant(kRngStateWords)}, out};
  }
  const ShapeVars& xs = input_shapes[2];
  const int bx = static_cast<int>(xs.size()) - core_ndim_;
  const int bn = t.ndim() - core_ndim_;
  const bool sized = node.input(1)->type().kind != TypeKind::None;
  for (int d = 0; d < bn; ++d) {
    const std::int64_t known = t.shape[static_cast<std::size_t>(d)];
    if (known != kUnknownLength)
      out.push_back(int64_constant(known));
    else
      out.push_back(sized ? to_int64(at(node.input(1), d)) : xs[static_cast<std::size_t>(d - (bn - bx))]);
  }
  out.insert(out.end(), xs.begin() + bx, xs.end());
  return {ShapeVars{int64_constant(kRngStateWords)}, out};
}

namespace {

// The core rank a PermutationRV signature gives x: "()->(x)" is 0; "(x0,...,xk)->(x0,...,xk)"
// is k + 1. -1 when the signature is neither form.
int permutation_core_ndim(const std::string& sig) {
  const auto arrow = sig.find("->");
  if (arrow == std::string::npos || sig.size() < arrow + 4 || sig.front() != '(' || sig[arrow - 1] != ')' ||
      sig[arrow + 2] != '(' || sig.back() != ')')
    return -1;
  const std::string in = sig.substr(1, arrow - 2), out = sig.substr(arrow + 3, sig.size() - arrow - 4);
  if (in.empty()) return out.empty() || out.find(',') != std::string::npos ? -1 : 0;
  if (in != out) return -1;
  return static_cast<int>(std::count(in.begin(), in.end(), ',')) + 1;
}

}  // namespace

OpPtr permutation_from_props(PropReader& props, const std::vector<TensorType>& input_types) {
  if (props.has("name") && props.get_string("name") != "permutation")
    props.fail("name", "PermutationRV's name is \"permutation\", not \"" + props.get_string("name") + "\"");
  const int x_ndim = input_types.size() == 3 ? input_types[2].ndim() : 0;
  std::string signature;
  int core_ndim = x_ndim;  // PyTensor's permutation(x): every dimension of x is core
  if (props.has("signature")) {
    signature = props.get_string("signature");
    core_ndim = permutation_core_ndim(signature);
    if (core_ndim < 0)
      props.fail("signature", "PermutationRV's signature is \"()->(x)\" or \"(x0,...)->(x0,...)\", not \"" + signature +
                                  "\"");
  }
  if (signature.empty()) {
    if (core_ndim == 0) {
      signature = "()->(x)";
    } else {
      std::string dims;
      for (int i = 0; i < core_ndim; ++i) dims += (i ? ",x" : "x") + std::to_string(i);
      signature = "(" + dims + ")->(" + dims + ")";
    }
  }
  props.get_bool("inplace", false);  // kiln never updates an rng in place: ignored
  const DType dtype = props.has("dtype") ? props.get_dtype("dtype")
                                         : (input_types.size() == 3 ? input_types[2].dtype : DType::Int64);
  props.finish();
  return std::make_shared<PermutationRandomVariable>(core_ndim, signature, dtype);
}

}  // namespace kiln
