#include "codegen/cpp/scalar_code.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "codegen/c_types.h"
#include "codegen/embedded_files.h"
#include "ir/error.h"
#include "ops/scalar/composite.h"

namespace kiln {

namespace {

std::string operand_class(DType dt) {
  if (is_complex(dt)) return "complex";
  if (is_float(dt)) return "float";
  if (is_bool(dt)) return "bool";
  return "int";
}

std::string substitute(const std::string& pattern, const std::vector<std::string>& operands,
                       const std::string& compute_type, const std::string& out_type) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '{') {
      auto close = pattern.find('}', i);
      std::string key = pattern.substr(i + 1, close - i - 1);
      if (key == "T")
        out += compute_type;
      else if (key == "OUT")
        out += out_type;
      else
        out += operands.at(static_cast<std::size_t>(std::stoi(key)));
      i = close;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

}  // namespace

std::string convert_scalar(const std::string& expr, DType from, DType to, const ScalarTable& table) {
  if (from == to) return expr;
  if (!table.c_style()) return "kiln_scalar::convert<" + ctype(to) + ">(" + expr + ")";
  if (is_bool(to)) return "((" + expr + ") != 0)";
  if (is_float(from) && !is_float(to) && !is_bool(to))
    return "kiln_convert_" + ctype(from) + "_" + ctype(to) + "(" + expr + ")";
  return "((" + ctype(to) + ")(" + expr + "))";
}

ScalarTable ScalarTable::parse(const std::string& backend, std::string_view text) {
  ScalarTable t;
  t.backend_ = backend;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name, cls, expr;
    fields >> name >> cls;
    std::getline(fields, expr);
    expr.erase(0, expr.find_first_not_of(' '));
    // `class@backend`: a row for that backend alone (CUDA's own math library functions).
    const std::size_t at = cls.find('@');
    if (at != std::string::npos) {
      if (cls.substr(at + 1) != backend) continue;
      cls.erase(at);
    }
    t.rows_[name].emplace_back(cls, expr);
  }
  return t;
}

const ScalarTable& ScalarTable::cpp() {
  static const ScalarTable t = parse("cpp", embedded_file("templates/cpp/scalar_ops.txt"));
  return t;
}

ScalarTable ScalarTable::with(const std::string& backend, const std::string& name,
                              std::vector<std::pair<std::string, std::string>> spellings) const {
  ScalarTable t = *this;
  t.backend_ = backend;
  t.rows_[name] = std::move(spellings);
  return t;
}

const std::string& ScalarTable::expression(const ScalarOp& op, DType compute) const {
  auto it = rows_.find(std::string(op.info().name));
  if (it != rows_.end()) {
    for (const auto& [cls, expr] : it->second)
      if (cls == "any" || cls == operand_class(compute)) return expr;
  }
  throw NotImplementedError("scalar op " + std::string(op.info().name) + " on " +
                            std::string(dtype_name(compute)) + " has no " + backend_ + " implementation");
}

bool ScalarTable::c_style() const { return rows_.count("_cast") > 0; }

std::vector<std::string> ScalarTable::classes(const std::string& name) const {
  std::vector<std::string> out;
  auto it = rows_.find(name);
  if (it != rows_.end())  // a backend's own row shadows a shared one of its class: listed once
    for (const auto& entry : it->second)
      if (std::find(out.begin(), out.end(), entry.first) == out.end()) out.push_back(entry.first);
  return out;
}


namespace {

// A ScalarLoop (ops/scalar/scalar_loop.h) as a loop in the element's statements, as PyTensor's C
// code writes it: the carried values in locals, the inner graph's statements in the loop body,
// every update computed before any is assigned. Its results are the carried locals (and until).
ScalarCode emit_scalar_loop(const ScalarOp& op, const std::vector<std::string>& args, const std::string& prefix,
                            int& counter, const ScalarTable& table) {
  const CompositeGraph& g = *op.composite_graph();
  const std::vector<DType> inner_dtypes = g.input_dtypes();
  const std::size_t carries = static_cast<std::size_t>(op.loop_carries());
  const std::string id = prefix + std::to_string(counter++) + "_loop";
  const auto to_int64 = [&](const std::string& e) {
    return table.c_style() ? "((int64_t)(" + e + "))" : "static_cast<int64_t>(" + e + ")";
  };
  ScalarCode code;
  std::vector<std::string> inner_args;
  for (std::size_t k = 0; k < inner_dtypes.size(); ++k) {
    if (k < carries) {
      const std::string carried = id + "_c" + std::to_string(k);
      code.statements += ctype(inner_dtypes[k]) + " " + carried + " = " + args[k + 1] + ";\n";
      inner_args.push_back(carried);
    } else {
      inner_args.push_back(args[k + 1]);
    }
  }
  const std::string until = id + "_until";
  if (op.loop_is_while()) code.statements += "bool " + until + " = true;\n";
  code.statements += "for (int64_t " + id + "_i = 0, " + id + "_n = " + to_int64(args[0]) + "; " + id + "_i < " + id +
                     "_n; ++" + id + "_i) {\n";
  ScalarCode body = emit_scalar_code(ScalarOp::composite(op.composite_graph()), inner_args, inner_dtypes, prefix,
                                     counter, table);
  code.statements += body.statements;
  for (std::size_t k = 0; k < carries; ++k)
    code.statements += "const " + ctype(inner_dtypes[k]) + " " + id + "_u" + std::to_string(k) + " = " + body.results[k] + ";\n";
  for (std::size_t k = 0; k < carries; ++k)
    code.statements += inner_args[k] + " = " + id + "_u" + std::to_string(k) + ";\n";
  if (op.loop_is_while()) code.statements += until + " = " + body.results[carries] + ";\nif (" + until + ") break;\n";
  code.statements += "}\n";
  code.results.assign(inner_args.begin(), inner_args.begin() + static_cast<std::ptrdiff_t>(carries));
  if (op.loop_is_while()) code.results.push_back(until);
  return code;
}

}  // namespace

