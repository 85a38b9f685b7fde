#include "ir/fgraph.h"

#include <algorithm>

#include "ir/error.h"

namespace kiln {

namespace {
const std::vector<Client> kNoClients;

ApplyPtr owner_ptr(const Variable* v) {
  return std::const_pointer_cast<Apply>(v->owner()->shared_from_this());
}

// The nodes a change brought in stand for what it replaced: the replaced variables' nodes and
// every node it pruned.
void inherit_origins(const GraphChange& change, const std::vector<std::pair<Var, Var>>& pairs) {
  Origins from;
  for (const auto& [old_var, new_var] : pairs)
    if (old_var->owner()) from = merge_origins(from, old_var->owner()->origins());
  for (const ApplyPtr& node : change.removed) from = merge_origins(from, node->origins());
  if (!from) return;
  for (Apply* node : change.added) node->set_origins(merge_origins(node->origins(), from));
}
}  // namespace

FunctionGraph::FunctionGraph(VarList inputs, VarList outputs, std::string name)
    : name_(std::move(name)), inputs_(std::move(inputs)) {
  for (const auto& in : inputs_) {
    if (!in->is_input())
      throw UserError("a graph input must be a free variable, not " +
                          std::string(in->is_constant() ? "a constant" : "a node output"),
                      in->label());
    if (!input_set_.insert(in.get()).second)
      throw UserError("variable listed twice as a graph input", in->label());
    handles_[in.get()] = in;
  }
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    import_var(outputs[i]);
    outputs_.push_back(outputs[i]);
    add_client(outputs[i], Client{nullptr, static_cast<int>(i)});
  }
  output_names_.assign(outputs_.size(), std::string());
}

void FunctionGraph::attach(const Var& v) { handles_.emplace(v.get(), v); }

void FunctionGraph::import_var(const Var& root) {
  if (handles_.count(root.get())) return;
  if (!root->owner()) {
    if (!root->is_constant())
      throw UserError("the graph uses a variable that is not one of its inputs", root->label());
    attach(root);
    return;
  }
  // Iterative post-order walk so that deep chains cannot overflow the stack.
  std::vector<std::pair<ApplyPtr, std::size_t>> stack;
  stack.emplace_back(owner_ptr(root.get()), 0);
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (nodes_.count(node.get())) {
      stack.pop_back();
      continue;
    }
    if (next < node->inputs().size()) {
      const Var& in = node->inputs()[next++];
      if (handles_.count(in.get())) continue;
      if (in->owner()) {
        stack.emplace_back(owner_ptr(in.get()), 0);
      } else if (in->is_constant()) {
        attach(in);
      } else {
        throw UserError("the graph uses a variable that is not one of its inputs", in->label());
      }
      continue;
    }
    ApplyPtr done = node;
    stack.pop_back();
    import_node(done);
  }
}

void FunctionGraph::import_node(const ApplyPtr& node) {
  nodes_.emplace(node.get(), node);
  if (change_) change_->added.push_back(node.get());
  for (int i = 0; i < node->num_inputs(); ++i) add_client(node->input(i), Client{node.get(), i});
  for (int i = 0; i < node->num_outputs(); ++i) attach(node->output(i));
  if (on_import_) on_import_(node.get());
}

void ClientList::add(Client c) {
  list_.push_back(c);
  if (!pos_.empty()) {
    pos_[c] = list_.size() - 1;
  } else if (list_.size() > kIndexAbove) {
    for (std::size_t i = 0; i < list_.size(); ++i) pos_[list_[i]] = i;
  }
}

void ClientList::remove(Client c) {
  if (pos_.empty()) {
    auto it = std::find(list_.begin(), list_.end(), c);
    if (it != list_.end()) list_.erase(it);
    return;
  }
  auto it = pos_.find(c);
  if (it == pos_.end()) return;
  std::size_t i = it->second;
  pos_.erase(it);
  if (i + 1 != list_.size()) {
    list_[i] = list_.back();
    pos_[list_[i]] = i;
  }
  list_.pop_back();
}

void FunctionGraph::add_client(const Var& v, Client c) { clients_[v.get()].add(c); }

void FunctionGraph::remove_client(const Variable* v, Client c) {
  auto it = clients_.find(v);
  if (it == clients_.end()) return;
  it->second.remove(c);
}

const std::vector<Client>& FunctionGraph::clients(const Variable* v) const {
  auto it = clients_.find(v);
  return it == clients_.end() ? kNoClients : it->second.list();
}

Var FunctionGraph::handle(const Variable* v) const {
  auto it = handles_.find(v);
  KILN_INTERNAL_ASSERT(it != handles_.end(), "variable is not part of this graph");
  return it->second;
}

