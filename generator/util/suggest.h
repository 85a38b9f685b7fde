// "Did you mean ...?" for names a user typed: an unknown op, scalar op, prop or input name is
// answered with the closest known name, by edit distance.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kiln {

/// The edit distance between `a` and `b` (insertions, deletions, substitutions and swaps of two
/// neighbours each cost 1; letters compared without case, a case difference costs nothing).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word`, if it is close enough to be a likely typo (distance at most
/// a third of the word's length, and at least 1); empty otherwise. Ties go to the first.
std::string closest_name(std::string_view word, const std::vector<std::string>& candidates);

/// " (did you mean \"NAME\"?)" for closest_name(word, candidates), or "" when nothing is close:
/// appended to an "unknown ..." message.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace kiln
