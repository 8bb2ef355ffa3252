// Kineto reader. Streaming design, so that memory does not grow with the file: the file
// is read in blocks (plain: read(2) into one reused buffer; gzip: zlib's gzread). Inside
// "traceEvents": [...], each block's run of complete events ends at the last "}, {" of the
// block, found by a backward search and checked by the parse itself; where that check fails
// (the "}, {" was inside a string or a nested array), a string-aware forward scanner finds
// the events exactly. The run is handed, in place and without a copy, to simdjson
// On-Demand as one JSON array, and committed only once all of it has parsed.
// Only the events the summary needs are kept, as compact structs (model.h).
#include "trace/kineto_reader.h"

#include <fcntl.h>
#include <simdjson.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>

#include "trace/kineto_event.h"
#include "util/bounded_file.h"
#include "util/number.h"

#ifndef VOUCH_KINETO_BLOCK_MB
#define VOUCH_KINETO_BLOCK_MB 1
#endif

namespace vouch::trace {
namespace {

using kineto::Builder;
using kineto::EventFields;
using kineto::IsJsonSpace;
using kineto::TrimJsonSpace;

constexpr std::size_t kDefaultBlockBytes = std::size_t{VOUCH_KINETO_BLOCK_MB} << 20;
// A single event above this is not a Kineto event: refuse it instead of growing forever.
constexpr std::size_t kMaxEventBytes = std::size_t{256} << 20;

// Reads bytes from a plain or gzip file (plain ones straight into the caller's buffer).
class Source {
 public:
  explicit Source(const std::string& path) : path_(path) {}
  ~Source() {
    if (gz_) gzclose_r(gz_);
    if (fd_ >= 0) ::close(fd_);
  }
  Status Open() {
    auto file = BoundedFile::Open(path_, kMaxTraceFileBytes);
    if (!file) return file.error();
    fd_ = file->Release();
    unsigned char magic[2] = {0, 0};
    ssize_t n = ::pread(fd_, magic, 2, 0);
    if (n == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
      // gzip: zlib reads through its own buffer. Plain files are read straight into ours
      // (gzread's transparent mode would add a copy of every byte).
      gz_ = gzdopen(fd_, "rb");
      if (!gz_) return MakeError("{}: cannot open the gzip stream", path_);
      fd_ = -1;  // owned by gz_ now
      gzbuffer(gz_, 1 << 20);
    } else {
      ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
      struct stat st {};
      if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
        size_ = static_cast<std::uint64_t>(st.st_size);
    }
    return OkStatus();
  }
  // The size of a plain regular file; 0 for gzip or when unknown.
  std::uint64_t size() const { return size_; }
  // Appends up to N bytes at DST; returns the count, 0 at the end.
  Result<std::size_t> Read(char* dst, std::size_t n) {
    std::size_t total = 0;
    while (total < n) {
      if (!gz_) {
        ssize_t got =
            ::read(fd_, dst + total, std::min<std::size_t>(n - total, std::size_t{1} << 30));
        if (got < 0) {
          if (errno == EINTR) continue;
          return MakeError("{}: cannot read: {}", path_, std::strerror(errno));
        }
        if (got == 0) break;
        total += static_cast<std::size_t>(got);
        continue;
      }
      unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(n - total, 1u << 30));
      int got = gzread(gz_, dst + total, chunk);
      if (got < 0) {
        int err = 0;
        const char* msg = gzerror(gz_, &err);
        return MakeError("{}: cannot read: {}", path_, msg ? msg : "zlib error");
      }
      if (got == 0) {
        int err = 0;
        const char* msg = gzerror(gz_, &err);
        if (err == Z_BUF_ERROR || (err != Z_OK && err != Z_STREAM_END))
          return MakeError("{}: the gzip stream is truncated or corrupt ({}); re-copy the file",
                           path_, msg ? msg : "zlib error");
        break;
      }
      total += static_cast<std::size_t>(got);
    }
    return total;
  }