void FunctionGraph::prune_if_unused(Apply* start) {
  std::vector<Apply*> work{start};
  std::vector<ApplyPtr> released;  // freed only once the bookkeeping is done
  while (!work.empty()) {
    Apply* node = work.back();
    work.pop_back();
    if (!nodes_.count(node)) continue;
    bool used = false;
    for (int i = 0; i < node->num_outputs(); ++i)
      if (!clients(node->output_ptr(i)).empty()) used = true;
    if (used) continue;
    for (int i = 0; i < node->num_inputs(); ++i) {
      const Var& in = node->input(i);
      remove_client(in.get(), Client{node, i});
      if (!clients(in.get()).empty()) continue;
      if (in->owner()) {
        work.push_back(in->owner());
      } else if (in->is_constant()) {
        clients_.erase(in.get());
        handles_.erase(in.get());
      }
    }
    for (int i = 0; i < node->num_outputs(); ++i) {
      clients_.erase(node->output_ptr(i));
      handles_.erase(node->output_ptr(i));
    }
    released.push_back(nodes_.at(node));
    if (change_) change_->removed.push_back(released.back());
    nodes_.erase(node);
  }
}

void FunctionGraph::replace(const Var& old_var, const Var& new_var, const std::string& reason) {
  replace_all({{old_var, new_var}}, reason);
}

void FunctionGraph::replace_all(const std::vector<std::pair<Var, Var>>& pairs, const std::string& reason) {
  GraphChange change;
  change.reason = reason;
  change_ = &change;
  struct StopRecording {
    GraphChange*& slot;
    ~StopRecording() { slot = nullptr; }
  } stop{change_};
  for (const auto& [o, n] : pairs) replace_one(o, n, reason);
  change_ = nullptr;
  // A node brought in and pruned within the same change was never really there.
  std::unordered_set<const Apply*> transient;
  for (Apply* a : change.added)
    if (!contains(a)) transient.insert(a);
  if (!transient.empty()) {
    auto gone = [&](const Apply* a) { return transient.count(a) != 0; };
    change.added.erase(std::remove_if(change.added.begin(), change.added.end(), gone), change.added.end());
    change.removed.erase(std::remove_if(change.removed.begin(), change.removed.end(),
                                        [&](const ApplyPtr& a) { return gone(a.get()); }),
                         change.removed.end());
  }
  inherit_origins(change, pairs);
  if (on_change_ && (!change.added.empty() || !change.removed.empty())) on_change_(change);
}

void FunctionGraph::replace_one(const Var& old_var, const Var& new_var, const std::string& reason) {
  if (old_var == new_var) return;
  if (!old_var->type().compatible_with(new_var->type())) {
    throw UserError("cannot replace " + old_var->label() + " of type " + old_var->type().str() +
                    " by " + new_var->label() + " of type " + new_var->type().str() +
                    ": the types differ" + (reason.empty() ? "" : " (" + reason + ")"));
  }
  if (!handles_.count(old_var.get())) return;
  import_var(new_var);
  std::vector<Client> uses = clients(old_var.get());
  for (const Client& c : uses) {
    if (c.node == nullptr)
      replace_output(static_cast<std::size_t>(c.index), old_var, new_var);
    else
      c.node->set_input(c.index, new_var);
    add_client(new_var, c);
  }
  clients_[old_var.get()].clear();
  if (old_var->owner())
    prune_if_unused(old_var->owner());
  else if (old_var->is_constant()) {
    clients_.erase(old_var.get());
    handles_.erase(old_var.get());
  }
}

void FunctionGraph::replace_output(std::size_t k, const Var& old_var, const Var& new_var) {
  // The output keeps the name it is known by (the typed header's member, the .npy file name)
  // when a rewrite puts another variable, often an unnamed one, in its place.
  if (k >= output_names_.size() || output_names_[k].empty()) {
    output_names_.resize(outputs_.size());
    output_names_[k] = old_var->name().empty() ? old_var->file_id() : old_var->name();
  }
  // A new computed variable takes that name too, so dprint, saved files and generated code
  // all call it as the user did (not when it is an input or also another output, whose name
  // it would change).
  const bool other_output = std::find(outputs_.begin(), outputs_.end(), new_var) != outputs_.end();
  if (new_var->name().empty() && new_var->owner() && !other_output) new_var->set_name(output_names_[k]);
  outputs_[k] = new_var;
}

void FunctionGraph::set_output(int i, const Var& v) {
  Var old = outputs_.at(static_cast<std::size_t>(i));
  if (old == v) return;
  if (!old->type().compatible_with(v->type()))
    throw UserError("cannot set output " + std::to_string(i) + " of type " + old->type().str() +
                    " to a variable of type " + v->type().str());
  import_var(v);
  remove_client(old.get(), Client{nullptr, i});
  outputs_[static_cast<std::size_t>(i)] = v;
  add_client(v, Client{nullptr, i});
  if (clients(old.get()).empty() && old->owner()) prune_if_unused(old->owner());
}

std::vector<Apply*> FunctionGraph::toposort() const {
  std::vector<Apply*> order;
  order.reserve(nodes_.size());
  std::unordered_set<const Apply*> done;
  std::vector<std::pair<Apply*, std::size_t>> stack;
  for (const auto& out : outputs_) {
    if (!out->owner() || done.count(out->owner())) continue;
    stack.emplace_back(out->owner(), 0);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->inputs().size()) {
        Apply* dep = node->inputs()[next++]->owner();
        if (dep && !done.count(dep)) stack.emplace_back(dep, 0);
        continue;
      }
      if (done.insert(node).second) order.push_back(node);
      stack.pop_back();
    }
  }
  return order;
}

