// Building blocks of gradient graphs, shared by the ops' pullback/pushforward rules and the
// grad driver: constants in the right dtype, zeros/ones of a variable's shape, summing a
// cotangent back to the shape of a broadcast input ("unbroadcasting"), and a few arithmetic
// shortcuts that keep gradient graphs small (a multiplication by a cotangent of ones is skipped,
// which is what makes grad(sum(f(x))) come out as f'(x) itself).
#pragma once

#include <optional>
#include <vector>

#include "ir/op.h"

namespace kiln {

/// The dtype gradients of a variable of dtype `dt` have: floats keep theirs, discrete dtypes
/// (which have no gradient of their own) carry float64 cotangents.
DType grad_dtype(DType dt);

/// A 0-d constant of grad_dtype(like's dtype) holding v.
Var const_like(const Var& like, double v);

/// The lengths of x as 0-d int64 Vars: constants where the static shape knows them.
std::vector<Var> lengths_of(const Var& x);

/// An array of x's shape filled with `value` (a 0-d Var); its dtype is value's.
Var fill_like(const Var& x, const Var& value);
/// Zeros / ones of x's shape, of dtype `dt` (default grad_dtype(x)).
Var zeros_like(const Var& x, std::optional<DType> dt = std::nullopt);
Var ones_like(const Var& x, std::optional<DType> dt = std::nullopt);

/// True when v is known at graph-build time to be all ones / all zeros (a constant, or an
/// Alloc, DimShuffle or `second` of one).
bool is_ones(const Var& v);
bool is_zeros(const Var& v);

/// `v` broadcast to ref's shape (v's rank is at most ref's). v itself when its static shape
/// already says it has ref's shape.
Var broadcast_like(const Var& v, const Var& ref);

/// Sums a cotangent `g` (of a broadcast result) back to the type `t` of the input it belongs to:
/// extra leading dimensions are summed away, and so are dimensions where t has static length 1
/// but g does not (PyTensor only broadcasts those). The result has t's rank and dtype (or
/// grad_dtype(t) for a discrete t).
Var sum_to_type(const Var& g, const TensorType& t);

/// Casts g to grad_dtype(t_dtype) when it differs.
Var cast_grad(const Var& g, DType t_dtype);

/// g with length-1 dimensions inserted at the (sorted) positions `axes` of a rank-`ndim`
/// result: the inverse of a reduction over `axes` that drops them.
Var expand_reduced(const Var& g, int ndim, const std::vector<int>& axes);

/// gz * d of the shape of `out` (the node output gz belongs to): d alone when gz is all ones,
/// -d when d is -1, and so on.
Var grad_mul(const Var& gz, const Var& d, const Var& out);

/// Sum of several terms (the single term when there is one).
Var add_terms(const VarList& terms);

/// The pushforward of an op that is linear in the inputs listed in `linear`: the same op
/// applied to their tangents (zeros where a tangent is null), the other inputs unchanged.
/// Outputs that are discrete get a null (zero) tangent.
std::vector<GradTerm> linear_pushforward(const Apply& node, const VarList& tangents,
                                         const std::vector<int>& linear);

/// `n` copies of `term`.
std::vector<GradTerm> repeat_term(std::size_t n, const GradTerm& term);

}  // namespace kiln
