// BLAS: Dot of matrices and vectors becomes the BLAS forms (Gemv, Dot22 / Gemm, Ger) that the
// C++ backend calls through CBLAS, absorbing scalings and additions into them:
// a*(X@b) + y is one gemv; transposed operands stay views (the backend passes CblasTrans).
#pragma once

#include "rewrite/rewriter.h"

namespace kiln {

/// The BLAS rules (tag "blas").
std::vector<NodeRewrite> blas_rules();

}  // namespace kiln
