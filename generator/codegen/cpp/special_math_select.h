// Which special-function pieces (runtime/include/kiln/runtime/special/*.hpp: incomplete gamma
// and beta, Bessel functions, hyp2f1, ...) a generated source embeds: only those defining a
// kiln_special:: function its code calls, and the pieces they #include. A graph that calls
// none gets none, so its source — and its compile time — is what it would be without them.
#pragma once

#include <string>
#include <vector>

namespace kiln {

/// The embedded paths of the special-function pieces `code` (generated C++) needs, each after
/// the pieces it includes; empty when the code calls no kiln_special:: function.
std::vector<std::string> special_math_pieces(const std::vector<std::string>& code);

}  // namespace kiln
