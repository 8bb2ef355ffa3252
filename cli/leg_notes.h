// What a newcomer needs to see at a leg, in words (issue 22): a failing command's own last
// words, a leg that reported no metric of its own, a warm-up whose window no leg of its length
// could pass.
#pragma once

#include <optional>
#include <string>

#include "record/leg_runner.h"

namespace vouch::cli {

// The last MAX_LINES lines of FILE (at most MAX_BYTES of its end), each indented and with its
// control characters made visible ("\x1b", "\r"); "" when the file is empty or unreadable.
std::string TailForTerminal(const std::string& path, int max_lines = 10, size_t max_bytes = 2048);
// The first line of FILE, at most MAX_CHARS, control characters made visible; "" when empty.
std::string FirstLineForTerminal(const std::string& path, size_t max_chars = 120);
// Whether LEG reported a metric of its own (not vouch.* nor gpu.*, which vouch adds).
bool HasOwnMetric(const LegRecord& leg);
// When a warm-up LEG ran to completion but its window held fewer readings in all than the
// busy-reading floor, every leg of its length will be refused for the same reason: the
// message that says so and how to fix it. nullopt otherwise.
std::optional<std::string> WarmupTooShort(const LegRecord& leg);
// What the first leg whose command succeeded shows about every leg: its metrics could not be
// read (the source's own message says how to fix it). "" when nothing.
std::string FirstLegProblem(const LegRecord& leg);

}  // namespace vouch::cli
