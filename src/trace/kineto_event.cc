// One Kineto event: its keys matched by their raw bytes, its fields read, and what the
// summary needs kept in the trace model (kineto_event.h; kineto_reader.cc streams the file).
#include "trace/kineto_event.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "trace/kineto_reader.h"
#include "trace/reserve_events.h"
#include "util/number.h"

namespace vouch::trace::kineto {
namespace {

// The skipped categories as Kineto writes them, by slot (EventFields::skip_slot).
constexpr std::string_view kSkipNames[kSkipSlots] = {"cpu_op",          "ac2g",
                                                     "overhead",        "trace",
                                                     "python_function", "cpu_instant_event",
                                                     "fwdbwd",          "cuda_profiler_range",
                                                     "cuda_sync",       "operator",
                                                     "gpu_op",          "memory",
                                                     "flow_link",       "external_correlation"};

static_assert(kSkipNames[0] == "cpu_op" && kSkipNames[1] == "ac2g");  // ClassifyLower's slots

// True when S is WORD (a literal: the compare is inlined, no memcmp call).
template <std::size_t N>
bool Is(std::string_view s, const char (&word)[N]) {
  return s.size() == N - 1 && std::memcmp(s.data(), word, N - 1) == 0;
}

// LOWER's category; for a skipped one its slot in *SLOT.
Cat ClassifyLower(std::string_view lower, int* slot) {
  // Each name compared only at its length; cpu_op and ac2g (most of a trace) first.
  switch (lower.size()) {
    case 4:
      if (Is(lower, "ac2g")) {
        *slot = 1;
        return Cat::kSkip;
      }
      break;
    case 6:
      if (Is(lower, "cpu_op")) {
        *slot = 0;
        return Cat::kSkip;
      }
      if (Is(lower, "kernel")) return Cat::kKernel;
      if (Is(lower, "memcpy")) return Cat::kMemcpy;
      if (Is(lower, "memset")) return Cat::kMemset;
      if (Is(lower, "driver")) return Cat::kDriver;
      break;
    case 7:
      if (Is(lower, "runtime")) return Cat::kRuntime;
      break;
    case 10:
      if (Is(lower, "gpu_memcpy")) return Cat::kMemcpy;
      if (Is(lower, "gpu_memset")) return Cat::kMemset;
      break;
    case 11:
      if (Is(lower, "cuda_driver")) return Cat::kDriver;
      break;
    case 12:
      if (Is(lower, "cuda_runtime")) return Cat::kRuntime;
      break;
    case 15:
      if (Is(lower, "user_annotation")) return Cat::kCpuRange;
      break;
    case 19:
      if (Is(lower, "gpu_user_annotation")) return Cat::kGpuRange;
      break;
    default:
      break;
  }
  for (std::size_t i = 0; i < kSkipSlots; ++i) {
    if (lower.size() == kSkipNames[i].size() && lower == kSkipNames[i]) {
      *slot = static_cast<int>(i);
      return Cat::kSkip;
    }
  }
  return Cat::kUnknown;
}

// CAT's category; SLOT (may be null) is set to the skip slot when CAT is spelled exactly as
// a skipped category (counted in an array), else -1.
Cat Classify(std::string_view cat, int* slot = nullptr) {
  // Newer Kineto writes lower-case categories (the fast path, no copy); older releases
  // wrote "Kernel", "Memcpy", ...
  int s = -1;
  Cat c = ClassifyLower(cat, &s);
  if (slot) *slot = s;
  if (c != Cat::kUnknown) return c;
  std::string lower(cat);
  for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return ClassifyLower(lower, &s);  // a slot only for the exact spelling: not passed on
}

// The first '"' or '\\' at or after P, 16 bytes at a time. P is inside a JSON string that stage
// 1 has closed, so a '"' follows within the document, and the reads past it stay inside the
// document or simdjson's padding (SIMDJSON_PADDING bytes behind it).
const char* FirstQuoteOrBackslash(const char* p) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
  for (;; p += 16) {
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const int hit =
        _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(c, quote), _mm_cmpeq_epi8(c, backslash)));
    if (hit != 0) return p + __builtin_ctz(static_cast<unsigned>(hit));
  }
