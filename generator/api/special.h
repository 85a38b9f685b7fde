// The builder API's scipy.special functions on Vars (erfcinv, gammainc, betainc, hyp2f1, ...).
// They live beside the ops (ops/special.h) so that gradients can be built with them; programs
// building graphs include this header or api/graph_builder.h.
#pragma once

#include "ops/special.h"
