// Automatic differentiation on graphs (PyTensor's pytensor.gradient): reverse mode (grad, Lop),
// forward mode (Rop), and the Jacobian and Hessian built from them. Every result is a graph
// of kiln ops over the original graph's variables, so it is rewritten, fused and compiled like
// anything else; put it in a FunctionGraph beside the original outputs to share intermediates.
//
// Each op says, per input, whether its gradient is a Value, Disconnected (the output does not
// depend on it), Undefined (Argmax, comparisons) or NotImplemented. An Undefined or
// NotImplemented gradient only matters when it lies on a path from the cost to a requested
// variable: then it is a UserError (NotImplementedError) naming the op, unless the options
// ask for zeros instead.
#pragma once

#include <string>
#include <vector>

#include "ir/op.h"

namespace kiln {

struct GradOptions {
  /// What to do when the cost does not depend on a requested variable (PyTensor's
  /// disconnected_inputs): raise a UserError, or return zeros of its shape.
  enum class Disconnected { Raise, Zero };
  Disconnected disconnected = Disconnected::Raise;
  /// What to do with an Undefined or NotImplemented gradient on the path (Argmax, comparisons,
  /// an op without a pullback) and with an integer variable asked for (PyTensor's
  /// null_gradients): raise, or treat that path as contributing zero.
  enum class Undefined { Raise, Zero };
  Undefined undefined = Undefined::Raise;
  /// Variables treated as constants: no gradient flows through them (consider_constant).
  VarList consider_constant;
};

/// d cost / d wrt[i] for a 0-d cost; each result has wrt[i]'s type (float dtypes keep
/// theirs). A cost that is not 0-d is a UserError (use Lop with its cotangent).
VarList grad(const Var& cost, const VarList& wrt, const GradOptions& options = {});
/// grad() of one variable.
Var grad(const Var& cost, const Var& wrt, const GradOptions& options = {});

/// The vector-Jacobian product: sum over k of cotangents[k] . d outputs[k] / d wrt[i], for
/// each i. cotangents[k] has outputs[k]'s shape; a null cotangent means zero.
VarList Lop(const VarList& outputs, const VarList& wrt, const VarList& cotangents,
            const GradOptions& options = {});

/// The Jacobian-vector product (forward mode): for each output, sum over i of
/// d output / d wrt[i] . tangents[i]. Uses the ops' pushforward; an op without one is handled
/// by the double-Lop trick (differentiating its linear pullback).
VarList Rop(const VarList& outputs, const VarList& wrt, const VarList& tangents,
            const GradOptions& options = {});

/// The Jacobian of `expression` with respect to `wrt`: shape expression.shape + wrt.shape.
/// A statically sized expression is differentiated element by element; one whose size is known
/// only at run time has its pullback batched over an identity matrix by vectorize_graph (a
/// NotImplementedError names the op vectorize_graph cannot batch).
Var jacobian(const Var& expression, const Var& wrt, const GradOptions& options = {});

/// The Hessian of a 0-d cost with respect to `wrt`: shape wrt.shape + wrt.shape (the Jacobian
/// of the gradient).
Var hessian(const Var& cost, const Var& wrt, const GradOptions& options = {});

}  // namespace kiln