#else
  while (*p != '"' && *p != '\\') ++p;
  return p;
#endif
}

// The text of a JSON string whose opening quote is just before RAW: the bytes themselves when
// they hold no backslash (then they are the unescaped text), otherwise UNESCAPE(), which
// also checks the escapes. Stage 1 guarantees the closing quote.
template <class Unescape>
std::string_view RawOrUnescaped(const char* raw, Unescape unescape) {
  const char* q = FirstQuoteOrBackslash(raw);
  if (*q == '\\') return unescape();
  return {raw, static_cast<std::size_t>(q - raw)};
}

// FIELD as the iteration gives it (throws on error; no copy of the field).
std::string_view Key(simdjson::ondemand::field& field) {
  return RawOrUnescaped(field.key().raw(), [&] { return std::string_view(field.unescaped_key()); });
}

// The field the iteration gives, or its error thrown; by reference, so that its value is
// not copied through a simdjson_result on the stack.
simdjson::ondemand::field& Unwrap(simdjson::simdjson_result<simdjson::ondemand::field>& field) {
  if (field.error()) throw simdjson::simdjson_error(field.error());
  return field.value_unsafe();
}

std::string_view String(simdjson::ondemand::value& value) {
  // The token runs from the opening quote to the next structural character, so its length
  // is known without a scan; its first quote or backslash then tells whether it needs
  // unescaping (the closing quote first: it does not).
  std::string_view tok = value.raw_json_token();
  if (tok.empty() || tok.front() != '"') return value.get_string();  // throws: not a string
  while (tok.size() > 1 && tok.back() != '"') tok.remove_suffix(1);  // trailing whitespace
  std::string_view body = tok.substr(1, tok.size() - 2);
  if (tok.size() < 2 || FirstQuoteOrBackslash(body.data()) != body.data() + body.size())
    return value.get_string();  // escapes: simdjson unescapes and checks them
  return body;
}

// The value of the 8 digits in C (the first digit in the lowest byte, '0' already taken
// off every byte): three multiplications instead of eight dependent ones.
std::uint64_t EightDigits(std::uint64_t c) {
  c = ((c & 0x0F0F0F0F0F0F0F0F) * 2561) >> 8;
  c = ((c & 0x00FF00FF00FF00FF) * 6553601) >> 16;
  return ((c & 0x0000FFFF0000FFFF) * 42949672960001) >> 32;
}

// How many of the 8 bytes of C are ASCII digits before the first one that is not.
unsigned LeadingDigits(std::uint64_t c) {
  constexpr std::uint64_t kHigh = 0xF0F0F0F0F0F0F0F0, k30 = 0x3030303030303030;
  // A byte not 0x3N, or 0x3N with N > 9, is flagged (a carry out of such a byte only
  // reaches the bytes after it).
  std::uint64_t bad = ((c & kHigh) ^ k30) | (((c + 0x0606060606060606) & kHigh) ^ k30);
  return bad ? static_cast<unsigned>(__builtin_ctzll(bad)) / 8 : 8;
}

