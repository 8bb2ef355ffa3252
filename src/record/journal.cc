#include "record/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "metrics/summary.h"
#include "record/record.h"
#include "util/fs.h"
#include "util/host.h"
#include "util/json_io.h"

namespace vouch {

LegJournal::~LegJournal() { (void)Close(); }

Status LegJournal::Open(const std::string& dir) {
  if (fd_ >= 0) return MakeError("{}: the journal is already open", path_);
  path_ = (std::filesystem::path(dir) / kLegJournalFile).string();
  fd_ =
      ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd_ < 0) return MakeError("cannot create {}: {}", path_, std::strerror(errno));
  bytes_ = appended_ = synced_ = 0;
  stop_ = false;
  sync_error_.clear();
  syncer_ = std::thread([this] { SyncLoop(); });
  return OkStatus();
}

Status LegJournal::Append(const LegRecord& leg) { return AppendLine(DumpJson(ToJson(leg))); }

Status LegJournal::AppendLine(std::string line) {
  if (fd_ < 0) return MakeError("the leg journal is not open");
  line += '\n';
  // One write for the whole line: O_APPEND puts it at the end in one piece, so a reader
  // sees whole lines, or a last one cut short only when the machine stopped mid-write.
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      return MakeError("cannot append to {}: {}{}", path_, std::strerror(e),
                       e == ENOSPC ? " (the disk is full: free space and run again)" : "");
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  bytes_ += line.size();
  {
    std::lock_guard<std::mutex> l(mu_);
    ++appended_;
  }
  cv_.notify_one();
  return OkStatus();
}

void LegJournal::SyncLoop() {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    cv_.wait(l, [this] { return stop_ || synced_ < appended_; });
    if (synced_ == appended_ && stop_) return;
    std::uint64_t target = appended_;
    l.unlock();
    int rc = ::fdatasync(fd_);
    int e = errno;
    l.lock();
    if (rc != 0 && sync_error_.empty())
      sync_error_ = fmt::format("cannot flush {} to disk: {}", path_, std::strerror(e));
    synced_ = target;
  }
}

Status LegJournal::Close() {
  if (fd_ < 0) return OkStatus();
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  if (syncer_.joinable()) syncer_.join();
  int rc = ::close(fd_);
  int e = errno;
  fd_ = -1;
  if (!sync_error_.empty()) return MakeError("{}", sync_error_);
  if (rc != 0) return MakeError("cannot close {}: {}", path_, std::strerror(e));
  return OkStatus();
}

