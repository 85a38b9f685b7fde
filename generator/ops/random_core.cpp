#include "ops/random_core.h"

#include <algorithm>

#include "ir/error.h"
#include "kiln/runtime/linalg_kernels.hpp"
#include "ops/array_util.h"
#include "ops/constant.h"
#include "ops/math.h"
#include "ops/random.h"
#include "ops/subtensor.h"

namespace kiln {

namespace core = kiln_random::core;

const std::vector<RvCoreDistribution>& rv_core_distributions() {
  static const std::vector<RvCoreDistribution> list = {
      {"DirichletRV", "dirichlet", "(a)->(a)", core::Kind::Dirichlet, {"alphas"}},
      {"MultinomialRV", "multinomial", "(),(p)->(p)", core::Kind::Multinomial, {"n", "p"}},
      {"CategoricalRV", "categorical", "(p)->()", core::Kind::Categorical, {"p"}},
      {"MvNormalRV", "multivariate_normal", "(n),(n,n)->(n)", core::Kind::MvNormal, {"mean", "cov"}},
  };
  return list;
}

const RvCoreDistribution* find_rv_core_distribution(std::string_view op_name) {
  for (const auto& d : rv_core_distributions())
    if (d.op == op_name) return &d;
  return nullptr;
}

Json CoreRandomVariable::props() const {
  Json p{{"name", std::string(dist_->name)}, {"signature", std::string(dist_->signature)},
         {"dtype", std::string(dtype_name(dtype_))}};
  static const char* const kMethods[] = {"cholesky", "svd", "eigh"};
  if (dist_->kind == core::Kind::MvNormal) p["method"] = kMethods[mv_method_];
  return p;
}

std::string CoreRandomVariable::str() const { return rv_str(dist_->name, dist_->signature); }

namespace {

bool has_size_input(const Apply& node) { return node.input(1)->type().kind != TypeKind::None; }

std::string param_what(const RvCoreDistribution& d, std::size_t i) {
  return "parameter " + std::to_string(i) + " (" + std::string(d.params[i]) + ")";
}

}  // namespace

std::vector<TensorType> CoreRandomVariable::infer_types(const VarList& inputs) const {
  const core::Spec spec = dist_->spec();
  const std::size_t n_params = dist_->params.size();
  if (inputs.size() != 2 + n_params) {
    std::string names = "rng, size";
    for (const auto& p : dist_->params) names += ", " + std::string(p);
    type_error(*this, "takes " + std::to_string(2 + n_params) + " inputs (" + names + "), got " +
                          std::to_string(inputs.size()));
  }
  int batch_ndim = 0;
  for (std::size_t i = 0; i < n_params; ++i) {
    const TensorType& t = inputs[2 + i]->type();
    const int core_ndim = spec.core_ndim[i];
    if (t.ndim() < core_ndim)
      type_error(*this, param_what(*dist_, i) + " has " + std::to_string(core_ndim) +
                            " core dimension(s) (signature " + std::string(dist_->signature) + "), got " + t.str());
    if (t.dtype == DType::Bool) type_error(*this, param_what(*dist_, i) + " must be numeric, got " + t.str());
    batch_ndim = std::max(batch_ndim, t.ndim() - core_ndim);
  }
  const std::optional<Shape> sized = size_shape(inputs, batch_ndim);
  Shape out = sized.value_or(Shape{});
  if (!sized) {
    for (int d = 0; d < batch_ndim; ++d) {
      std::vector<std::int64_t> lengths;
      for (std::size_t i = 0; i < n_params; ++i) {
        const TensorType& t = inputs[2 + i]->type();
        const int k = d - (batch_ndim - (t.ndim() - spec.core_ndim[i]));
        lengths.push_back(k < 0 ? 1 : t.shape[static_cast<std::size_t>(k)]);
      }
      out.push_back(rv_static_broadcast(lengths, *this, d));
    }
  }
  if (spec.out_core_from >= 0) out.push_back(inputs[2 + spec.out_core_from]->type().shape.back());
  if (spec.kind == core::Kind::MvNormal) {
    const std::int64_t n = inputs[2]->type().shape.back();
    const Shape& cov = inputs[3]->type().shape;
    for (std::int64_t m : {cov[cov.size() - 2], cov[cov.size() - 1]})
      if (n != kUnknownLength && m != kUnknownLength && m != n)
        type_error(*this, "cov must be a square matrix of mean's length " + std::to_string(n) + ", got " +
                              inputs[3]->type().str());
  }
  return {rng_type(), TensorType(dtype_, out)};
}

core::Param core_param_of(const Array& a) {
  int type = core::kF64;
  switch (a.dtype()) {
    case DType::Float64: type = core::kF64; break;
    case DType::Float32: type = core::kF32; break;
    case DType::Int64: type = core::kI64; break;
    case DType::Int32: type = core::kI32; break;
    case DType::Int16: type = core::kI16; break;
    case DType::Int8: type = core::kI8; break;
    case DType::UInt64: type = core::kU64; break;
    case DType::UInt32: type = core::kU32; break;
    case DType::UInt16: type = core::kU16; break;
    case DType::UInt8: type = core::kU8; break;
    default: type = core::kBool; break;
  }
  return {a.data(), type, a.ndim(), a.shape().data(), a.strides().data()};
}

bool mvnormal_cholesky(int n, double* a, bool single) {
  const int lda = std::max(n, 1);
  if (!single) return kiln_linalg::cholesky<double>(n, a, lda, true) == kiln_linalg::Status::Ok;
  std::vector<float> f(a, a + static_cast<std::ptrdiff_t>(n) * n);
  if (kiln_linalg::cholesky<float>(n, f.data(), lda, true) != kiln_linalg::Status::Ok) return false;
  std::copy(f.begin(), f.end(), a);
  return true;
}

namespace {

bool mvnormal_factor_in(bool svd, int n, double* a, bool single) {
  if (!single) return kiln_linalg::mvnormal_factor<double>(svd, n, a) == kiln_linalg::Status::Ok;
  std::vector<float> f(a, a + static_cast<std::ptrdiff_t>(n) * n);
  if (kiln_linalg::mvnormal_factor<float>(svd, n, f.data()) != kiln_linalg::Status::Ok) return false;
  std::copy(f.begin(), f.end(), a);
  return true;
}

}  // namespace

bool mvnormal_svd(int n, double* a, bool single) { return mvnormal_factor_in(true, n, a, single); }
bool mvnormal_eigh(int n, double* a, bool single) { return mvnormal_factor_in(false, n, a, single); }

void CoreRandomVariable::perform(const Apply& node, const std::vector<Array>& inputs,
                                 std::vector<Array>& outputs) const {
  const core::Spec spec = dist_->spec();
  kiln_random::Pcg64 g = generator_of(inputs[0]);
  std::vector<core::Param> params;
  for (std::size_t i = 2; i < inputs.size(); ++i) params.push_back(core_param_of(inputs[i]));
  Array size;
  if (has_size_input(node)) size = astype(inputs[1], DType::Int64);  // C-contiguous
  std::vector<std::int64_t> batch, shape;
  if (const char* bad = core::draws_shape(spec, params.data(), has_size_input(node) ? size.data<std::int64_t>() : nullptr,
                                          has_size_input(node) ? static_cast<int>(size.size()) : 0, batch, shape))
    throw RuntimeFailure(bad);
  Array draws = Array::empty(spec.integer ? DType::Int64 : DType::Float64, Shape(shape.begin(), shape.end()));
  if (const char* bad = core::draw(spec, g, params.data(), batch, spec.integer ? nullptr : draws.data<double>(),
                                   spec.integer ? draws.data<std::int64_t>() : nullptr,
                                   mv_method_ == 1 ? mvnormal_svd : mv_method_ == 2 ? mvnormal_eigh : mvnormal_cholesky,
                                   mv_method_))
    throw RuntimeFailure(bad);
  outputs[0] = rng_value(g);
  outputs[1] = astype(draws, dtype_);
}

std::vector<ShapeVars> CoreRandomVariable::infer_shape(const Apply& node,
                                                       const std::vector<ShapeVars>& input_shapes) const {
  const core::Spec spec = dist_->spec();
  ShapeVars out;
  const TensorType& t = node.output_ptr(1)->type();
  const int batch_ndim = t.ndim() - (spec.out_core_from >= 0 ? 1 : 0);
  for (int d = 0; d < batch_ndim; ++d) {
    const std::int64_t known = t.shape[static_cast<std::size_t>(d)];
    if (known != kUnknownLength) {
      out.push_back(int64_constant(known));
      continue;
    }
    if (has_size_input(node)) {
      out.push_back(to_int64(at(node.input(1), d)));
      continue;
    }
    Var acc;  // NumPy's broadcast: a length other than 1 wins
    for (std::size_t i = 2; i < input_shapes.size(); ++i) {
      const TensorType& pt = node.input(static_cast<int>(i))->type();
      const int pb = pt.ndim() - spec.core_ndim[i - 2];
      const int k = d - (batch_ndim - pb);
      if (k < 0 || pt.shape[static_cast<std::size_t>(k)] == 1) continue;
      const Var& n = input_shapes[i][static_cast<std::size_t>(k)];
      acc = acc ? switch_(eq(acc, 1), n, acc) : n;
    }
    out.push_back(acc ? acc : int64_constant(1));
  }
  if (spec.out_core_from >= 0) out.push_back(input_shapes[2 + static_cast<std::size_t>(spec.out_core_from)].back());
  return {ShapeVars{int64_constant(kRngStateWords)}, out};
}

OpPtr core_random_variable_from_props(PropReader& props, const std::vector<TensorType>&) {
  const RvCoreDistribution* d = find_rv_core_distribution(props.op_name());
  KILN_INTERNAL_ASSERT(d, "core_random_variable_from_props for " + props.op_name());
  const core::Spec spec = d->spec();
  if (props.has("name") && props.get_string("name") != d->name)
    props.fail("name", "kiln draws " + std::string(d->op) + " as PyTensor's \"" + std::string(d->name) + "\", not \"" +
                           props.get_string("name") + "\"");
  if (props.has("signature") && props.get_string("signature") != d->signature)
    props.fail("signature", std::string(d->op) + "'s signature is \"" + std::string(d->signature) + "\", not \"" +
                                props.get_string("signature") + "\"");
  // PyTensor 2.x spelled the signature as ndim_supp and ndims_params.
  const int ndim_supp = spec.out_core_from >= 0 ? 1 : 0;
  if (props.has("ndim_supp") && props.get_int("ndim_supp") != ndim_supp)
    props.fail("ndim_supp", std::string(d->op) + "'s ndim_supp is " + std::to_string(ndim_supp));
  if (props.has("ndims_params")) {
    const auto dims = props.get_int_list("ndims_params");
    bool ok = dims.size() == d->params.size();
    for (std::size_t i = 0; ok && i < dims.size(); ++i) ok = dims[i] == spec.core_ndim[i];
    if (!ok) props.fail("ndims_params", std::string(d->op) + "'s ndims_params do not match its signature " +
                                            std::string(d->signature));
  }
  int mv_method = 0;
  if (spec.kind == core::Kind::MvNormal && props.has("method")) {
    const std::string method = props.get_string("method");
    mv_method = method == "svd" ? 1 : method == "eigh" ? 2 : 0;
    if (method != "cholesky" && mv_method == 0)
      props.fail("method", "MvNormalRV's method must be \"cholesky\", \"svd\" or \"eigh\", not \"" + method + "\"");
  }
  props.get_bool("inplace", false);  // kiln never updates an rng in place: ignored
  const DType dtype = props.has("dtype") ? props.get_dtype("dtype") : (spec.integer ? DType::Int64 : DType::Float64);
  if (spec.integer && (!is_integer(dtype) || dtype == DType::Bool))
    props.fail("dtype", std::string(d->op) + " draws integers: its dtype must be an integer dtype, not " +
                            std::string(dtype_name(dtype)));
  if (!spec.integer && !is_float(dtype))
    props.fail("dtype", std::string(d->op) + " draws floats: its dtype must be a float dtype, not " +
                            std::string(dtype_name(dtype)));
  props.finish();
  return std::make_shared<CoreRandomVariable>(*d, dtype, mv_method);
}

}  // namespace kiln
