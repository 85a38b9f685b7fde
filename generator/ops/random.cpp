#include "ops/random.h"

#include <algorithm>
#include <functional>

#include "ops/math.h"
#include "ir/error.h"
#include "ops/alloc.h"
#include "ops/array_util.h"
#include "ops/constant.h"
#include "ops/subtensor.h"

namespace kiln {

namespace rv = kiln_random::rv;

// --- the distributions --------------------------------------------------------------------------

namespace {

RvDistribution real_rv(std::string_view op, std::string_view name, std::string_view signature,
                       std::vector<RvParam> params, const char* (*check)(const rv::Args&),
                       double (*draw)(kiln_random::Pcg64&, const rv::Args&)) {
  RvDistribution d{op, name, signature, false, std::move(params), check, draw, nullptr};
  return d;
}

RvDistribution int_rv(std::string_view op, std::string_view name, std::string_view signature,
                      std::vector<RvParam> params, const char* (*check)(const rv::Args&),
                      std::int64_t (*draw)(kiln_random::Pcg64&, const rv::Args&)) {
  RvDistribution d{op, name, signature, true, std::move(params), check, nullptr, draw};
  return d;
}

constexpr RvParam kInt(std::string_view name) { return RvParam{name, true}; }

// A ScipyRandomVariable with SciPy's `scale == 0` shortcut.
RvDistribution scipy_scaled(RvDistribution d, int scale, int loc) {
  d.zero_scale_param = scale;
  d.loc_param = loc;
  return d;
}

// A ScipyRandomVariable whose `_rvs` makes one NumPy call over the whole output before another.
RvDistribution two_pass(RvDistribution d, double (*first)(kiln_random::Pcg64&, const rv::Args&)) {
  d.first_pass = first;
  return d;
}

}  // namespace

const std::vector<RvDistribution>& rv_distributions() {
  // PyTensor's scalar RandomVariables whose rng_fn is the NumPy Generator method of their name
  // (InvGammaRV: PyTensor's 1 / rng.gamma(shape, 1 / scale)).
  static const std::vector<RvDistribution> list = {
      real_rv("UniformRV", "uniform", "(),()->()", {{"low"}, {"high"}}, rv::uniform_check, rv::uniform_draw),
      real_rv("TriangularRV", "triangular", "(),(),()->()", {{"left"}, {"mode"}, {"right"}}, rv::triangular_check,
              rv::triangular_draw),
      real_rv("BetaRV", "beta", "(),()->()", {{"alpha"}, {"beta"}}, rv::beta_check, rv::beta_draw),
      real_rv("NormalRV", "normal", "(),()->()", {{"loc"}, {"scale"}}, rv::normal_check, rv::normal_draw),
      real_rv("LogNormalRV", "lognormal", "(),()->()", {{"mean"}, {"sigma"}}, rv::lognormal_check,
              rv::lognormal_draw),
      real_rv("GammaRV", "gamma", "(),()->()", {{"shape"}, {"scale"}}, rv::gamma_check, rv::gamma_draw),
      real_rv("ExponentialRV", "exponential", "()->()", {{"scale"}}, rv::exponential_check, rv::exponential_draw),
      real_rv("WeibullRV", "weibull", "()->()", {{"shape"}}, rv::weibull_check, rv::weibull_draw),
      real_rv("LogisticRV", "logistic", "(),()->()", {{"loc"}, {"scale"}}, rv::logistic_check, rv::logistic_draw),
      real_rv("VonMisesRV", "vonmises", "(),()->()", {{"mu"}, {"kappa"}}, rv::vonmises_check, rv::vonmises_draw),
      real_rv("InvGammaRV", "invgamma", "(),()->()", {{"shape"}, {"scale"}}, rv::invgamma_check, rv::invgamma_draw),
      real_rv("WaldRV", "wald", "(),()->()", {{"mean"}, {"scale"}}, rv::wald_check, rv::wald_draw),
      real_rv("LaplaceRV", "laplace", "(),()->()", {{"loc"}, {"scale"}}, rv::laplace_check, rv::laplace_draw),
      int_rv("PoissonRV", "poisson", "()->()", {{"lam"}}, rv::poisson_check, rv::poisson_draw),
      int_rv("GeometricRV", "geometric", "()->()", {{"p"}}, rv::geometric_check, rv::geometric_draw),
      int_rv("HyperGeometricRV", "hypergeometric", "(),(),()->()", {kInt("ngood"), kInt("nbad"), kInt("nsample")},
             rv::hypergeometric_check, rv::hypergeometric_draw),
      int_rv("BinomialRV", "binomial", "(),()->()", {kInt("n"), {"p"}}, rv::binomial_check, rv::binomial_draw),
      int_rv("IntegersRV", "integers", "(),()->()", {kInt("low"), kInt("high")}, rv::integers_check,
             rv::integers_draw),
      // ScipyRandomVariables whose SciPy sampler is NumPy draws and arithmetic.
      scipy_scaled(real_rv("HalfNormalRV", "halfnormal", "(),()->()", {{"loc"}, {"scale"}}, rv::halfnormal_check,
                           rv::halfnormal_draw),
                   1, 0),
      scipy_scaled(real_rv("StudentTRV", "t", "(),(),()->()", {{"df"}, {"loc"}, {"scale"}}, rv::t_check, rv::t_draw),
                   2, 1),
      scipy_scaled(real_rv("GumbelRV", "gumbel", "(),()->()", {{"loc"}, {"scale"}}, rv::gumbel_check, rv::gumbel_draw),
                   1, 0),
      scipy_scaled(real_rv("HalfCauchyRV", "halfcauchy", "(),()->()", {{"loc"}, {"scale"}}, rv::halfcauchy_check,
                           rv::halfcauchy_draw),
                   1, 0),
      scipy_scaled(real_rv("ParetoRV", "pareto", "(),()->()", {{"b"}, {"scale"}}, rv::pareto_check, rv::pareto_draw),
                   1, -1),
      scipy_scaled(real_rv("TruncExponentialRV", "truncexpon", "(),(),()->()", {{"b"}, {"loc"}, {"scale"}},
                           rv::truncexpon_check, rv::truncexpon_draw),
                   2, 1),
      int_rv("BernoulliRV", "bernoulli", "()->()", {{"p"}}, rv::bernoulli_check, rv::bernoulli_draw),
      int_rv("NegBinomialRV", "negative_binomial", "(),()->()", {{"n"}, {"p"}}, rv::negative_binomial_check,
             rv::negative_binomial_draw),
      scipy_scaled(real_rv("CauchyRV", "cauchy", "(),()->()", {{"loc"}, {"scale"}}, rv::cauchy_check, rv::cauchy_draw),
                   1, 0),
      scipy_scaled(real_rv("GenGammaRV", "gengamma", "(),(),()->()", {{"alpha"}, {"p"}, {"lambd"}},
                           rv::gengamma_check, rv::gengamma_draw),
                   2, -1),
      two_pass(int_rv("BetaBinomialRV", "beta_binomial", "(),(),()->()", {kInt("n"), {"a"}, {"b"}},
                      rv::beta_binomial_check, rv::beta_binomial_draw),
               rv::beta_binomial_first),
  };
  return list;
}

const RvDistribution* find_rv_distribution(std::string_view op_name) {
  for (const auto& d : rv_distributions())
    if (d.op == op_name) return &d;
  return nullptr;
}

// --- the op ---------------------------------------------------------------------------------------

Json RandomVariable::props() const {
  return Json{{"name", std::string(dist_->name)}, {"signature", std::string(dist_->signature)},
              {"dtype", std::string(dtype_name(dtype_))}};
}

std::string DrawOp::rv_str(std::string_view name, std::string_view signature) {
  return std::string(name) + "_rv{\"" + std::string(signature) + "\"}";
}

std::string RandomVariable::str() const { return rv_str(dist_->name, dist_->signature); }

kiln_random::Pcg64 DrawOp::generator_of(const Array& rng) {
  const Array words = astype(rng, DType::UInt64);
  return kiln_random::Pcg64::from_words(static_cast<const std::uint64_t*>(words.data()));
}

Array DrawOp::rng_value(const kiln_random::Pcg64& g) {
  Array next = Array::empty(DType::UInt64, {kRngStateWords});
  g.to_words(static_cast<std::uint64_t*>(next.data()));
  return next;
}

bool DrawOp::accepts_kind(int index, TypeKind kind) const {
  if (index == 0) return kind == TypeKind::Rng;
  if (index == 1) return kind == TypeKind::None || kind == TypeKind::Tensor;
  return kind == TypeKind::Tensor;
}

namespace {

bool has_size(const Apply& node) { return node.input(1)->type().kind != TypeKind::None; }

}  // namespace

std::int64_t rv_static_broadcast(const std::vector<std::int64_t>& lengths, const Op& op, int dim) {
  std::int64_t known = -2;  // none seen yet
  bool all_one = true;
  for (std::int64_t n : lengths) {
    if (n == 1) continue;
    all_one = false;
    if (n == kUnknownLength) continue;
    if (known >= 0 && known != n)
      type_error(op, "the parameters do not broadcast: lengths " + std::to_string(known) + " and " +
                         std::to_string(n) + " in dimension " + std::to_string(dim) + " of the draws");
    known = n;
  }
  if (known >= 0) return known;
  return all_one ? 1 : kUnknownLength;
}

std::optional<Shape> DrawOp::size_shape(const VarList& inputs, int batch_ndim) const {
  if (inputs[1]->type().kind == TypeKind::None) return std::nullopt;
  const TensorType& st = inputs[1]->type();
  if (st.ndim() != 1 || !is_integer(st.dtype) || st.dtype == DType::Bool)
    type_error(*this, "size must be None or an integer vector, got " + st.str());
  if (st.shape[0] == kUnknownLength)
    type_error(*this, "size must have a static length (PyTensor's get_vector_length), got " + st.str());
  if (st.shape[0] < batch_ndim)
    type_error(*this, "size length is incompatible with the batched dimensions of the parameters: len(size) = " +
                          std::to_string(st.shape[0]) + ", batched dims = " + std::to_string(batch_ndim));
  Shape out;
  const auto entries = constant_entries(inputs[1]);
  for (std::int64_t i = 0; i < st.shape[0]; ++i) {
    const auto e = entries ? (*entries)[static_cast<std::size_t>(i)] : std::nullopt;
    if (e && *e < 0) type_error(*this, "size has a negative entry (" + std::to_string(*e) + ")");
    out.push_back(e ? *e : kUnknownLength);
  }
  return out;
}

std::vector<TensorType> RandomVariable::infer_types(const VarList& inputs) const {
  const std::size_t n_params = dist_->params.size();
  if (inputs.size() != 2 + n_params) {
    std::string names = "rng, size";
    for (const auto& p : dist_->params) names += ", " + std::string(p.name);
    type_error(*this, "takes " + std::to_string(2 + n_params) + " inputs (" + names + "), got " +
                          std::to_string(inputs.size()));
  }
  int batch_ndim = 0;
  for (std::size_t i = 0; i < n_params; ++i) {
    const RvParam& p = dist_->params[i];
    const TensorType& t = inputs[2 + i]->type();
    if (p.integer && (!is_integer(t.dtype) || t.dtype == DType::UInt64))
      type_error(*this, "parameter " + std::to_string(i) + " (" + std::string(p.name) +
                            ") must have an integer dtype NumPy casts safely to int64, got " + t.str());
    batch_ndim = std::max(batch_ndim, t.ndim());
  }
  const std::optional<Shape> sized = size_shape(inputs, batch_ndim);
  Shape out = sized.value_or(Shape{});
  if (!sized) {
    for (int d = 0; d < batch_ndim; ++d) {
      std::vector<std::int64_t> lengths;
      for (std::size_t i = 0; i < n_params; ++i) {
        const TensorType& t = inputs[2 + i]->type();
        const int k = d - (batch_ndim - t.ndim());
        lengths.push_back(k < 0 ? 1 : t.shape[static_cast<std::size_t>(k)]);
      }
      out.push_back(rv_static_broadcast(lengths, *this, d));
    }
  }
  return {rng_type(), TensorType(dtype_, out)};
}

namespace {

// NumPy's broadcast of the parameters' shapes (right-aligned; length 1 stretches).
Shape params_shape(const std::vector<Array>& params) {
  int ndim = 0;
  for (const auto& p : params) ndim = std::max(ndim, p.ndim());
  Shape out(static_cast<std::size_t>(ndim), 1);
  for (const auto& p : params)
    for (int k = 0; k < p.ndim(); ++k) {
      std::int64_t& b = out[static_cast<std::size_t>(ndim - p.ndim() + k)];
      const std::int64_t n = p.shape()[static_cast<std::size_t>(k)];
      if (b == 1)
        b = n;
      else if (n != 1 && n != b)
        throw RuntimeFailure("shape mismatch: the parameters' shapes do not broadcast (length " + std::to_string(b) +
                             " against " + std::to_string(n) + ")");
    }
  return out;
}

// The draws' shape: `size` when given (the parameters' broadcast shape must broadcast to it).
Shape draws_shape(const Shape& pshape, const Array* size) {
  if (!size) return pshape;
  const Array sz = astype(*size, DType::Int64);
  const auto* s = static_cast<const std::int64_t*>(sz.data());
  Shape out(s, s + sz.size());
  for (std::int64_t n : out)
    if (n < 0) throw RuntimeFailure("negative dimensions are not allowed (size " + shape_str(out) + ")");
  const std::size_t lead = out.size() - pshape.size();  // infer_types checked ndim <= len(size)
  for (std::size_t k = 0; k < pshape.size(); ++k)
    if (pshape[k] != 1 && pshape[k] != out[lead + k])
      throw RuntimeFailure("shape mismatch: size " + shape_str(out) + " is not compatible with the parameters' shape " +
                           shape_str(pshape));
  return out;
}

// Calls fn(args) for every element of `shape` in C order, with the parameters (converted to
// double / int64 as NumPy reads them) broadcast there.
template <typename Fn>
void for_each_args(const RvDistribution& dist, const std::vector<Array>& converted, const std::vector<DType>& dtypes,
                   const Shape& shape, Fn&& fn) {
  std::vector<Array> views;
  for (const auto& p : converted) views.push_back(broadcast_to(p, shape));
  rv::Args args;
  for (std::size_t i = 0; i < views.size(); ++i) args.single[i] = dtypes[i] == DType::Float32;
  views.front().for_each_index([&](const std::int64_t* idx) {  // every view has `shape`
    for (std::size_t i = 0; i < views.size(); ++i) {
      const void* e = views[i].element_ptr(idx);
      if (dist.params[i].integer)
        args.k[i] = *static_cast<const std::int64_t*>(e);
      else
        args.x[i] = *static_cast<const double*>(e);
    }
    fn(args);
  });
}

}  // namespace

void RandomVariable::perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  kiln_random::Pcg64 g = generator_of(inputs[0]);
  std::vector<Array> params(inputs.begin() + 2, inputs.end()), converted;
  std::vector<DType> dtypes;
  for (std::size_t i = 0; i < params.size(); ++i) {
    converted.push_back(astype(params[i], dist_->params[i].integer ? DType::Int64 : DType::Float64));
    dtypes.push_back(params[i].dtype());
  }
  const Shape pshape = params_shape(params);
  const Shape shape = draws_shape(pshape, has_size(node) ? &inputs[1] : nullptr);
  // NumPy checks every parameter before drawing anything (even when there is nothing to draw).
  bool zero_scale = dist_->zero_scale_param >= 0;
  for_each_args(*dist_, converted, dtypes, pshape, [&](const rv::Args& a) {
    if (const char* bad = dist_->check(a)) throw RuntimeFailure(bad);
    if (zero_scale) zero_scale = a.x[dist_->zero_scale_param] == 0;
  });
  Array draws = Array::empty(dist_->integer_draws ? DType::Int64 : DType::Float64, shape);
  std::int64_t at = 0;
  if (zero_scale) {
    auto* out = static_cast<double*>(draws.data());
    for_each_args(*dist_, converted, dtypes, shape, [&](const rv::Args& a) { out[at++] = dist_->loc_param >= 0 ? a.x[dist_->loc_param] : 0.0;
    });
  } else if (dist_->integer_draws) {
    auto* out = static_cast<std::int64_t*>(draws.data());
    std::vector<double> first;
    if (dist_->first_pass)
      for_each_args(*dist_, converted, dtypes, shape, [&](const rv::Args& a) { first.push_back(dist_->first_pass(g, a)); });
    for_each_args(*dist_, converted, dtypes, shape, [&](const rv::Args& a) {
      if (dist_->first_pass) {
        rv::Args b = a;
        b.first = first[static_cast<std::size_t>(at)];
        out[at++] = dist_->draw_int(g, b);
      } else {
        out[at++] = dist_->draw_int(g, a);
      }
    });
  } else {
    auto* out = static_cast<double*>(draws.data());
    for_each_args(*dist_, converted, dtypes, shape, [&](const rv::Args& a) { out[at++] = dist_->draw_real(g, a); });
  }
  outputs[0] = rng_value(g);
  outputs[1] = astype(draws, dtype_);
}