 private:
  std::string path_;
  int fd_ = -1;
  gzFile gz_ = nullptr;
  std::uint64_t size_ = 0;
};

// Skips a JSON string starting at P (on the opening quote); returns the byte after the
// closing quote, or nullptr when END comes first.
const char* SkipString(const char* p, const char* end) {
  const char* q = p + 1;
  for (;;) {
    q = static_cast<const char*>(std::memchr(q, '"', static_cast<std::size_t>(end - q)));
    if (!q) return nullptr;
    const char* b = q;
    while (b > p + 1 && b[-1] == '\\') --b;
    if (((q - b) & 1) == 0) return q + 1;  // an even run of backslashes: the quote closes
    ++q;
  }
}

// Returns the byte after the value starting at P (object, array, string or scalar), or
// nullptr when END comes first.
const char* SkipValue(const char* p, const char* end) {
  if (p >= end) return nullptr;
  if (*p == '"') return SkipString(p, end);
  if (*p != '{' && *p != '[') {
    while (p < end && *p != ',' && *p != '}' && *p != ']' &&
           !std::isspace(static_cast<unsigned char>(*p)))
      ++p;
    return p < end ? p : nullptr;
  }
  int depth = 0;
  while (p < end) {
    char c = *p;
    if (c == '"') {
      p = SkipString(p, end);
      if (!p) return nullptr;
      continue;
    }
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return p + 1;
    }
    ++p;
  }
  return nullptr;
}

const char* SkipSpace(const char* p, const char* end) {
  while (p < end && std::isspace(static_cast<unsigned char>(*p))) ++p;
  return p;
}

// Parses "[" + events + "]" where the brackets overwrite the bytes just around the events,
// and a space the byte after the ']' (simdjson reads that first padding byte), restored
// after. CAPACITY_AFTER readable bytes must follow END, at least SIMDJSON_PADDING.
// The events are committed to BUILDER only when the whole batch has parsed: on an error
// nothing is, so that the caller may retry the same bytes another way.
Status ParseBatch(simdjson::ondemand::parser& parser, Builder& builder, char* begin, char* end,
                  std::size_t capacity_after, const std::string& label, std::uint64_t offset) {
  char saved_before = begin[-1];
  char saved_end = end[0];
  char saved_after = end[1];
  begin[-1] = '[';
  end[0] = ']';
  end[1] = ' ';
  Status status = OkStatus();
  try {
    simdjson::padded_string_view view(begin - 1, static_cast<std::size_t>(end - begin) + 2,
                                      static_cast<std::size_t>(end - begin) + 1 + capacity_after);
    simdjson::ondemand::document doc = parser.iterate(view);
    for (auto element : doc.get_array()) {
      EventFields f;
      Builder::Read(element.get_object(), builder.folding(), &f);
      builder.Stage(f);
    }
    // Every token used: a batch cut inside an event cannot end early (OUT_OF_BOUNDS is
    // current_location()'s way of saying "at the end").
    if (doc.current_location().error() != simdjson::OUT_OF_BOUNDS)
      throw simdjson::simdjson_error(simdjson::TRAILING_CONTENT);
  } catch (const simdjson::simdjson_error& e) {
    status = MakeError("{}: malformed trace event between bytes {} and {}: {}", label, offset,
                       offset + static_cast<std::uint64_t>(end - begin), e.what());
  }
  begin[-1] = saved_before;
  end[0] = saved_end;
  end[1] = saved_after;
  if (status.ok())
    builder.CommitBatch();
  else
    builder.DropBatch();
  return status;
}

// The '}' of the last "}" "," "{" (JSON whitespace allowed between) in (BEGIN, END), or
// nullptr. It may lie inside a string or a nested array: the parse of the batch it ends
// tells (an unclosed string or unclosed brackets), and the caller then scans exactly.
char* LastEventSeparator(char* begin, char* end) {
  char* hi = end;
  while (hi > begin + 1) {
    auto* open =
        static_cast<char*>(memrchr(begin + 1, '{', static_cast<std::size_t>(hi - begin - 1)));
    if (!open) return nullptr;
    char* q = open - 1;
    while (q > begin && IsJsonSpace(*q)) --q;
    if (*q == ',') {
      --q;
      while (q > begin && IsJsonSpace(*q)) --q;
      if (*q == '}') return q;
    }
    hi = open;
  }
  return nullptr;
}

void ReadDeviceNames(std::string_view json, Trace* t) {
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  if (p.parse(json.data(), json.size()).get(doc)) return;
  simdjson::dom::array arr;
  if (doc.get_array().get(arr)) return;
  for (auto dev : arr) {
    std::int64_t id = -1;
    std::string_view name;
    if (dev["id"].get_int64().get(id) || dev["name"].get_string().get(name)) continue;
    if (id < 0 || id > 4096) continue;
    if (t->devices.size() <= static_cast<std::size_t>(id))
      t->devices.resize(static_cast<std::size_t>(id) + 1);
    t->devices[static_cast<std::size_t>(id)] = std::string(name);
  }
}

