// Everything vouch prints on stdout and stderr passes through TerminalText (util/escape.h):
// the root of the terminal's escaping. Whatever a string holds (a metric name, a leg's command,
// a file name, a lock holder, a stderr tail, a kernel name), no control character, escape
// sequence or invalid UTF-8 byte of it reaches the terminal raw; newlines and tabs are kept.
// The renderers of tables and reasons also escape each untrusted string with TerminalSafe, so
// that a newline inside a name cannot start a line of its own either.
#pragma once

#include <cstdio>

namespace vouch::cli {

// Replaces stdout and stderr with streams that escape what is written to them. Called once,
// first thing in main.
void GuardTerminalOutput();

// The unguarded stderr, for vouch's own control sequences (the redrawn progress line) only;
// what goes there must be escaped by its writer.
std::FILE* RawStderr();

}  // namespace vouch::cli
