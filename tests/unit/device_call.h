// Calling a graph of a GPU library (opencl, cuda) on host arrays, as the device harnesses do:
// inputs uploaded keeping their layout, the graph called with library-allocated device outputs
// or, `into`, output_shapes then call_into device buffers, outputs downloaded.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "compiled.h"
#include "kiln/kiln.h"
#include "kiln/runtime/array.hpp"

#ifdef KILN_TEST_OPENCL
#include "kiln/opencl.hpp"
#endif

namespace kiln::testing {

/// `device` is the backend's side, for one context: `bool attach(kiln_context*)` (false when
/// the context has no device: the call then runs without inputs and fails with the reason),
/// `upload(const Array&)` and `empty(DLDataType, shape)` (device tensors owning their memory,
/// with a `dl` member) and `Array download(const DLTensor&)`.
template <typename Device>
CallResult call_on_device(const kiln_graph_info& info, const std::vector<Array>& inputs, bool into, Device& device) {
  CallResult r;
  kiln_context* ctx = info.context_create();
  REQUIRE(ctx);
  using Owned = decltype(device.upload(inputs.front()));
  std::vector<Owned> owned;
  std::vector<DLTensor> dl;
  if (device.attach(ctx)) {
    for (const auto& a : inputs) {
      owned.push_back(device.upload(a));
      dl.push_back(owned.back().dl);
    }
  }
  if (dl.empty()) dl.resize(1);
  if (!into) {
    std::vector<DLManagedTensor*> outs(static_cast<std::size_t>(info.num_outputs) + 1, nullptr);
    r.status = info.call(ctx, dl.data(), outs.data());
    for (int32_t k = 0; r.status == KILN_OK && k < info.num_outputs; ++k) {
      DLManagedTensor* m = outs[static_cast<std::size_t>(k)];
      r.outputs.push_back(device.download(m->dl_tensor));
      m->deleter(m);
    }
  } else {
    std::size_t total = 0;
    for (int32_t k = 0; k < info.num_outputs; ++k) total += static_cast<std::size_t>(info.outputs[k].ndim);
    std::vector<int64_t> shapes(total + 1);
    r.status = info.output_shapes(ctx, dl.data(), shapes.data());
    if (r.status == KILN_OK) {
      std::vector<Owned> outs;
      std::vector<DLTensor> out_dl;
      std::size_t pos = 0;
      for (int32_t k = 0; k < info.num_outputs; ++k) {
        const std::size_t nd = static_cast<std::size_t>(info.outputs[k].ndim);
        std::vector<int64_t> shape(shapes.begin() + static_cast<std::ptrdiff_t>(pos),
                                   shapes.begin() + static_cast<std::ptrdiff_t>(pos + nd));
        pos += nd;
        outs.push_back(device.empty(to_dlpack(static_cast<DType>(info.outputs[k].dtype)), shape));
        out_dl.push_back(outs.back().dl);
      }
      if (out_dl.empty()) out_dl.resize(1);
      r.status = info.call_into(ctx, dl.data(), out_dl.data());
      for (int32_t k = 0; r.status == KILN_OK && k < info.num_outputs; ++k)
        r.outputs.push_back(device.download(out_dl[static_cast<std::size_t>(k)]));
    }
  }
  r.error = info.context_last_error(ctx);
  info.context_destroy(ctx);
  return r;
}

#ifdef KILN_TEST_OPENCL
/// The opencl side of call_on_device: the context's queue (NAME_opencl_queue), kiln/opencl.hpp's
/// uploads and downloads, and the scatter mode set first when `scatter_mode` >= 0
/// (NAME_context_set_scatter_mode; 1 atomic).
struct OpenclSide {
  const Library& so;
  std::string name;
  int scatter_mode = -1;
  cl_command_queue queue = nullptr;

  bool attach(kiln_context* ctx) {
    using QueueFn = cl_command_queue (*)(kiln_context*);
    auto queue_of = reinterpret_cast<QueueFn>(so.symbol(name + "_opencl_queue"));
    const bool exported = queue_of != nullptr;
    REQUIRE_MESSAGE(exported, name << "_opencl_queue is not exported");
    if (scatter_mode >= 0) {
      using ModeFn = int32_t (*)(kiln_context*, int32_t);
      auto set_mode = reinterpret_cast<ModeFn>(so.symbol(name + "_context_set_scatter_mode"));
      const bool has_mode = set_mode != nullptr;
      REQUIRE_MESSAGE(has_mode, name << "_context_set_scatter_mode is not exported");
      REQUIRE(set_mode(ctx, scatter_mode) == KILN_OK);
    }
    queue = queue_of(ctx);
    return queue != nullptr;
  }
  opencl::DeviceTensor upload(const Array& a) { return opencl::to_device(queue, a.dltensor()); }
  opencl::DeviceTensor empty(DLDataType dtype, const std::vector<int64_t>& shape) {
    return opencl::empty(queue, dtype, shape);
  }
  Array download(const DLTensor& t) {
    Array a = Array::zeros(*from_dlpack(t.dtype), Shape(t.shape, t.shape + t.ndim));
    opencl::to_host(queue, t, a.data());
    return a;
  }
};

/// Runs graph `name` of an opencl library on host arrays, with the scatter mode set first when
/// `scatter_mode` >= 0.
inline CallResult call_opencl_in_mode(const Library& so, const std::string& name, const std::vector<Array>& inputs,
                                      bool into, int scatter_mode) {
  OpenclSide side{so, name, scatter_mode};
  return call_on_device(so.graph(name), inputs, into, side);
}

/// Runs graph `name` of an opencl library on host arrays (a FixtureCall).
inline CallResult call_opencl(const Library& so, const std::string& name, const std::vector<Array>& inputs, bool into) {
  return call_opencl_in_mode(so, name, inputs, into, -1);
}
#endif

}  // namespace kiln::testing
