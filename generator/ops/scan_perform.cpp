// Scan.perform on the reference evaluator: PyTensor's loop (pytensor/scan/op.py, Scan.perform),
// written for clarity — each step evaluates the inner graph on copies of the taps it reads, and
// the values it returns are copied into the circular buffers afterwards. Every bound PyTensor
// relies on NumPy to check (sequence lengths, buffer lengths, shapes written into a buffer) is a
// RuntimeFailure naming the scan input or output involved.
#include <algorithm>

#include "ir/error.h"
#include "ir/graph_runner.h"
#include "ops/array_util.h"
#include "ops/scan.h"

namespace kiln {

namespace {

// a[begin:end] along the leading dimension (a view).
Array rows(const Array& a, std::int64_t begin, std::int64_t end) {
  Shape shape = a.shape();
  shape[0] = end - begin;
  return a.view(shape, a.strides(), begin * a.strides()[0]);
}


[[noreturn]] void fail(const std::string& msg) { throw RuntimeFailure("Scan: " + msg); }

// Python's a % b for b > 0.
std::int64_t wrap(std::int64_t a, std::int64_t b) { return ((a % b) + b) % b; }

// Copies `value` into buffer row `at`, refusing a value of another shape.
void store_row(Array& buffer, std::int64_t at, const Array& value, const std::string& what, std::int64_t step) {
  Array dst = row_view(buffer, at);
  if (value.shape() != dst.shape())
    fail(what + " has shape " + shape_str(value.shape()) + " at step " + std::to_string(step) +
         " but its buffer holds rows of shape " + shape_str(dst.shape()) + " (an output of the Scan has changed shape)");
  value.copy_into(dst);
}

// The end of Scan.perform: a buffer that wrapped around is rotated so its oldest row comes
// first; one that was not filled (a while-loop that stopped, or a longer buffer) is zeroed past
// the rows written, and shortened when the loop stopped before n_steps.
Array finish_buffer(Array buffer, std::int64_t pos, std::int64_t steps_done, std::int64_t n_steps, std::int64_t min_tap) {
  const std::int64_t store = buffer.shape(0), filled = steps_done - min_tap;
  if (store < filled && pos < store) {
    Array rotated = Array::empty(buffer.dtype(), buffer.shape());
    Array tail = rows(buffer, pos, store), head = rows(buffer, 0, pos);
    Array to_front = rows(rotated, 0, store - pos), to_back = rows(rotated, store - pos, store);
    tail.copy_into(to_front);
    head.copy_into(to_back);
    return rotated;
  }
  if (store > filled) {
    Array unused = rows(buffer, filled, store);
    Array zeros = Array::zeros(buffer.dtype(), unused.shape());
    zeros.copy_into(unused);
    // buffer[:-(n_steps - steps_done)], empty when that removes every row (Python's slicing).
    if (steps_done < n_steps) return rows(buffer, 0, std::max<std::int64_t>(0, store - (n_steps - steps_done))).copy();
  }
  return buffer;
}

std::int64_t as_int64(const Array& a) {
  std::int64_t v = 0;
  visit_dtype(a.dtype(), [&](auto x) {
    using T = decltype(x);
    if constexpr (std::is_integral_v<T>) v = static_cast<std::int64_t>(*static_cast<const T*>(a.data()));
  });
  return v;
}

bool nonzero(const Array& a) {
  bool t = false;
  visit_dtype(a.dtype(), [&](auto x) {
    using T = decltype(x);
    if constexpr (std::is_arithmetic_v<T>) t = *static_cast<const T*>(a.data()) != T(0);
  });
  return t;
}

}  // namespace

void Scan::perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  const ScanInfo& in = info_;
  const std::int64_t n_steps = as_int64(inputs[0]);
  if (n_steps < 0) fail("was asked to run for a negative number of steps (" + std::to_string(n_steps) + ")");
  for (int s = 0; s < in.n_seqs; ++s) {
    const Array& seq = inputs[static_cast<std::size_t>(in.seqs_begin() + s)];
    if (seq.shape(0) < n_steps)
      fail("sequence " + std::to_string(s) + " has " + std::to_string(seq.shape(0)) + " rows but the scan runs " +
           std::to_string(n_steps) + " steps");
  }
  // The buffers: copies of the tap buffers given (initial taps included), nit-sot buffers of the
  // lengths given (allocated at step 0, once a row's shape is known).
  const int n_buffers = in.n_tap_outs() + in.n_nit_sot;
  std::vector<Array> buffers(static_cast<std::size_t>(n_buffers));
  std::vector<std::int64_t> store(static_cast<std::size_t>(n_buffers)), pos(store.size());
  for (int k = 0; k < n_buffers; ++k) {
    const auto kk = static_cast<std::size_t>(k);
    if (k < in.n_tap_outs()) {
      buffers[kk] = inputs[static_cast<std::size_t>(in.tap_buffers_begin() + k)].copy();
      store[kk] = buffers[kk].shape(0);
    } else {
      store[kk] = as_int64(inputs[static_cast<std::size_t>(in.nit_sot_lengths_begin() + k - in.n_tap_outs())]);
      if (store[kk] < 0) fail("nit-sot " + std::to_string(k - in.n_tap_outs()) + " was given a negative length (" +
                              std::to_string(store[kk]) + ")");
    }
    if (n_steps == 0) continue;
    const std::int64_t need = k < in.n_mit_mot() ? 1 : std::max<std::int64_t>(1, -in.min_tap(k));
    if (store[kk] < need)
      fail((k < in.n_tap_outs() ? "the buffer of tap output " + std::to_string(k) + " (input " +
                                      std::to_string(in.tap_buffers_begin() + k) + ")"
                                : "nit-sot " + std::to_string(k - in.n_tap_outs())) +
           " has " + std::to_string(store[kk]) + " rows but must hold at least " + std::to_string(need) +
           " (its oldest tap is " + std::to_string(in.min_tap(k)) + ")");
    pos[kk] = wrap(-in.min_tap(k), store[kk]);
  }
  std::vector<Array> untraced;
  for (int j = 0; j < in.n_untraced_sit_sot; ++j) untraced.push_back(inputs[static_cast<std::size_t>(in.untraced_begin() + j)]);

