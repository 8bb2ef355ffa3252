// A trend's points kept compactly (SeriesPointList) and built one store row at a time
// (TrendBuilder): issue 39, a million points in ~90 bytes each instead of ~940.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <set>

#include "trend/trend.h"

namespace vouch {

// Every string of a series, each written once as an entry: a LEB128 header (length << 1 | hex)
// and then either the bytes, or, for lowercase hex of even length (run keys, commits), the
// nibbles two to a byte. The encoding is canonical: two strings are equal when their entries
// are. Blocks are never moved, so an entry's address stays valid.
struct TrendStrings {
  static constexpr size_t kBlock = 1 << 20;
  std::vector<std::unique_ptr<unsigned char[]>> blocks;
  size_t used = 0, room = 0;

  static bool Hex(std::string_view s) {
    if (s.empty() || s.size() % 2 != 0) return false;
    for (char c : s)
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    return true;
  }
  static int Nibble(char c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

  // S's entry into OUT (cleared first).
  static void Encode(std::string_view s, std::string& out) {
    out.clear();
    const bool hex = Hex(s);
    for (std::uint64_t h = (static_cast<std::uint64_t>(s.size()) << 1) | (hex ? 1 : 0);;) {
      const auto b = static_cast<unsigned char>(h & 0x7f);
      h >>= 7;
      out.push_back(static_cast<char>(h ? (b | 0x80) : b));
      if (!h) break;
    }
    if (!hex) {
      out.append(s);
      return;
    }
    for (size_t i = 0; i < s.size(); i += 2)
      out.push_back(static_cast<char>((Nibble(s[i]) << 4) | Nibble(s[i + 1])));
  }
  // The length of the string, whether it is hex, and where its payload starts.
  static const unsigned char* Header(const unsigned char* e, size_t* len, bool* hex) {
    std::uint64_t h = 0;
    for (int shift = 0;; shift += 7) {
      const unsigned char b = *e++;
      h |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
    }
    *hex = h & 1;
    *len = static_cast<size_t>(h >> 1);
    return e;
  }
  static size_t EntrySize(const unsigned char* e) {
    size_t len;
    bool hex;
    const unsigned char* p = Header(e, &len, &hex);
    return static_cast<size_t>(p - e) + (hex ? len / 2 : len);
  }
  // The string of entry E: a view into the block, or (hex) decoded into SCRATCH.
  static std::string_view Decode(const unsigned char* e, std::string& scratch) {
    size_t len;
    bool hex;
    const unsigned char* p = Header(e, &len, &hex);
    if (!hex) return {reinterpret_cast<const char*>(p), len};
    static constexpr char kDigits[] = "0123456789abcdef";
    scratch.resize(len);
    for (size_t i = 0; i < len / 2; ++i) {
      scratch[2 * i] = kDigits[p[i] >> 4];
      scratch[2 * i + 1] = kDigits[p[i] & 15];
    }
    return scratch;
  }
  const unsigned char* Add(std::string_view entry) {
    if (entry.size() > room - used) {
      const size_t n = std::max(kBlock, entry.size());
      blocks.push_back(std::make_unique<unsigned char[]>(n));
      used = 0;
      room = n;
    }
    unsigned char* at = blocks.back().get() + used;
    std::memcpy(at, entry.data(), entry.size());
    used += entry.size();
    return at;
  }
};

namespace {

std::string_view EntryBytes(const unsigned char* e) {
  return {reinterpret_cast<const char*>(e), TrendStrings::EntrySize(e)};
}

// Encoded key -> series point, open addressing. A slot is the point and its key's hash; the
// key itself is the point's entry in TrendStrings (KEY_OF), not kept twice.
class KeyIndex {
 public:
  // The point of KEY (an encoded entry), or -1.
  template <class KeyOf>
  long Find(std::string_view key, size_t hash, const KeyOf& key_of) const {
    if (slots_.empty()) return -1;
    const auto h = static_cast<std::uint32_t>(hash);
    for (size_t i = h & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
      const Slot& s = slots_[i];
      if (s.point == kEmpty) return -1;
      if (s.hash == h && EntryBytes(key_of(s.point)) == key) return s.point;
    }
  }
  void Insert(size_t hash, std::uint32_t point) {
    if ((n_ + 1) * 2 > slots_.size()) Grow();
    Place({point, static_cast<std::uint32_t>(hash)});
    ++n_;
  }

