// The leg journal: DIR/legs.jsonl, one line per finished leg (the leg's object exactly as in
// record.json's "legs"), appended as each leg ends. It keeps a long run linear: record.json
// is written when the run starts and when it ends, never rebuilt per leg (that was O(N) per
// leg, N^2 bytes in all). A run that is killed before its end leaves record.json in status
// "running"; the reader (AssembleFromJournal) then takes the legs from the journal.
//
// Durability: a line is in the file (it survives vouch being killed) when Append returns;
// a background thread makes it durable (fdatasync, it survives a power loss) a moment later,
// off the leg's critical path (an fsync on a shared disk costs 0.2 to 100 ms). Close waits
// for the last sync.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <thread>

#include "record/leg_runner.h"
#include "util/result.h"

namespace vouch {

inline constexpr const char* kLegJournalFile = "legs.jsonl";

class LegJournal {
 public:
  LegJournal() = default;
  LegJournal(const LegJournal&) = delete;
  LegJournal& operator=(const LegJournal&) = delete;
  ~LegJournal();

  // Creates (truncates) DIR/legs.jsonl and starts the syncer.
  Status Open(const std::string& dir);
  // Appends LEG as one line. An error names the file (a full disk, an I/O error).
  Status Append(const LegRecord& leg);
  Status AppendLine(std::string line);  // LINE without its newline
  // Waits for the last fdatasync and closes; the first sync error, if any.
  Status Close();
  bool open() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }
  std::uint64_t bytes_written() const { return bytes_; }

 private:
  void SyncLoop();

  std::string path_;
  int fd_ = -1;
  std::uint64_t bytes_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  std::uint64_t appended_ = 0, synced_ = 0;  // line counts
  bool stop_ = false;
  std::string sync_error_;
  std::thread syncer_;
};

// When RECORD (read from DIR/record.json) was never finalised (status "running") and
// DIR/legs.jsonl exists, replaces its legs with the journal's and recomputes what depends
// on them (measured_legs, valid_legs, summary), saying so in "missing" and "caveats".
// A last line cut short (killed while writing it) is left out with a note; any other
// malformed line is an error naming the file and the line.
// A leg index met twice in the journal is an error naming both lines (never another leg).
Status AssembleFromJournal(const std::string& dir, nlohmann::json* record);
// When RECORD (read from RECORD_PATH in DIR) is finished (any status but "running") and
// DIR/legs.jsonl exists, the two must hold the same legs with the same values: a journal line
// that is not the record's leg of its index, a leg of the record missing from the journal (the
// journal not cut short), or a leg index twice, is an error naming the file and the line.
Status CheckJournalAgainstRecord(const std::string& dir, const nlohmann::json& record,
                                 std::string_view record_path);

// Calls FN with each of the first COUNT lines of the journal at PATH, in order, one at a time
// (a long run's record is written from its journal without holding its legs). An error when
// the file cannot be read or holds fewer lines, or what FN returns.
Status ForEachJournalLine(const std::string& path, int count,
                          const std::function<Status(std::string_view line)>& fn);

}  // namespace vouch
