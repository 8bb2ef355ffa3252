// Internal to the Kineto reader (kineto_reader.cc streams the file, kineto_event.cc reads
// each event): one event's fields as read, and the builder that keeps what the summary needs
// in the trace model (model.h).
#pragma once

#include <simdjson.h>

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "trace/model.h"
#include "trace/whole_fold.h"

namespace vouch::trace::kineto {

enum class Cat {
  kKernel,
  kMemcpy,
  kMemset,
  kRuntime,
  kDriver,
  kCpuRange,
  kGpuRange,
  kSkip,
  kUnknown
};

// The categories vouch counts without keeping (cpu_op, ac2g, ...), spelled as Kineto writes
// them: an event of one of these is counted in an array slot, not a map (most of a trace).
inline constexpr std::size_t kSkipSlots = 14;

// JSON whitespace (the forward scanner keeps std::isspace, as before).
inline bool IsJsonSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// A raw token without the whitespace simdjson leaves after it.
inline std::string_view TrimJsonSpace(std::string_view tok) {
  while (!tok.empty() && IsJsonSpace(tok.back())) tok.remove_suffix(1);
  return tok;
}

// What one event says, as read; views point into the parse (valid until the next batch).
struct EventFields {
  std::string_view ph, cat, name;
  std::int64_t ts = 0, dur = 0, pid = -1, tid = -1;
  std::int64_t correlation = -1, stream = -1, device = -1, bytes = 0, external = -1;
  bool has_ts = false, has_dur = false;
  // Set when "cat" has been read: an event vouch does not keep (cpu_op, python_function:
  // most of a trace) then skips its name and args without walking them.
  bool classified = false;
  Cat kind = Cat::kUnknown;
  // kSkip with "cat" spelled exactly as Kineto writes it: its slot (see kSkipSlots), else -1.
  std::int8_t skip_slot = -1;
  bool Unused() const { return classified && (kind == Cat::kSkip || kind == Cat::kUnknown); }
};

class Builder {
 public:
  // With FOLD, the GPU ops and API calls are folded into it (the whole-trace summary,
  // SummarizeFolded) instead of kept in the trace; ranges are kept either way.
  explicit Builder(Trace* t, WholeFold* fold = nullptr) : t_(t), fold_(fold), names_(&t->names) {}

  // Reads one event; throws simdjson_error on malformed JSON. Changes nothing in the trace:
  // a batch is committed only once all of it has parsed (see ParseBatch). FOLDING (this
  // builder's folding()): a kernel's or an API call's pid, tid and args are not read either
  // (a copy's or a set's bytes are); its args are still walked, so that the same files are
  // refused.
  static void Read(simdjson::ondemand::object obj, bool folding, EventFields* out);
  bool folding() const { return fold_ != nullptr; }
  // Holds a read event until its whole batch has parsed: CommitBatch() then keeps what the
  // batch's events say, DropBatch() forgets them (the caller retries the bytes another way).
  void Stage(const EventFields& f) {
    if (f.skip_slot >= 0) {
      ++staged_skips_[static_cast<std::size_t>(f.skip_slot)];
      return;
    }
    pending_.push_back(f);
  }
  void CommitBatch();
  void DropBatch();
  // Keeps room for the events still to come, guessed from the share of the input read so
  // far (FRACTION_READ in (0, 1]): saves the copies and fresh pages of repeated doubling.
  void Reserve(double fraction_read);
  void Finish();

 private:
  template <class T>
  static T& Keep(std::vector<T>& v, const EventFields& f, std::uint32_t name_id);
  static std::int64_t IntOr(simdjson::ondemand::value& v, std::int64_t fallback);
  void Commit(const EventFields& f);
  void Skip(std::string_view cat);

  Trace* t_;
  WholeFold* fold_;
  NameTable names_;
  std::vector<EventFields> pending_;  // one batch's events other than those in the slots
  std::array<std::int64_t, kSkipSlots> staged_skips_{};  // one batch's, by slot
  std::array<std::int64_t, kSkipSlots> skips_{};         // committed, by slot
  std::int64_t first_ns_ = std::numeric_limits<std::int64_t>::max();
  std::int64_t last_ns_ = std::numeric_limits<std::int64_t>::min();
  std::map<std::string, std::int64_t, std::less<>> skipped_;
  std::map<std::string, std::int64_t, std::less<>>::iterator last_skip_ = skipped_.end();
  std::map<std::string, std::int64_t, std::less<>> unknown_;
  std::map<std::string, std::int64_t, std::less<>> negative_;
};

}  // namespace vouch::trace::kineto
