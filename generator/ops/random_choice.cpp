#include "ops/random_choice.h"

#include <algorithm>
#include <cstring>

#include "ir/error.h"
#include "kiln/runtime/random/core_variables.hpp"
#include "ops/alloc.h"
#include "ops/array_util.h"
#include "ops/constant.h"
#include "ops/math.h"
#include "ops/subtensor.h"

namespace kiln {

Json ChoiceWithoutReplacement::props() const {
  return Json{{"name", "choice_without_replacement"}, {"signature", signature_}, {"dtype", std::string(dtype_name(dtype_))}};
}

std::string ChoiceWithoutReplacement::str() const { return rv_str("choice_without_replacement", signature_); }

std::vector<TensorType> ChoiceWithoutReplacement::infer_types(const VarList& inputs) const {
  const std::size_t want = has_p_ ? 5 : 4;
  if (inputs.size() != want)
    type_error(*this, "takes " + std::to_string(want) + (has_p_ ? " inputs (rng, size, a, p, core_shape), got "
                                                                 : " inputs (rng, size, a, core_shape), got ") +
                          std::to_string(inputs.size()));
  if (inputs[1]->type().kind != TypeKind::None)
    throw NotImplementedError("ChoiceWithoutReplacement with a size is not implemented in kiln (pytensor's choice "
                              "builds it with size None; the core shape is its own input)");
  const TensorType& a = inputs[2]->type();
  if (a.ndim() < a_core_ndim_)
    type_error(*this, "a has " + std::to_string(a_core_ndim_) + " core dimension(s) (signature " + signature_ +
                          "), got " + a.str());
  if (a.ndim() > a_core_ndim_)
    throw NotImplementedError("ChoiceWithoutReplacement of a batched a (" + a.str() + ", signature " + signature_ +
                              ") is not implemented in kiln");
  if (a_core_ndim_ == 0 && (!is_integer(a.dtype) || a.dtype == DType::Bool))
    type_error(*this, "a 0-d a is the population size and must be an integer, got " + a.str());
  if (has_p_) {
    const TensorType& p = inputs[3]->type();
    if (p.ndim() > 1)
      throw NotImplementedError("ChoiceWithoutReplacement with a batched p (" + p.str() + ") is not implemented in kiln");
    if (p.ndim() != 1 || !(is_float(p.dtype) || is_integer(p.dtype)))
      type_error(*this, "p must be a real vector, got " + p.str());
  }
  const Var& cs = inputs[static_cast<std::size_t>(shape_input())];
  const TensorType& ct = cs->type();
  if (ct.ndim() > 1)
    throw NotImplementedError("ChoiceWithoutReplacement with a batched core shape is not implemented in kiln");
  if (ct.ndim() != 1 || !is_integer(ct.dtype) || ct.dtype == DType::Bool || ct.shape[0] != shape_len_)
    type_error(*this, "the core shape must be an integer vector of length " + std::to_string(shape_len_) +
                          " (signature " + signature_ + "), got " + ct.str());
  Shape out(static_cast<std::size_t>(shape_len_), kUnknownLength);
  if (const auto entries = constant_entries(cs))
    for (int i = 0; i < shape_len_ && i < static_cast<int>(entries->size()); ++i)
      if (const auto& e = (*entries)[static_cast<std::size_t>(i)]; e && *e >= 0) out[static_cast<std::size_t>(i)] = *e;
  if (a.ndim() >= 1) out.insert(out.end(), a.shape.begin() + 1, a.shape.end());
  return {rng_type(), TensorType(dtype_, out)};
}

void ChoiceWithoutReplacement::perform(const Apply&, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  kiln_random::Pcg64 g = generator_of(inputs[0]);
  const Array& a = inputs[2];
  const Array cs = astype(inputs[static_cast<std::size_t>(shape_input())], DType::Int64);  // C-contiguous
  Shape core(cs.data<std::int64_t>(), cs.data<std::int64_t>() + cs.size());
  for (std::int64_t n : core)
    if (n < 0) throw RuntimeFailure("negative dimensions are not allowed (core shape " + shape_str(core) + ")");
  const std::int64_t size = shape_size(core);
  const std::int64_t pop = a.ndim() == 0 ? *astype(a, DType::Int64).data<std::int64_t>() : a.shape(0);
  Array p;
  if (has_p_) p = astype(inputs[3], DType::Float64);
  std::vector<std::int64_t> idx(static_cast<std::size_t>(std::max<std::int64_t>(size, 1)));
  if (const char* bad = kiln_random::core::choice_indices(
          g, pop, a.ndim() == 0, shape_len_ == 0, size, has_p_ ? p.data<double>() : nullptr, has_p_ ? p.size() : 0,
          has_p_ && inputs[3].dtype() == DType::Float32, idx.data()))
    throw RuntimeFailure(bad);
  Array draws;
  if (a.ndim() == 0) {
    draws = Array::empty(DType::Int64, core);
    std::copy(idx.begin(), idx.begin() + size, draws.data<std::int64_t>());
  } else {
    // a.take(idx, axis=0): row idx[k] of a for each of the core shape's places k.
    Shape full = core;
    full.insert(full.end(), a.shape().begin() + 1, a.shape().end());
    draws = Array::empty(a.dtype(), full);
    const int nc = static_cast<int>(core.size());
    std::vector<std::int64_t> from(static_cast<std::size_t>(a.ndim()));
    draws.for_each_index([&](const std::int64_t* at_idx) {
      std::int64_t k = 0;
      for (int d = 0; d < nc; ++d) k = k * full[static_cast<std::size_t>(d)] + at_idx[d];
      from[0] = idx[static_cast<std::size_t>(k)];
      std::copy(at_idx + nc, at_idx + full.size(), from.begin() + 1);
      std::memcpy(draws.element_ptr(at_idx), a.element_ptr(from.data()), draws.itemsize());
    });
  }
  outputs[0] = rng_value(g);
  outputs[1] = astype(draws, dtype_);
}

std::vector<ShapeVars> ChoiceWithoutReplacement::infer_shape(const Apply& node,
                                                             const std::vector<ShapeVars>& input_shapes) const {
  const TensorType& t = node.output_ptr(1)->type();
  ShapeVars out;
  for (int d = 0; d < shape_len_; ++d) {
    const std::int64_t known = t.shape[static_cast<std::size_t>(d)];
    out.push_back(known != kUnknownLength ? int64_constant(known) : to_int64(at(node.input(shape_input()), d)));
  }
  const ShapeVars& as = input_shapes[2];
  if (!as.empty()) out.insert(out.end(), as.begin() + 1, as.end());
  return {ShapeVars{int64_constant(kRngStateWords)}, out};
}

namespace {

// The parenthesised groups of a gufunc signature's inputs, each as its list of dimension names.
std::optional<std::vector<std::vector<std::string>>> input_groups(const std::string& sig) {
  const auto arrow = sig.find("->");
  if (arrow == std::string::npos) return std::nullopt;
  std::vector<std::vector<std::string>> groups;
  std::size_t i = 0;
  while (i < arrow) {
    if (sig[i] != '(') return std::nullopt;
    const auto close = sig.find(')', i);
    if (close == std::string::npos || close > arrow) return std::nullopt;
    std::vector<std::string> dims;
    std::string cur;
    for (std::size_t j = i + 1; j < close; ++j) {
      if (sig[j] == ',') {
        dims.push_back(cur);
        cur.clear();
      } else {
        cur += sig[j];
      }
    }
    if (!cur.empty() || !dims.empty()) dims.push_back(cur);
    groups.push_back(dims);
    i = close + 1;
    if (i < arrow && sig[i] == ',') ++i;
  }
  return groups;
}

}  // namespace

OpPtr choice_without_replacement_from_props(PropReader& props, const std::vector<TensorType>& input_types) {
  if (props.has("name") && props.get_string("name") != "choice_without_replacement")
    props.fail("name", "ChoiceWithoutReplacement's name is \"choice_without_replacement\", not \"" +
                           props.get_string("name") + "\"");
  if (!props.has("signature"))
    props.fail("signature", "ChoiceWithoutReplacement needs its signature (it depends on the call)");
  const std::string signature = props.get_string("signature");
  const auto groups = input_groups(signature);
  // (a dims)[,(p dim)],(L)->(...): L a literal, the core shape's length.
  bool ok = groups && (groups->size() == 2 || groups->size() == 3) && groups->back().size() == 1;
  int shape_len = 0;
  if (ok) {
    const std::string& len = groups->back()[0];
    ok = !len.empty() && std::all_of(len.begin(), len.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (ok) shape_len = std::stoi(len);
  }
  if (!ok)
    props.fail("signature", "ChoiceWithoutReplacement's signature is \"(a...),(L)->(...)\" or \"(a...),(p),(L)->(...)\", "
                            "not \"" + signature + "\"");
  const int a_core_ndim = static_cast<int>((*groups)[0].size());
  const bool has_p = groups->size() == 3;
  props.get_bool("inplace", false);  // kiln never updates an rng in place: ignored
  const DType dtype = props.has("dtype") ? props.get_dtype("dtype")
                                         : (input_types.size() >= 3 ? input_types[2].dtype : DType::Int64);
  props.finish();
  return std::make_shared<ChoiceWithoutReplacement>(signature, a_core_ndim, has_p, shape_len, dtype);
}

}  // namespace kiln
