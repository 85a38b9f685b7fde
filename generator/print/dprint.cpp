// PyTensor's debugprint (pytensor/printing.py), line for line: a depth-first walk from each
// output that gives every Apply node and leaf an id on first visit, prints an already-visited
// node once more with "···" below it, and then prints the inner graph of every Composite met.
#include "print/dprint.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>

#include "ir/error.h"
#include "ops/elemwise.h"
#include "ops/op_from_graph.h"
#include "ops/scalar/composite.h"
#include "print/numpy_str.h"

namespace kiln {

namespace {

// A variable as dprint sees it: one of the outer graph, or a value inside a Composite.
struct PVar {
  const Variable* var = nullptr;
  const CompositeGraph* graph = nullptr;
  int value = -1;

  const void* key() const {
    return var ? static_cast<const void*>(var)
               : static_cast<const void*>(&graph->values()[static_cast<std::size_t>(value)]);
  }
  bool operator==(const PVar& o) const { return key() == o.key(); }
};

// A node: an Apply of the outer graph, or a node inside a Composite.
struct PNode {
  const Apply* apply = nullptr;
  const CompositeGraph* graph = nullptr;
  int index = -1;

  const void* key() const {
    return apply ? static_cast<const void*>(apply)
                 : static_cast<const void*>(&graph->nodes()[static_cast<std::size_t>(index)]);
  }
  const CompositeGraph::Node& inner() const { return graph->nodes()[static_cast<std::size_t>(index)]; }
};

// Python's "CHAR" ids: base 26 with A..Z as digits (0 -> A, 26 -> BA).
std::string char_from_number(std::size_t n) {
  if (n == 0) return "A";
  std::string s;
  while (n != 0) {
    s.insert(s.begin(), static_cast<char>('A' + n % 26));
    n /= 26;
  }
  return s;
}

// Python's repr of an {int: [int, ...]} dict.
std::string dict_repr(const IndexMap& m) {
  std::string s = "{";
  bool first = true;
  for (const auto& [out, ins] : m) {
    s += (first ? "" : ", ") + std::to_string(out) + ": [";
    for (std::size_t i = 0; i < ins.size(); ++i) s += (i ? ", " : "") + std::to_string(ins[i]);
    s += "]";
    first = false;
  }
  return s + "}";
}

// Names are printed as they are, except control characters (a newline would break the tree),
// which appear as Python escapes.
std::string printable(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

class Printer {
 public:
  Printer(const FunctionGraph& fg, const DprintOptions& opt) : fg_(fg), opt_(opt) {
    if (opt.id_type != "CHAR" && opt.id_type != "int" && !opt.id_type.empty())
      throw UserError("dprint id_type must be \"CHAR\", \"int\" or empty, not \"" + opt.id_type + "\"");
    if (opt.print_toposort) {
      auto order = fg.toposort();
      for (std::size_t i = 0; i < order.size(); ++i) topo_[order[i]] = i;
    }
  }

  std::string run() {
    for (const auto& out : fg_.outputs()) {
      PVar v{out.get()};
      note_inner_graph(v);
      print(v, Tree{"", "", true}, false);
    }
    if (inner_graph_vars_.empty()) return text_;
    text_ += "\nInner graphs:\n";
    std::vector<const void*> printed;
    // The list grows while it is walked (nested Composites), as in PyTensor.
    for (std::size_t k = 0; k < inner_graph_vars_.size(); ++k) {
      PVar ig = inner_graph_vars_[k];
      PNode node = *owner(ig);
      if (std::find(printed.begin(), printed.end(), node.key()) != printed.end()) continue;
      printed.push_back(node.key());
      if (const FunctionGraph* f = op_from_graph_inner(node)) {
        // An OpFromGraph: its inner graph's outputs, over inputs printed as i0, i1, ...
        text_ += "\n";
        print(ig, Tree{"", "", false}, true);
        for (const auto& out : f->outputs()) {
          PVar v{out.get()};
          note_inner_graph(v);
          print(v, Tree{" ← ", "   ", false}, false);
        }
        continue;
      }
      const CompositeGraph* g = inner_graph(node);
      text_ += "\n";
      print(ig, Tree{"", "", false}, true);
      for (int out : g->outputs()) {
        PVar v{nullptr, g, out};
        note_inner_graph(v);
        print(v, Tree{" ← ", "   ", false}, false);
      }
    }
    return text_;
  }

 private:
  // --- the two kinds of graph behind one interface

  std::optional<PNode> owner(const PVar& v) {
    if (v.var) {
      if (!v.var->owner()) return std::nullopt;
      return PNode{v.var->owner()};
    }
    const std::vector<int>& prod = producers(v.graph);
    int n = prod[static_cast<std::size_t>(v.value)];
    if (n < 0) return std::nullopt;
    return PNode{nullptr, v.graph, n};
  }

  // For each value of a Composite, the node computing it (-1 for inputs and constants).
  const std::vector<int>& producers(const CompositeGraph* g) {
    auto it = producers_.find(g);
    if (it != producers_.end()) return it->second;
    std::vector<int> prod(g->values().size(), -1);
    for (std::size_t n = 0; n < g->nodes().size(); ++n)
      for (int o : g->nodes()[n].outputs) prod[static_cast<std::size_t>(o)] = static_cast<int>(n);
    return producers_.emplace(g, std::move(prod)).first->second;
  }

  std::string op_str(const PNode& n) { return n.apply ? n.apply->op().str() : n.inner().op.str(); }

  int num_outputs(const PNode& n) {
    return n.apply ? n.apply->num_outputs() : static_cast<int>(n.inner().outputs.size());
  }

  int output_index(const PVar& v, const PNode& n) {
    if (v.var) return v.var->index();
    const auto& outs = n.inner().outputs;
    return static_cast<int>(std::find(outs.begin(), outs.end(), v.value) - outs.begin());
  }

  std::vector<PVar> inputs(const PNode& n) {
    std::vector<PVar> out;
    if (n.apply) {
      for (const auto& in : n.apply->inputs()) out.push_back(PVar{in.get()});
    } else {
      for (int v : n.inner().inputs) out.push_back(PVar{nullptr, n.graph, v});
    }
    return out;
  }

  IndexMap destroy_map(const PNode& n) { return n.apply ? n.apply->op().destroy_map() : IndexMap{}; }
  IndexMap view_map(const PNode& n) { return n.apply ? n.apply->op().view_map() : IndexMap{}; }

  // The Composite behind a node, if any: a nested Composite's, or one of the op's inner graphs
  // (ir/inner_graph.h: an Elemwise's or a CAReduce's scalar op).
  const CompositeGraph* inner_graph(const PNode& n) {
    if (!n.apply) {
      const ScalarOp& op = n.inner().op;
      return op.id() == ScalarOpId::Composite ? op.composite_graph().get() : nullptr;
    }
    for (const InnerGraphUse& use : n.apply->op().inner_graphs())
      if (const auto* c = dynamic_cast<const CompositeInnerGraph*>(use.graph.get())) return &c->composite();
    return nullptr;
  }

  // The inner graph of an OpFromGraph node (null for other nodes); its inputs become the
  // nominal i0, i1, ... PyTensor prints.
  const FunctionGraph* op_from_graph_inner(const PNode& n) {
    if (!n.apply) return nullptr;
    const auto* ofg = dynamic_cast<const OpFromGraph*>(&n.apply->op());
    if (!ofg) return nullptr;
    const FunctionGraph& f = ofg->inner_graph();
    for (std::size_t i = 0; i < f.inputs().size(); ++i) nominal_.emplace(f.inputs()[i].get(), i);
    return &f;
  }

  void note_inner_graph(const PVar& v) {
    auto node = owner(v);
    if (!node || (!inner_graph(*node) && !op_from_graph_inner(*node))) return;
    if (std::find(inner_graph_vars_.begin(), inner_graph_vars_.end(), v) == inner_graph_vars_.end())
      inner_graph_vars_.push_back(v);
  }

  std::string name_of(const PVar& v) { return v.var ? v.var->name() : std::string(); }

  std::string type_of(const PVar& v) {
    if (v.var) return v.var->type().str();
    return std::string(dtype_name(v.graph->values()[static_cast<std::size_t>(v.value)].dtype));
  }

  // str(var) of a leaf: a constant's value, an input's name, or "<type>"; i0.. inside a Composite.
  std::string leaf_str(const PVar& v) {
    if (!v.var) {
      if (v.value < v.graph->num_inputs()) return "i" + std::to_string(v.value);
      return constant_str(v.graph->values()[static_cast<std::size_t>(v.value)].constant);
    }
    if (auto it = nominal_.find(v.var); it != nominal_.end()) return "i" + std::to_string(it->second);
    if (v.var->type().kind == TypeKind::None) return "NoneConst{None}";
    if (v.var->is_constant() && v.var->type().kind == TypeKind::Rng)
      return v.var->name().empty() ? "Generator(PCG64)" : printable(v.var->name());
    if (v.var->is_constant()) return printable(constant_str(v.var->value(), v.var->name()));
    if (!v.var->name().empty()) return printable(v.var->name());
    return "<" + v.var->type().str() + ">";
  }

  // --- PyTensor's _debugprint

  std::string id_for(const void* key) {
    auto it = ids_.find(key);
    if (it != ids_.end()) return it->second;
    std::string id;
    if (opt_.id_type == "CHAR") id = "[id " + char_from_number(ids_.size()) + "]";
    else if (opt_.id_type == "int") id = "[id " + std::to_string(ids_.size()) + "]";
    ids_.emplace(key, id);
    return id;
  }

  // Where a line sits in its tree: the "last child?" flags from the root down, shared between
  // siblings, so that a deep graph costs memory linear in its depth (and no recursion).
  struct Branch {
    std::shared_ptr<const Branch> parent;
    bool last;
  };
  using Path = std::shared_ptr<const Branch>;

  // One tree: its root line's prefix and the prefix its children's lines build on.
  struct Tree {
    std::string root_prefix;
    std::string child_base;
    bool with_topo;
  };

  // PyTensor's prefix_child of the line at `path`: " │ " below a child that has later
  // siblings, "   " below a last child.
  static std::string child_prefix(const Tree& tree, const Path& path) {
    std::vector<bool> flags;
    for (const Branch* b = path.get(); b; b = b->parent.get()) flags.push_back(b->last);
    std::string s = tree.child_base;
    for (auto it = flags.rbegin(); it != flags.rend(); ++it) s += *it ? "   " : " │ ";
    return s;
  }

  static std::string line_prefix(const Tree& tree, const Path& path) {
    if (!path) return tree.root_prefix;
    return child_prefix(tree, path->parent) + (path->last ? " └─ " : " ├─ ");
  }

  // PyTensor's _debugprint, as a walk with an explicit stack (children in order).
  void print(const PVar& root, const Tree& tree, bool header) {
    struct Item {
      PVar var;
      Path path;  // null for the root
      int depth;
    };
    std::vector<Item> stack{{root, nullptr, opt_.depth}};
    while (!stack.empty()) {
      Item item = std::move(stack.back());
      stack.pop_back();
      if (item.path) note_inner_graph(item.var);  // as PyTensor does just before each child
      if (item.depth == 0) continue;
      std::vector<PVar> children = print_line(item.var, tree, item.path, header && !item.path);
      for (std::size_t i = children.size(); i-- > 0;)
        stack.push_back({children[i], std::make_shared<const Branch>(Branch{item.path, i + 1 == children.size()}),
                         item.depth - 1});
    }
  }

  // Prints the line(s) of one variable; returns the inputs to expand below it.
  std::vector<PVar> print_line(const PVar& var, const Tree& tree, const Path& path, bool header) {
    const std::string prefix = line_prefix(tree, path);
    const std::string type = opt_.print_type ? " <" + type_of(var) + ">" : "";
    auto node = owner(var);
    if (!node) {
      std::string id = id_for(var.key());
      text_ += prefix + leaf_str(var) + (id.empty() ? "" : " " + id) + type + "\n";
      return {};
    }
    const std::string name = name_of(var);
    IndexMap dm = destroy_map(*node), vm = view_map(*node);
    std::string d = opt_.print_destroy_map && !dm.empty() ? " d=" + dict_repr(dm) : "";
    std::string v = opt_.print_view_map && !vm.empty() ? " v=" + dict_repr(vm) : "";
    std::string o;
    if (tree.with_topo && node->apply && topo_.count(node->apply))
      o = " " + std::to_string(topo_.at(node->apply));
    if (opt_.print_origins && node->apply && node->apply->origins())
      o += " (from " + printable(origins_str(node->apply->origins())) + ")";
    const bool already_done = ids_.count(node->key()) != 0;
    std::string id = id_for(node->key());
    if (!id.empty()) id = " " + id;
    if (header) {
      text_ += prefix + op_str(*node) + id + d + v + o + "\n";
    } else {
      std::string idx = num_outputs(*node) == 1 ? "" : "." + std::to_string(output_index(var, *node));
      std::string quoted = name.empty() ? "" : " '" + printable(name) + "'";
      text_ += prefix + op_str(*node) + idx + id + type + quoted + d + v + o + "\n";
    }
    if (!already_done && !(opt_.stop_on_name && !name.empty())) return inputs(*node);
    if (!header) text_ += child_prefix(tree, path) + " └─ ···\n";
    return {};
  }

  const FunctionGraph& fg_;
  const DprintOptions& opt_;
  std::string text_;
  std::unordered_map<const void*, std::string> ids_;
  std::unordered_map<const Apply*, std::size_t> topo_;
  std::vector<PVar> inner_graph_vars_;
  std::unordered_map<const CompositeGraph*, std::vector<int>> producers_;
  std::unordered_map<const Variable*, std::size_t> nominal_;  ///< OpFromGraph inner inputs
};

// --- graphviz

// Appends one byte sequence of valid UTF-8 starting at s[i] (returns its length), or 0.
std::size_t utf8_sequence_length(const std::string& s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return 0;
  if (n == 2 && c < 0xc2) return 0;  // overlong
  return n;
}

// A dot double-quoted string whose label text shows `s` as it is: quotes and backslashes are
// escaped, a newline becomes a label line break, other control characters and bytes that are
// not UTF-8 appear as \xNN.
std::string dot_quote(const std::string& s) {
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = utf8_sequence_length(s, i);
    if (c == '"') {
      out += "\\\"";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (n == 0 || c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\\\x%02x", c);
      out += buf;
      n = 1;
    } else {
      out += s.substr(i, n);
    }
    i += n == 0 ? 1 : n;
  }
  return out + "\"";
}

std::string edge_label(const Variable& v) {
  std::string s;
  if (v.owner() && v.owner()->num_outputs() > 1) s += "out " + std::to_string(v.index()) + ": ";
  if (!v.name().empty() && v.owner()) s += v.name() + " ";
  if (!v.type().is_tensor()) return s + v.type().str();
  return s + std::string(dtype_name(v.dtype())) + " " + v.type().shape_str();
}

std::string leaf_label(const Variable& v) {
  if (v.type().kind == TypeKind::None) return "NoneConst{None}";
  if (v.is_constant() && v.type().kind == TypeKind::Rng && v.name().empty()) return "Generator(PCG64)";
  if (v.is_constant() && v.type().is_tensor()) return constant_str(v.value(), v.name());
  if (!v.name().empty()) return v.name();
  if (!v.file_id().empty()) return v.file_id();
  return "<" + v.type().str() + ">";
}

}  // namespace

std::string dprint(const FunctionGraph& fg, const DprintOptions& options) {
  return Printer(fg, options).run();
}

std::string graphviz_dot(const FunctionGraph& fg) {
  std::string out = "digraph " + dot_quote(fg.name()) + " {\n";
  out += "  node [fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\", fontsize=10];\n";
  std::unordered_map<const Variable*, std::string> leaf_ids;
  std::unordered_map<const Apply*, std::string> node_ids;
  auto leaf = [&](const Variable* v) {
    auto it = leaf_ids.find(v);
    if (it != leaf_ids.end()) return it->second;
    std::string id = (v->is_constant() ? "c" : "in") + std::to_string(leaf_ids.size());
    out += "  " + id + " [label=" + dot_quote(leaf_label(*v)) + ", shape=ellipse" +
           (v->is_constant() ? ", style=dashed" : "") + "];\n";
    return leaf_ids.emplace(v, id).first->second;
  };
  auto source = [&](const Variable* v) { return v->owner() ? node_ids.at(v->owner()) : leaf(v); };
  for (const auto& in : fg.inputs()) leaf(in.get());
  std::size_t n = 0;
  for (Apply* node : fg.toposort()) {
    std::string id = "n" + std::to_string(n++);
    node_ids[node] = id;
    out += "  " + id + " [label=" + dot_quote(node->op().str()) + ", shape=box];\n";
    // Each edge says which input it is ("1 float64 (?,)"): the order matters (x - y), and
    // the drawing does not show it.
    for (int k = 0; k < node->num_inputs(); ++k) {
      const Variable* in = node->input(k).get();
      out += "  " + source(in) + " -> " + id + " [label=" + dot_quote(std::to_string(k) + " " + edge_label(*in)) + "];\n";
    }
  }
  for (std::size_t i = 0; i < fg.outputs().size(); ++i) {
    const Variable* v = fg.outputs()[i].get();
    std::string name = i < fg.output_names().size() && !fg.output_names()[i].empty()
                           ? fg.output_names()[i]
                           : !v->name().empty() ? v->name() : "output " + std::to_string(i);
    std::string id = "out" + std::to_string(i);
    out += "  " + id + " [label=" + dot_quote(name) + ", shape=ellipse, style=bold];\n";
    out += "  " + source(v) + " -> " + id + " [label=" + dot_quote(edge_label(*v)) + "];\n";
  }
  return out + "}\n";
}

}  // namespace kiln
