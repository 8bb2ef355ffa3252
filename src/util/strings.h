#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/escape.h"  // MarkdownCell, once declared here

namespace vouch {

// Levenshtein distance, for "did you mean" (after ninja's edit_distance).
int EditDistance(std::string_view a, std::string_view b);
// The candidate closest to WORD within a small distance, or "" when none is close.
std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates);
std::vector<std::string> Split(std::string_view s, char sep);
std::string Trim(std::string_view s);
bool StartsWith(std::string_view s, std::string_view prefix);
bool EndsWith(std::string_view s, std::string_view suffix);
// Shell-quotes an argument so that a printed command line can be pasted back.
std::string ShellQuote(std::string_view arg);
std::string ShellJoin(const std::vector<std::string>& argv);
// Human-readable byte count (KiB, MiB, GiB).
std::string HumanBytes(double bytes);
// Human-readable duration of SECONDS: "12 ns", "3.4 us", "12.5 ms", "4.2 s", "2 min 05 s",
// "1 h 03 min". Negative durations keep their sign.
std::string HumanDuration(double seconds);

// The lines of a text, one at a time, without their '\n'. A last line with no newline is
// returned too, marked unterminated (a writer that stopped mid-line).
class LineReader {
 public:
  struct Line {
    std::string_view text;
    int number = 0;  // 1-based
    bool terminated = true;
  };
  explicit LineReader(std::string_view text) : text_(text) {}
  bool Next(Line* line) {
    if (pos_ >= text_.size()) return false;
    size_t nl = text_.find('\n', pos_);
    line->terminated = nl != std::string_view::npos;
    line->text = text_.substr(pos_, line->terminated ? nl - pos_ : std::string_view::npos);
    line->number = ++number_;
    pos_ = line->terminated ? nl + 1 : text_.size();
    return true;
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  int number_ = 0;
};

}  // namespace vouch