// ParseMicrosToNs of TOK, a number token inside simdjson's padded buffer (so the 16 bytes
// from its start may be read): the same result, its integer part read 8 digits at a time.
// A sign, more than 15 integer digits or an exponent take ParseMicrosToNs itself.
bool TimeNs(std::string_view tok, std::int64_t* ns) {
  const char* p = tok.data();
  std::uint64_t c1 = 0, c2 = 0;
  std::memcpy(&c1, p, 8);
  std::memcpy(&c2, p + 8, 8);
  unsigned k = LeadingDigits(c1);
  if (k == 8) k += LeadingDigits(c2);
  k = std::min<unsigned>(k, static_cast<unsigned>(tok.size()));
  if (k == 0 || k > 15) return ParseMicrosToNs(tok, ns);
  constexpr std::uint64_t k30 = 0x3030303030303030;
  std::uint64_t whole;
  if (k <= 8) {
    whole = EightDigits((c1 - k30) << (8 * (8 - k)));  // the digits past K shifted out
  } else {
    static constexpr std::uint64_t kPow10[8] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
    whole = EightDigits(c1 - k30) * kPow10[k - 8] + EightDigits((c2 - k30) << (8 * (16 - k)));
  }
  // Kineto's own spelling, three decimals ("5090020296962.511"), without the general tail.
  const std::size_t n = tok.size();
  if (k + 4 <= n && p[k] == '.') {
    auto digit = [&](std::size_t at) { return static_cast<unsigned>(p[at]) - 48u; };
    const unsigned d1 = digit(k + 1), d2 = digit(k + 2), d3 = digit(k + 3);
    std::size_t j = k + 4;
    if (d1 < 10 && d2 < 10 && d3 < 10 &&
        (j == n || (digit(j) >= 10 && p[j] != 'e' && p[j] != 'E'))) {
      while (j < n && IsJsonSpace(p[j])) ++j;
      if (j != n) return false;  // "1.234x": not a number, as MicrosTailToNs says
      *ns = static_cast<std::int64_t>(whole * 1000 + d1 * 100 + d2 * 10 + d3);
      return TimeInRange(*ns);
    }
  }
  return MicrosTailToNs(tok, k, static_cast<std::int64_t>(whole), false, ns);
}

// The event fields vouch reads; kOther for every other key.
enum class Field { kPh, kCat, kName, kTs, kDur, kPid, kTid, kArgs, kOther };

Field FieldNamed(std::string_view k) {
  if (k == "ph") return Field::kPh;
  if (k == "cat") return Field::kCat;
  if (k == "name") return Field::kName;
  if (k == "ts") return Field::kTs;
  if (k == "dur") return Field::kDur;
  if (k == "pid") return Field::kPid;
  if (k == "tid") return Field::kTid;
  if (k == "args") return Field::kArgs;
  return Field::kOther;
}

// True when the raw key bytes at K are WORD followed by the closing quote (padding makes the
// read safe: the document goes on, or simdjson's padding follows it).
template <std::size_t N>
bool RawKeyIs(const char* k, const char (&word)[N]) {
  for (std::size_t i = 0; i + 1 < N; ++i)  // unrolled by the compiler: no memcmp call
    if (k[i] != word[i]) return false;
  return k[N - 1] == '"';
}

// An event's key from its raw bytes: the known keys by their bytes and closing quote (no
// scan, no copy); any other key only by its unescaped text, so that an escaped spelling of
// a known key ("c\u0061t") is still that key.
Field EventKey(simdjson::ondemand::field& field) {
  const char* k = field.key().raw();
  switch (k[0]) {
    case 'p':
      if (RawKeyIs(k, "ph")) return Field::kPh;
      if (RawKeyIs(k, "pid")) return Field::kPid;
      break;
    case 'c':
      if (RawKeyIs(k, "cat")) return Field::kCat;
      break;
    case 'n':
      if (RawKeyIs(k, "name")) return Field::kName;
      break;
    case 't':
      if (RawKeyIs(k, "ts")) return Field::kTs;
      if (RawKeyIs(k, "tid")) return Field::kTid;
      break;
    case 'd':
      if (RawKeyIs(k, "dur")) return Field::kDur;
      break;
    case 'a':
      if (RawKeyIs(k, "args")) return Field::kArgs;
      break;
    default:
      break;
  }
  return FieldNamed(Key(field));
}

// The args vouch reads, the same way.
enum class Arg { kCorrelation, kStream, kDevice, kBytes, kExternal, kOther };

Arg ArgNamed(std::string_view k) {
  if (k == "correlation") return Arg::kCorrelation;
  if (k == "stream") return Arg::kStream;
  if (k == "device") return Arg::kDevice;
  if (k == "bytes") return Arg::kBytes;
  if (k == "External id") return Arg::kExternal;
  return Arg::kOther;
}

