#include "util/unicode_name.h"

#include <fmt/format.h>
#include <utf8proc.h>

#include <cstdlib>

namespace vouch {
// Named, not anonymous: the unity build puts this file beside others with their own kNone.
namespace unicode_detail {

bool PrintableAscii(std::string_view s) {
  for (char c : s)
    if (c < 0x20 || c > 0x7E) return false;
  return true;
}

// The scripts a label may not mix, by the blocks that hold their letters. Letters of any other
// block are each block's own script (kOther + the block's first code point).
enum Script : long { kNone = -1, kLatin = 0, kGreek, kCyrillic, kArmenian, kHebrew, kArabic, kCjk };

struct Block {
  std::int32_t lo, hi;
  Script script;
};
constexpr Block kBlocks[] = {
    {0x0041, 0x024F, kLatin},    {0x1E00, 0x1EFF, kLatin},    {0x2C60, 0x2C7F, kLatin},
    {0xA720, 0xA7FF, kLatin},    {0xAB30, 0xAB6F, kLatin},    {0xFF21, 0xFF5A, kLatin},
    {0x0250, 0x02AF, kLatin},    {0x1D00, 0x1DBF, kLatin},    {0x0370, 0x03FF, kGreek},
    {0x1F00, 0x1FFF, kGreek},    {0x0400, 0x052F, kCyrillic}, {0x1C80, 0x1C8F, kCyrillic},
    {0x2DE0, 0x2DFF, kCyrillic}, {0xA640, 0xA69F, kCyrillic}, {0x0530, 0x058F, kArmenian},
    {0x0590, 0x05FF, kHebrew},   {0xFB1D, 0xFB4F, kHebrew},   {0x0600, 0x06FF, kArabic},
    {0x0750, 0x077F, kArabic},   {0x08A0, 0x08FF, kArabic},   {0xFB50, 0xFDFF, kArabic},
    {0xFE70, 0xFEFF, kArabic},   {0x1100, 0x11FF, kCjk},      {0x2E80, 0x2FDF, kCjk},
    {0x3040, 0x30FF, kCjk},      {0x3100, 0x312F, kCjk},      {0x3130, 0x318F, kCjk},
    {0x31F0, 0x31FF, kCjk},      {0x3400, 0x4DBF, kCjk},      {0x4E00, 0x9FFF, kCjk},
    {0xAC00, 0xD7AF, kCjk},      {0xF900, 0xFAFF, kCjk},      {0xFF66, 0xFFDC, kCjk},
    {0x20000, 0x3134F, kCjk},
};

const char* ScriptName(long s) {
  switch (s) {
    case kLatin:
      return "Latin";
    case kGreek:
      return "Greek";
    case kCyrillic:
      return "Cyrillic";
    case kArmenian:
      return "Armenian";
    case kHebrew:
      return "Hebrew";
    case kArabic:
      return "Arabic";
    case kCjk:
      return "CJK";
    default:
      return "another script";
  }
}

// The script of letter CP (kNone for what is not a letter: digits, marks, punctuation).
long ScriptOf(std::int32_t cp) {
  const auto cat = utf8proc_category(cp);
  if (cat < UTF8PROC_CATEGORY_LU || cat > UTF8PROC_CATEGORY_LO) return kNone;
  if (cp < 0x80) return kLatin;
  for (const auto& b : kBlocks)
    if (cp >= b.lo && cp <= b.hi) return b.script;
  return 1000 + (cp >> 7);  // the 128-code-point block it lies in
}

bool InLabel(utf8proc_category_t cat) {
  return (cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_ND) ||
         cat == UTF8PROC_CATEGORY_NL;
}

}  // namespace unicode_detail

Status CheckNameShape(std::string_view name) {
  using namespace unicode_detail;
  if (name.empty()) return MakeError("it is empty");
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(name.data());
  const auto n = static_cast<utf8proc_ssize_t>(name.size());
  long label_script = kNone;
  std::size_t label_start = 0;
  std::int32_t first = -1, last = -1;
  for (utf8proc_ssize_t i = 0; i < n;) {
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t len = utf8proc_iterate(p + i, n - i, &cp);
    if (len <= 0) return MakeError("it is not valid UTF-8 (byte {} of {})", i + 1, n);
    const auto cat = utf8proc_category(cp);
    if (first < 0) first = cp;
    last = cp;
    if (cat == UTF8PROC_CATEGORY_CC)
      return MakeError("it holds a control character (U+{:04X})", cp);
    if (utf8proc_get_property(cp)->ignorable || cat == UTF8PROC_CATEGORY_CF ||
        cat == UTF8PROC_CATEGORY_ZL || cat == UTF8PROC_CATEGORY_ZP)
      return MakeError("it holds an invisible character (U+{:04X})", cp);
    if (cat == UTF8PROC_CATEGORY_CN || cat == UTF8PROC_CATEGORY_CO || cat == UTF8PROC_CATEGORY_CS)
      return MakeError("it holds an unassigned or private-use character (U+{:04X})", cp);
    if (!InLabel(cat)) {
      label_script = kNone;
      label_start = static_cast<std::size_t>(i + len);
    } else if (const long s = ScriptOf(cp); s != kNone) {
      if (label_script != kNone && s != label_script) {
        std::size_t end = static_cast<std::size_t>(i + len);
        while (end < name.size()) {
          utf8proc_int32_t c = 0;
          const utf8proc_ssize_t l =
              utf8proc_iterate(p + end, n - static_cast<utf8proc_ssize_t>(end), &c);
          if (l <= 0 || !InLabel(utf8proc_category(c))) break;
          end += static_cast<std::size_t>(l);
        }
        return MakeError(
            "its label '{}' mixes {} and {} letters (U+{:04X}): a label is written in one script",
            name.substr(label_start, end - label_start), ScriptName(label_script), ScriptName(s),
            cp);
      }
      label_script = s;
    }
    i += len;
  }
  const auto space = [](std::int32_t cp) { return utf8proc_category(cp) == UTF8PROC_CATEGORY_ZS; };
  if (space(first) || space(last)) return MakeError("it starts or ends with a space");
  return OkStatus();
}

std::string FoldedName(std::string_view name) {
  using unicode_detail::PrintableAscii;
  if (PrintableAscii(name)) {
    std::string out(name);
    for (char& c : out)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
  }
  utf8proc_uint8_t* folded = nullptr;
  const utf8proc_ssize_t len = utf8proc_map(
      reinterpret_cast<const utf8proc_uint8_t*>(name.data()),
      static_cast<utf8proc_ssize_t>(name.size()), &folded,
      static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPAT | UTF8PROC_COMPOSE |
                                     UTF8PROC_CASEFOLD | UTF8PROC_IGNORE));
  if (len < 0) return std::string(name);
  std::string out(reinterpret_cast<const char*>(folded), static_cast<std::size_t>(len));
  std::free(folded);
  return out;
}

}  // namespace vouch
