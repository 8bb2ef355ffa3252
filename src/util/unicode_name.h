// The one normaliser of names that come from outside vouch (a leg's metric names, from the
// channel, a tool's file or a regex:/json: spec), so that a name cannot look like another one,
// vouch's own above all (metrics/reserved.h): "vouch<U+200B>.wall_s", " vouch.wall_s", a
// Cyrillic 'р' in "gрu.active_ns" and a fullwidth "ｖｏｕｃｈ.wall_s" all read as vouch's.
// Unicode data is utf8proc's (Debian libutf8proc-dev, linked statically).
#pragma once

#include <string>
#include <string_view>

#include "util/result.h"

namespace vouch {

// Why NAME cannot be a name, or OK: invalid UTF-8; a control character (newline, tab, C1);
// an invisible one (a default-ignorable code point such as U+200B ZERO WIDTH SPACE, a bidi
// control, a format character, a line or paragraph separator); unassigned or private-use code
// points; a space (any Unicode space) at its start or end; or a label (a run of letters, marks
// and digits between punctuation) whose letters come from more than one script (Latin with
// Cyrillic, Greek...; Han, Hiragana, Katakana and Hangul count as one). The message says which
// character (as U+XXXX) or which label, never NAME itself.
Status CheckNameShape(std::string_view name);

// NAME as it is compared: NFKC with Unicode case folding and default-ignorable code points
// removed ("ＶＯＵＣＨ.wall_s" and "vouch<U+200B>.wall_s" give "vouch.wall_s"). Printable ASCII
// is only lower-cased. Invalid UTF-8 is returned as it is.
std::string FoldedName(std::string_view name);

}  // namespace vouch