 private:
  static constexpr std::uint32_t kEmpty = UINT32_MAX;
  struct Slot {
    std::uint32_t point, hash;
  };
  void Place(const Slot& s) {
    size_t i = s.hash & (slots_.size() - 1);
    while (slots_[i].point != kEmpty) i = (i + 1) & (slots_.size() - 1);
    slots_[i] = s;
  }
  void Grow() {
    std::vector<Slot> old(std::max<size_t>(64, slots_.size() * 2), Slot{kEmpty, 0});
    old.swap(slots_);
    for (const Slot& s : old)
      if (s.point != kEmpty) Place(s);
  }
  std::vector<Slot> slots_;
  size_t n_ = 0;
};

std::string ShortCommit(std::string_view c) { return std::string(c.substr(0, 10)); }

// The median of [FIRST, LAST) (reordered), as MedianOf gives it; one value is itself.
double MedianInPlace(double* first, double* last) {
  const auto n = last - first;
  if (n == 1) return *first;
  if (n == 0) return 0;
  std::sort(first, last);
  return n % 2 == 1 ? first[n / 2] : (first[n / 2 - 1] + first[n / 2]) / 2.0;
}

}  // namespace

std::string SeriesPointList::label(size_t i) const {
  std::string scratch;
  if (by_ == TrendBy::kDay) return std::string(TrendStrings::Decode(day_[i], scratch));
  if (by_ == TrendBy::kRun) return std::string(run_key(i, 0, scratch).substr(0, 12));
  std::string commit;
  std::string_view c = first_commit(i, commit);
  if (c.empty()) return "run " + std::string(run_key(i, 0, scratch).substr(0, 8));
  return ShortCommit(c);
}

std::string_view SeriesPointList::first_commit(size_t i, std::string& scratch) const {
  return TrendStrings::Decode(first_commit_[i], scratch);
}

std::string_view SeriesPointList::run_key(size_t i, size_t k, std::string& scratch) const {
  return TrendStrings::Decode(run_key_[run_begin_[i] + k], scratch);
}

SeriesPoint SeriesPointList::operator[](size_t i) const {
  SeriesPoint p;
  std::string scratch;
  p.label = label(i);
  p.first_commit = std::string(first_commit(i, scratch));
  for (size_t k = 0; k < run_count(i); ++k) p.run_keys.emplace_back(run_key(i, k, scratch));
  p.value = value_[i];
  p.started_unix_s = started_[i];
  p.attributed = attributed(i);
  p.dirty = dirty(i);
  p.clock_sm_median_mhz = clock_sm_median_mhz(i);
  return p;
}

struct TrendBuilder::Impl {
  TrendSeries s;
  std::shared_ptr<TrendStrings> text = std::make_shared<TrendStrings>();
  std::set<std::string> gpus;
  std::string last_name, last_uuid, entry;
  bool have_last = false;
  KeyIndex at_commit, at_run;  // commits (or days) and run keys apart
  // Per run, in the store's order: its point, value, clock and flags.
  std::vector<std::uint32_t> owner;
  std::vector<double> value, clock;
  std::vector<std::uint8_t> flags;
  std::vector<const unsigned char*> run_key;
  std::vector<std::uint32_t> first_run;  // per point: its first run (the key of at_run)
};

TrendBuilder::TrendBuilder(const TrendQuery& q, TrendBy by) : impl_(std::make_unique<Impl>()) {
  impl_->s.metric = q.metric;
  impl_->s.arm = q.arm;
  impl_->s.by = by;
  impl_->s.points.by_ = by;
}

TrendBuilder::~TrendBuilder() = default;

void TrendBuilder::Add(const TrendRow& p) {
  Impl& m = *impl_;
  TrendSeries& s = m.s;
  SeriesPointList& l = s.points;
  if (s.unit.empty()) {
    s.unit = p.unit;
    s.better = p.better;
  }
  if (!m.have_last || m.last_name != p.gpu_name || m.last_uuid != p.gpu_uuid) {
    m.gpus.insert(p.gpu_name.empty() ? "unknown GPU"
                                     : fmt::format("{} ({})", p.gpu_name, p.gpu_uuid));
    m.last_name = p.gpu_name;
    m.last_uuid = p.gpu_uuid;
    m.have_last = true;
  }
  // The run's key is kept whatever the grouping (the point lists its runs).
  TrendStrings::Encode(p.run_key, m.entry);
  const unsigned char* key_entry = m.text->Add(m.entry);
  KeyIndex* index = &m.at_run;
  std::string_view key = p.run_key;
  if (s.by == TrendBy::kDay) {
    index = &m.at_commit;
    key = p.day;
  } else if (s.by == TrendBy::kCommit && !p.commit.empty()) {
    index = &m.at_commit;
    key = p.commit;
  }
  const unsigned char* group = key_entry;
  if (index != &m.at_run) TrendStrings::Encode(key, m.entry);
  const size_t hash = std::hash<std::string_view>{}(m.entry);
  long at =
      index == &m.at_run
          ? index->Find(m.entry, hash, [&](std::uint32_t pt) { return m.run_key[m.first_run[pt]]; })
          : index->Find(m.entry, hash, [&](std::uint32_t pt) {
              return s.by == TrendBy::kDay ? l.day_[pt] : l.first_commit_[pt];
            });
  if (at < 0) {
    at = static_cast<long>(l.size());
    if (index != &m.at_run) group = m.text->Add(m.entry);
    index->Insert(hash, static_cast<std::uint32_t>(at));
    m.first_run.push_back(static_cast<std::uint32_t>(m.owner.size()));
    // The point's first commit: the group's key itself when grouped by commit.
    const unsigned char* commit = group;
    if (!(s.by == TrendBy::kCommit && !p.commit.empty())) {
      TrendStrings::Encode(p.commit, m.entry);
      commit = m.text->Add(m.entry);
    }
    l.first_commit_.push_back(commit);
    if (s.by == TrendBy::kDay) l.day_.push_back(group);
    l.started_.push_back(p.started_unix_s);
    l.value_.push_back(0);
    l.flags_.push_back(SeriesPointList::kAttributed);
  }
  const auto point = static_cast<size_t>(at);
  if (!p.attributed) l.flags_[point] &= static_cast<std::uint8_t>(~SeriesPointList::kAttributed);
  if (p.dirty) l.flags_[point] |= SeriesPointList::kDirty;
  m.owner.push_back(static_cast<std::uint32_t>(point));
  m.run_key.push_back(key_entry);
  m.value.push_back(p.value);
  m.clock.push_back(p.clock_sm_median_mhz.value_or(0));
  m.flags.push_back(p.clock_sm_median_mhz ? SeriesPointList::kHasClock : 0);
}

TrendSeries TrendBuilder::Finish() {
  Impl& m = *impl_;
  TrendSeries& s = m.s;
  SeriesPointList& l = s.points;
  const size_t np = l.size(), nr = m.owner.size();
  l.clock_.assign(np, 0);
  // Each point is the median of its runs' values and clocks. Runs in point order (a counting
  // sort over the store's order), unless every point is one run in order (no copy then).
  bool identity = np == nr;
  for (size_t i = 0; identity && i < nr; ++i) identity = m.owner[i] == i;
  if (identity) {
    l.run_key_ = std::move(m.run_key);
    l.value_ = std::move(m.value);
    l.clock_ = std::move(m.clock);
    for (size_t i = 0; i < np; ++i) l.flags_[i] |= m.flags[i];
    l.run_begin_.resize(np + 1);
    for (size_t i = 0; i <= np; ++i) l.run_begin_[i] = static_cast<std::uint32_t>(i);
  } else {
    std::vector<std::uint32_t>& begin = l.run_begin_;
    begin.assign(np + 1, 0);
    for (auto o : m.owner) ++begin[o + 1];
    for (size_t k = 0; k < np; ++k) begin[k + 1] += begin[k];
    std::vector<double> values(nr), clocks(nr);
    std::vector<std::uint32_t> nv(np, 0), nc(np, 0);
    l.run_key_.assign(nr, nullptr);
    for (size_t i = 0; i < nr; ++i) {
      const size_t o = m.owner[i];
      l.run_key_[begin[o] + nv[o]] = m.run_key[i];
      values[begin[o] + nv[o]++] = m.value[i];
      if (m.flags[i] & SeriesPointList::kHasClock) clocks[begin[o] + nc[o]++] = m.clock[i];
    }
    for (size_t k = 0; k < np; ++k) {
      double* v = values.data() + begin[k];
      l.value_[k] = MedianInPlace(v, v + nv[k]);
      double* c = clocks.data() + begin[k];
      if (nc[k] > 0) {
        l.clock_[k] = MedianInPlace(c, c + nc[k]);
        l.flags_[k] |= SeriesPointList::kHasClock;
      }
    }
  }
  m.owner = {};
  m.value = {};
  m.clock = {};
  m.flags = {};
  m.run_key = {};
  m.first_run = {};
  m.at_commit = {};
  m.at_run = {};
  l.text_ = std::move(m.text);
  for (size_t k = 0; k < np; ++k)
    if (!l.attributed(k)) ++s.unattributed;
  s.gpus.assign(m.gpus.begin(), m.gpus.end());
  MarkMixedTrend(s);
  return std::move(s);
}

}  // namespace vouch
