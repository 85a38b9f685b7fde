// Linear algebra (ops/linalg/): every core op, and Blockwise nodes whose core op is one, render
// templates/cpp/ops/linalg_call.mustache — the node's shape checks and output shapes, then one
// call of a kernel of templates/cpp/prologue/linalg.hpp per matrix of the batch (once for a core
// op), through kg::linalg::for_each_item, with the node's scratch slot for work buffers. The
// per-op part is `describe`: the kernel call, its scratch size and the output shapes, as
// expressions of the operands' core lengths.
#include <string>
#include <utility>
#include <vector>

#include "codegen/c_names.h"
#include "codegen/cpp/blockwise_emit.h"
#include "codegen/cpp/emitters.h"
#include "ir/error.h"
#include "ops/blockwise.h"
#include "ops/linalg/linalg.h"

namespace kiln {

namespace {

std::string boolean(bool b) { return b ? "true" : "false"; }

/// The node's operands as a kernel call sees them at one batch position: core lengths, matrix
/// views, output pointers. Operand k of the batch loop is input k, then output k - num_inputs.
class Operands {
 public:
  Operands(const NodeEmitContext& c, int nb, const LinalgSpelling& sp) : c_(c), nb_(nb), sp_(sp) {}
  /// "return kg::linalg::<kernel><T>(ictx, ar, " in the spelling's namespace and leading arguments.
  std::string call_head(const std::string& kernel) const {
    return "return " + sp_.kernels + kernel + "<T>(" + sp_.args + ", ";
  }
  int nb() const { return nb_; }
  /// Core length j of input i.
  std::string dim(int i, int j) const { return c_.in(i) + ".shape[" + str(nb_ + j) + "]"; }
  /// The element type of input i.
  std::string type(int i) const { return ctype(c_.in_var(i).dtype()); }
  /// Input i as a `kg::Mat<const S>` (the spelling's view type): a matrix, or a vector as one column.
  std::string mat(int i) const {
    const std::string v = c_.in(i), data = v + ".data + off[" + str(i) + "]";
    const int core = c_.in_var(i).ndim() - nb_;
    auto sh = [&](int j) { return v + ".shape[" + str(nb_ + j) + "]"; };
    auto st = [&](int j) { return v + ".strides[" + str(nb_ + j) + "]"; };
    const std::string dims = core == 2 ? sh(0) + ", " + sh(1) + ", " + st(0) + ", " + st(1) : sh(0) + ", 1, " + st(0) + ", 0";
    return sp_.mat_type + "<const " + type(i) + ">{" + data + ", " + dims + "}";
  }
  /// Output k's element pointer at the batch position (outputs are C-contiguous).
  std::string out(int k) const {
    return c_.out(k) + ".data + off[" + str(c_.node().num_inputs() + k) + "]";
  }
  /// Output k's element type.
  std::string out_type(int k) const { return ctype(c_.out_var(k).dtype()); }

