// "plain": a second backend that lives in the tests, to prove the backend seam. Plain C++ with
// no OpenMP, no vector math and no BLAS: one strided loop per Elemwise node and a sequential
// CumOp scan (its own templates, tests/backend/templates/), the cpp backend's emitters for the
// views it reuses (DimShuffle, Shape, Shape_i), the shared host code, lowering and runtime.
// Every other op kind is declared unsupported, with the reason.
#pragma once

#include <string>
#include <vector>

namespace kiln::testing {

/// Registers the plain backend under the name "plain" (once; later calls do nothing).
void register_plain_backend();

/// The op names (Op::name()) the plain backend implements.
std::vector<std::string> plain_backend_ops();

}  // namespace kiln::testing