Arg ArgKey(simdjson::ondemand::field& field) {
  const char* k = field.key().raw();
  switch (k[0]) {
    case 'c':
      if (RawKeyIs(k, "correlation")) return Arg::kCorrelation;
      break;
    case 's':
      if (RawKeyIs(k, "stream")) return Arg::kStream;
      break;
    case 'd':
      if (RawKeyIs(k, "device")) return Arg::kDevice;
      break;
    case 'b':
      if (RawKeyIs(k, "bytes")) return Arg::kBytes;
      break;
    case 'E':
      if (RawKeyIs(k, "External id")) return Arg::kExternal;
      break;
    default:
      break;
  }
  return ArgNamed(Key(field));
}

}  // namespace

// Reads one event; throws simdjson_error on malformed JSON. Changes nothing in the trace:
// a batch is committed only once all of it has parsed (see ParseBatch).
void Builder::Read(simdjson::ondemand::object obj, bool folding, EventFields* out) {
  EventFields& f = *out;
  // Neither kept nor needed by the fold: its pid, tid and args are not read.
  auto no_detail = [&] {
    return f.Unused() ||
           (folding && f.classified &&
            (f.kind == Cat::kKernel || f.kind == Cat::kRuntime || f.kind == Cat::kDriver));
  };
  for (auto result : obj) {
    simdjson::ondemand::field& field = Unwrap(result);
    Field key = EventKey(field);
    if (key == Field::kOther) continue;  // its value is skipped by the iteration
    simdjson::ondemand::value& value = field.value();
    switch (key) {
      case Field::kPh:
        f.ph = String(value);
        break;
      case Field::kCat: {
        // A second "cat" could come after args were skipped for the first: refused.
        if (f.classified) throw simdjson::simdjson_error(simdjson::INCORRECT_TYPE);
        f.cat = String(value);
        int slot = -1;
        f.kind = Classify(f.cat, &slot);
        f.skip_slot = static_cast<std::int8_t>(slot);
        f.classified = true;
        break;
      }
      case Field::kName: {
        if (f.Unused()) break;
        // A name that is a number (or true/false/null) is kept as written; an object or an
        // array is no name at all and refuses the event.
        auto type = value.type().value();
        if (type == simdjson::ondemand::json_type::string)
          f.name = String(value);
        else if (type == simdjson::ondemand::json_type::object ||
                 type == simdjson::ondemand::json_type::array)
          throw simdjson::simdjson_error(simdjson::INCORRECT_TYPE);
        else
          f.name = TrimJsonSpace(value.raw_json_token());
        break;
      }
      case Field::kTs:
        f.has_ts = TimeNs(value.raw_json_token(), &f.ts);
        if (!f.has_ts) throw simdjson::simdjson_error(simdjson::NUMBER_ERROR);
        break;
      case Field::kDur:
        f.has_dur = TimeNs(value.raw_json_token(), &f.dur);
        if (!f.has_dur) throw simdjson::simdjson_error(simdjson::NUMBER_ERROR);
        break;
      case Field::kPid:
        // pid, tid and args are only read for events vouch keeps and does not fold (nothing
        // else uses them, and reading them cannot fail).
        if (!no_detail()) f.pid = IntOr(value, -1);
        break;
      case Field::kTid:
        if (!no_detail()) f.tid = IntOr(value, -1);
        break;
      case Field::kArgs:
        if (f.Unused() || value.type() != simdjson::ondemand::json_type::object) break;
        for (auto arg_result : value.get_object()) {
          simdjson::ondemand::field& arg = Unwrap(arg_result);
          // A folded event's args are walked as the whole read walks them, their keys
          // unescaped where they hold an escape (a malformed one refuses the trace either
          // way), but not read.
          if (no_detail()) {
            (void)Key(arg);
            continue;
          }
          switch (ArgKey(arg)) {
            case Arg::kCorrelation:
              f.correlation = IntOr(arg.value(), -1);
              break;
            case Arg::kStream:
              f.stream = IntOr(arg.value(), -1);
              break;
            case Arg::kDevice:
              f.device = IntOr(arg.value(), -1);
              break;
            case Arg::kBytes:
              f.bytes = IntOr(arg.value(), 0);
              break;
            case Arg::kExternal:
              f.external = IntOr(arg.value(), -1);
              break;
            case Arg::kOther:
              break;
          }
        }
        break;
      case Field::kOther:
        break;
    }
  }
  // Its end must be a time too (model.h's bound), or spans and sums could overflow.
  if (f.has_ts && f.has_dur && !TimeInRange(f.ts + f.dur))
    throw simdjson::simdjson_error(simdjson::NUMBER_OUT_OF_RANGE);
}

