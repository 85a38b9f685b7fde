#include "eval/evaluator.h"

#include <unordered_map>

#include "ir/branch_schedule.h"
#include "ir/error.h"
#include "ir/graph_runner.h"

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

namespace {

// Runs a graph's schedule (ir/branch_schedule.h): a lazy node runs the region of the branch it
// takes and skips the others. Intermediates are released once their last use has run or been
// skipped.
class Run {
 public:
  Run(const FunctionGraph& fg, const std::vector<Array>& inputs) : fg_(fg) {
    for (std::size_t i = 0; i < inputs.size(); ++i) values_[fg.inputs()[i].get()] = inputs[i];
    for (Apply* node : fg.toposort())
      for (const auto& in : node->inputs()) ++uses_[in.get()];
    for (const auto& out : fg.outputs()) ++uses_[out.get()];
  }

  void region(const BranchSchedule& s) {
    for (const auto& step : s.steps) {
      Apply* node = step.node;
      std::vector<Array> args;
      if (step.branches.empty()) {
        for (const auto& in : node->inputs()) args.push_back(value_of(in));
      } else {
        // The inputs outside every branch first; then the branch taken, then its values.
        const auto branches = node->op().lazy_branches();
        std::vector<bool> in_branch(static_cast<std::size_t>(node->num_inputs()), false);
        for (const auto& b : branches)
          for (int i : b) in_branch[static_cast<std::size_t>(i)] = true;
        for (int i = 0; i < node->num_inputs(); ++i)
          args.push_back(in_branch[static_cast<std::size_t>(i)] ? Array() : value_of(node->input(i)));
        const int taken = select(*node, args);
        for (std::size_t b = 0; b < step.branches.size(); ++b)
          if (static_cast<int>(b) != taken) skip(step.branches[b]);
        region(step.branches[static_cast<std::size_t>(taken)]);
        for (int i : branches[static_cast<std::size_t>(taken)]) args[static_cast<std::size_t>(i)] = value_of(node->input(i));
      }
      perform(*node, args);
    }
  }

  std::vector<Array> outputs() {
    std::vector<Array> outs;
    for (const auto& out : fg_.outputs()) outs.push_back(value_of(out));
    return outs;
  }

 private:
  const Array& value_of(const Var& v) {
    auto it = values_.find(v.get());
    if (it != values_.end()) return it->second;
    KILN_INTERNAL_ASSERT(v->is_constant(), "evaluator met a variable before its producer");
    return values_.emplace(v.get(), v->value()).first->second;
  }

  void release(const Var& in) {
    if (--uses_[in.get()] == 0 && in->owner()) values_.erase(in.get());
  }

  // A branch not taken: its nodes never run, so their reads are done.
  void skip(const BranchSchedule& s) {
    for (Apply* node : s.flatten())
      for (const auto& in : node->inputs()) release(in);
  }

  // Runs f, turning every failure but a kiln bug into a RuntimeFailure naming the node.
  template <class F>
  auto guarded(const Apply& node, F&& f) {
    try {
      return f();
    } catch (const RuntimeFailure& e) {
      throw RuntimeFailure(e.message(), node.label());
    } catch (const UserError& e) {
      throw RuntimeFailure(e.message(), node.label());
    } catch (const InternalError&) {
      throw;
    } catch (const std::bad_alloc&) {
      throw RuntimeFailure("out of memory", node.label());
    } catch (const std::exception& e) {
      throw RuntimeFailure(e.what(), node.label());
    }
  }

  int select(const Apply& node, const std::vector<Array>& args) {
    return guarded(node, [&] {
      const int b = node.op().select_branch(args);
      KILN_INTERNAL_ASSERT(b >= 0 && b < static_cast<int>(node.op().lazy_branches().size()),
                           node.label() + " selected no branch");
      return b;
    });
  }

  void perform(const Apply& node, const std::vector<Array>& args) {
    std::vector<Array> results(static_cast<std::size_t>(node.num_outputs()));
    guarded(node, [&] { node.op().perform(node, args, results); });
    for (int i = 0; i < node.num_outputs(); ++i) {
      const Array& r = results[static_cast<std::size_t>(i)];
      const Variable* out = node.output_ptr(i);
      KILN_INTERNAL_ASSERT(r.defined(), node.label() + " did not produce output " + std::to_string(i));
      KILN_INTERNAL_ASSERT(r.dtype() == out->dtype() && r.ndim() == out->ndim(),
                           node.label() + " produced " + std::string(dtype_name(r.dtype())) + " of rank " +
                               std::to_string(r.ndim()) + " for type " + out->type().str());
      if (!out->type().accepts(r))
        throw RuntimeFailure("output " + std::to_string(i) + " has shape " + shape_str(r.shape()) +
                                 " but its declared type is " + out->type().str(),
                             node.label());
      values_[out] = r;
    }
    for (const auto& in : node.inputs()) release(in);
  }

  const FunctionGraph& fg_;
  std::unordered_map<const Variable*, Array> values_;
  std::unordered_map<const Variable*, int> uses_;  ///< reads not yet run or skipped
};

}  // namespace

std::vector<Array> evaluate(const FunctionGraph& fg, const std::vector<Array>& inputs) {
  if (inputs.size() != fg.inputs().size())
    throw RuntimeFailure("the graph takes " + std::to_string(fg.inputs().size()) + " inputs, got " +
                         std::to_string(inputs.size()));
  for (std::size_t i = 0; i < inputs.size(); ++i) check_input(*fg.inputs()[i], inputs[i], i);
  Run run(fg, inputs);
  run.region(branch_schedule(fg));
  return run.outputs();
}

namespace {
// Ops that run a graph they hold (ir/graph_runner.h) run it with this evaluator.
const bool installed_as_graph_runner = (set_graph_runner(&evaluate), true);
}  // namespace

}  // namespace kiln
