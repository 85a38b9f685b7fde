// RandomVariable nodes on a GPU (issue 19): draws through Philox4x64-10 streams, one per output
// element (templates/gpu/random_math.h, templates/gpu/random.mustache; docs/random.md, "On the
// GPU"). The host code is the C++ backend's shape logic (the same broadcast and size checks and
// messages); one kernel checks every parameter tuple of the parameters' broadcast shape — a
// refused one claims the device status word with the C++ backend's message, one check per
// message of the distribution — draws every output element from its own stream, and writes
// next_rng. The draws are not NumPy's PCG64 stream: a different generator, GPU-friendly
// algorithms (Box-Muller normals, Marsaglia-Tsang gammas, PTRS Poisson, BTRS binomials).
// DirichletRV, CategoricalRV, MultinomialRV and MvNormalRV take one work-item and one stream
// per batch element (templates/gpu/random_core.mustache), the batch shape as the C++ backend's
// draws_shape computes it; so does PermutationRV (random_permutation.mustache: a Fisher-Yates
// shuffle of the element's rows). ChoiceWithoutReplacement (unbatched, as in the C++ backend)
// is one work-item (random_choice.mustache). Their checks are the C++ backend's, in its order.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "codegen/c_names.h"
#include "codegen/c_types.h"
#include "codegen/gpu/emitters.h"
#include "ir/error.h"
#include "ops/random.h"
#include "ops/random_choice.h"
#include "ops/random_core.h"
#include "ops/random_permutation.h"

