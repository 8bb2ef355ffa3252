// A window's summary folded while a reader reads (`trace summarize --window NAME` on an Nsight
// Systems export): the window's instances are known first (its NVTX ranges), then the API
// calls stream past and only what the window needs of them is kept (the correlation ids of the
// calls inside an instance, 12 bytes each, and the union of each instance's launch calls),
// then the GPU ops stream past and each is folded into the figures of the instances that
// launched it. No GpuOp nor ApiCall is kept (the trace read whole took 701 MB for 5 M + 5 M
// rows). The summary is the one Summarize gives for the trace read whole. Internal to src/trace.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "trace/model.h"
#include "trace/summary.h"
#include "trace/summary_parts.h"
#include "util/result.h"

namespace vouch::trace {

// Lists of intervals, each appended to at its end, in chunks from one pool (no list is
// reallocated as it grows). An interval takes 8 bytes, its ends as offsets from its chunk's
// first start, where they fit in 32 bits; others go to chunks of 16-byte intervals.
class IntervalLists {
 public:
  using Interval = std::pair<std::int64_t, std::int64_t>;
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  struct List {
    std::uint32_t head = kNone, tail = kNone;
    std::uint64_t size = 0;  // intervals (pieces)
  };
  // Where a reader is in a list: the chunk and the place in it.
  struct Cursor {
    std::uint32_t chunk = kNone, at = 0;
  };

  // Appends V (V.second >= V.first) to LIST; with MERGE, V is merged into LIST's last interval
  // where it starts by that one's end (V starts at or after the last's start).
  void Append(List* list, Interval v, bool merge = false);
  Interval Last(const List& list) const { return Get({list.tail, At(list.tail).n - 1}); }
  Cursor Begin(const List& list) const { return {list.head, 0}; }
  bool Valid(const Cursor& c) const { return c.chunk != kNone && c.at < At(c.chunk).n; }
  Interval Get(const Cursor& c) const {
    const Chunk& k = At(c.chunk);
    if (k.wide) return {k.abs[2 * c.at], k.abs[2 * c.at + 1]};
    return {k.base + k.off[2 * c.at], k.base + k.off[2 * c.at + 1]};
  }
  void Next(Cursor* c) const;
  // LIST's intervals, in order.
  std::vector<Interval> Copy(const List& list) const;
  // Empties LIST (its chunks are not reused).
  static void Clear(List* list) { *list = List{}; }

 private:
  static constexpr std::uint32_t kPerChunk = 29, kPerWideChunk = 14;
  static constexpr std::uint32_t kChunksPerBlock = 4096;
  static constexpr std::int64_t kMaxOffset = std::numeric_limits<std::uint32_t>::max();
  struct Chunk {  // 256 bytes
    std::int64_t base = 0;
    std::uint32_t next = kNone, n = 0;
    bool wide = false;
    union {
      std::uint32_t off[2 * kPerChunk];     // not wide: (start, end) - base
      std::int64_t abs[2 * kPerWideChunk];  // wide: (start, end)
    };
  };
  // A chunk of LIST that V can go in at the end (a new one where the last cannot take it).
  Chunk& Room(List* list, Interval v);
  Chunk& At(std::uint32_t i) { return blocks_[i / kChunksPerBlock][i % kChunksPerBlock]; }
  const Chunk& At(std::uint32_t i) const {
    return blocks_[i / kChunksPerBlock][i % kChunksPerBlock];
  }
  std::vector<std::unique_ptr<Chunk[]>> blocks_;
  std::uint32_t chunks_ = 0;
};

class WindowFold {
 public:
  using Interval = std::pair<std::int64_t, std::int64_t>;

  // The instances of the window: the CPU ranges of RANGES named WANT, sorted by start as
  // Summarize sorts them. RANGES must outlive the fold.
  WindowFold(const std::vector<Range>& ranges, std::uint32_t want);
  std::size_t instances() const { return insts_.size(); }

