// Scan::vectorize (PyTensor's _vectorize_node for a Scan): the same loop over batched values.
// Every data input gets all the batch dimensions (broadcast where an input lacks some); the
// step function is batched by vectorize_graph with each inner input carrying them in front; the
// sequences and tap buffers have their step dimension moved in front of the batch dimensions so
// the loop still walks it, and the outputs have it moved back behind them.
#include "ops/alloc.h"
#include "ops/batching.h"
#include "ops/dimshuffle.h"
#include "ops/scan.h"
#include "ops/shape.h"
#include "transform/vectorize.h"

namespace kiln {

std::optional<VarList> Scan::vectorize(const Apply& node, const VarList& batched_inputs) const {
  const ScanInfo& in = info_;
  const std::vector<int> batch = batch_dims(node, batched_inputs);
  const int nb = max_batch_dims(batch);
  if (batch[0] != 0) cannot_vectorize(node, "n_steps must not be batched");
  for (int j = 0; j < in.n_nit_sot; ++j)
    if (batch[static_cast<std::size_t>(in.nit_sot_lengths_begin() + j)] != 0)
      cannot_vectorize(node, "a nit-sot length must not be batched");
  if (in.as_while) cannot_vectorize(node, "a while-loop would stop at a different step for each batch element");
  if (in.n_mit_mot() > 0) cannot_vectorize(node, "mit-mot buffers are not batched yet");

  // The data inputs (all but n_steps and the nit-sot lengths), with every batch dimension.
  std::vector<int> data;
  for (int i = 1; i < in.n_outer_inputs(); ++i)
    if (i < in.nit_sot_lengths_begin() || i >= in.non_seqs_begin()) data.push_back(i);
  VarList xs;
  std::vector<int> xs_batch;
  for (int i : data) {
    if (!batched_inputs[static_cast<std::size_t>(i)]->type().is_tensor())
      cannot_vectorize(node, "input " + std::to_string(i) + " is not a tensor (an rng state)");
    xs.push_back(batched_inputs[static_cast<std::size_t>(i)]);
    xs_batch.push_back(batch[static_cast<std::size_t>(i)]);
  }
  const VarList full = with_full_batch(xs, xs_batch, nb);
  VarList outer = batched_inputs;
  for (std::size_t d = 0; d < data.size(); ++d) {
    const int i = data[d];
    const bool stepped = i < in.untraced_begin();  // a sequence or a tap buffer: (batch..., steps, ...)
    outer[static_cast<std::size_t>(i)] = stepped ? move_axis(full[d], nb, 0) : full[d];
  }

  // The step function with nb batch dimensions in front of every inner input.
  const FunctionGraph& step = *inner_;
  if (step.inputs().empty()) cannot_vectorize(node, "its step function takes no inputs");
  VarList inner_in;
  Replacements replace;
  for (const Var& v : step.inputs()) {
    Shape shape(static_cast<std::size_t>(nb), kUnknownLength);
    shape.insert(shape.end(), v->type().shape.begin(), v->type().shape.end());
    inner_in.push_back(make_input(TensorType(v->dtype(), shape), v->name()));
    replace.emplace_back(v, inner_in.back());
  }
  VarList inner_out = vectorize_graph(step.outputs(), replace);
  for (std::size_t o = 0; o < inner_out.size(); ++o) {
    const Var& core = step.outputs()[o];
    if (inner_out[o]->ndim() == core->ndim() + nb) continue;
    // An output that depends on no input: broadcast over the batch dimensions.
    std::vector<IntArg> lengths;
    for (int d = 0; d < nb; ++d) lengths.emplace_back(shape_i(inner_in[0], d));
    for (int d = 0; d < core->ndim(); ++d) lengths.emplace_back(shape_i(inner_out[o], d));
    inner_out[o] = alloc(inner_out[o], IntList(lengths));
  }
  auto batched_step = std::make_shared<FunctionGraph>(inner_in, inner_out, step.name());
  VarList outs = make_node(std::make_shared<Scan>(in, batched_step, truncate_gradient_, label_), outer)->outputs();
  for (int k = 0; k < in.untraced_outs_begin(); ++k)
    outs[static_cast<std::size_t>(k)] = move_axis(outs[static_cast<std::size_t>(k)], 0, nb);
  return outs;
}

}  // namespace kiln