// The streaming driver over any byte source: READ(dst, n) appends up to n bytes.
// TOTAL_BYTES, when known (0 if not), sizes the event vectors once from the first blocks.
template <class ReadFn>
Result<Trace> ParseStream(ReadFn read, const std::string& label, std::size_t block_bytes,
                          std::uint64_t total_bytes = 0, WholeFold* fold = nullptr) {
  const std::size_t kBlockBytes = block_bytes ? block_bytes : kDefaultBlockBytes;
  Trace t;
  t.path = label;
  t.format = "kineto";
  Builder builder(&t, fold);
  simdjson::ondemand::parser parser;
  // One byte in front for '[', the block, and simdjson's padding behind.
  // Reads start small and double up to the block size, so that small files stay cheap.
  std::size_t read_bytes = std::min<std::size_t>(kBlockBytes, 1 << 16);
  std::vector<char> buf(1 + read_bytes + simdjson::SIMDJSON_PADDING + 2);
  std::size_t lo = 1, hi = 1;  // unconsumed bytes are buf[lo, hi)
  std::uint64_t consumed = 0;  // file offset of buf[lo]
  bool eof = false;
  enum class State { kStart, kTopKey, kTopAfterValue, kEvents, kTail, kDone } state = State::kStart;
  bool bare_array = false;
  bool saw_events = false;
  bool expect_comma = false;  // inside traceEvents, after an event

  auto refill = [&]() -> Status {
    // Moves the unconsumed tail to the front and reads more.
    std::size_t keep = hi - lo;
    if (keep >= kMaxEventBytes)
      return MakeError(
          "{}: an element near byte {} is larger than {} MiB: not a Kineto trace event", label,
          consumed, kMaxEventBytes >> 20);
    // Once 8 MiB are read of a large input, keep the vectors sized for all of it.
    if (total_bytes > consumed && consumed >= (std::uint64_t{8} << 20))
      builder.Reserve(static_cast<double>(consumed) / static_cast<double>(total_bytes));
    if (lo > 1) std::memmove(buf.data() + 1, buf.data() + lo, keep);
    lo = 1;
    hi = 1 + keep;
    if (buf.size() < hi + read_bytes + simdjson::SIMDJSON_PADDING + 2) {
      // Grow to twice the need at once, and size the parser for it once: reallocating
      // per batch would fault in fresh pages every time (most of the cost on a VM).
      buf.resize(2 * (hi + read_bytes) + simdjson::SIMDJSON_PADDING + 2);
      if (parser.capacity() < buf.size()) {
        if (auto err = parser.allocate(buf.size()); err)
          return MakeError("{}: cannot allocate {} bytes for the JSON parser", label, buf.size());
      }
    }
    auto got = read(buf.data() + hi, read_bytes);
    read_bytes = std::min(kBlockBytes, read_bytes * 2);
    if (!got.ok()) return got.error();
    if (*got == 0) eof = true;
    hi += *got;
    std::memset(buf.data() + hi, 0, simdjson::SIMDJSON_PADDING);
    return OkStatus();
  };
  auto truncated = [&](std::string_view where) {
    return MakeError(
        "{}: the trace ends early ({}, after {} bytes): the file is truncated; re-export "
        "or re-copy it",
        label, where, consumed + (hi - lo));
  };

  while (state != State::kDone) {
    char* p = buf.data() + lo;
    char* end = buf.data() + hi;
    char* q = const_cast<char*>(SkipSpace(p, end));
    consumed += static_cast<std::uint64_t>(q - p);
    lo = static_cast<std::size_t>(q - buf.data());
    p = q;
    if (p == end) {
      if (eof) {
        if (state == State::kStart)
          return MakeError("{}: the file is empty; expected a Kineto JSON trace", label);
        if (state == State::kTail && bare_array) break;
        if (state == State::kTail) return truncated("no closing '}'");
        return truncated(saw_events ? "inside traceEvents" : "before traceEvents");
      }
      if (auto s = refill(); !s.ok()) return s.error();
      continue;
    }
    auto advance = [&](const char* to) {
      consumed += static_cast<std::uint64_t>(to - p);
      lo = static_cast<std::size_t>(to - buf.data());
    };
    switch (state) {
      case State::kStart:
        if (*p == '{') {
          state = State::kTopKey;
        } else if (*p == '[') {
          state = State::kEvents;
          bare_array = true;
          saw_events = true;
        } else {
          return MakeError(
              "{}: not JSON (first byte '{}'); expected a Kineto trace (.json or .json.gz)", label,
              *p);
        }
        advance(p + 1);
        break;
      case State::kTopKey:
      case State::kTopAfterValue: {
        if (*p == '}') {
          if (state == State::kTopKey && !saw_events) {
            // an empty object
          }
          advance(p + 1);
          // Only whitespace may follow.
          for (;;) {
            char* r = const_cast<char*>(SkipSpace(buf.data() + lo, buf.data() + hi));
            lo = static_cast<std::size_t>(r - buf.data());
            if (lo < hi)
              return MakeError("{}: unexpected bytes after the end of the JSON document", label);
            if (eof) break;
            if (auto s = refill(); !s.ok()) return s.error();
          }
          state = State::kDone;
          break;
        }
        if (*p == ',') {
          advance(p + 1);
          state = State::kTopKey;
          break;
        }
        if (*p != '"')
          return MakeError("{}: malformed JSON near byte {}: expected a key", label, consumed);
        // key "..." : value
        const char* key_end = SkipString(p, end);
        const char* colon = key_end ? SkipSpace(key_end, end) : nullptr;
        const char* value = colon && colon < end ? SkipSpace(colon + 1, end) : nullptr;
        if (!value || value >= end) {
          if (eof) return truncated("in a top-level key");
          if (auto s = refill(); !s.ok()) return s.error();
          break;
        }
        if (*colon != ':')
          return MakeError("{}: malformed JSON near byte {}: expected ':'", label, consumed);
        std::string_view key(p + 1, static_cast<std::size_t>(key_end - p - 2));
        if (key == "traceEvents") {
          if (*value != '[')
            return MakeError("{}: traceEvents is not an array; not a Kineto trace", label);
          advance(value + 1);
          state = State::kEvents;
          saw_events = true;
          break;
        }
        const char* vend = SkipValue(value, end);
        if (!vend) {
          if (eof) return truncated("in a top-level value");
          if (auto s = refill(); !s.ok()) return s.error();
          break;
        }
        if (key == "deviceProperties")
          ReadDeviceNames(std::string_view(value, static_cast<std::size_t>(vend - value)), &t);
        advance(vend);
        state = State::kTopAfterValue;
        break;
      }
      case State::kEvents: {
        // Fast path: the batch ends at the last "}, {" of the block, found backwards, and
        // the parse of the batch checks that guess. Where it fails (the "}, {" was inside a
        // string or a nested array, or the JSON is malformed), nothing was committed and
        // the exact forward scan below takes the same bytes.
        {
          char* r = p;
          if (*r == ',' && expect_comma) r = const_cast<char*>(SkipSpace(r + 1, end));
          char* cut = r < end && *r == '{' ? LastEventSeparator(r, end) : nullptr;
          if (cut && ParseBatch(parser, builder, r, cut + 1,
                                static_cast<std::size_t>(buf.data() + buf.size() - (cut + 1)),
                                label, consumed + static_cast<std::uint64_t>(r - p))
                         .ok()) {
            advance(cut + 1);
            expect_comma = true;
            break;
          }
        }
        // A run of complete events "{...} , {...}" up to the first incomplete one.
        char* first = nullptr;
        char* last_end = nullptr;
        bool ec = expect_comma;  // committed only with the bytes consumed
        char* r = p;
        bool closed = false;
        for (;;) {
          r = const_cast<char*>(SkipSpace(r, end));
          if (r == end) break;
          if (*r == ',') {
            if (!ec)
              return MakeError("{}: malformed traceEvents near byte {}: a stray ','", label,
                               consumed + static_cast<std::uint64_t>(r - p));
            ec = false;
            ++r;
            continue;
          }
          if (*r == ']') {
            closed = true;
            break;
          }
          if (*r != '{' || ec)
            return MakeError("{}: malformed traceEvents near byte {}: expected an event object",
                             label, consumed + static_cast<std::uint64_t>(r - p));
          const char* e = SkipValue(r, end);
          if (!e) break;
          if (!first) first = r;
          ec = true;
          last_end = const_cast<char*>(e);
          r = last_end;
        }
        if (first) {
          // Bytes between events that a parsed batch leaves behind are commas and spaces.
          std::size_t after = static_cast<std::size_t>(buf.data() + buf.size() - last_end);
          if (auto s = ParseBatch(parser, builder, first, last_end, after, label,
                                  consumed + static_cast<std::uint64_t>(first - p));
              !s.ok())
            return s.error();
          advance(last_end);
          expect_comma = true;  // the scan may have passed a ',' beyond LAST_END
          break;
        }
        if (closed) {
          advance(r + 1);
          state = bare_array ? State::kTail : State::kTopAfterValue;
          break;
        }
        if (eof) return truncated("inside traceEvents");
        if (auto s = refill(); !s.ok()) return s.error();
        break;
      }
      case State::kTail:
        return MakeError("{}: unexpected bytes after the end of the JSON document", label);
      case State::kDone:
        break;
    }
  }
  if (!saw_events) return MakeError("{}: no traceEvents array: not a Kineto/Chrome trace", label);
  builder.Finish();  // also the extent
  return t;
}