namespace kiln {

namespace {

/// The `messages` list of the host templates: each text as a C string literal, in the order of
/// the device check's numbers.
TemplateData message_list(const std::vector<std::string>& texts) {
  TemplateData messages{TemplateData::type::list};
  for (const std::string& m : texts) {
    TemplateData item;
    item.set("text", c_string_literal(m));
    messages.push_back(item);
  }
  return messages;
}

/// A distribution the GPU draws: the random_math.h functions kiln_rv_<name>_check and
/// kiln_rv_<name>, the C++ backend's messages in the order of the check's numbers, and the
/// real parameters whose float32-ness the formula keeps (passed as 0/1 after the parameters).
struct GpuRvDistribution {
  std::string_view name;
  std::vector<std::string> messages;
  std::vector<int> singles;
  bool check_takes_singles = false;
};

const std::vector<GpuRvDistribution>& gpu_rv_distributions() {
  const std::string domain = kiln_random::rv::kScipyDomainError;
  static const std::vector<GpuRvDistribution> list = {
      {"uniform", {"Range exceeds valid bounds", "high - low < 0"}, {}},
      {"triangular", {"left > mode", "mode > right", "left == right"}, {}},
      {"beta", {"a <= 0", "b <= 0"}, {}},
      {"normal", {"scale < 0"}, {}},
      {"lognormal", {"sigma < 0"}, {}},
      {"gamma", {"shape < 0", "scale < 0"}, {}},
      {"exponential", {"scale < 0"}, {}},
      {"weibull", {"a < 0"}, {}},
      {"logistic", {"scale < 0"}, {}},
      {"vonmises", {"kappa < 0"}, {}},
      {"invgamma", {"shape < 0", "scale < 0"}, {}},
      {"wald", {"mean <= 0", "scale <= 0"}, {}},
      {"laplace", {"scale < 0"}, {}},
      {"poisson", {"lam value too large", "lam < 0 or lam contains NaNs"}, {}},
      {"geometric", {"p <= 0, p > 1 or p contains NaNs"}, {}},
      {"hypergeometric",
       {"ngood < 0", "nsample < 0", "ngood + nbad < nsample", "nbad < 0", "both ngood and nbad must be less than 1000000000"},
       {}},
      {"binomial", {"n < 0", "p < 0, p > 1 or p contains NaNs"}, {}},
      {"integers", {"low >= high"}, {}},
      {"halfnormal", {domain}, {}},
      {"t", {domain}, {}},
      {"gumbel", {domain}, {}},
      {"halfcauchy", {domain}, {}},
      {"pareto", {domain}, {0}},
      {"truncexpon", {domain}, {0}},
      {"bernoulli", {domain}, {}},
      {"negative_binomial", {domain, "n too large or p too small, see Generator.negative_binomial Notes"}, {}},
      {"cauchy", {domain}, {}},
      {"gengamma", {domain}, {0, 1}, true},
      {"beta_binomial", {domain}, {}},
  };
  return list;
}

const GpuRvDistribution* find_gpu_rv(std::string_view name) {
  for (const GpuRvDistribution& d : gpu_rv_distributions())
    if (d.name == name) return &d;
  return nullptr;
}

// Statements decoding flat index `e` over the lengths `len`0..5 into each parameter's offset
// o<i> (strides p<i>s0..5, 0 where it broadcasts).
std::string rv_decode(const std::string& len, int nparams) {
  std::string out = "    int64_t r = e, i;\n";
  for (int k = 0; k < nparams; ++k) out += "    int64_t o" + std::to_string(k) + " = 0;\n";
  for (int d = 5; d >= 0; --d) {
    const std::string D = std::to_string(d);
    out += d > 0 ? "    i = r % " + len + D + "; r /= " + len + D + ";" : "    i = r;";
    for (int k = 0; k < nparams; ++k) out += " o" + std::to_string(k) + " += i * p" + std::to_string(k) + "s" + D + ";";
    if (d > 0) out += "\n";
  }
  return out;
}

// Template data both draw kernels share: the dialect, the node's name and comment, and the
// rng, next_rng, draws (stored as `ostore`) and status-word buffers.
TemplateData draw_kernel_data(const NodeEmitContext& c, const GpuDialect& d, const std::string& ostore) {
  TemplateData k = d.data();
  k.set("name", c.kernel_name());
  k.set("comment", comment_text(c.node().op().str(), 100));
  const std::pair<const char*, std::string> buffers[] = {
      {"rng", "uint64_t"}, {"next", "uint64_t"}, {"out", ostore}, {"st", "int32_t"}};
  for (const auto& [buffer, type] : buffers) {
    const bool read_only = std::string(buffer) == "rng";
    k.set(std::string(buffer) + "_param", d.buffer_param(type, buffer, read_only));
    k.set(std::string(buffer) + "_bind", d.buffer_bind(type, buffer, read_only));
  }
  return k;
}

}  // namespace

bool gpu_draws_random_variable(std::string_view dist_name) { return find_gpu_rv(dist_name) != nullptr; }

NodeCode gpu_emit_random_variable(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  const auto& op = static_cast<const RandomVariable&>(c.node().op());
  const RvDistribution& dist = op.distribution();
  const GpuRvDistribution* g = find_gpu_rv(dist.name);
  if (!g)
    throw NotImplementedError("`" + op.str() + "` (" + std::string(dist.op) + ") has no " + backend +
                              " implementation: no GPU sampler for it on the Philox streams yet (docs/random.md)");
  const int nparams = static_cast<int>(dist.params.size());
  const int orank = c.out_var(1).ndim();
  if (orank > 6)
    throw NotImplementedError("`" + op.str() + "` with draws of rank " + std::to_string(orank) + " has no " + backend +
                              " implementation: the draw kernel handles rank 6 at most");
  int prank = 0;
  for (int i = 0; i < nparams; ++i) prank = std::max(prank, c.in_var(2 + i).ndim());
  const DType out_dt = c.out_var(1).dtype();
  const std::string ostore = gpu_storage_type(out_dt);

  // The kernel.
  TemplateData k = draw_kernel_data(c, d, ostore);
  const std::string name = c.kernel_name();
  TemplateData params{TemplateData::type::list};
  std::string reads, args, stride_params;
  for (int i = 0; i < nparams; ++i) {
    const std::string I = std::to_string(i), p = "p" + I;
    const std::string storage = gpu_storage_type(c.in_var(2 + i).dtype());
    const bool integer = dist.params[static_cast<std::size_t>(i)].integer;
    TemplateData item;
    item.set("param", d.buffer_param(storage, p, true));
    item.set("bind", d.buffer_bind(storage, p, true));
    params.push_back(item);
    reads += std::string("    const ") + (integer ? "int64_t" : "double") + " x" + I + " = (" +
             (integer ? "int64_t" : "double") + ")" + p + "[o" + I + "];\n";
    args += ", x" + I;
    for (int s = 0; s < 6; ++s) stride_params += ", const int64_t " + p + "s" + std::to_string(s);
  }
  std::string singles;
  for (int i : g->singles) singles += c.in_var(2 + i).dtype() == DType::Float32 ? ", 1" : ", 0";
  const std::string check_args = args.empty() ? "" : args.substr(2);
  k.set("params", params);
  k.set("stride_params", stride_params);
  if (!reads.empty()) reads.pop_back();  // the template ends the line
  k.set("reads", reads);
  k.set("decode_check", rv_decode("c", nparams));
  k.set("decode_draw", rv_decode("n", nparams));
  k.set("check_call", "kiln_rv_" + std::string(g->name) + "_check(" + check_args + (g->check_takes_singles ? singles : "") + ")");
  const std::string draw = "kiln_rv_" + std::string(g->name) + "(&s" + args + singles + ")";
  const auto convert = [&](const std::string& v) {
    return out_dt == DType::Bool ? "(uint8_t)((" + v + ") != 0)" : "(" + ostore + ")(" + v + ")";
  };
  k.set("draw", convert(draw));
  TemplateData zero_scale{TemplateData::type::list};
  if (dist.zero_scale_param >= 0) {
    TemplateData z;
    z.set("scale", "x" + std::to_string(dist.zero_scale_param));
    z.set("loc", convert(dist.loc_param >= 0 ? "x" + std::to_string(dist.loc_param) : std::string("0.0")));
    zero_scale.push_back(z);
  }
  k.set("zero_scale", zero_scale);
  k.set("zero", convert("0"));

  // The host code.
  TemplateData host = c.base_data();
  host.set("op_comment", comment_text(op.str()));
  host.set("kernel_ref", d.kernel_ref(name));
  host.set("rng", c.in(0));
  TemplateData hparams{TemplateData::type::list};
  for (int i = 0; i < nparams; ++i) {
    TemplateData p;
    p.set("i", std::to_string(i));
    p.set("name", c.in(2 + i));
    p.set("ndim", std::to_string(c.in_var(2 + i).ndim()));
    hparams.push_back(p);
  }
  host.set("params", hparams);
  TemplateData size{TemplateData::type::list}, size_read{TemplateData::type::list}, size_static{TemplateData::type::list};
  if (c.in_var(1).type().kind != TypeKind::None) {
    TemplateData item;
    item.set("size", c.in(1));
    size.push_back(item);
    const Shape& shape = c.out_var(1).type().shape;
    if (std::all_of(shape.begin(), shape.end(), [](std::int64_t n) { return n >= 0; })) {
      // Constant entries: the lengths are known here, nothing is read from the device.
      std::string assign;
      for (int dd = 0; dd < orank; ++dd)
        assign += c.out(1) + ".shape[" + std::to_string(dd) + "] = " + std::to_string(shape[static_cast<std::size_t>(dd)]) + ";\n";
      TemplateData s;
      s.set("assign", assign);
      size_static.push_back(s);
    } else {
      size_read.push_back(item);
    }
  }
  host.set("size", size);
  host.set("size_read", size_read);
  host.set("size_static", size_static);
  host.set("messages", message_list(g->messages));
  host.set("nparams_or_1", std::to_string(nparams > 0 ? nparams : 1));
  host.set("prank", std::to_string(prank));
  host.set("prank_or_1", std::to_string(prank > 0 ? prank : 1));
  host.set("orank", std::to_string(orank));
  host.set("orank_or_1", std::to_string(orank > 0 ? orank : 1));
  std::string stride_args;
  for (int i = 0; i < nparams; ++i)
    for (int s = 0; s < 6; ++s) stride_args += ", pstr[" + std::to_string(i) + "][" + std::to_string(s) + "]";
  host.set("stride_args", stride_args);
  return NodeCode(render_template("templates/gpu/host/random_variable.mustache", host),
                  render_template("templates/gpu/random.mustache", k));
}

bool gpu_draws_core_random_variable(std::string_view op_name) {
  return op_name == "DirichletRV" || op_name == "CategoricalRV" || op_name == "MultinomialRV" || op_name == "MvNormalRV";
}

NodeCode gpu_emit_core_random_variable(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  using kiln_random::core::Kind;
  const auto& op = static_cast<const CoreRandomVariable&>(c.node().op());
  const RvCoreDistribution& dist = op.distribution();
  const kiln_random::core::Spec spec = dist.spec();
  if (!gpu_draws_core_random_variable(dist.op))
    throw NotImplementedError("`" + op.str() + "` (" + std::string(dist.op) + ") has no " + backend +
                              " implementation: no GPU sampler for it on the Philox streams yet (docs/random.md)");
  const bool core_out = spec.out_core_from >= 0;
  const int orank = c.out_var(1).ndim(), bn = orank - (core_out ? 1 : 0);
  // p: the parameter with the core vector (the draws' core length, or Categorical's p); q: the
  // other one (Multinomial's n, MvNormal's cov).
  const int pi = spec.out_core_from >= 0 ? spec.out_core_from : 0, qi = 1 - pi;
  const bool has_q = spec.nparams == 2;
  const Variable& pv = c.in_var(2 + pi);
  for (int i = 0; i < spec.nparams; ++i)
    if (bn > 6 || c.in_var(2 + i).ndim() - spec.core_ndim[i] > 6)
      throw NotImplementedError("`" + op.str() + "` with " + std::to_string(bn) + " batch dimensions has no " + backend +
                                " implementation: the draw kernel handles 6 at most");
  const DType out_dt = c.out_var(1).dtype();
  const std::string ostore = gpu_storage_type(out_dt), pstore = gpu_storage_type(pv.dtype());
  TemplateData k = draw_kernel_data(c, d, ostore);
  const std::string name = c.kernel_name();
  k.set("p_param", d.buffer_param(pstore, "p", true));
  k.set("p_bind", d.buffer_bind(pstore, "p", true));
  k.set("stype", ostore);
  k.set("dirichlet", dist.kind == Kind::Dirichlet);
  k.set("categorical", dist.kind == Kind::Categorical);
  k.set("multinomial", dist.kind == Kind::Multinomial);
  k.set("mvnormal", dist.kind == Kind::MvNormal);
  k.set("q", has_q);
  // Categorical's running sum in p's dtype (an integer or bool p sums in int64, as NumPy's cumsum).
  k.set("acc", pv.dtype() == DType::Float32 ? "float" : pv.dtype() == DType::Float64 ? "double" : "int64_t");
  k.set("p_single", pv.dtype() == DType::Float32 ? "1" : "0");
  if (has_q) {
    const DType qt = c.in_var(2 + qi).dtype();
    const std::string qstore = gpu_storage_type(qt);
    k.set("q_param", d.buffer_param(qstore, "q", true));
    k.set("q_bind", d.buffer_bind(qstore, "q", true));
    k.set("q_ctype", qstore);
    // Multinomial's n as NumPy's cast to int64 reads it: floats truncate, out of range (and NaN)
    // is INT64_MIN (core_variables.hpp's read_int).
    k.set("n_read", is_float(qt) ? "((double)nv >= -9.2233720368547758e18 && (double)nv < 9.2233720368547758e18 ? "
                                   "(int64_t)nv : (int64_t)(-9223372036854775807L - 1))"
                                 : "(int64_t)nv");
    // MvNormal's factor in cov's precision, as NumPy's cholesky (spotrf for float32).
    k.set("ft", qt == DType::Float32 ? "float" : "double");
  }
  // MvNormal's factor: 0 cholesky, 1 svd, 2 eigh (the C++ backend's LAPACK potrf, gesdd, syevd).
  const int method = dist.kind == Kind::MvNormal ? op.mv_method() : 0;
  const std::string ws_per = method == 0 ? "k * k + k" : "2 * k * k + k";
  if (dist.kind == Kind::MvNormal) {
    k.set("cholesky", method == 0);
    k.set("spectral", method != 0);
    k.set("svd", method == 1);
    k.set("eigh", method == 2);
    k.set("ws_per", ws_per);
    k.set("refusal", method == 0 ? "\"Matrix is not positive definite\"" : "\"SVD did not converge\" (a NaN entry)");
    k.set("w_param", d.buffer_param("double", "w", false));
    k.set("w_bind", d.buffer_bind("double", "w", false));
    k.set("w_ptr", d.global_ptr("double", false));
  }

  TemplateData host = c.base_data();
  host.set("op_comment", comment_text(op.str()));
  host.set("kernel_ref", d.kernel_ref(name));
  host.set("rng", c.in(0));
  host.set("p", c.in(2 + pi));
  host.set("pndim", std::to_string(pv.ndim()));
  host.set("pi", std::to_string(pi));
  host.set("bn", std::to_string(bn));
  host.set("bn_or_1", std::to_string(bn > 0 ? bn : 1));
  host.set("core_out", core_out);
  host.set("multinomial", dist.kind == Kind::Multinomial);
  host.set("mvnormal", dist.kind == Kind::MvNormal);
  TemplateData params{TemplateData::type::list};
  for (int i = 0; i < spec.nparams; ++i) {
    TemplateData item;
    item.set("i", std::to_string(i));
    item.set("name", c.in(2 + i));
    item.set("pb", std::to_string(c.in_var(2 + i).ndim() - spec.core_ndim[i]));
    params.push_back(item);
  }
  host.set("params", params);
  TemplateData q_args{TemplateData::type::list};
  if (has_q) {
    const std::string q = c.in(2 + qi);
    const int qn = c.in_var(2 + qi).ndim();
    host.set("q", q);
    host.set("qi", std::to_string(qi));
    host.set("qndim", std::to_string(qn));
    TemplateData item;
    item.set("qk0", spec.core_ndim[qi] >= 2 ? q + ".strides[" + std::to_string(qn - 2) + "]" : std::string("(int64_t)0"));
    item.set("qk1", spec.core_ndim[qi] >= 1 ? q + ".strides[" + std::to_string(qn - 1) + "]" : std::string("(int64_t)0"));
    q_args.push_back(item);
  }
  host.set("q_args", q_args);
  if (dist.kind == Kind::MvNormal) {
    host.set("scratch", std::to_string(c.scratch_slot()));
    host.set("ws_per", ws_per);
  }
  // The C++ backend's messages (core_variables.hpp's draw), in the kernel's check order.
  std::vector<std::string> texts;
  if (dist.kind == Kind::Dirichlet) texts = {"alpha < 0"};
  if (dist.kind == Kind::Multinomial)
    texts = {"pvals must have at least 1 dimension and the last dimension of pvals must be greater than 0.",
             "pvals < 0, pvals > 1 or pvals contains NaNs",
             "sum(pvals[:-1].astype(np.float64)) > 1.0. The pvals array is cast to 64-bit floating point prior to "
             "checking the sum. Precision changes when casting may cause problems even if the sum of the original "
             "pvals is valid.",
             "sum(pvals[:-1]) > 1.0", "n < 0"};
  // MvNormal: potrf's refusal, gesdd's of a NaN; syevd's "Eigenvalues did not converge" is not
  // reached by the GPU's Jacobi (NaNs and negative eigenvalues give NaN draws, as on the CPU).
  if (dist.kind == Kind::MvNormal && method == 0) texts = {"Matrix is not positive definite"};
  if (dist.kind == Kind::MvNormal && method == 1) texts = {"SVD did not converge"};
  host.set("messages", message_list(texts));
  const bool has_size = c.in_var(1).type().kind != TypeKind::None;
  host.set("has_size", has_size ? "true" : "false");
  TemplateData size{TemplateData::type::list}, size_read{TemplateData::type::list}, size_static{TemplateData::type::list};
  if (has_size) {
    TemplateData item;
    item.set("size", c.in(1));
    size.push_back(item);
    const Shape& shape = c.out_var(1).type().shape;
    if (std::all_of(shape.begin(), shape.begin() + bn, [](std::int64_t n) { return n >= 0; })) {
      std::string assign;
      for (int dd = 0; dd < bn; ++dd)
        assign += "batch[" + std::to_string(dd) + "] = " + std::to_string(shape[static_cast<std::size_t>(dd)]) + ";\n";
      TemplateData s;
      s.set("assign", assign);
      size_static.push_back(s);
    } else {
      size_read.push_back(item);
    }
  }
  host.set("size", size);
  host.set("size_read", size_read);
  host.set("size_static", size_static);
  return NodeCode(render_template("templates/gpu/host/random_core_variable.mustache", host),
                  render_template("templates/gpu/random_core.mustache", k));
}

namespace {

// Template data of the statements setting `target`[0..n) from the draws' known lengths
// (`shape` entries from `from`), or a read of `var` when one of them is unknown.
void lengths_data(TemplateData& host, const std::string& key, const Shape& shape, int from, int n,
                  const std::string& target) {
  TemplateData read{TemplateData::type::list}, fixed{TemplateData::type::list};
  if (std::all_of(shape.begin() + from, shape.begin() + from + n, [](std::int64_t v) { return v >= 0; })) {
    std::string assign;
    for (int d = 0; d < n; ++d)
      assign += target + "[" + std::to_string(d) + "] = " + std::to_string(shape[static_cast<std::size_t>(from + d)]) + ";\n";
    TemplateData item;
    item.set("assign", assign);
    fixed.push_back(item);
  } else {
    read.push_back(TemplateData{});
  }
  host.set(key + "_read", read);
  host.set(key + "_static", fixed);
}

}  // namespace

NodeCode gpu_emit_permutation(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  const auto& op = static_cast<const PermutationRandomVariable&>(c.node().op());
  const int orank = c.out_var(1).ndim(), xrank = c.in_var(2).ndim();
  const int bn = orank - (op.core_ndim() > 0 ? op.core_ndim() : 1), bx = xrank - op.core_ndim();
  const bool arange = op.core_ndim() == 0;
  if (bn > 6 || op.core_ndim() > 6)
    throw NotImplementedError("`" + op.str() + "` with " + std::to_string(bn) + " batch and " +
                              std::to_string(op.core_ndim()) + " core dimensions has no " + backend +
                              " implementation: the shuffle kernel handles 6 of each at most");
  const DType out_dt = c.out_var(1).dtype();
  const std::string ostore = gpu_storage_type(out_dt), xstore = gpu_storage_type(c.in_var(2).dtype());
  TemplateData k = draw_kernel_data(c, d, ostore);
  const std::string name = c.kernel_name();
  k.set("x_param", d.buffer_param(xstore, "x", true));
  k.set("x_bind", d.buffer_bind(xstore, "x", true));
  k.set("stype", ostore);
  k.set("arange", arange);
  k.set("rows", !arange);

  TemplateData host = c.base_data();
  host.set("op_comment", comment_text(op.str()));
  host.set("kernel_ref", d.kernel_ref(name));
  host.set("rng", c.in(0));
  host.set("x", c.in(2));
  host.set("arange", arange);
  host.set("rows", !arange);
  host.set("orank", std::to_string(orank));
  host.set("xndim", std::to_string(xrank));
  host.set("bn", std::to_string(bn));
  host.set("bn_or_1", std::to_string(bn > 0 ? bn : 1));
  host.set("bx", std::to_string(bx));
  const Shape& shape = c.out_var(1).type().shape;
  if (arange) {
    TemplateData read{TemplateData::type::list}, fixed{TemplateData::type::list};
    if (shape[0] >= 0) {
      TemplateData item;
      item.set("n", std::to_string(shape[0]));
      fixed.push_back(item);
    } else {
      read.push_back(TemplateData{});
    }
    host.set("n_read", read);
    host.set("n_static", fixed);
  }
  TemplateData size{TemplateData::type::list};
  if (c.in_var(1).type().kind != TypeKind::None) {
    TemplateData item;
    item.set("size", c.in(1));
    size.push_back(item);
  }
  host.set("size", size);
  if (!arange) lengths_data(host, "size", shape, 0, bn, "sz");
  return NodeCode(render_template("templates/gpu/host/random_permutation.mustache", host),
                  render_template("templates/gpu/random_permutation.mustache", k));
}

NodeCode gpu_emit_choice_without_replacement(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend) {
  const auto& op = static_cast<const ChoiceWithoutReplacement&>(c.node().op());
  const int len = op.shape_len(), orank = c.out_var(1).ndim(), arank = c.in_var(2).ndim();
  const bool arange = op.a_core_ndim() == 0;
  if (arank > 6)
    throw NotImplementedError("`" + op.str() + "` of an a of rank " + std::to_string(arank) + " has no " + backend +
                              " implementation: the gather handles rank 6 at most");
  const DType out_dt = c.out_var(1).dtype();
  const std::string ostore = gpu_storage_type(out_dt), astore = gpu_storage_type(c.in_var(2).dtype());
  TemplateData k = draw_kernel_data(c, d, ostore);
  const std::string name = c.kernel_name();
  k.set("a_param", d.buffer_param(astore, "a", true));
  k.set("a_bind", d.buffer_bind(astore, "a", true));
  k.set("ws_param", d.buffer_param("int64_t", "ws", false));
  k.set("ws_bind", d.buffer_bind("int64_t", "ws", false));
  k.set("ws_ptr", d.global_ptr("int64_t", false));
  k.set("wd_ptr", d.global_ptr("double", false));
  k.set("stype", ostore);
  k.set("arange", arange);
  k.set("rows", !arange);
  TemplateData p{TemplateData::type::list};
  std::vector<std::string> texts;
  if (op.has_p()) {
    const DType pt = c.in_var(3).dtype();
    const std::string pstore = gpu_storage_type(pt);
    TemplateData item;
    item.set("p_param", d.buffer_param(pstore, "p", true));
    item.set("p_bind", d.buffer_bind(pstore, "p", true));
    // sqrt(eps) of float64, or of a float32 p's own type (rounded to it): choice_indices' atol.
    char atol[40];
    std::snprintf(atol, sizeof atol, "%.17g",
                  pt == DType::Float32 ? static_cast<double>(std::sqrt(std::numeric_limits<float>::epsilon()))
                                       : std::sqrt(std::numeric_limits<double>::epsilon()));
    item.set("atol", std::string(atol));
    item.set("p", c.in(3));
    p.push_back(item);
    texts = {"Probabilities contain NaN", "Probabilities are not non-negative",
             "Probabilities do not sum to 1. See Notes section of docstring for more information.",
             "Cannot take a larger sample than population when replace is False", "Fewer non-zero entries in p than size"};
  }
  k.set("p", p);

  TemplateData host = c.base_data();
  host.set("op_comment", comment_text(op.str()));
  host.set("kernel_ref", d.kernel_ref(name));
  host.set("rng", c.in(0));
  host.set("a", c.in(2));
  host.set("andim", std::to_string(arank));
  host.set("shape", c.in(op.shape_input()));
  host.set("len", std::to_string(len));
  host.set("len_or_1", std::to_string(len > 0 ? len : 1));
  host.set("orank", std::to_string(orank));
  host.set("scalar", len == 0 ? "true" : "false");
  host.set("arange", arange);
  host.set("rows", !arange);
  host.set("p", p);
  host.set("scratch", std::to_string(c.scratch_slot()));
  lengths_data(host, "shape", c.out_var(1).type().shape, 0, len, "core");
  host.set("messages", message_list(texts));
  return NodeCode(render_template("templates/gpu/host/random_choice.mustache", host),
                  render_template("templates/gpu/random_choice.mustache", k));
}

}  // namespace kiln
