"""vouch's rules for what a leg reports through the channel, mirrored so that the module refuses
at the call what vouch would refuse after the leg ran (issue 36, item 5). Each rule names the
C++ it mirrors; the messages are vouch's own words.

  src/metrics/reserved.cc   the reserved prefixes vouch., gpu. (ASCII case-insensitive, and
                            compared on the folded name: NFKC, case folding, invisible code
                            points removed)
  src/util/unicode_name.cc  the name's shape: no control, invisible, unassigned or private-use
                            character, no space at either end, one script per label
  src/metrics/channel.cc    a finite number (10**400 is not), a string unit and text, a known
                            direction, each name once per leg, at most 100,000 metrics, a line
                            of at most 1 MiB
"""

import math
import unicodedata

RESERVED_PREFIXES = ("vouch.", "gpu.")  # metrics/reserved.h kReservedMetricPrefixes
MAX_LINE_BYTES = 1 << 20  # metrics/channel.cc kMaxLineBytes
MAX_METRICS_PER_LEG = 100000  # metrics/metric.h kMaxMetricsPerLeg
DIRECTIONS = ("higher", "lower", "none", "")  # metrics/metric.cc ParseBetter

# Unicode's Default_Ignorable_Code_Point (what utf8proc's "ignorable" property holds).
_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)

_LATIN, _GREEK, _CYRILLIC, _ARMENIAN, _HEBREW, _ARABIC, _CJK = range(7)
_SCRIPT_NAMES = ("Latin", "Greek", "Cyrillic", "Armenian", "Hebrew", "Arabic", "CJK")
# util/unicode_name.cc kBlocks: the blocks whose letters belong to each script.
_BLOCKS = (
    (0x0041, 0x024F, _LATIN), (0x1E00, 0x1EFF, _LATIN), (0x2C60, 0x2C7F, _LATIN),
    (0xA720, 0xA7FF, _LATIN), (0xAB30, 0xAB6F, _LATIN), (0xFF21, 0xFF5A, _LATIN),
    (0x0250, 0x02AF, _LATIN), (0x1D00, 0x1DBF, _LATIN), (0x0370, 0x03FF, _GREEK),
    (0x1F00, 0x1FFF, _GREEK), (0x0400, 0x052F, _CYRILLIC), (0x1C80, 0x1C8F, _CYRILLIC),
    (0x2DE0, 0x2DFF, _CYRILLIC), (0xA640, 0xA69F, _CYRILLIC), (0x0530, 0x058F, _ARMENIAN),
    (0x0590, 0x05FF, _HEBREW), (0xFB1D, 0xFB4F, _HEBREW), (0x0600, 0x06FF, _ARABIC),
    (0x0750, 0x077F, _ARABIC), (0x08A0, 0x08FF, _ARABIC), (0xFB50, 0xFDFF, _ARABIC),
    (0xFE70, 0xFEFF, _ARABIC), (0x1100, 0x11FF, _CJK), (0x2E80, 0x2FDF, _CJK),
    (0x3040, 0x30FF, _CJK), (0x3100, 0x312F, _CJK), (0x3130, 0x318F, _CJK),
    (0x31F0, 0x31FF, _CJK), (0x3400, 0x4DBF, _CJK), (0x4E00, 0x9FFF, _CJK),
    (0xAC00, 0xD7AF, _CJK), (0xF900, 0xFAFF, _CJK), (0xFF66, 0xFFDC, _CJK),
    (0x20000, 0x3134F, _CJK),
)


def _ignorable(cp):
    return any(lo <= cp <= hi for lo, hi in _IGNORABLE)


def _script(ch, cat):
    if cat[0] != "L":
        return None
    cp = ord(ch)
    if cp < 0x80:
        return _LATIN
    for lo, hi, s in _BLOCKS:
        if lo <= cp <= hi:
            return s
    return 1000 + (cp >> 7)


def _script_name(s):
    return _SCRIPT_NAMES[s] if s < len(_SCRIPT_NAMES) else "another script"


def _in_label(cat):
    return cat[0] == "L" or cat in ("Mn", "Mc", "Me", "Nd", "Nl")


def shape_error(name):
    """Why NAME cannot be a name (util/unicode_name.cc CheckNameShape), or None."""
    if not name:
        return "it is empty"
    label_script, label_start = None, 0
    for i, ch in enumerate(name):
        cp, cat = ord(ch), unicodedata.category(ch)
        if cat == "Cs":
            return "it is not valid UTF-8 (a lone surrogate, U+%04X)" % cp
        if cat == "Cc":
            return "it holds a control character (U+%04X)" % cp
        if _ignorable(cp) or cat in ("Cf", "Zl", "Zp"):
            return "it holds an invisible character (U+%04X)" % cp
        if cat in ("Cn", "Co"):
            return "it holds an unassigned or private-use character (U+%04X)" % cp
        if not _in_label(cat):
            label_script, label_start = None, i + 1
            continue
        s = _script(ch, cat)
        if s is None:
            continue
        if label_script is not None and s != label_script:
            end = i + 1
            while end < len(name) and _in_label(unicodedata.category(name[end])):
                end += 1
            return "its label '%s' mixes %s and %s letters (U+%04X): a label is written in one " \
                "script" % (name[label_start:end], _script_name(label_script), _script_name(s), cp)
        label_script = s
    if unicodedata.category(name[0]) == "Zs" or unicodedata.category(name[-1]) == "Zs":
        return "it starts or ends with a space"
    return None


def folded(name):
    """NAME as vouch compares it (util/unicode_name.cc FoldedName)."""
    if all(0x20 <= ord(c) <= 0x7E for c in name):
        return name.lower()
    kept = "".join(c for c in name if not _ignorable(ord(c)))
    return unicodedata.normalize("NFKC", kept.casefold())


def reserved_prefix(name):
    """The reserved prefix NAME falls under (metrics/reserved.cc ReservedPrefixOf), or None."""
    f = folded(name)
    for p in RESERVED_PREFIXES:
        if f[: len(p)].lower() == p:
            return p
    return None


def name_error(name):
    """vouch's refusal of NAME (metrics/reserved.cc CheckLegMetricName), or None."""
    if not isinstance(name, str) or not name:
        return "a metric line needs a non-empty string \"name\" (got %r)" % (name,)
    why = shape_error(name)
    if why:
        return (
            "metric %r is refused: %s; a metric's name is printed beside vouch's own, so it "
            "must read as what it is: give the metric another name" % (name, why)
        )
    p = reserved_prefix(name)
    if p:
        return (
            "metric %r is under '%s*', a prefix vouch reserves for what it measures itself "
            "(vouch.*, gpu.*): a leg cannot report it; give the metric another name" % (name, p)
        )
    return None


def value_error(name, value):
    """vouch's refusal of VALUE (metrics/channel.cc), or None: a JSON number that is finite
    as a double. An int too large for a double (10**400) is not."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "metric %r: \"value\" must be a finite number (got %r)" % (name, value)
    try:
        as_double = float(value)
    except OverflowError:
        as_double = math.inf
    if not math.isfinite(as_double):
        return "metric %r: value is not finite" % (name,)
    return None


def line_error(name, line_bytes):
    """vouch's refusal of a line LINE_BYTES long (the newline not counted), or None."""
    if line_bytes > MAX_LINE_BYTES:
        return "metric %r: line is %d bytes, over the %d byte limit for a metrics line" % (
            name, line_bytes, MAX_LINE_BYTES)
    return None
