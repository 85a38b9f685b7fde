// Scan: PyTensor's loop op (pytensor/scan/op.py), one node holding its step function as an inner
// graph. The outer inputs are, in order: n_steps, sequences, mit-mot buffers, mit-sot buffers,
// sit-sot buffers, untraced sit-sot initial values ("shared outputs" before PyTensor 3.0), nit-sot
// buffer lengths, non-sequences. The inner graph's inputs are the step's sequence elements, the
// taps read from each mit-mot/mit-sot/sit-sot buffer, the untraced states and the non-sequences;
// its outputs the mit-mot taps written, one value per mit-sot, sit-sot and nit-sot, the new
// untraced states, and (as_while) the stop condition. The outer outputs are the mit-mot, mit-sot,
// sit-sot and nit-sot buffers — each the whole buffer, initial taps included, as PyTensor's op
// returns it (scan() then slices the taps off with a Subtensor) — then the final untraced states.
//
// Buffers are circular as in Scan.perform: step i reads tap t at (pos + t) mod length, writes at
// pos, pos starting at -min(taps) mod length; at the end a wrapped buffer is rotated so that the
// oldest entry comes first, and a while-loop that stopped early returns shortened buffers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/fgraph.h"
#include "ir/op.h"
#include "ops/props.h"

namespace kiln {

/// PyTensor's ScanInfo (3.0 field names; 2.x's n_shared_outs is n_untraced_sit_sot).
struct ScanInfo {
  using Taps = std::vector<std::int64_t>;
  int n_seqs = 0;
  std::vector<Taps> mit_mot_in_slices;
  std::vector<Taps> mit_mot_out_slices;
  std::vector<Taps> mit_sot_in_slices;
  std::vector<Taps> sit_sot_in_slices;
  int n_nit_sot = 0;
  int n_untraced_sit_sot = 0;
  int n_non_seqs = 0;
  bool as_while = false;

  int n_mit_mot() const { return static_cast<int>(mit_mot_in_slices.size()); }
  int n_mit_sot() const { return static_cast<int>(mit_sot_in_slices.size()); }
  int n_sit_sot() const { return static_cast<int>(sit_sot_in_slices.size()); }
  /// Buffers read through taps: mit-mot, mit-sot, sit-sot (PyTensor's n_tap_outs).
  int n_tap_outs() const { return n_mit_mot() + n_mit_sot() + n_sit_sot(); }
  /// The taps of tap output `k` (mit-mot, then mit-sot, then sit-sot).
  const Taps& taps(int k) const;
  /// The oldest tap of tap output `k` (0 for a nit-sot, k >= n_tap_outs()).
  std::int64_t min_tap(int k) const;
  int n_mit_mot_outs() const;

  // Outer input positions.
  int seqs_begin() const { return 1; }
  int tap_buffers_begin() const { return 1 + n_seqs; }
  int untraced_begin() const { return tap_buffers_begin() + n_tap_outs(); }
  int nit_sot_lengths_begin() const { return untraced_begin() + n_untraced_sit_sot; }
  int non_seqs_begin() const { return nit_sot_lengths_begin() + n_nit_sot; }
  int n_outer_inputs() const { return non_seqs_begin() + n_non_seqs; }
  // Outer output positions: tap buffers, nit-sot buffers, untraced states.
  int nit_sot_outs_begin() const { return n_tap_outs(); }
  int untraced_outs_begin() const { return n_tap_outs() + n_nit_sot; }
  int n_outer_outputs() const { return untraced_outs_begin() + n_untraced_sit_sot; }
  // Inner input positions.
  int inner_taps_begin() const { return n_seqs; }
  /// Inner input of tap `j` of tap output `k`.
  int inner_tap_input(int k, int j) const;
  int inner_untraced_begin() const;
  int inner_non_seqs_begin() const { return inner_untraced_begin() + n_untraced_sit_sot; }
  int n_inner_inputs() const { return inner_non_seqs_begin() + n_non_seqs; }
  // Inner output positions: mit-mot taps written, one per mit-sot/sit-sot/nit-sot, untraced, cond.
  /// Inner output of mit-sot/sit-sot/nit-sot output k (n_mit_mot() <= k < untraced_outs_begin()).
  int inner_output_of(int k) const { return n_mit_mot_outs() + k - n_mit_mot(); }
  int inner_untraced_outs_begin() const { return n_mit_mot_outs() + n_mit_sot() + n_sit_sot() + n_nit_sot; }
  int inner_condition() const { return inner_untraced_outs_begin() + n_untraced_sit_sot; }
  int n_inner_outputs() const { return inner_condition() + (as_while ? 1 : 0); }