// The whole token as a double: finite, inside +-kMaxTimeNs (model.h), so ts + dur and every
// sum stay inside 64 bits. For more than 15 integer digits and exponents.
bool MicrosToNsSlow(std::string_view s, std::int64_t* ns) {
  auto d = ParseFiniteDouble(TrimJsonSpace(s), "");
  if (!d) return false;
  auto us = ScaleFinite(*d, 1000.0, "");
  if (!us) return false;
  auto v = CheckedInt64(*us, "", kMaxTimeNs - 1);
  if (!v) return false;
  *ns = *v;
  return TimeInRange(*ns);
}

}  // namespace

bool MicrosTailToNs(std::string_view s, std::size_t i, std::int64_t whole, bool neg,
                    std::int64_t* ns) {
  std::int64_t frac = 0;
  int frac_digits = 0;
  bool round_up = false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (frac_digits < 3) {
        frac = frac * 10 + (s[i] - '0');
        ++frac_digits;
      } else if (frac_digits == 3) {
        round_up = s[i] >= '5';
        ++frac_digits;
      }
      ++i;
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) return MicrosToNsSlow(s, ns);
  // The token ends here (simdjson leaves the whitespace after it): "5xyz" and "7.5.5" are
  // not numbers.
  while (i < s.size() && IsJsonSpace(s[i])) ++i;
  if (i != s.size()) return false;
  for (int k = std::min(frac_digits, 3); k < 3; ++k) frac *= 10;
  std::int64_t v = whole * 1000 + frac + (round_up ? 1 : 0);  // < 10^18: fits
  *ns = neg ? -v : v;
  return TimeInRange(*ns);
}