std::vector<ShapeVars> RandomVariable::infer_shape(const Apply& node,
                                                   const std::vector<ShapeVars>& input_shapes) const {
  ShapeVars out;
  const TensorType& t = node.output_ptr(1)->type();
  if (has_size(node)) {
    for (int d = 0; d < t.ndim(); ++d)
      out.push_back(t.shape[static_cast<std::size_t>(d)] != kUnknownLength
                        ? int64_constant(t.shape[static_cast<std::size_t>(d)])
                        : to_int64(at(node.input(1), d)));
  } else {
    // NumPy's broadcast: a length other than 1 wins; lengths of static 1 drop out.
    for (int d = 0; d < t.ndim(); ++d) {
      if (t.shape[static_cast<std::size_t>(d)] != kUnknownLength) {
        out.push_back(int64_constant(t.shape[static_cast<std::size_t>(d)]));
        continue;
      }
      Var acc;
      for (std::size_t i = 2; i < input_shapes.size(); ++i) {
        const TensorType& pt = node.input(static_cast<int>(i))->type();
        const int k = d - (t.ndim() - pt.ndim());
        if (k < 0 || pt.shape[static_cast<std::size_t>(k)] == 1) continue;
        const Var& n = input_shapes[i][static_cast<std::size_t>(k)];
        acc = acc ? switch_(eq(acc, 1), n, acc) : n;
      }
      out.push_back(acc ? acc : int64_constant(1));
    }
  }
  return {ShapeVars{int64_constant(kRngStateWords)}, out};
}

