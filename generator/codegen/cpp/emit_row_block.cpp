// Row-block groups (codegen/row_block_fusion.h): one pass over blocks of rows of X computes
// z = a X v + b z0, the group's Elemwise nodes per row, its full reductions and every
// g = a' Xᵀ r + b' g0, reading each block of X from memory once (templates/cpp/ops/row_block.mustache).
//
// The rows are cut into chunks by kg::row_chunks (from the shape alone); each chunk keeps its
// partial reductions and its share of every Xᵀ r in the group's workspace slot, and the
// chunks are joined in order, so a call's result does not depend on its thread count.
// Each member checks its operands as its own emitter would, under its own error label.
#include <map>
#include <tuple>

#include "codegen/c_names.h"
#include "codegen/cpp/emitters.h"
#include "codegen/cpp/scalar_code.h"
#include "ops/blas.h"
#include "ops/elemwise.h"
#include "ops/reduce.h"

namespace kiln {

namespace {

TemplateData labelled(const std::string& where, const std::string& code) {
  TemplateData item;
  item.set("where", where);
  item.set("code", indent_lines(code, "    "));
  return item;
}

/// `kiln_scalar::convert<T>(name.data[0])`: a 0-d input as the product's element type.
std::string scalar_value(const std::string& t, const std::string& name) {
  return "kiln_scalar::convert<" + t + ">(" + name + ".data[0])";
}

std::string product_mismatch(const std::string& y, const std::string& A, const std::string& x_len,
                             const std::string& x_shape) {
  return "if (" + A + ".shape[0] != " + y + ".shape[0] || " + A + ".shape[1] != " + x_len + ")\n" +
         "  return kg::at_node(ctx, kg::fail_shapes(ctx, \"incompatible shapes for b*y + a*A@x\", {{\"y\", " + y +
         ".shape, 1}, {\"A\", " + A + ".shape, 2}, {\"x\", " + x_shape + ", 1}}), kWhere);\n";
}

}  // namespace

std::string emit_row_block(const RowBlockGroup& g, const LoweredGraph& lg, int step,
                           const std::function<std::string(const Apply&)>& where) {
  const Apply& product = *g.product;
  const NodeEmitContext pc(product, lg, step);
  const DType dt = product.output_ptr(0)->dtype();
  const std::string T = ctype(dt);
  const std::string X = pc.in(2);

  // Row values: local r<i> per row; block buffer b<i> when a transposed product or a
  // reduction reads it (b0, z, always: the dot products fill it).
  std::map<const Variable*, int> row_index;
  for (std::size_t i = 0; i < g.row_values.size(); ++i) row_index[g.row_values[i]] = static_cast<int>(i);
  const auto row = [&](const Variable* v) { return "r" + str(row_index.at(v)); };
  const auto buffer = [&](const Variable* v) { return "b" + str(row_index.at(v)); };
  std::map<int, DType> buffered{{0, dt}};
  for (const Apply* t : g.transposed_products) buffered[row_index.at(t->input(3).get())] = dt;
  for (const Apply* r : g.reductions) buffered[row_index.at(r->input(0).get())] = r->input(0)->dtype();

  TemplateData checks{TemplateData::type::list};
  std::string pointers = "const " + T + "* __restrict px = " + X + ".data;\n" +  //
                         "const " + T + "* __restrict pv = " + pc.in(3) + ".data;\n";
  // X and v are read in the row loop only where BLAS cannot read X (a rare layout): those
  // loops take the strides as they are. Vectors the per-row loop reads come through
  // kg::unit_stride_block: copied into a block buffer c<name> when strided.
  std::string strides = "const int64_t xs0 = " + X + ".strides[0], xs1 = " + X + ".strides[1];\n" +
                        "const int64_t vs = " + pc.in(3) + ".strides[0];\n";
  std::string block_buffers, block_reads;
  const auto unit_stride_read = [&](const std::string& name, const std::string& ct, const std::string& tensor) {
    strides += "const int64_t " + name + "s = " + tensor + ".strides[0];\n";
    block_buffers += "alignas(64) " + ct + " c" + name + "[kg::kRowBlockMax];\n";
    block_reads += "const " + ct + "* __restrict b" + name + " = kg::unit_stride_block(p" + name + " + i0 * " + name +
                   "s, " + name + "s, m, c" + name + ");\n";
    return "b" + name + "[i]";
  };
  std::string params = "const " + T + " alpha = " + scalar_value(T, pc.in(1)) + ";\n";
  std::string stores;  // row values something outside the group reads (or graph outputs)
  const auto store_if_kept = [&](const NodeEmitContext& c, int o, std::string& alloc_code) {
    const Variable* v = c.node().output_ptr(o);
    if (g.internal.count(v)) {
      if (v->shape()[0] != kUnknownLength)
        alloc_code += "KILN_TRY_AT(kg::check_static_length(ctx, n, " + str(v->shape()[0]) + ", 0), kWhere);\n";
      return;
    }
    alloc_code += c.out(o) + ".shape[0] = n;\n" + c.alloc(o) + "\n";
    const std::string q = "q" + str(row_index.at(v));
    pointers += ctype(v->dtype()) + "* __restrict " + q + " = " + c.out(o) + ".data;\n";
    stores += q + "[i0 + i] = " + row(v) + ";\n";
  };

  // The product z = a X v + b z0.
  {
    std::string code = product_mismatch(pc.in(0), X, pc.in(3) + ".shape[0]", pc.in(3) + ".shape");
    store_if_kept(pc, 0, code);
    checks.push_back(labelled(where(product), code));
  }
  std::string z = "alpha * s";  // s: row i of X_blk v
  if (!blas_ignores_initial(product)) {
    params += "const " + T + " beta = " + scalar_value(T, pc.in(4)) + ";\n";
    pointers += "const " + T + "* __restrict pz = " + pc.in(0) + ".data;\n";
    const std::string z0 = unit_stride_read("z", T, pc.in(0));
    // b = 0 never reads z0 (BLAS's rule: it may be uninitialised).
    z = "beta != " + T + "(0) ? alpha * s + beta * " + z0 + " : alpha * s";
  }

  // Elemwise nodes, per row.
  std::string loads, body;
  std::map<const Variable*, std::string> external;
  int counter = 0;
  for (const Apply* node : g.elemwise) {
    const NodeEmitContext c(*node, lg, step);
    const auto& op = static_cast<const Elemwise&>(node->op());
    std::string lengths, bcast, code;
    std::vector<std::string> args;
    std::vector<DType> arg_dtypes;
    for (int k = 0; k < node->num_inputs(); ++k) {
      const Variable* in = node->input(k).get();
      const bool single = in->type().broadcastable(0);
      lengths += (k ? ", " : "") + (row_index.count(in) ? std::string("n") : c.in(k) + ".shape[0]");
      bcast += std::string(k ? ", " : "") + (single ? "true" : "false");
      arg_dtypes.push_back(in->dtype());
      if (row_index.count(in)) {
        args.push_back(row(in));
        continue;
      }
      auto [it, fresh] = external.emplace(in, "e" + str(static_cast<std::int64_t>(external.size())));
      args.push_back(it->second);
      if (!fresh) continue;
      const std::string e = it->second;
      pointers += "const " + ctype(in->dtype()) + "* __restrict p" + e + " = " + c.in(k) + ".data;\n";
      if (single) {
        loads += "const " + ctype(in->dtype()) + " " + e + " = p" + e + "[0];\n";
      } else {
        loads += "const " + ctype(in->dtype()) + " " + e + " = " + unit_stride_read(e, ctype(in->dtype()), c.in(k)) +
                 ";\n";
      }
    }
    code += "{\n  int64_t len;\n  const int64_t lengths[] = { " + lengths + " };\n  static const bool broadcastable[] = { " +
            bcast + " };\n  KILN_TRY_AT(kg::broadcast_length(ctx, len, 0, lengths, broadcastable, " +
            str(node->num_inputs()) + "), kWhere);\n}\n";
    ScalarCode sc = emit_scalar_code(op.scalar_op(), args, arg_dtypes, "t", counter);
    body += sc.statements;
    for (int o = 0; o < node->num_outputs(); ++o) {
      const Variable* v = node->output_ptr(o);
      body += "const " + ctype(v->dtype()) + " " + row(v) + " = " + sc.results[static_cast<std::size_t>(o)] + ";\n";
      store_if_kept(c, o, code);
    }
    checks.push_back(labelled(where(*node), code));
  }
  std::string buffers_fill, buffers_decl;
  for (const auto& [i, bdt] : buffered) {
    buffers_decl += "alignas(64) " + ctype(bdt) + " b" + str(i) + "[kg::kRowBlockMax];\n";
    buffers_fill += "b" + str(i) + "[i] = r" + str(i) + ";\n";  // b0 held X_blk v: now z
  }

  // Transposed products g = a' Xᵀ r + b' g0: each chunk adds its rows' X_iᵀ r_i into k
  // doubles of its partial results.
  const int n_t = static_cast<int>(g.transposed_products.size());
  std::string chunk_init, block_end, finish;
  for (int t = 0; t < n_t; ++t) {
    const Apply& node = *g.transposed_products[static_cast<std::size_t>(t)];
    const NodeEmitContext c(node, lg, step);
    std::string code = product_mismatch(c.in(0), c.in(2), "n", "n_shape");
    code += c.out(0) + ".shape[0] = " + c.in(2) + ".shape[0];\n" + c.alloc(0) + "\n";
    checks.push_back(labelled(where(node), code));
    const std::string acc = "g" + str(t);
    const std::string blk = "gb" + str(t), r_buf = buffer(node.input(3).get());
    chunk_init += "double* __restrict " + acc + " = part_c + " + str(t) + " * k;\n" +  //
                  T + "* __restrict " + blk + " = reinterpret_cast<" + T + "*>(part_c + " + str(n_t + t) + " * k);\n" +
                  "for (int64_t j = 0; j < k; ++j) " + acc + "[j] = 0;\n";
    block_end += "if (blas_rows) {\n"
                 "  kg::blas_gemv(CblasTrans, static_cast<int>(m), static_cast<int>(k), T(1), px + i0 * xs0,\n"
                 "                static_cast<int>(xs0), " + r_buf + ", 1, T(0), " + blk + ", 1);\n"
                 "  for (int64_t j = 0; j < k; ++j) " + acc + "[j] += " + blk + "[j];\n"
                 "} else {\n"
                 "  for (int64_t i = 0; i < m; ++i) {\n"
                 "    const double ri = " + r_buf + "[i];\n"
                 "    const " + T + "* __restrict xr = px + (i0 + i) * xs0;\n"
                 "#pragma omp simd\n"
                 "    for (int64_t j = 0; j < k; ++j) " + acc + "[j] += ri * xr[j * xs1];\n"
                 "  }\n"
                 "}\n";
    const bool reads_y = !blas_ignores_initial(node);
    finish += "{\n  const double a = " + scalar_value("double", c.in(1)) + ";\n";
    if (reads_y) finish += "  const double b = " + scalar_value("double", c.in(4)) + ";\n";
    finish += "  " + T + "* __restrict out = " + c.out(0) + ".data;\n"
              "  for (int64_t j = 0; j < k; ++j) {\n"
              "    double s = 0;\n"
              "    for (int64_t ch = 0; ch < chunks; ++ch) s += part.data[ch * per_chunk + " + str(t) + " * k + j];\n";
    finish += reads_y ? "    out[j] = static_cast<" + T + ">(b != 0 ? b * " + c.in(0) + ".data[j * " + c.in(0) +
                            ".strides[0]] + a * s : a * s);\n"
                      : "    out[j] = static_cast<" + T + ">(a * s);\n";
    finish += "  }\n}\n";
  }

  // Reductions: a Fold<r> struct each; 16 lanes per chunk, joined in order.
  std::string folds, chunk_end;
  const int n_r = static_cast<int>(g.reductions.size());
  for (int r = 0; r < n_r; ++r) {
    const Apply& node = *g.reductions[static_cast<std::size_t>(r)];
    const NodeEmitContext c(node, lg, step);
    const auto& op = static_cast<const CAReduce&>(node.op());
    const DType in = node.input(0)->dtype();
    const ReduceDTypes rdt = op.dtypes_for(in);
    const std::vector<DType> acc2{rdt.acc, rdt.acc};
    const std::string F = "Fold" + str(r);
    folds += "struct " + F + " {\n  using T = " + ctype(in) + ";\n  using A = " + ctype(rdt.acc) + ";\n  using O = " +
             ctype(rdt.out) + ";\n  static A init() { return " + fold_identity(op.scalar_op().id(), rdt.acc) +
             "; }\n  static A step(A a, T x) {\n" +
             scalar_return(op.scalar_op(), {"a", "v"}, acc2, "const A v = kiln_scalar::convert<A>(x);\n") +
             "\n  }\n  static A combine(A a, A b) {\n" + scalar_return(op.scalar_op(), {"a", "b"}, acc2) + "\n  }\n};\n";
    std::string code;
    if (op.kind() == ReduceKind::Max || op.kind() == ReduceKind::Min)
      code += "if (n == 0)\n  return kg::at_node(ctx, kg::fail(ctx, KILN_ERR_VALUE, \"%s\", " +
              c_string_literal(op.empty_axis_message(0)) + "), kWhere);\n";
    code += c.alloc(0) + "\n";
    checks.push_back(labelled(where(node), code));
    const std::string lanes = "lanes" + str(r), off = str(2 * n_t) + " * k + " + str(r);
    chunk_init += F + "::A " + lanes + "[kLanes];\nfor (int l = 0; l < kLanes; ++l) " + lanes + "[l] = " + F +
                  "::init();\n";
    const std::string b = buffer(node.input(0).get());
    block_end += "{\n  int64_t i = 0;\n  for (; i + kLanes <= m; i += kLanes) {\n#pragma omp simd\n"
                 "    for (int l = 0; l < kLanes; ++l) " + lanes + "[l] = " + F + "::step(" + lanes + "[l], " + b +
                 "[i + l]);\n  }\n  for (; i < m; ++i) " + lanes + "[0] = " + F + "::step(" + lanes + "[0], " + b +
                 "[i]);\n}\n";
    // Each chunk's fold is kept bitwise in one double's 8 bytes of the partial results.
    chunk_end += "{\n  " + F + "::A acc = " + lanes + "[0];\n  for (int l = 1; l < kLanes; ++l) acc = " + F +
                 "::combine(acc, " + lanes + "[l]);\n  std::memcpy(part_c + " + off + ", &acc, sizeof acc);\n}\n";
    finish += "{\n  " + F + "::A acc = " + F + "::init();\n  for (int64_t ch = 0; ch < chunks; ++ch) {\n    " + F +
              "::A v;\n    std::memcpy(&v, part.data + ch * per_chunk + " + off + ", sizeof v);\n    acc = " + F +
              "::combine(acc, v);\n  }\n  " + c.out(0) + ".data[0] = kiln_scalar::convert<" + F + "::O>(acc);\n}\n";
  }
  TemplateData data;
  data.set("T", T);
  data.set("X", X);
  data.set("v", pc.in(3));
  data.set("slot", str(lg.group_slots.at(static_cast<std::size_t>(lg.group_of.at(&product)))));
  data.set("n_t", str(n_t));
  data.set("n_r", str(n_r));
  data.set("checks", checks);
  data.set("z", z);
  for (const auto& [key, text, depth] : std::vector<std::tuple<const char*, std::string, int>>{
           {"params", params, 4},
           {"folds", folds, 2},
           {"pointers", pointers, 4},
           {"strides", strides, 4},
           {"buffers", buffers_decl + block_buffers, 4},
           {"block_reads", block_reads, 6},
           {"chunk_init", chunk_init, 4},
           {"loads", loads, 8},
           {"body", body, 8},
           {"stores", stores + buffers_fill, 8},
           {"block_end", block_end, 6},
           {"chunk_end", chunk_end, 4},
           {"finish", finish, 2}})
    data.set(key, indent_lines(text, std::string(static_cast<std::size_t>(depth), ' ')));
  return render_op_template("row_block", data);
}

}  // namespace kiln
