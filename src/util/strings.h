#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vouch {

// Levenshtein distance, for "did you mean" (after ninja's edit_distance).
int EditDistance(std::string_view a, std::string_view b);
// The candidate closest to WORD within a small distance, or "" when none is close.
std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates);
std::vector<std::string> Split(std::string_view s, char sep);
std::string Trim(std::string_view s);
bool StartsWith(std::string_view s, std::string_view prefix);
// Shell-quotes an argument so that a printed command line can be pasted back.
std::string ShellQuote(std::string_view arg);
std::string ShellJoin(const std::vector<std::string>& argv);
// Human-readable byte count (KiB, MiB, GiB).
std::string HumanBytes(double bytes);

}  // namespace vouch