std::vector<Variable*> FunctionGraph::variables() const {
  std::vector<Variable*> vars;
  std::unordered_set<const Variable*> seen;
  auto add = [&](Variable* v) {
    if (seen.insert(v).second) vars.push_back(v);
  };
  for (const auto& in : inputs_) add(in.get());
  for (Apply* node : toposort()) {
    for (const auto& in : node->inputs()) add(in.get());
    for (int i = 0; i < node->num_outputs(); ++i) add(node->output_ptr(i));
  }
  for (const auto& out : outputs_) add(out.get());
  return vars;
}

FunctionGraph FunctionGraph::clone(std::unordered_map<const Variable*, Var>* map_out) const {
  std::unordered_map<const Variable*, Var> local;
  auto& map = map_out ? *map_out : local;
  auto copy_meta = [](const Variable& from, Variable& to) {
    to.set_name(from.name());
    to.set_file_id(from.file_id());
  };
  auto get = [&](const Var& v) -> Var {
    auto it = map.find(v.get());
    if (it != map.end()) return it->second;
    KILN_INTERNAL_ASSERT(v->is_constant(), "clone met a variable before its producer");
    Var c = make_constant_shared(v->value_ptr(), {}, v->type().kind);
    c->refine_type(v->type());
    copy_meta(*v, *c);
    map[v.get()] = c;
    return c;
  };
  VarList new_inputs;
  for (const auto& in : inputs_) {
    Var n = make_input(in->type(), in->name());
    n->set_file_id(in->file_id());
    map[in.get()] = n;
    new_inputs.push_back(n);
  }
  for (Apply* node : toposort()) {
    VarList ins;
    for (const auto& in : node->inputs()) ins.push_back(get(in));
    std::vector<TensorType> types;
    for (int i = 0; i < node->num_outputs(); ++i) types.push_back(node->output_ptr(i)->type());
    ApplyPtr copy = Apply::create(node->op_ptr(), std::move(ins), types);
    copy->set_origins(node->origins());
    for (int i = 0; i < node->num_outputs(); ++i) {
      Var o = copy->output(i);
      copy_meta(*node->output_ptr(i), *o);
      map[node->output_ptr(i)] = o;
    }
  }
  VarList new_outputs;
  for (const auto& out : outputs_) new_outputs.push_back(get(out));
  FunctionGraph g(std::move(new_inputs), std::move(new_outputs), name_);
  g.output_names_ = output_names_;
  g.extras_ = extras_;
  return g;  // (the import listener is not copied)
}

void FunctionGraph::verify() const {
  auto fail = [](const std::string& what) { throw InternalError("graph verification: " + what); };
  auto order = toposort();
  if (order.size() != nodes_.size())
    fail("toposort reaches " + std::to_string(order.size()) + " of " +
         std::to_string(nodes_.size()) + " nodes (unreachable nodes or a cycle)");
  std::unordered_map<const Apply*, std::size_t> position;
  for (std::size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
  for (Apply* node : order) {
    for (int i = 0; i < node->num_inputs(); ++i) {
      const Var& in = node->input(i);
      if (!handles_.count(in.get())) fail("an input of " + node->label() + " is not in the graph");
      const auto& cl = clients(in.get());
      if (std::find(cl.begin(), cl.end(), Client{node, i}) == cl.end())
        fail("missing client entry for input " + std::to_string(i) + " of " + node->label());
      if (in->owner() && (!position.count(in->owner()) || position[in->owner()] >= position[node]))
        fail("input " + std::to_string(i) + " of " + node->label() + " comes after it");
    }
    std::vector<TensorType> inferred;
    try {
      inferred = node->op().infer_types(node->inputs());
    } catch (const UserError& e) {
      fail(node->label() + " no longer type-checks: " + e.what());
    }
    if (static_cast<int>(inferred.size()) != node->num_outputs())
      fail(node->label() + " has a wrong number of outputs");
    for (int i = 0; i < node->num_outputs(); ++i) {
      const TensorType& t = node->output_ptr(i)->type();
      if (!t.compatible_with(inferred[static_cast<std::size_t>(i)]))
        fail("output " + std::to_string(i) + " of " + node->label() + " has type " + t.str() +
             " but inference gives " + inferred[static_cast<std::size_t>(i)].str());
    }
  }
  for (std::size_t i = 0; i < outputs_.size(); ++i) {
    const auto& cl = clients(outputs_[i].get());
    if (std::find(cl.begin(), cl.end(), Client{nullptr, static_cast<int>(i)}) == cl.end())
      fail("missing client entry for graph output " + std::to_string(i));
    if (!handles_.count(outputs_[i].get())) fail("graph output " + std::to_string(i) + " unknown");
  }
  for (const auto& [v, list] : clients_) {
    for (const Client& c : list.list()) {
      if (c.node && !nodes_.count(c.node)) fail("a client node is not in the graph");
      if (c.node && c.node->input(c.index).get() != v) fail("a stale client entry");
    }
  }
}

}  // namespace kiln