 private:
  const NodeEmitContext& c_;
  int nb_;
  const LinalgSpelling& sp_;
};

/// What one op contributes: its kernel call (a statement returning the status), scratch bytes
/// and work per matrix, core output lengths, LAPACK-sized lengths, and (core nodes) the checks
/// its perform makes, with the same messages.
struct Call {
  std::string ctype;                                 ///< the compute type T
  std::vector<std::vector<std::string>> out_dims;    ///< per output, per core dimension
  std::vector<std::pair<std::string, std::string>> checks;  ///< (failure condition, status expression)
  std::vector<std::string> lapack_dims;
  std::string bytes = "0";
  std::string work = "1.0";
  std::string call;
};

std::string cube(const std::string& n) { return "static_cast<double>(" + n + ") * " + n + " * " + n; }
std::string min_of(const std::string& a, const std::string& b) { return "std::min<int64_t>(" + a + ", " + b + ")"; }

// "<what>: expected a square matrix, got shape (2, 3)" for input i (square_length's words).
std::pair<std::string, std::string> square_check(const NodeEmitContext& c, const Operands& o, int i,
                                                 const char* what) {
  return {o.dim(i, 0) + " != " + o.dim(i, 1),
          "kg::linalg::fail_not_square(ctx, " + c_string_literal(what) + ", " + c.in(i) + ".shape + " +
              str(o.nb()) + ")"};
}

std::string nullptr_or(bool present, const std::string& expr) { return present ? expr : "nullptr"; }

Call describe_solve(const NodeEmitContext& c, const Operands& o, const SolveBase& op) {
  Call d;
  d.ctype = o.out_type(0);
  const std::string n = o.dim(0, 0), k = op.b_ndim() == 2 ? o.dim(1, 1) : "int64_t(1)";
  d.out_dims = {op.b_ndim() == 2 ? std::vector<std::string>{o.dim(1, 0), o.dim(1, 1)} : std::vector<std::string>{o.dim(1, 0)}};
  d.checks = {square_check(c, o, 0, "A"),
              {o.dim(1, 0) + " != " + n,
               "kg::linalg::fail_two_shapes(ctx, \"incompatible shapes: A has shape %s, b has shape %s\", " + c.in(0) +
                   ".shape + " + str(o.nb()) + ", 2, " + c.in(1) + ".shape + " + str(o.nb()) + ", " +
                   str(op.b_ndim()) + ")"}};
  d.lapack_dims = {n, k};
  d.work = cube(n);
  const std::string args = o.mat(0) + ", " + o.mat(1) + ", " + o.out(0);
  if (const auto* s = dynamic_cast<const Solve*>(&op)) {
    const std::string st = "kiln_linalg::Structure(" + str(static_cast<char>(s->structure())) + ")";
    d.bytes = "kg::linalg::solve_bytes<T>(" + st + ", " + n + ", " + k + ")";
    d.call = o.call_head("solve") + st + ", " + boolean(op.lower()) + ", " + args + ");";
  } else if (const auto* t = dynamic_cast<const SolveTriangular*>(&op)) {
    d.bytes = "kg::linalg::triangular_bytes<T>(" + n + ")";
    d.call = o.call_head("solve_triangular") + boolean(op.lower()) + ", " + boolean(t->trans()) + ", " +
             boolean(t->unit_diagonal()) + ", " + args + ");";
  } else {
    d.bytes = "kg::linalg::triangular_bytes<T>(" + n + ")";
    d.call = o.call_head("cholesky_solve") + boolean(op.lower()) + ", " + args + ");";
  }
  return d;
}

Call describe_eigh(const NodeEmitContext& c, const Operands& o, bool lower, bool vectors) {
  Call d;
  d.ctype = o.out_type(0);
  const std::string n = o.dim(0, 0);
  d.out_dims = {{n}};
  if (vectors) d.out_dims.push_back({n, n});
  d.checks = {square_check(c, o, 0, "A")};
  const bool generalized = c.node().num_inputs() == 2;
  if (generalized)
    d.checks.push_back({o.dim(1, 0) + " != " + n + " || " + o.dim(1, 1) + " != " + o.dim(0, 1),
                        "kg::linalg::fail_two_shapes(ctx, \"A and B must have the same shape, got %s and %s\", " +
                            c.in(0) + ".shape + " + str(o.nb()) + ", 2, " + c.in(1) + ".shape + " + str(o.nb()) +
                            ", 2)"});
  d.lapack_dims = {n};
  d.work = cube(n);
  d.bytes = "kg::linalg::eigh_bytes<T>(" + n + ", " + boolean(vectors) + ", " + boolean(generalized) + ")";
  const std::string tail = o.out(0) + ", " + nullptr_or(vectors, vectors ? o.out(1) : "") + ");";
  if (generalized)
    d.call = "const auto b = " + o.mat(1) + ";\nreturn kg::linalg::eigh<T>(ictx, ar, " + boolean(lower) + ", " +
             o.mat(0) + ", &b, " + tail;
  else
    d.call = "return kg::linalg::eigh<T, " + o.type(0) + ", " + o.type(0) + ">(ictx, ar, " + boolean(lower) + ", " +
             o.mat(0) + ", nullptr, " + tail;
  return d;
}

Call describe_qr(const Operands& o, const QR& op) {
  using kiln_linalg::QrMode;
  Call d;
  d.ctype = o.out_type(0);
  const std::string m = o.dim(0, 0), n = o.dim(0, 1), k = min_of(m, n);
  const QrMode mode = op.mode();
  int next = 0;
  std::string q = "nullptr", r = "nullptr", h = "nullptr", tau = "nullptr", jpvt = "nullptr";
  switch (mode) {
    case QrMode::Full: d.out_dims = {{m, m}, {m, n}}; break;
    case QrMode::Economic: d.out_dims = {{m, k}, {k, n}}; break;
    case QrMode::R: d.out_dims = {{m, n}}; break;
    case QrMode::Raw: d.out_dims = {{m, n}, {k}, {k, n}}; break;
  }
  if (mode == QrMode::Full || mode == QrMode::Economic) q = o.out(next++);
  if (mode == QrMode::Raw) {
    h = o.out(next++);
    tau = o.out(next++);
  }
  r = o.out(next++);
  if (op.pivoting()) {
    d.out_dims.push_back({n});
    jpvt = o.out(next++);
  }
  d.lapack_dims = {m, n};
  d.work = "static_cast<double>(" + m + ") * " + n + " * " + k;
  const std::string mode_expr = "kiln_linalg::QrMode(" + str(static_cast<int>(mode)) + ")";
  d.bytes = "kg::linalg::qr_bytes<T>(" + mode_expr + ", " + boolean(op.pivoting()) + ", " + m + ", " + n + ")";
  d.call = "return kg::linalg::qr<T>(ictx, ar, " + mode_expr + ", " + boolean(op.pivoting()) + ", " + o.mat(0) + ", " +
           q + ", " + r + ", " + h + ", " + tau + ", " + jpvt + ");";
  return d;
}

Call describe_svd(const Operands& o, const SVD& op) {
  Call d;
  d.ctype = o.out_type(0);
  const std::string m = o.dim(0, 0), n = o.dim(0, 1), k = min_of(m, n);
  const bool full = op.full_matrices(), uv = op.compute_uv();
  if (!uv)
    d.out_dims = {{k}};
  else if (full)
    d.out_dims = {{m, m}, {k}, {n, n}};
  else
    d.out_dims = {{m, k}, {k}, {k, n}};
  d.lapack_dims = {m, n};
  d.work = "static_cast<double>(" + m + ") * " + n + " * " + k;
  d.bytes = "kg::linalg::svd_bytes<T>(" + m + ", " + n + ", " + boolean(full) + ", " + boolean(uv) + ")";
  d.call = "return kg::linalg::svd<T>(ictx, ar, " + boolean(full) + ", " + boolean(uv) + ", " + o.mat(0) + ", " +
           (uv ? o.out(0) : "nullptr") + ", " + o.out(uv ? 1 : 0) + ", " + (uv ? o.out(2) : "nullptr") + ");";
  return d;
}

Call describe_lu(const NodeEmitContext& c, const Operands& o, const LU& op) {
  Call d;
  const bool pl = op.permute_l(), pi = op.p_indices();
  d.ctype = o.out_type(pl ? 0 : 1);
  const std::string n = o.dim(0, 0);
  d.checks = {square_check(c, o, 0, "input")};
  d.lapack_dims = {n};
  d.work = cube(n);
  d.bytes = "kg::linalg::lu_bytes<T>(" + n + ")";
  if (pl) {
    d.out_dims = {{n, n}, {n, n}};
    d.call = "return kg::linalg::lu<T>(ictx, ar, " + o.mat(0) + ", nullptr, nullptr, " + o.out(0) + ", " + o.out(1) +
             ", true);";
  } else {
    d.out_dims = {pi ? std::vector<std::string>{n} : std::vector<std::string>{n, n}, {n, n}, {n, n}};
    d.call = "return kg::linalg::lu<T>(ictx, ar, " + o.mat(0) + ", " + (pi ? "nullptr" : o.out(0)) + ", " +
             (pi ? o.out(0) : "nullptr") + ", " + o.out(1) + ", " + o.out(2) + ", false);";
  }
  return d;
}

Call describe_kron(const NodeEmitContext& c, const Operands& o) {
  Call d;
  d.ctype = o.out_type(0);
  const int n = c.out_var(0).ndim() - o.nb();
  const int ra = c.in_var(0).ndim() - o.nb(), rb = c.in_var(1).ndim() - o.nb();
  auto padded = [&](int i, int rank, std::string& shape, std::string& stride) {
    for (int dd = 0; dd < n; ++dd) {
      const int j = dd - (n - rank);
      shape += std::string(dd ? ", " : "") + (j < 0 ? "1" : o.dim(i, j));
      stride += std::string(dd ? ", " : "") + (j < 0 ? "0" : c.in(i) + ".strides[" + str(o.nb() + j) + "]");
    }
  };
  std::string as, ast, bs, bst;
  padded(0, ra, as, ast);
  padded(1, rb, bs, bst);
  std::vector<std::string> dims;
  for (int dd = 0; dd < n; ++dd) {
    const int ja = dd - (n - ra), jb = dd - (n - rb);
    dims.push_back(ja < 0 ? o.dim(1, jb) : jb < 0 ? o.dim(0, ja) : o.dim(0, ja) + " * " + o.dim(1, jb));
  }
  d.out_dims = {dims};
  d.work = "1.0";
  for (const auto& len : dims) d.work += " * static_cast<double>(" + len + ")";
  d.call = "const int64_t as[] = {" + as + "}, ast[] = {" + ast + "}, bs[] = {" + bs + "}, bst[] = {" + bst +
           "};\nkiln_linalg::kron<T>(" + str(n) + ", as, ast, " + c.in(0) + ".data + off[0], bs, bst, " + c.in(1) +
           ".data + off[1], " + o.out(0) + ");\nreturn KILN_OK;";
  return d;
}

Call describe_block_diag(const NodeEmitContext& c, const Operands& o) {
  Call d;
  d.ctype = o.out_type(0);
  std::string rows, cols, blocks;
  for (int i = 0; i < c.node().num_inputs(); ++i) {
    rows += (i ? " + " : "") + o.dim(i, 0);
    cols += (i ? " + " : "") + o.dim(i, 1);
    blocks += ", " + o.mat(i);
  }
  d.out_dims = {{rows, cols}};
  d.work = "static_cast<double>(" + rows + ") * (" + cols + ")";
  d.call = "return kg::linalg::block_diag<T>(" + o.out(0) + ", " + rows + ", " + cols + blocks + ");";
  return d;
}

/// A one-matrix op of shape (n, n) -> out (n, n) (or a 0-d result) with a square check.
Call square_op(const NodeEmitContext& c, const Operands& o, const std::string& kernel, const std::string& bytes,
               const std::string& outputs, std::vector<std::vector<std::string>> out_dims) {
  Call d;
  d.ctype = o.out_type(0);
  const std::string n = o.dim(0, 0);
  d.checks = {square_check(c, o, 0, "input")};
  d.lapack_dims = {n};
  d.work = cube(n);
  d.out_dims = std::move(out_dims);
  d.bytes = bytes.empty() ? "0" : "kg::linalg::" + bytes + "<T>(" + n + ")";
  d.call = o.call_head(kernel) + o.mat(0) + ", " + outputs + ");";
  return d;
}

Call describe(const NodeEmitContext& c, const Op& op, const Operands& o) {
  const std::string name(op.name());
  const std::string n = o.dim(0, 0);
  if (const auto* ch = dynamic_cast<const Cholesky*>(&op))
    return square_op(c, o, "cholesky", "", o.out(0) + ", " + boolean(ch->lower()) + ", " + boolean(ch->raise_on_error()),
                     {{n, n}});
  if (const auto* s = dynamic_cast<const SolveBase*>(&op)) return describe_solve(c, o, *s);
  if (const auto* l = dynamic_cast<const LU*>(&op)) return describe_lu(c, o, *l);
  if (name == "LUFactor") {
    Call d = square_op(c, o, "lu_factor", "lu_bytes", o.out(0) + ", " + o.out(1), {{n, n}, {n}});
    return d;
  }
  if (const auto* p = dynamic_cast<const PivotToPermutations*>(&op)) {
    Call d;
    d.ctype = "int64_t";
    d.out_dims = {{n}};
    d.bytes = "kg::linalg::bytes_for<int64_t>(" + n + ")";
    d.work = "static_cast<double>(" + n + ")";
    d.call = "return kg::linalg::pivots(ictx, ar, " + c.in(0) + ".data + off[0], " + n + ", " + c.in(0) +
             ".strides[" + str(o.nb()) + "], " + o.out(0) + ", " + boolean(p->inverse()) + ");";
    return d;
  }
  if (const auto* q = dynamic_cast<const QR*>(&op)) return describe_qr(o, *q);
  if (name == "MatrixInverse") return square_op(c, o, "inverse", "inverse_bytes", o.out(0), {{n, n}});
  if (const auto* p = dynamic_cast<const MatrixPinv*>(&op)) {
    Call d;
    d.ctype = o.out_type(0);
    const std::string m = o.dim(0, 0), nn = o.dim(0, 1);
    if (p->hermitian()) d.checks = {square_check(c, o, 0, "input")};
    d.lapack_dims = {m, nn};
    d.out_dims = {{nn, m}};
    d.work = "static_cast<double>(" + m + ") * " + nn + " * " + min_of(m, nn);
    d.bytes = "kg::linalg::pinv_bytes<T>(" + m + ", " + nn + ", " + boolean(p->hermitian()) + ")";
    d.call = "return kg::linalg::pinv<T>(ictx, ar, " + o.mat(0) + ", " + o.out(0) + ", " + boolean(p->hermitian()) + ");";
    return d;
  }
  if (name == "Det") return square_op(c, o, "slogdet", "slogdet_bytes", "nullptr, nullptr, " + o.out(0), {{}});
  if (name == "SLogDet")
    return square_op(c, o, "slogdet", "slogdet_bytes", o.out(0) + ", " + o.out(1) + ", nullptr", {{}, {}});
  if (name == "Expm") return square_op(c, o, "expm", "expm_bytes", o.out(0), {{n, n}});
  if (name == "Eig") {
    Call d;
    d.ctype = c.in_var(0).dtype() == DType::Float32 ? "float" : "double";  // as NumPy (Eig::perform)
    d.out_dims = {{n}, {n, n}};
    d.checks = {square_check(c, o, 0, "A")};
    d.lapack_dims = {n};
    d.work = "10.0 * " + cube(n);
    d.bytes = "kg::linalg::eig_bytes<T>(" + n + ")";
    // The kernel writes complex<T>; a narrower output (complex64 from a computation in double,
    // for integer inputs) goes through a scratch pair and is converted.
    if (d.ctype == "double" && c.out_var(0).dtype() == DType::Complex64)
      d.call = "auto* w = ar.take<std::complex<double>>(" + n + ");\nauto* v = ar.take<std::complex<double>>(" + n +
               " * " + n + ");\nconst int32_t st = kg::linalg::eig<T>(ictx, ar, " + o.mat(0) + ", w, v);\n" +
               "for (int64_t i = 0; i < " + n + "; ++i) (" + o.out(0) + ")[i] = std::complex<float>(w[i]);\n" +
               "for (int64_t i = 0; i < " + n + " * " + n + "; ++i) (" + o.out(1) + ")[i] = std::complex<float>(v[i]);\n" +
               "return st;";
    else
      d.call = "return kg::linalg::eig<T>(ictx, ar, " + o.mat(0) + ", " + o.out(0) + ", " + o.out(1) + ");";
    if (d.ctype == "double" && c.out_var(0).dtype() == DType::Complex64)
      d.bytes += " + kg::linalg::bytes_for<std::complex<double>>(" + n + ") + kg::linalg::bytes_for<std::complex<double>>(" +
                 n + " * " + n + ")";
    return d;
  }
  if (const auto* e = dynamic_cast<const Eigh*>(&op)) return describe_eigh(c, o, e->lower(), true);
  if (const auto* e = dynamic_cast<const Eigvalsh*>(&op)) return describe_eigh(c, o, e->lower(), false);
  if (const auto* s = dynamic_cast<const SVD*>(&op)) return describe_svd(o, *s);
  if (name == "KroneckerProduct") return describe_kron(c, o);
  if (name == "BlockDiagonal") return describe_block_diag(c, o);
  throw NotImplementedError("`" + op.str() + "` has no cpp implementation");
}

std::string render(const NodeEmitContext& c, const Op& core, int nb, const GufuncSignature* sig,
                   const LinalgSpelling& sp) {
  const Operands o(c, nb, sp);
  const Call d = describe(c, core, o);
  const int n_in = c.node().num_inputs(), n_out = c.node().num_outputs();
  TemplateData data = c.base_data();
  data.set("nb", str(nb));
  data.set("nb_or_1", str(nb > 0 ? nb : 1));
  data.set("n_in", str(n_in));
  data.set("n_operands", str(n_in + n_out));
  data.set("slot", str(c.scratch_slot()));
  data.set("ctype", d.ctype);
  data.set("bytes", sp.host_scratch ? d.bytes : "0");
  data.set("work", d.work);
  data.set("call", indent_lines(d.call, "        "));

  set_blockwise_batch_data(c, nb, data);
  set_checks(sig ? blockwise_core_dims(c, *sig, nb).checks : d.checks, data);
  data.set("has_lapack_dims", !d.lapack_dims.empty());
  std::string dims;
  for (const auto& len : d.lapack_dims) dims += (dims.empty() ? "" : ", ") + len;
  data.set("lapack_dims", dims);

  TemplateData out_dims = new_list();
  std::string allocs;
  KILN_INTERNAL_ASSERT(static_cast<int>(d.out_dims.size()) == n_out, "linalg emitter: output count");
  for (int k = 0; k < n_out; ++k) {
    std::vector<std::string> lens;
    for (int dd = 0; dd < nb; ++dd) lens.push_back("batch[" + str(dd) + "]");
    lens.insert(lens.end(), d.out_dims[static_cast<std::size_t>(k)].begin(), d.out_dims[static_cast<std::size_t>(k)].end());
    KILN_INTERNAL_ASSERT(static_cast<int>(lens.size()) == c.out_var(k).ndim(), "linalg emitter: output rank");
    for (std::size_t dd = 0; dd < lens.size(); ++dd) {
      TemplateData item;
      item.set("var", c.out(k));
      item.set("d", str(static_cast<std::int64_t>(dd)));
      item.set("len", lens[dd]);
      out_dims.push_back(item);
    }
    allocs += (sp.alloc ? sp.alloc(k) : c.alloc(k)) + "\n";
  }
  data.set("out_dims", out_dims);
  data.set("allocs", allocs);
  TemplateData operands = new_list();
  for (int k = 0; k < n_in + n_out; ++k) {
    TemplateData item;
    item.set("k", str(k));
    item.set("var", k < n_in ? c.in(k) : c.out(k - n_in));
    operands.push_back(item);
  }
  data.set("operands", operands);
  return render_op_template("linalg_call", data);
}

}  // namespace

std::string emit_linalg_spelled(const NodeEmitContext& c, const LinalgSpelling& sp) {
  if (c.node().op().name() == "Blockwise") {
    const auto& op = static_cast<const Blockwise&>(c.node().op());
    return render(c, op.core_op(), op.batch_ndim(c.node()), &op.signature(), sp);
  }
  return render(c, c.node().op(), 0, nullptr, sp);
}

std::string emit_linalg(const NodeEmitContext& c) { return emit_linalg_spelled(c, LinalgSpelling{}); }

std::string emit_linalg_blockwise(const NodeEmitContext& c) { return emit_linalg_spelled(c, LinalgSpelling{}); }

}  // namespace kiln