namespace {

// The metrics of a leg as the summary needs them (name, unit, direction, source, value or
// text).
std::vector<Metric> MetricsOf(const nlohmann::json& leg) {
  std::vector<Metric> out;
  auto it = leg.find("metrics");
  if (it == leg.end() || !it->is_array()) return out;
  for (const auto& m : *it) {
    if (!m.is_object()) continue;
    Metric x;
    if (auto n = m.find("name"); n != m.end() && n->is_string()) x.name = *n;
    if (auto u = m.find("unit"); u != m.end() && u->is_string()) x.unit = *u;
    if (auto s = m.find("source"); s != m.end() && s->is_string()) x.source = *s;
    if (auto b = m.find("better"); b != m.end() && b->is_string())
      if (auto p = ParseBetter(b->get<std::string>())) x.better = *p;
    if (auto t = m.find("text"); t != m.end() && t->is_string()) {
      x.text = t->get<std::string>();
    } else if (auto v = m.find("value"); v != m.end() && v->is_number()) {
      x.value = v->get<double>();
    } else {
      continue;
    }
    out.push_back(std::move(x));
  }
  return out;
}

bool IsTrue(const nlohmann::json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_boolean() && it->get<bool>();
}

std::string StringOf(const nlohmann::json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The journal's finished legs, each once: a leg index met a second time is an error naming
// both lines (the same line twice: appended twice or edited; two different lines: forged or
// two runs in one folder), never another leg. A last line without its newline is left out
// with a note in NOTES (the run stopped while writing it).
struct JournalLegs {
  nlohmann::json legs = nlohmann::json::array();
  std::vector<std::size_t> lines;  // the line of each leg
  std::vector<std::string> notes;
  bool torn = false;
};

Result<JournalLegs> ReadJournalLegs(const std::string& path) {
  auto text = ReadFile(path, 2ull << 30);
  if (!text) return text.error();
  JournalLegs out;
  std::map<std::int64_t, std::size_t> seen;  // leg index -> position in out.legs
  std::size_t pos = 0, line_no = 0;
  while (pos < text->size()) {
    ++line_no;
    std::size_t nl = text->find('\n', pos);
    bool last = nl == std::string::npos;
    std::string_view line(text->data() + pos, (last ? text->size() : nl) - pos);
    pos = last ? text->size() : nl + 1;
    if (last) {
      // Written in one write(2): only a machine that stopped mid-write leaves a line
      // without its newline. It is not a finished leg.
      out.notes.push_back(fmt::format(
          "{} line {} is cut short (the run stopped while writing it): that leg is left out", path,
          line_no));
      out.torn = true;
      break;
    }
    auto leg = ParseJson(line, "it");
    if (!leg)
      return MakeError("{}: line {} is not a JSON object (corrupt journal): {}", path, line_no,
                       leg.error().message);
    if (!leg->is_object())
      return MakeError("{}: line {} is not a JSON object (corrupt journal)", path, line_no);
    auto idx = leg->find("index");
    if (idx != leg->end() && idx->is_number_integer()) {
      const std::int64_t i = idx->get<std::int64_t>();
      auto [it, fresh] = seen.emplace(i, out.legs.size());
      if (!fresh) {
        const std::size_t first = out.lines[it->second];
        if (out.legs[it->second] == *leg)
          return MakeError(
              "{}: line {} repeats line {} (leg index {}) word for word: a leg is counted once; "
              "the journal was appended twice or edited, no figure is read from it",
              path, line_no, first, i);
        return MakeError(
            "{}: lines {} and {} both hold leg index {}, with different contents: the journal "
            "was edited or two runs wrote into one folder; no figure is read from it",
            path, first, line_no, i);
      }
    }
    out.legs.push_back(std::move(*leg));
    out.lines.push_back(line_no);
  }
  return out;
}

// The first place where A and B differ, as a JSON pointer ("/metrics/0/value"), or "".
std::string FirstDifference(const nlohmann::json& a, const nlohmann::json& b) {
  auto patch = nlohmann::json::diff(a, b);
  if (patch.empty() || !patch[0].is_object()) return "";
  return patch[0].value("path", "");
}

}  // namespace

Status CheckJournalAgainstRecord(const std::string& dir, const nlohmann::json& record,
                                 std::string_view record_path) {
  if (!record.is_object() || StringOf(record, "status") == "running") return OkStatus();
  auto rl = record.find("legs");
  if (rl == record.end() || !rl->is_array()) return OkStatus();
  std::string path = (std::filesystem::path(dir) / kLegJournalFile).string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return OkStatus();
  auto j = ReadJournalLegs(path);
  if (!j) return j.error();
  std::map<std::int64_t, const nlohmann::json*> by_index;
  for (const auto& l : *rl) {
    auto idx = l.is_object() ? l.find("index") : l.end();
    if (l.is_object() && idx != l.end() && idx->is_number_integer())
      by_index[idx->get<std::int64_t>()] = &l;
  }
  const std::string tail = fmt::format(
      "; {} and {} must hold the same legs (one of them was edited): no figure is read from them",
      record_path, kLegJournalFile);
  std::set<std::int64_t> journaled;
  for (std::size_t k = 0; k < j->legs.size(); ++k) {
    const auto& leg = j->legs[k];
    auto idx = leg.find("index");
    if (idx == leg.end() || !idx->is_number_integer())
      return MakeError("{}: line {} has no leg index{}", path, j->lines[k], tail);
    const std::int64_t i = idx->get<std::int64_t>();
    journaled.insert(i);
    auto it = by_index.find(i);
    if (it == by_index.end())
      return MakeError("{}: line {} holds leg index {}, which {} does not have{}", path,
                       j->lines[k], i, record_path, tail);
    if (*it->second != leg)
      return MakeError("{}: line {} (leg index {}) differs from that leg in {} at '{}'{}", path,
                       j->lines[k], i, record_path, FirstDifference(leg, *it->second), tail);
  }
  // A journal cut short by a stopped machine may lack the record's last legs, and so may one
  // whose appends failed (a full disk: the run wrote that as a "journal: ..." caveat, and the
  // record's legs are then the evidence); otherwise a leg in the record and not in the journal
  // was added by hand.
  bool append_failed = false;
  if (auto c = record.find("caveats"); c != record.end() && c->is_array())
    for (const auto& x : *c)
      if (x.is_string() && x.get<std::string>().rfind("journal: ", 0) == 0) append_failed = true;
  if (!j->torn && !append_failed)
    for (const auto& [i, leg] : by_index)
      if (!journaled.count(i))
        return MakeError("{}: leg index {} is not in {} ({} lines){}", record_path, i, path,
                         j->legs.size(), tail);
  return OkStatus();
}

Status AssembleFromJournal(const std::string& dir, nlohmann::json* record) {
  nlohmann::json& j = *record;
  if (!j.is_object() || StringOf(j, "status") != "running") return OkStatus();
  std::string path = (std::filesystem::path(dir) / kLegJournalFile).string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return OkStatus();
  auto read = ReadJournalLegs(path);
  if (!read) return read.error();
  nlohmann::json legs = std::move(read->legs);
  std::vector<std::string> notes = std::move(read->notes);
  // What depends on the legs, computed again: counts and the summary over valid legs.
  int measured = 0, valid = 0;
  std::map<std::string, std::vector<std::vector<Metric>>> per_arm;
  if (auto r = j.find("recipe"); r != j.end() && r->is_object())
    if (auto a = r->find("arms"); a != r->end() && a->is_array())
      for (const auto& arm : *a)
        if (arm.is_object()) per_arm[StringOf(arm, "name")];
  for (const auto& l : legs) {
    if (StringOf(l, "role") != "measured") continue;
    ++measured;
    if (!IsTrue(l, "valid")) continue;
    ++valid;
    per_arm[StringOf(l, "arm")].push_back(MetricsOf(l));
  }
  std::map<std::string, std::vector<MetricSummary>> sums;
  for (const auto& [arm, metrics] : per_arm) sums[arm] = SummarizeLegs(metrics);
  j["legs"] = std::move(legs);
  j["measured_legs"] = measured;
  j["valid_legs"] = valid;
  j["summary"] = SummaryToJson(sums);
  nlohmann::json missing =
      j.contains("missing") && j["missing"].is_array() ? j["missing"] : nlohmann::json::array();
  // Still running, or killed? The writer's pid, boot and start time answer it on this host.
  ProcessStamp w;
  if (auto it = j.find("writer"); it != j.end() && it->is_object()) {
    if (auto p = it->find("pid"); p != it->end() && p->is_number_integer()) w.pid = p->get<int>();
    w.host = StringOf(*it, "host");
    w.boot_id = StringOf(*it, "boot_id");
    if (auto t = it->find("start_ticks"); t != it->end() && t->is_number_unsigned())
      w.start_ticks = t->get<std::uint64_t>();
  }
  std::string why;
  switch (ProcessLiveness(w)) {
    case Liveness::kGone:
      j["status"] = "killed";
      why = fmt::format(
          "the vouch that wrote it (pid {} on {}) is gone and left no cause: it ended without "
          "finalising the record (killed outright, e.g. SIGKILL or the out-of-memory killer; a "
          "crash; a disk that filled up; or the machine stopped: its stderr or the system log "
          "may say which), so this run will not finish",
          w.pid, w.host);
      break;
    case Liveness::kAlive:
      why = fmt::format("the run is still in progress (pid {})", w.pid);
      break;
    case Liveness::kUnknown:
      why = w.pid > 0 ? fmt::format(
                            "written by pid {} on {}: this host cannot tell whether it "
                            "still runs",
                            w.pid, w.host)
                      : std::string("no writer recorded: killed, or still running");
      break;
  }
  missing.push_back(fmt::format(
      "record.json was not finalised ({}): its {} finished legs are read from the journal {}", why,
      j["legs"].size(), kLegJournalFile));
  for (auto& n : notes) missing.push_back(std::move(n));
  j["missing"] = std::move(missing);
  return OkStatus();
}

Status ForEachJournalLine(const std::string& path, int count,
                          const std::function<Status(std::string_view line)>& fn) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return MakeError("cannot read the leg journal {}: {}", path, std::strerror(errno));
  std::string line;
  int done = 0;
  char buf[1 << 16];
  Status st = OkStatus();
  while (done < count && st) {
    size_t n = std::fread(buf, 1, sizeof buf, f);
    if (n == 0) break;
    std::string_view chunk(buf, n);
    while (done < count && st && !chunk.empty()) {
      size_t nl = chunk.find('\n');
      line.append(chunk.substr(0, nl));
      if (nl == std::string_view::npos) break;
      chunk.remove_prefix(nl + 1);
      st = fn(line);
      line.clear();
      ++done;
    }
  }
  std::fclose(f);
  if (!st) return st;
  if (done < count)
    return MakeError("the leg journal {} holds {} complete lines, not the {} legs of the run", path,
                     done, count);
  return OkStatus();
}

}  // namespace vouch
