// The one escaping function per output medium (SPEC "Where it is going"): every string vouch
// did not write itself (a metric name, a leg's command, a file name, a lock holder, a stderr
// tail, a kernel name) goes through the function of the medium it is printed in, so that it
// can neither draw nor hide anything there:
// - a terminal: TerminalSafe (one line) or TerminalText (a block of lines);
// - Markdown (pull request comments): MarkdownCell (text, table cells) or MarkdownCode (an
//   inline code span with its fences);
// - HTML (vouch report): HtmlEscape.
#pragma once

#include <string>
#include <string_view>

namespace vouch {

// S made safe for a terminal, on one line: ESC as "\x1b", every other C0 control (newlines
// and tabs too), DEL and the C1 controls (U+0080..U+009F, as their UTF-8 bytes) as "\xNN",
// each byte that is not part of valid UTF-8 as "\xNN", and the bidirectional overrides and
// isolates (U+202A..U+202E, U+2066..U+2069, which reorder what is shown) as "\u202e". Valid
// UTF-8 text is kept as it is.
std::string TerminalSafe(std::string_view s);

// The same for a block of text whose line structure is vouch's own: newlines and tabs kept,
// everything else as TerminalSafe. What vouch prints on stdout and stderr passes through it.
std::string TerminalText(std::string_view s);
// Whether TerminalText(S) is S itself (printable ASCII, newlines and tabs only): then it need
// not be copied.
bool TerminalVerbatim(std::string_view s);

// S as text in Markdown (a table cell, a list item, a sentence): '|' as "\|", '\' as "\\",
// '<', '>', '&' and '`' as the entities "&lt;" "&gt;" "&amp;" "&#96;" (so that no HTML tag,
// code span or cell boundary can start inside it), newlines as spaces and every other
// control or invalid byte as TerminalSafe writes it.
std::string MarkdownCell(std::string_view s);

// S as one inline code span, fences included ("`name`"): a fence longer than any run of
// backticks in S, '|' as "\|" (a table cell holds it), newlines as spaces and controls as
// TerminalSafe writes them. Inside a code span '<' and '&' are text.
std::string MarkdownCode(std::string_view s);

// HTML-escapes text (& < > " ').
std::string HtmlEscape(std::string_view text);

}  // namespace vouch
