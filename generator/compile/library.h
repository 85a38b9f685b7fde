// kiln as a library, in one include (installed as <kiln/compiler.h> with the kiln::compiler
// CMake target): build graphs with the numpy-like builder API, differentiate them (grad,
// jacobian, hessian, Lop, Rop), batch them (vectorize_graph), load and save graph files,
// evaluate them with the reference evaluator, rewrite, print, and compile them into libraries
// that kiln/loader.hpp loads. samples/cpp-api/ shows a program using it.
#pragma once

#include "api/elementwise.h"
#include "api/graph_builder.h"
#include "api/special.h"
#include "compile/compile.h"
#include "eval/evaluator.h"
#include "grad/grad.h"
#include "io/graph_load.h"
#include "io/graph_save.h"
#include "kiln/loader.hpp"
#include "ops/advanced_subtensor.h"
#include "ops/alloc.h"
#include "ops/assert.h"
#include "ops/blockwise.h"
#include "ops/constant.h"
#include "ops/cumulative.h"
#include "ops/diag.h"
#include "ops/dimshuffle.h"
#include "ops/dot.h"
#include "ops/join.h"
#include "ops/reduce.h"
#include "ops/reshape.h"
#include "ops/shape.h"
#include "ops/softmax.h"
#include "ops/subtensor.h"
#include "print/dprint.h"
#include "rewrite/pipeline.h"
#include "transform/replace.h"
#include "transform/vectorize.h"