ScalarCode emit_scalar_code(const ScalarOp& op, const std::vector<std::string>& args,
                            const std::vector<DType>& arg_dtypes, const std::string& prefix,
                            int& counter, const ScalarTable& table) {
  ScalarCode code;
  std::vector<DType> out_dtypes = op.output_dtypes(arg_dtypes);
  if (op.id() == ScalarOpId::Composite) {
    const CompositeGraph& g = *op.composite_graph();
    std::vector<std::string> value(g.values().size());
    for (int i = 0; i < g.num_inputs(); ++i) value[static_cast<std::size_t>(i)] = args[static_cast<std::size_t>(i)];
    for (std::size_t v = 0; v < g.values().size(); ++v)
      if (g.values()[v].is_constant()) value[v] = scalar_literal(g.values()[v].constant, table.c_style());
    for (const auto& node : g.nodes()) {
      std::vector<std::string> ins;
      std::vector<DType> in_dtypes;
      for (int v : node.inputs) {
        ins.push_back(value[static_cast<std::size_t>(v)]);
        in_dtypes.push_back(g.values()[static_cast<std::size_t>(v)].dtype);
      }
      ScalarCode inner = emit_scalar_code(node.op, ins, in_dtypes, prefix, counter, table);
      code.statements += inner.statements;
      for (std::size_t k = 0; k < node.outputs.size(); ++k)
        value[static_cast<std::size_t>(node.outputs[k])] = inner.results[k];
    }
    for (int v : g.outputs()) code.results.push_back(value[static_cast<std::size_t>(v)]);
    return code;
  }

  if (op.id() == ScalarOpId::ScalarLoop) return emit_scalar_loop(op, args, prefix, counter, table);

  // float16 operands are computed on as float32, and the result is rounded once when it is
  // stored as half (NumPy's float16 loops).
  std::vector<DType> operand_dtypes = op.operand_dtypes(arg_dtypes);
  for (DType& d : operand_dtypes) d = arithmetic_dtype(d);
  std::vector<std::string> operands;
  for (std::size_t k = 0; k < args.size(); ++k) operands.push_back(convert_scalar(args[k], arg_dtypes[k], operand_dtypes[k], table));
  // The computation type is that of the last operand (switch's first operand is its condition).
  DType compute = operand_dtypes.back();
  if (op.id() == ScalarOpId::Cast) compute = arg_dtypes[0];
  const std::string out_type = ctype(out_dtypes[0]);
  std::string expr;
  if (op.id() == ScalarOpId::Cast && table.c_style()) {
    expr = convert_scalar(operands[0], arg_dtypes[0], out_dtypes[0], table);
  } else if (operands.size() > 2 && (op.id() == ScalarOpId::Add || op.id() == ScalarOpId::Mul)) {
    const std::string& pattern = table.expression(op, compute);
    expr = operands[0];
    for (std::size_t k = 1; k < operands.size(); ++k)
      expr = substitute(pattern, {expr, operands[k]}, ctype(compute), out_type);
  } else {
    expr = substitute(table.expression(op, compute), operands, ctype(compute), out_type);
  }
  std::string name = prefix + std::to_string(counter++);
  const std::string cast = table.c_style() ? "(" + out_type + ")(" : "static_cast<" + out_type + ">(";
  code.statements = "const " + out_type + " " + name + " = " + cast + expr + ");\n";
  code.results.push_back(name);
  return code;
}

std::string scalar_return(const ScalarOp& op, const std::vector<std::string>& args,
                          const std::vector<DType>& dtypes, const std::string& before) {
  int counter = 0;
  ScalarCode code = emit_scalar_code(op, args, dtypes, "t", counter);
  const std::string text = before + code.statements + "return " + code.results[0] + ";";
  std::string body;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    body += (body.empty() ? "    " : "\n    ") + text.substr(start, end - start);
    start = end + 1;
  }
  return body;
}

std::string fold_identity(ScalarOpId id, DType acc) {
  // Generated code has no std::numeric_limits for float16 (its type lives in an anonymous
  // namespace): its infinities are spelled through float.
  if (acc == DType::Float16 && (id == ScalarOpId::Maximum || id == ScalarOpId::Minimum))
    return id == ScalarOpId::Maximum ? "A(-INFINITY)" : "A(INFINITY)";
  switch (id) {
    case ScalarOpId::Mul:
      return "A(1)";
    case ScalarOpId::And:
      if (is_bool(acc)) return "true";
      return is_float(acc) ? "A(0)" : "static_cast<A>(~A(0))";  // (and of floats is refused)
    case ScalarOpId::Maximum:
      return is_float(acc) ? "-std::numeric_limits<A>::infinity()" : "std::numeric_limits<A>::lowest()";
    case ScalarOpId::Minimum:
      return is_float(acc) ? "std::numeric_limits<A>::infinity()" : "std::numeric_limits<A>::max()";
    default:
      return "A(0)";  // add, or, xor
  }
}

}  // namespace kiln