  // Room for N calls inside an instance (the calls there are: the pages past those used are
  // never touched).
  void ReserveCalls(std::size_t n) { links_.reserve(n); }
  // An API call, in the order of the trace's calls.
  void Call(std::int64_t start, std::int64_t end, std::int64_t pid, std::int64_t tid,
            std::int64_t correlation, bool is_launch);
  // After the last call.
  void EndCalls();
  // A GPU op (END >= START), in the order of the trace's ops. PID: -1 unknown.
  void Op(GpuOpKind kind, std::int64_t start, std::int64_t end, std::int64_t correlation,
          std::int64_t pid, std::uint32_t name_id, std::uint64_t bytes);
  // Whether an instance's kernels came out of (start, end) order: then every kernel is given
  // again (KernelAgain, in the same order), and those instances' unions are formed from them
  // sorted (EndKernelsAgain).
  bool NeedsKernelsAgain() const { return unordered_kernels_ > 0; }
  void KernelAgain(std::int64_t start, std::int64_t end, std::int64_t correlation,
                   std::int64_t pid);
  void EndKernelsAgain();

  // The window's summary of META (the trace as its reader read it, without its GPU ops and API
  // calls, which went to this fold; META's ranges those the fold was made from, with the names
  // of META's table), the same as Summarize gives for the trace with them. Consumes the fold.
  Result<Summary> Summarize(const Trace& meta, const SummaryOptions& opt);

  // The durations of every op and call, as CheckDurationTotals adds them.
  std::int64_t op_total = 0, api_total = 0;
  bool ops_too_long = false, api_too_long = false;

 private:
  static constexpr std::int64_t kNoTime = std::numeric_limits<std::int64_t>::min();
  struct Inst {
    const Range* range = nullptr;
    Figures f;
    std::int64_t op_lo = std::numeric_limits<std::int64_t>::max(), op_hi = kNoTime;
    IntervalLists::List launches;  // the union of its launch calls, once EndCalls ran
    Interval last_launch{kNoTime, kNoTime};
    bool launches_unordered = false, kernels_unordered = false;
    Interval last_kernel{kNoTime, kNoTime};
    // The kernels' union so far: gaps' reach, the piece being formed, where the launches'
    // union is read from for the overlap.
    std::int64_t reach = kNoTime;
    Interval piece{kNoTime, kNoTime};
    IntervalLists::Cursor at;
  };
#pragma pack(push, 4)
  struct Link {  // a call inside instance INST: the ops of its correlation id are the window's
    std::int64_t correlation;
    std::uint32_t inst;
    bool operator<(const Link& o) const {
      return correlation != o.correlation ? correlation < o.correlation : inst < o.inst;
    }
  };
#pragma pack(pop)
  // A thread's instances, by start, with the latest end up to each.
  struct Thread {
    std::vector<std::uint32_t> insts;
    std::vector<std::int64_t> starts, reach;
  };

  const Link* FirstLink(std::int64_t correlation);
  // Calls F(inst) for each instance that launched an op of CORRELATION and PID.
  template <class F>
  void ForEachInstance(std::int64_t correlation, std::int64_t pid, F f);
  void Kernel(Inst& in, std::int64_t start, std::int64_t end);
  void ClosePiece(Inst& in);
  void AddKernelDuration(std::uint32_t name_id, std::int64_t d);

  std::vector<Inst> insts_;
  std::vector<std::pair<std::pair<std::int64_t, std::int64_t>, Thread>> threads_;  // by (pid, tid)
  std::size_t last_thread_ = 0;
  IntervalLists lists_;
  std::vector<Link> links_;
  bool links_sorted_ = true;
  std::size_t hint_ = 0;
  std::size_t unordered_kernels_ = 0;
  std::vector<std::pair<std::uint32_t, Interval>> again_;
  // The window's kernels' durations by name, in blocks that double from kFirstBlock values up
  // to kBlock (a name seen once costs 128 bytes, not a block).
  static constexpr std::size_t kFirstBlock = 16, kBlock = 8192;
  struct Durations {
    std::vector<std::unique_ptr<std::int64_t[]>> blocks;
    std::size_t n = 0, in_last = 0, last_size = 0;
  };
  std::vector<Durations> durations_;
  std::vector<std::uint32_t> first_seen_;
};

}  // namespace vouch::trace
