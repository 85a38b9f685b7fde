// Linear algebra (PyTensor's slinalg/nlinalg, pytensor.tensor.linalg in 3.x): every op family of
// generator/ops/linalg/ and their builders, in one include.
//
// Each op is a LinalgOp with a gufunc signature, so it also runs as a Blockwise core op over
// leading batch dimensions; the builders return the core op for plain matrices and a Blockwise
// otherwise. Values are SciPy's/NumPy's (LAPACK through kiln/runtime/linalg_kernels.hpp), output
// dtypes PyTensor 3.x's linalg_output_dtype, gradients PyTensor's.
#pragma once

#include "ops/linalg/factorizations.h"
#include "ops/linalg/linalg_common.h"
#include "ops/linalg/matrix_functions.h"
#include "ops/linalg/eigen_svd.h"
#include "ops/linalg/solves.h"
#include "ops/linalg/structure.h"