void Builder::CommitBatch() {
  for (const auto& f : pending_) Commit(f);
  pending_.clear();
  for (std::size_t i = 0; i < kSkipSlots; ++i) {
    skips_[i] += staged_skips_[i];
    t_->event_count += staged_skips_[i];
    staged_skips_[i] = 0;
  }
}

void Builder::DropBatch() {
  pending_.clear();
  staged_skips_.fill(0);
}

void Builder::Commit(const EventFields& f) {
  ++t_->event_count;
  if (f.cat.empty()) {
    Skip(f.ph == "M" ? "(metadata)" : "(no category)");
    return;
  }
  Cat kind = f.classified ? f.kind : Classify(f.cat);
  if (kind == Cat::kSkip) {
    Skip(f.cat);
    return;
  }
  if (kind == Cat::kUnknown) {
    ++unknown_[std::string(f.cat)];
    return;
  }
  if (f.ph != "X" || !f.has_ts || !f.has_dur) {
    Skip(std::string(f.cat) + " (not a complete event with ts and dur)");
    return;
  }
  if (f.dur < 0) {
    // Counted apart and warned about: a GPU op with a negative duration is a broken
    // trace, and leaving it out silently would make its time vanish.
    Skip(std::string(f.cat) + " (negative duration)");
    ++negative_[std::string(f.cat)];
    return;
  }
  std::uint32_t name_id = names_.Intern(f.name);
  // The extent over every kept event (what ComputeExtent would find afterwards).
  first_ns_ = std::min(first_ns_, f.ts);
  last_ns_ = std::max(last_ns_, f.ts + f.dur);
  // With a fold, the ops and calls go into it as Keep would have kept them, in the same order
  // (SummarizeFolded reads no more); ranges are kept either way.
  const std::int64_t end = f.ts + f.dur;
  switch (kind) {
    case Cat::kKernel:
    case Cat::kMemcpy:
    case Cat::kMemset: {
      const GpuOpKind op_kind = kind == Cat::kKernel   ? GpuOpKind::kKernel
                                : kind == Cat::kMemcpy ? GpuOpKind::kMemcpy
                                                       : GpuOpKind::kMemset;
      const auto bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(f.bytes, 0));
      if (fold_ != nullptr) {
        fold_->Op(op_kind, f.ts, end, name_id, bytes);
        break;
      }
      GpuOp& op = Keep(t_->ops, f, name_id);
      op.kind = op_kind;
      op.correlation = f.correlation;
      op.stream = f.stream >= 0 ? f.stream : f.tid;
      op.device = static_cast<std::int32_t>(f.device >= 0 ? f.device : f.pid);
      op.bytes = bytes;
      break;
    }
    case Cat::kRuntime:
    case Cat::kDriver: {
      if (fold_ != nullptr) {
        fold_->Api(f.ts, end, IsLaunchApi(f.name));
        break;
      }
      ApiCall& a = Keep(t_->api, f, name_id);
      a.kind = kind == Cat::kRuntime ? ApiKind::kRuntime : ApiKind::kDriver;
      a.correlation = f.correlation;
      a.is_launch = IsLaunchApi(f.name);
      break;
    }
    case Cat::kCpuRange:
    case Cat::kGpuRange: {
      Range& r = Keep(t_->ranges, f, name_id);
      r.kind = kind == Cat::kCpuRange ? RangeKind::kCpu : RangeKind::kGpu;
      r.external_id = f.external;
      break;
    }
    default:
      break;
  }
}