bool ParseMicrosToNs(std::string_view s, std::int64_t* ns) {
  std::size_t i = 0;
  bool neg = false;
  if (i < s.size() && s[i] == '-') {
    neg = true;
    ++i;
  }
  std::int64_t whole = 0;
  std::size_t digits = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    if (++digits > 15) return MicrosToNsSlow(s, ns);  // beyond exact int64 ns
    whole = whole * 10 + (s[i] - '0');
    ++i;
  }
  if (digits == 0) return false;
  return MicrosTailToNs(s, i, whole, neg, ns);
}

namespace {

// The file at PATH (plain or gzip), its ops and calls into FOLD when given.
Result<Trace> ReadKinetoFile(const std::string& path, WholeFold* fold) {
  Source src(path);
  if (auto s = src.Open(); !s.ok()) return s.error();
  return ParseStream([&](char* dst, std::size_t n) { return src.Read(dst, n); }, path, 0,
                     src.size(), fold);
}

// The whole-trace summary of what READ(fold) reads with the ops and calls folded.
template <class Read>
Result<Summary> SummarizeWhole(Read read, const SummaryOptions& opt) {
  WholeFold fold;
  auto t = read(&fold);
  if (!t) return t.error();
  return SummarizeFolded(*t, fold, opt);
}

}  // namespace

Result<Trace> ReadKinetoTrace(const std::string& path) { return ReadKinetoFile(path, nullptr); }

Result<Summary> SummarizeKinetoTrace(const std::string& path, const SummaryOptions& opt) {
  if (!opt.window.empty()) {
    auto t = ReadKinetoTrace(path);
    if (!t) return t.error();
    return Summarize(*t, opt);
  }
  return SummarizeWhole([&](WholeFold* fold) { return ReadKinetoFile(path, fold); }, opt);
}

Result<Trace> ParseKinetoJson(std::string_view json, const std::string& label,
                              std::size_t block_bytes, WholeFold* fold) {
  std::size_t pos = 0;
  return ParseStream(
      [&](char* dst, std::size_t n) -> Result<std::size_t> {
        std::size_t k = std::min(n, json.size() - pos);
        std::memcpy(dst, json.data() + pos, k);
        pos += k;
        return k;
      },
      label, block_bytes, json.size(), fold);
}

Result<Summary> SummarizeKinetoJson(std::string_view json, const std::string& label,
                                    std::size_t block_bytes) {
  return SummarizeWhole(
      [&](WholeFold* fold) { return ParseKinetoJson(json, label, block_bytes, fold); },
      SummaryOptions{});
}

}  // namespace vouch::trace