std::vector<GradTerm> DrawOp::pullback(const Apply& node, const VarList&) const {
  return std::vector<GradTerm>(static_cast<std::size_t>(node.num_inputs()),
                               GradTerm::undefined("No gradient defined for random variables (" + str() + ")"));
}

std::vector<GradTerm> DrawOp::pushforward(const Apply& node, const VarList&) const {
  return std::vector<GradTerm>(static_cast<std::size_t>(node.num_outputs()),
                               GradTerm::undefined("No tangent defined for random variables (" + str() + ")"));
}

bool is_impure(const Op& op) { return dynamic_cast<const DrawOp*>(&op) != nullptr; }

// --- building --------------------------------------------------------------------------------------

namespace {

void check_dtype(const RvDistribution& d, DType dtype, const std::function<void(const std::string&)>& fail) {
  if (d.integer_draws && (!is_integer(dtype) || dtype == DType::Bool))
    fail(std::string(d.op) + " draws integers: its dtype must be an integer dtype, not " + std::string(dtype_name(dtype)));
  if (!d.integer_draws && !is_float(dtype))
    fail(std::string(d.op) + " draws floats: its dtype must be a float dtype, not " + std::string(dtype_name(dtype)));
}

}  // namespace

std::pair<Var, Var> random_variable(std::string_view op_name, const Var& rng, const Var& size, const VarList& params,
                                    std::optional<DType> dtype) {
  VarList inputs = {rng, size ? size : make_constant(Array::empty(DType::Bool, {0}), {}, TypeKind::None)};
  inputs.insert(inputs.end(), params.begin(), params.end());
  if (const RvCoreDistribution* c = find_rv_core_distribution(op_name)) {
    const bool integer = c->spec().integer;
    const DType dt = dtype.value_or(integer ? DType::Int64 : DType::Float64);
    if (integer ? (!is_integer(dt) || dt == DType::Bool) : !is_float(dt))
      throw UserError(std::string(op_name) + (integer ? " draws integers: its dtype must be an integer dtype, not "
                                                      : " draws floats: its dtype must be a float dtype, not ") +
                      std::string(dtype_name(dt)));
    ApplyPtr node = make_node(std::make_shared<CoreRandomVariable>(*c, dt), inputs);
    return {node->output(0), node->output(1)};
  }
  const RvDistribution* d = find_rv_distribution(op_name);
  if (!d) throw NotImplementedError(std::string(op_name) + " is not implemented in kiln");
  const DType dt = dtype.value_or(d->integer_draws ? DType::Int64 : DType::Float64);
  check_dtype(*d, dt, [](const std::string& m) { throw UserError(m); });
  ApplyPtr node = make_node(std::make_shared<RandomVariable>(*d, dt), inputs);
  return {node->output(0), node->output(1)};
}