  /// The info as written in graph files (PyTensor 3.0's field names).
  Json to_json() const;
};

class Scan : public Op {
 public:
  /// `inner` must have info.n_inner_inputs() inputs and info.n_inner_outputs() outputs whose
  /// types agree with the taps (scan_layout_error says why not); `label` is the `name` prop.
  Scan(ScanInfo info, std::shared_ptr<const FunctionGraph> inner, std::int64_t truncate_gradient = -1,
       std::string label = "scan_fn");

  const ScanInfo& info() const { return info_; }
  const FunctionGraph& inner_graph() const { return *inner_; }
  const std::shared_ptr<const FunctionGraph>& inner_graph_ptr() const { return inner_; }
  std::int64_t truncate_gradient() const { return truncate_gradient_; }
  const std::string& label() const { return label_; }

  std::string_view name() const override { return "Scan"; }
  /// {"info", "truncate_gradient", "name"}; the graph writer adds "inner" (io/graph_save.cpp),
  /// and equality compares the step function through structure_key().
  Json props() const override;
  std::string structure_key() const override;
  /// PyTensor's form: "Scan{name, while_loop=False, inplace=none}".
  std::string str() const override;
  /// Untraced states and non-sequences may be of any kind (an rng); the rest are tensors.
  bool accepts_kind(int index, TypeKind kind) const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  /// Scan.perform's loop on the reference evaluator (ops/scan_perform.cpp).
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  /// Without running the loop where its lengths do not depend on it (not a while loop): a tap
  /// output (mit-mot included) has its buffer's shape, an untraced state its input's, a nit-sot
  /// the requested length and the step output's shape (all 0 for no steps) when the step's
  /// infer_shape gives it from the outer inputs' shapes and non-sequences alone; otherwise the
  /// node's own Shape_i (the shape function then runs the Scan).
  std::vector<ShapeVars> infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const override;
  /// The same loop over batched values (ops/scan_vectorize.cpp): data inputs broadcast to every
  /// batch dimension, the step function batched by vectorize_graph. n_steps and nit-sot lengths
  /// must not be batched; while-loops and mit-mot are refused (cannot_vectorize).
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;
  /// The step function (not the node's body: its outputs are not the node's outputs).
  std::vector<InnerGraphUse> inner_graphs() const override;
  /// PyTensor's backward scan, built as another Scan over the reversed steps whose tap-buffer
  /// adjoints are sit-sot windows (grad/scan_grad.cpp); truncate_gradient=k goes back over the
  /// last k steps, as PyTensor. mit-mot and a step gradient through untraced states are refused
  /// naming the node.
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;

 private:
  ScanInfo info_;
  std::shared_ptr<const FunctionGraph> inner_;
  std::int64_t truncate_gradient_;
  std::string label_;
};

/// The Scan node, when `node` is one (null otherwise, and for a null node).
const Scan* scan_op(const Apply* node);

/// Why `inner` cannot be the step function of a scan with `info` (input/output counts, taps of
/// one buffer with different types, outputs whose dtype or rank differ from their taps' inputs,
/// a non-scalar condition); empty when it can.
std::string scan_layout_error(const ScanInfo& info, const FunctionGraph& inner);

/// Graph-file factory (registered in ops/op_table.cpp): props `info` (ScanInfo's fields; PyTensor
/// 2.x's `n_shared_outs` is read as `n_untraced_sit_sot`), `inner`, `truncate_gradient` (default
/// -1), `name`; `mode` and `allow_gc` are accepted and ignored.
OpPtr scan_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
