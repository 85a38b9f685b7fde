// Every emitter of the C++ backend (one codegen/cpp/emit_<family>.cpp per op family).
#pragma once

#include "codegen/cpp/backend.h"

namespace kiln {

std::string emit_elemwise(const NodeEmitContext& c);
std::string emit_dimshuffle(const NodeEmitContext& c);
std::string emit_shape(const NodeEmitContext& c);
std::string emit_shape_i(const NodeEmitContext& c);
std::string emit_subtensor(const NodeEmitContext& c);
std::string emit_inc_subtensor(const NodeEmitContext& c);
std::string emit_advanced_subtensor1(const NodeEmitContext& c);
std::string emit_advanced_inc_subtensor1(const NodeEmitContext& c);

/// Shape-building ops (emit_shape_ops.cpp).
std::string emit_reshape(const NodeEmitContext& c);
std::string emit_specify_shape(const NodeEmitContext& c);
std::string emit_alloc(const NodeEmitContext& c);
std::string emit_alloc_empty(const NodeEmitContext& c);
std::string emit_make_vector(const NodeEmitContext& c);
std::string emit_join(const NodeEmitContext& c);
std::string emit_split(const NodeEmitContext& c);
std::string emit_arange(const NodeEmitContext& c);
std::string emit_eye_like(const NodeEmitContext& c);
std::string emit_extract_diag(const NodeEmitContext& c);
std::string emit_alloc_diag(const NodeEmitContext& c);
std::string emit_check_and_raise(const NodeEmitContext& c);

}  // namespace kiln