OpPtr random_variable_from_props(PropReader& props, const std::vector<TensorType>&) {
  const RvDistribution* d = find_rv_distribution(props.op_name());
  KILN_INTERNAL_ASSERT(d, "random_variable_from_props for " + props.op_name());
  if (props.has("name") && props.get_string("name") != d->name)
    props.fail("name", "kiln draws " + std::string(d->op) + " as NumPy's \"" + std::string(d->name) +
                           "\" (PyTensor's name for it), not \"" + props.get_string("name") + "\"");
  if (props.has("signature") && props.get_string("signature") != d->signature)
    props.fail("signature", std::string(d->op) + "'s signature is \"" + std::string(d->signature) + "\", not \"" +
                                props.get_string("signature") + "\"");
  // PyTensor 2.x spelled the signature as ndim_supp and ndims_params.
  if (props.has("ndim_supp") && props.get_int("ndim_supp") != 0)
    props.fail("ndim_supp", std::string(d->op) + " draws scalars: ndim_supp must be 0");
  if (props.has("ndims_params")) {
    const auto dims = props.get_int_list("ndims_params");
    if (dims.size() != d->params.size() || std::any_of(dims.begin(), dims.end(), [](std::int64_t n) { return n != 0; }))
      props.fail("ndims_params", std::string(d->op) + " takes " + std::to_string(d->params.size()) +
                                     " scalar parameters: ndims_params must be that many zeros");
  }
  props.get_bool("inplace", false);  // kiln never updates an rng in place: ignored
  const DType dtype = props.has("dtype") ? props.get_dtype("dtype")
                                         : (d->integer_draws ? DType::Int64 : DType::Float64);
  check_dtype(*d, dtype, [&](const std::string& m) { props.fail("dtype", m); });
  props.finish();
  return std::make_shared<RandomVariable>(*d, dtype);
}

}  // namespace kiln
