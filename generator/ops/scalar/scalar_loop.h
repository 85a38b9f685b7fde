// ScalarLoop: PyTensor's loop over a scalar inner graph (pytensor/scalar/loop.py), the scalar op
// PyTensor builds the iterative parameter gradients of its special functions from (gammainc in
// k, betainc in a and b, hyp2f1: Grad2F1Loop, ...), inside an Elemwise or a Composite.
//
// Inputs: n_steps (an integer), the carried values' initial values, the constants. The inner
// graph maps (carried..., constants...) to (updates..., and for a while loop a bool `until`);
// each update has its carried value's dtype. Per element:
//
//     carried = initial; until = true
//     for step in range(n_steps):
//         *carried, until = inner(*carried, *constants)   # `until` only in a while loop
//         if until: break
//     outputs = (*carried, until)
//
// as PyTensor's C code runs it: a for loop with n_steps <= 0 runs no step (perform raises
// instead), and a while loop that runs no step reports until = true (perform: false).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/runtime/array.hpp"
#include "ops/scalar/scalar_op.h"

namespace kiln {

/// Parses a ScalarLoop object of a graph file (a Composite's keys, "name": "ScalarLoop" and a
/// boolean "is_while"), checking that each update has its carried value's dtype and that a while
/// loop's last output is a bool. `where` is its JSON pointer.
ScalarOp scalar_loop_from_json(const nlohmann::json& j, const std::string& where);

/// The reference evaluation over arrays of `shape` (broadcast views are fine): every element
/// steps through the inner graph, all elements at once, each stopping on its own.
std::vector<Array> eval_scalar_loop(const ScalarOp& op, const std::vector<Array>& args, const Shape& shape);

}  // namespace kiln
