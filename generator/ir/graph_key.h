// Structural identity of graphs and constants, as text: what op equality (Op::key) needs for
// ops that hold a graph (OpFromGraph, Scan's step), and what merging compares constants by.
#pragma once

#include <string>

#include "ir/fgraph.h"

namespace kiln {

/// A constant's identity: its kind, dtype, shape and bytes (an rng constant is not the uint64
/// vector that carries its state).
std::string constant_key(const Variable& constant);

/// A graph's identity up to renaming: its inputs' types, each node's op key and where its
/// inputs come from (a graph input, an earlier node's output, a constant's key), and which
/// variables are its outputs. Two graphs with the same key compute the same function; names
/// and file ids do not take part.
std::string structural_key(const FunctionGraph& fg);

}  // namespace kiln
