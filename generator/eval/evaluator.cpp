#include "eval/evaluator.h"

#include <unordered_map>

#include "ir/error.h"

namespace kiln {

void check_input(const Variable& var, const Array& a, std::size_t position) {
  std::string who = "input " + std::to_string(position) + " (" + var.label() + ")";
  if (!a.defined()) throw RuntimeFailure(who + " is missing");
  if (var.type().kind == TypeKind::Rng && !var.type().accepts(a))
    throw RuntimeFailure(who + " is an rng: its state is a uint64 array of " + std::to_string(kRngStateWords) +
                         " words (kiln.h), got " + std::string(dtype_name(a.dtype())) + " of shape " + shape_str(a.shape()));
  if (a.dtype() != var.dtype())
    throw RuntimeFailure(who + " must be " + std::string(dtype_name(var.dtype())) + ", got " +
                         std::string(dtype_name(a.dtype())));
  if (a.ndim() != var.ndim())
    throw RuntimeFailure(who + " must have rank " + std::to_string(var.ndim()) + " (type " +
                         var.type().str() + "), got shape " + shape_str(a.shape()));
  if (!var.type().accepts(a))
    throw RuntimeFailure(who + " must have shape " + var.type().shape_str() + ", got " +
                         shape_str(a.shape()));
}

std::vector<Array> evaluate(const FunctionGraph& fg, const std::vector<Array>& inputs) {
  if (inputs.size() != fg.inputs().size())
    throw RuntimeFailure("the graph takes " + std::to_string(fg.inputs().size()) + " inputs, got " +
                         std::to_string(inputs.size()));
  std::unordered_map<const Variable*, Array> values;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    check_input(*fg.inputs()[i], inputs[i], i);
    values[fg.inputs()[i].get()] = inputs[i];
  }
  auto value_of = [&](const Var& v) -> const Array& {
    auto it = values.find(v.get());
    if (it != values.end()) return it->second;
    KILN_INTERNAL_ASSERT(v->is_constant(), "evaluator met a variable before its producer");
    return values.emplace(v.get(), v->value()).first->second;
  };

  // Remaining uses of each node output, so intermediates are released once consumed.
  std::unordered_map<const Variable*, int> uses;
  for (Apply* node : fg.toposort())
    for (const auto& in : node->inputs()) ++uses[in.get()];
  for (const auto& out : fg.outputs()) ++uses[out.get()];

  for (Apply* node : fg.toposort()) {
    std::vector<Array> args;
    for (const auto& in : node->inputs()) args.push_back(value_of(in));
    std::vector<Array> results(static_cast<std::size_t>(node->num_outputs()));
    try {
      node->op().perform(*node, args, results);
    } catch (const RuntimeFailure& e) {
      throw RuntimeFailure(e.message(), node->label());
    } catch (const UserError& e) {
      throw RuntimeFailure(e.message(), node->label());
    } catch (const InternalError&) {
      throw;
    } catch (const std::bad_alloc&) {
      throw RuntimeFailure("out of memory", node->label());
    } catch (const std::exception& e) {
      throw RuntimeFailure(e.what(), node->label());
    }
    for (int i = 0; i < node->num_outputs(); ++i) {
      const Array& r = results[static_cast<std::size_t>(i)];
      const Variable* out = node->output_ptr(i);
      KILN_INTERNAL_ASSERT(r.defined(), node->label() + " did not produce output " + std::to_string(i));
      KILN_INTERNAL_ASSERT(r.dtype() == out->dtype() && r.ndim() == out->ndim(),
                           node->label() + " produced " + std::string(dtype_name(r.dtype())) +
                               " of rank " + std::to_string(r.ndim()) + " for type " + out->type().str());
      if (!out->type().accepts(r))
        throw RuntimeFailure("output " + std::to_string(i) + " has shape " + shape_str(r.shape()) +
                                 " but its declared type is " + out->type().str(),
                             node->label());
      values[out] = r;
    }
    for (const auto& in : node->inputs())
      if (--uses[in.get()] == 0 && in->owner()) values.erase(in.get());
  }
  std::vector<Array> outs;
  for (const auto& out : fg.outputs()) outs.push_back(value_of(out));
  return outs;
}

}  // namespace kiln