  std::vector<Array> step_inputs(static_cast<std::size_t>(in.n_inner_inputs()));
  for (int j = 0; j < in.n_non_seqs; ++j)
    step_inputs[static_cast<std::size_t>(in.inner_non_seqs_begin() + j)] = inputs[static_cast<std::size_t>(in.non_seqs_begin() + j)];
  std::int64_t i = 0;
  for (bool go_on = true; i < n_steps && go_on; ++i) {
    for (int s = 0; s < in.n_seqs; ++s) step_inputs[static_cast<std::size_t>(s)] = row_view(inputs[static_cast<std::size_t>(in.seqs_begin() + s)], i);
    for (int k = 0; k < in.n_tap_outs(); ++k) {
      const auto kk = static_cast<std::size_t>(k);
      const ScanInfo::Taps& taps = in.taps(k);
      for (std::size_t t = 0; t < taps.size(); ++t)
        step_inputs[static_cast<std::size_t>(in.inner_tap_input(k, static_cast<int>(t)))] =
            row_view(buffers[kk], wrap(pos[kk] + taps[t], store[kk])).copy();
    }
    for (int j = 0; j < in.n_untraced_sit_sot; ++j)
      step_inputs[static_cast<std::size_t>(in.inner_untraced_begin() + j)] = untraced[static_cast<std::size_t>(j)];

    std::vector<Array> results;
    try {
      results = run_graph(*inner_, step_inputs);
    } catch (const RuntimeFailure& e) {
      throw RuntimeFailure("Scan: step " + std::to_string(i) + ": " + e.what());
    }
    if (in.as_while) go_on = !nonzero(results[static_cast<std::size_t>(in.inner_condition())]);

    int written = 0;  // mit-mot outputs: each written tap at pos + tap
    for (int k = 0; k < in.n_mit_mot(); ++k) {
      const auto kk = static_cast<std::size_t>(k);
      for (std::int64_t tap : in.mit_mot_out_slices[kk]) {
        const std::int64_t at = pos[kk] + tap;
        if (at < 0 || at >= store[kk])
          fail("mit-mot " + std::to_string(k) + " writes tap " + std::to_string(tap) + " at step " + std::to_string(i) +
               ", past the end of its buffer of " + std::to_string(store[kk]) + " rows");
        store_row(buffers[kk], at, results[static_cast<std::size_t>(written++)], "mit-mot " + std::to_string(k), i);
      }
    }
    for (int k = in.n_mit_mot(); k < n_buffers; ++k) {
      const auto kk = static_cast<std::size_t>(k);
      const Array& value = results[static_cast<std::size_t>(in.inner_output_of(k))];
      if (k >= in.n_tap_outs() && i == 0) {
        Shape shape{store[kk]};
        shape.insert(shape.end(), value.shape().begin(), value.shape().end());
        buffers[kk] = Array::empty(node.output(k)->dtype(), shape);
      }
      const std::string what = k < in.n_tap_outs() ? "output " + std::to_string(k) : "nit-sot " + std::to_string(k - in.n_tap_outs());
      store_row(buffers[kk], pos[kk], value, what, i);
    }
    for (int j = 0; j < in.n_untraced_sit_sot; ++j)
      untraced[static_cast<std::size_t>(j)] = results[static_cast<std::size_t>(in.inner_untraced_outs_begin() + j)];
    for (int k = 0; k < n_buffers; ++k) {
      const auto kk = static_cast<std::size_t>(k);
      pos[kk] = (pos[kk] + 1) % store[kk];
    }
  }

  if (n_steps == 0) {
    // Scan.perform's empty nit-sot outputs: every dimension of length 0.
    for (int k = in.n_tap_outs(); k < n_buffers; ++k)
      buffers[static_cast<std::size_t>(k)] = Array::empty(node.output(k)->dtype(), Shape(static_cast<std::size_t>(node.output(k)->ndim()), 0));
  } else {
    for (int k = in.n_mit_mot(); k < n_buffers; ++k) {
      const auto kk = static_cast<std::size_t>(k);
      buffers[kk] = finish_buffer(buffers[kk], pos[kk], i, n_steps, in.min_tap(k));
    }
  }
  for (int k = 0; k < n_buffers; ++k) outputs[static_cast<std::size_t>(k)] = buffers[static_cast<std::size_t>(k)];
  for (int j = 0; j < in.n_untraced_sit_sot; ++j)
    outputs[static_cast<std::size_t>(in.untraced_outs_begin() + j)] = untraced[static_cast<std::size_t>(j)];
}

}  // namespace kiln