// Keeps room for the events still to come, guessed from the share of the input read so
// far (FRACTION_READ in (0, 1]): saves the copies and fresh pages of repeated doubling.
void Builder::Reserve(double fraction_read) {
  auto grow = [&](auto& v) {
    double expected = static_cast<double>(v.size()) / fraction_read;
    if (static_cast<double>(v.capacity()) >= expected) return;
    v.reserve(static_cast<std::size_t>(expected * 1.2));
    AdviseHugePages(v.data(), v.capacity() * sizeof(v[0]));
  };
  if (fold_ != nullptr) {
    grow(fold_->kernels);
    grow(fold_->kernel_names);
    grow(fold_->launches);
  } else {
    grow(t_->ops);
    grow(t_->api);
  }
  grow(t_->ranges);
}

void Builder::Finish() {
  if (first_ns_ > last_ns_) first_ns_ = last_ns_ = 0;
  t_->first_ns = first_ns_;
  t_->last_ns = last_ns_;
  for (auto& [k, v] : skipped_) t_->skipped_by_category[k] += v;
  for (std::size_t i = 0; i < kSkipSlots; ++i)
    if (skips_[i] > 0) t_->skipped_by_category[std::string(kSkipNames[i])] += skips_[i];
  for (auto& [k, v] : unknown_) t_->unknown_categories[k] += v;
  for (auto& [k, v] : negative_)
    t_->warnings.push_back(
        fmt::format("{}: {} '{}' event(s) with a negative duration were left out (a broken "
                    "trace: their time is not in any figure)",
                    t_->path, v, k));
}

// Appends a kept event to V with what every kind has: its span, name and (API calls and
// ranges) its process and thread. A GPU op's pid is the launching process, not Kineto's.
template <class T>
T& Builder::Keep(std::vector<T>& v, const EventFields& f, std::uint32_t name_id) {
  T& x = v.emplace_back();
  x.start_ns = f.ts;
  x.end_ns = f.ts + f.dur;
  x.name_id = name_id;
  if constexpr (!std::is_same_v<T, GpuOp>) {
    x.pid = f.pid;
    x.tid = f.tid;
  }
  return x;
}

std::int64_t Builder::IntOr(simdjson::ondemand::value& v, std::int64_t fallback) {
  // The common case, a plain integer of up to 18 digits, straight from the token; anything
  // else (fractions, exponents, other types, malformed numbers) through simdjson.
  std::string_view tok = v.raw_json_token();
  std::size_t i = tok.size() && tok[0] == '-' ? 1 : 0, first = i;
  std::int64_t n = 0;
  while (i < tok.size() && i - first < 18 && tok[i] >= '0' && tok[i] <= '9')
    n = n * 10 + (tok[i++] - '0');
  std::size_t digits = i - first;
  while (i < tok.size() && IsJsonSpace(tok[i])) ++i;
  if (i == tok.size() && digits > 0 && (digits == 1 || tok[first] != '0')) return first ? -n : n;
  std::int64_t k = 0;
  if (!v.get_int64().get(k)) return k;
  auto type = v.type();
  if (type.error() || type.value_unsafe() != simdjson::ondemand::json_type::number) return fallback;
  double d = 0;
  // Only a double inside int64's range converts (1e300 would be undefined behaviour).
  if (!v.get_double().get(d) && std::isfinite(d) && std::fabs(d) < 9.2e18)
    return static_cast<std::int64_t>(d);
  return fallback;
}

void Builder::Skip(std::string_view cat) {
  if (last_skip_ != skipped_.end() && last_skip_->first == cat) {
    ++last_skip_->second;
    return;
  }
  auto it = skipped_.find(cat);
  if (it == skipped_.end()) it = skipped_.emplace(std::string(cat), 0).first;
  ++it->second;
  last_skip_ = it;
}

}  // namespace vouch::trace::kineto
