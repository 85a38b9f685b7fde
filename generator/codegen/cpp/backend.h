// The cpp backend: C++17 for the CPU with OpenMP threads, SLEEF's vector math and CBLAS, as one
// entry of the backend registry (codegen/backend.h). Adding an op to it is one emitter
// (templates/cpp/ops/*.mustache plus a short function in codegen/cpp/emit_*.cpp, declared in
// emitters.h) and one line in backend.cpp's table. Emitters get a NodeEmitContext
// (codegen/emit_context.h) and spell types with codegen/c_types.h.
#pragma once

#include <memory>
#include <vector>

#include "codegen/backend.h"
#include "codegen/c_types.h"
#include "codegen/emit_context.h"

namespace kiln {

/// The op -> emitter table: {op name, emitter, output 0 is a view of input 0, calls BLAS}.
const std::vector<OpEmitter>& cpp_backend_table();

/// The cpp backend, as the registry holds it.
std::shared_ptr<const Backend> make_cpp_backend();

}  // namespace kiln
