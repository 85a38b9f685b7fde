// The builder API's elementwise operators and functions on Vars (x + y, exp(x), where, cast,
// ...). They live beside the ops (ops/math.h) so that ops can build gradient graphs with them;
// programs building graphs include this header or api/graph_builder.h.
#pragma once

#include "ops/math.h"
