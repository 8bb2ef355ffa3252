#include "fleet/attempt_fast.h"

#include <fcntl.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <string_view>

#include "clock/policy.h"
#include "clock/window.h"
#include "fleet/dom_view.h"
#include "fleet/trust.h"
#include "metrics/reserved.h"
#include "record/journal.h"
#include "record/record.h"
#include "record/record_dom.h"
#include "util/bounded_file.h"
#include "util/hash.h"
#include "util/json_io.h"

namespace vouch {
namespace {

using namespace dom_view;  // NOLINT(google-build-using-namespace): its helpers, here only

// Below kMaxJsonDepth: a document simdjson reads at this depth ParseJson reads too.
constexpr std::size_t kDomDepth = 100;

simdjson::dom::parser& Parser() {
  thread_local simdjson::dom::parser parser;
  thread_local const bool sized = parser.allocate(1 << 16, kDomDepth) == simdjson::SUCCESS;
  (void)sized;  // unsized, its depth is not kDomDepth: the caller declines
  return parser;
}

bool Listed(const std::vector<DirEntry>& listing, std::string_view name) {
  for (const auto& e : listing)
    if (e.name == name) return e.type == DirEntry::Type::kFile;
  return false;
}

// CheckOwnFolder's rule: not writable by others unless sticky.
bool FolderOk(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return false;
  return !((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX));
}

// PATH into BUF (its first N bytes; simdjson's padding after them) when CheckOwnFile would
// pass on it: a regular file, no link, owned by this user, not writable by group or others,
// at most MAX bytes. The checks are the open file's own (fstat), so what is checked is what is
// read, hashed and parsed.
bool ReadOwn(const std::string& path, std::uint64_t max, std::string& buf, std::size_t& n) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st {};
  static const uid_t me = ::geteuid();
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == me &&
            !(st.st_mode & (S_IWGRP | S_IWOTH)) && static_cast<std::uint64_t>(st.st_size) <= max;
  n = 0;
  if (ok) {
    const auto size = static_cast<std::size_t>(st.st_size);
    if (buf.size() < size + simdjson::SIMDJSON_PADDING)
      buf.resize(size + simdjson::SIMDJSON_PADDING);
    while (n < size) {
      const ssize_t got = ::read(fd, buf.data() + n, size - n);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;
      n += static_cast<std::size_t>(got);
    }
    ok = n == size;
  }
  ::close(fd);
  return ok;
}

bool Same(double a, double b) {
  return a == b || std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b));
}

// What the readers below take of a leg, found in one pass over its keys (each declared and
// required: Accepts found it once).
struct Leg {
  element index, metrics, reasons, window;
  std::string_view role, arm;
  bool valid = false;
};

std::vector<Leg> LegsOf(element legs) {
  std::vector<Leg> out;
  for (element l : Arr(legs)) {
    Leg g;
    for (simdjson::dom::key_value_pair kv : Obj(l)) {
      const std::string_view k = kv.key;
      if (k == "index")
        g.index = kv.value;
      else if (k == "metrics")
        g.metrics = kv.value;
      else if (k == "reasons")
        g.reasons = kv.value;
      else if (k == "window")
        g.window = kv.value;
      else if (k == "role")
        g.role = Str(kv.value);
      else if (k == "arm")
        g.arm = Str(kv.value);
      else if (k == "valid")
        g.valid = kv.value.get_bool().value_unsafe();
    }
    out.push_back(g);
  }
  return out;
}

// CheckRecordShape's checks past the schema: a leg index once, a metric a value or a text.
// RecordMedians(REC, ARM) finds nothing wrong: SummarizeLegs' reading of the arm's valid
// measured legs (per name, the first occurrence in each leg, a text one counting for nothing,
// a reserved name only from vouch's own source), its n, median, min and max compared with the
// summary the record lists, without a Metric of each.
bool MediansOk(element rec, const std::vector<Leg>& legs, std::string_view arm) {
  struct Name {
    std::string_view name;
    bool numeric = false;
    std::vector<double> values;
    std::size_t last_leg = 0;
  };
  std::vector<Name> names;
  std::size_t leg_no = 0;
  int valid_measured = 0;
  for (const Leg& l : legs) {
    if (l.role != "measured") continue;
    if (l.valid) {
      ++valid_measured;
      if (Arr(l.reasons).size() != 0 || Str(At(At(l.window, "verdict"), "status")) != "valid")
        return false;
    }
    if (l.arm != arm || !l.valid) continue;
    ++leg_no;
    for (element mj : Arr(l.metrics)) {
      const std::string_view name = Str(At(mj, "name"));
      const std::string_view source = OptStr(mj, "source");
      if (!source.empty() && !IsVouchSource(source) && IsReservedMetricName(name)) continue;
      auto it =
          std::find_if(names.begin(), names.end(), [&](const Name& n) { return n.name == name; });
      if (it == names.end()) {
        it = names.emplace(names.end());
        it->name = name;
      }
      if (it->last_leg == leg_no) continue;
      it->last_leg = leg_no;
      element text;
      if (Get(mj, "text", text)) continue;
      it->numeric = true;
      it->values.push_back(Num(At(mj, "value")));
    }
  }
  if (Num(At(rec, "valid_legs")) != valid_measured) return false;
  std::size_t numeric = 0;
  for (auto& n : names) {
    if (!n.numeric) continue;
    ++numeric;
    std::sort(n.values.begin(), n.values.end());
  }
  std::vector<std::string_view> listed;
  element entries;
  if (Find(At(rec, "summary"), arm, entries))
    for (element e : Arr(entries)) {
      const std::string_view name = Str(At(e, "name"));
      if (std::find(listed.begin(), listed.end(), name) != listed.end()) return false;
      listed.push_back(name);
      auto c = std::find_if(names.begin(), names.end(),
                            [&](const Name& n) { return n.numeric && n.name == name; });
      if (c == names.end()) return false;
      const auto& v = c->values;
      const std::size_t k = v.size();
      const double median = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
      if (static_cast<std::size_t>(Num(At(e, "n"))) != k || !Same(Num(At(e, "median")), median) ||
          !Same(Num(At(e, "min")), v.front()) || !Same(Num(At(e, "max")), v.back()))
        return false;
    }
  // Every numeric name listed: LISTED holds no name twice, and each is a numeric one.
  return listed.size() == numeric;
}

// What PairWindows and PacingClockMean read of a leg's window (WindowSummaryOfChecked's
// reading of those fields).
struct GpuView {
  std::string_view uuid, driver;
  std::optional<std::int64_t> max_sm, app_sm;
  std::optional<bool> persistence;
  std::int64_t busy = 0;
  bool has_sm = false;
  double sm_median = 0, sm_mean = NAN;
};
struct WindowView {
  bool valid = false, simulated = false;
  std::string_view boot_id;
  std::vector<GpuView> gpus;
  element policy;
};

template <class V>
std::optional<V> OptOf(element j, std::string_view k) {
  element v;
  if (!Get(j, k, v) || v.type() == T::NULL_VALUE) return std::nullopt;
  if constexpr (std::is_same_v<V, bool>)
    return v.get_bool().value_unsafe();
  else
    return static_cast<V>(Num(v));
}

// The window of a leg whose header CheckWindowHeader passes; nullopt otherwise.
std::optional<WindowView> ViewOf(element w) {
  element schema, version;
  if (!Get(w, "schema", schema) || schema.type() != T::STRING || Str(schema) != "vouch.window" ||
      !Get(w, "schema_version", version) || !IsOne(version))
    return std::nullopt;
  WindowView v;
  v.valid = Str(At(At(w, "verdict"), "status")) == "valid";
  v.simulated = At(w, "simulated").get_bool().value_unsafe();
  v.boot_id = OptStr(At(w, "host"), "boot_id");
  v.policy = At(w, "policy");
  for (element g : Arr(At(w, "gpus"))) {
    const element st = At(g, "static"), f = At(g, "fold");
    GpuView x;
    x.uuid = OptStr(st, "uuid");
    x.driver = OptStr(st, "driver_version");
    x.max_sm = OptOf<std::int64_t>(st, "max_sm_mhz");
    x.app_sm = OptOf<std::int64_t>(st, "app_sm_mhz");
    x.persistence = OptOf<bool>(st, "persistence");
    x.busy = static_cast<std::int64_t>(Num(At(f, "busy_readings")));
    element sm;
    if (Get(f, "sm_mhz", sm) && sm.type() != T::NULL_VALUE) {
      x.has_sm = true;
      x.sm_median = Num(At(sm, "median"));
      element mean;
      if (Get(sm, "mean", mean) && mean.type() != T::NULL_VALUE) x.sm_mean = Num(mean);
    }
    v.gpus.push_back(x);
  }
  return v;
}

// PairWindows(A, B, P, ..).paired with every rule passing (none waived); false where any rule
// fails (the ordinary reading then words it).
bool PairsCleanly(const WindowView& a, const WindowView& b, const Policy& p) {
  constexpr double kEps = 1e-12;  // clock/window.cc's
  if (!a.valid || !b.valid || a.simulated != b.simulated || a.gpus.empty()) return false;
  std::vector<std::string_view> ua, ub;
  for (const auto& g : a.gpus) ua.push_back(g.uuid);
  for (const auto& g : b.gpus) ub.push_back(g.uuid);
  std::sort(ua.begin(), ua.end());
  std::sort(ub.begin(), ub.end());
  if (ua != ub) return false;
  const bool several = a.gpus.size() > 1 || b.gpus.size() > 1;
  for (const auto& ga : a.gpus) {
    auto it = std::find_if(b.gpus.begin(), b.gpus.end(),
                           [&](const GpuView& x) { return x.uuid == ga.uuid; });
    if (it == b.gpus.end()) continue;
    const GpuView& gb = *it;
    if (ga.driver != gb.driver || ga.max_sm != gb.max_sm || ga.app_sm != gb.app_sm ||
        ga.persistence != gb.persistence)
      return false;
    const bool busy_a = ga.busy > 0, busy_b = gb.busy > 0;
    if (several && !busy_a && !busy_b) continue;
    if (several && busy_a != busy_b) return false;
    if (!ga.has_sm || !gb.has_sm) return false;
    if (!(RelativeOffset(ga.sm_median, gb.sm_median) <= p.max_median_offset + kEps)) return false;
    if (!std::isfinite(ga.sm_mean) || !std::isfinite(gb.sm_mean)) return false;
    if (!(RelativeOffset(ga.sm_mean, gb.sm_mean) <= p.max_mean_offset + kEps)) return false;
  }
  return a.boot_id == b.boot_id && !a.boot_id.empty();
}

// PacingClockMean's: the lowest finite busy-clock mean of the busy GPUs.
double PacingMean(const WindowView& w) {
  std::optional<double> out;
  for (const auto& g : w.gpus) {
    if (g.busy == 0 || !g.has_sm || !std::isfinite(g.sm_mean)) continue;
    if (!out || g.sm_mean < *out) out = g.sm_mean;
  }
  return out.value_or(0);
}

// ab_pairs.cc's Headline: the first metric of that name with a number.
std::optional<element> Headline(const Leg& leg, std::string_view headline) {
  for (element m : Arr(leg.metrics)) {
    element v;
    if (OptStr(m, "name") == headline && Get(m, "value", v) && IsNumber(v)) return m;
  }
  return std::nullopt;
}

nlohmann::json ToJson(element e) {
  nlohmann::json j;
  DomToJson(e, j);
  return j;
}

// SlimAbRecord of REC's tree, built from simdjson's.
nlohmann::json SlimRecord(element rec, const std::vector<Leg>& legs) {
  nlohmann::json slim = nlohmann::json::object();
  for (const char* k : kAbRecordKept) {
    element v;
    if (Find(rec, k, v)) DomToJson(v, slim[k]);
  }
  nlohmann::json kept = nlohmann::json::array();
  for (const Leg& leg : legs) {
    nlohmann::json window = nlohmann::json::object();
    const element w = leg.window;
    for (const char* k : kAbLegWindowKept) {
      element v;
      if (Get(w, k, v)) DomToJson(v, window[k]);
    }
    element boot;
    if (Get(At(w, "host"), "boot_id", boot)) DomToJson(boot, window["host"]["boot_id"]);
    nlohmann::json gpus = nlohmann::json::array();
    for (element gpu : Arr(At(w, "gpus"))) {
      element u;
      nlohmann::json& g = gpus.emplace_back();
      if (Get(At(gpu, "static"), "uuid", u)) DomToJson(u, g["static"]["uuid"]);
    }
    window["gpus"] = std::move(gpus);
    kept.emplace_back(nlohmann::json::object())["window"] = std::move(window);
  }
  slim["legs"] = std::move(kept);
  return slim;
}

// The pairs RecomputeAbPairs forms from REC's legs, where it would form them without an error
// or an edit and every pair is valid (both legs valid, the headline in both, every pairing
// rule passed). False otherwise.
bool FormPairs(element rec, const std::vector<Leg>& all, element recorded, bool has_recorded,
               std::string_view headline, std::string& better, nlohmann::json& pairs) {
  std::string_view arm_a, arm_b;
  element extra, verdict, arms;
  if (Find(rec, "extra", extra) && Find(extra, "verdict", verdict) && Find(verdict, "arms", arms) &&
      arms.type() == T::OBJECT) {
    element x;
    if (Find(arms, "A", x)) {
      if (x.type() != T::STRING) return false;  // nlohmann's value() would throw
      arm_a = Str(x);
    }
    if (Find(arms, "B", x)) {
      if (x.type() != T::STRING) return false;
      arm_b = Str(x);
    }
  } else {
    std::vector<std::string_view> warm;
    for (const Leg& l : all)
      if (l.role == "warmup") warm.push_back(l.arm);
    if (warm.size() >= 2) arm_a = warm[0], arm_b = warm[1];
  }
  if (arm_a.empty() || arm_b.empty() || arm_a == arm_b) return false;
  if (!MediansOk(rec, all, arm_a) || !MediansOk(rec, all, arm_b)) return false;

  std::optional<Policy> policy;
  element pe;
  if (Find(rec, "policy", pe))
    if (auto p = PolicyFromJson(ToJson(pe), "record")) policy = *p;

  std::vector<int> measured;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i].role == "measured") measured.push_back(static_cast<int>(i));
  std::vector<std::optional<WindowView>> views(all.size());
  pairs = nlohmann::json::array();
  for (std::size_t k = 0; k + 4 <= measured.size(); k += 4) {
    const int* q = &measured[k];
    std::string pat;
    for (int j = 0; j < 4; ++j) {
      const std::string_view arm = all[static_cast<std::size_t>(q[j])].arm;
      pat += arm == arm_a ? "A" : arm == arm_b ? "B" : "?";
    }
    const bool abba = pat == "ABBA";
    if (!abba && pat != "BAAB") return false;
    const int ia1 = abba ? q[0] : q[1], ib1 = abba ? q[1] : q[0];
    const int ia2 = abba ? q[3] : q[2], ib2 = abba ? q[2] : q[3];
    for (auto [ia, ib] : {std::pair{ia1, ib1}, std::pair{ia2, ib2}}) {
      const Leg& la = all[static_cast<std::size_t>(ia)];
      const Leg& lb = all[static_cast<std::size_t>(ib)];
      // A leg not valid, or without the headline: the pair's reason is the ordinary reading's.
      const auto ma = Headline(la, headline), mb = Headline(lb, headline);
      if (!la.valid || !lb.valid || !ma || !mb) return false;
      for (int i : {ia, ib}) {
        auto& v = views[static_cast<std::size_t>(i)];
        if (!v) v = ViewOf(all[static_cast<std::size_t>(i)].window);
        if (!v) return false;  // the header's error is the ordinary reading's
      }
      const WindowView& wa = *views[static_cast<std::size_t>(ia)];
      const WindowView& wb = *views[static_cast<std::size_t>(ib)];
      const Policy rule = policy ? *policy : PolicyFromCheckedJson(ToJson(wa.policy));
      if (!PairsCleanly(wa, wb, rule)) return false;
      // Judge's pair, its keys in order (each goes at the end of the map).
      nlohmann::json& p = pairs.emplace_back(nlohmann::json::object());
      auto& o = p.get_ref<nlohmann::json::object_t&>();
      o.emplace_hint(o.end(), "a", Num(At(*ma, "value")));
      o.emplace_hint(o.end(), "a_leg", ia);
      o.emplace_hint(o.end(), "b", Num(At(*mb, "value")));
      o.emplace_hint(o.end(), "b_leg", ib);
      o.emplace_hint(o.end(), "block", k / 4);
      o.emplace_hint(o.end(), "clock_a_mhz", PacingMean(wa));
      o.emplace_hint(o.end(), "clock_b_mhz", PacingMean(wb));
      o.emplace_hint(o.end(), "reason", "");
      o.emplace_hint(o.end(), "valid", true);
    }
  }

  // The direction from the legs' own headline metric: one that differs is an edit.
  for (int i : measured) {
    const Leg& l = all[static_cast<std::size_t>(i)];
    const auto m = l.valid ? Headline(l, headline) : std::nullopt;
    element b;
    if (!m || !Get(*m, "better", b) || b.type() != T::STRING) continue;
    const std::string_view bs = Str(b);
    if (bs != "higher" && bs != "lower") continue;
    if (bs != better) return false;
    break;
  }

  // The pairs the record lists must be the legs' (any difference is an edit to word).
  if (!has_recorded || recorded.type() != T::ARRAY) return true;
  std::size_t i = 0;
  for (element r : Arr(recorded)) {
    if (i >= pairs.size() || r.type() != T::OBJECT) return false;
    const auto& p = pairs[i++];
    element x;
    auto leg_of = [&](const char* k) -> std::optional<int> {
      if (!Find(r, k, x)) return -1;
      return Int(x);
    };
    const auto ra = leg_of("a_leg"), rb = leg_of("b_leg");
    if (!ra || !rb) return false;
    const bool rv = Find(r, "valid", x) && x.type() == T::BOOL && x.get_bool().value_unsafe();
    auto num = [&](const char* k) { return Find(r, k, x) && IsNumber(x) ? Num(x) : NAN; };
    const bool same =
        *ra == p["a_leg"].get<int>() && *rb == p["b_leg"].get<int>() &&
        rv == p["valid"].get<bool>() &&
        (!rv || (Same(num("a"), p["a"].get<double>()) && Same(num("b"), p["b"].get<double>())));
    if (!same) return false;
  }
  return true;
}

}  // namespace

bool ReadAbAttemptFast(FleetAttempt& out, const std::vector<DirEntry>& top,
                       const std::vector<DirEntry>& run, const std::string& key) {
  // A link, a baseline or a journal to assemble is the ordinary reading's. (--allow-cross-boot
  // changes nothing here: a pair of two boots, the one rule it waives, is declined below.)
  for (const auto& e : top)
    if (e.type == DirEntry::Type::kSymlink || e.name == "baseline.json") return false;
  for (const auto& e : run)
    if (e.type == DirEntry::Type::kSymlink || e.name == kLegJournalFile) return false;
  if (!Listed(top, "node.json") || !Listed(top, "seal.json") || !Listed(run, "record.json"))
    return false;
  const std::string run_dir = out.dir + "/run";
  if (!FolderOk(out.dir) || !FolderOk(run_dir)) return false;
  thread_local std::string node_buf, seal_buf, rec_buf;
  std::size_t nn = 0, ns = 0, nr = 0;
  const std::string node_path = out.dir + "/node.json";
  if (!ReadOwn(node_path, 1 << 20, node_buf, nn) ||
      !ReadOwn(out.dir + "/seal.json", 1 << 20, seal_buf, ns) ||
      !ReadOwn(run_dir + "/record.json", kMaxRecordFileBytes, rec_buf, nr))
    return false;
  const std::string_view node_text(node_buf.data(), nn), rec_text(rec_buf.data(), nr);

  // The seal: each file's digest under the fleet's key (VerifyFleetAttempt's test, on the tree
  // ReadJsonFile would build: a repeated key is its last).
  if (Parser().max_depth() != kDomDepth) return false;
  const std::string_view seal_text(seal_buf.data(), ns);
  element seal, files;
  if (TextNeedsNlohmann(seal_text) ||
      Parser().parse(seal_buf.data(), ns, false).get(seal) != simdjson::SUCCESS ||
      !Find(seal, "files", files) || files.type() != T::OBJECT)
    return false;
  const AttemptIdentity id{out.node, out.task_id, out.attempt};
  auto sealed = [&](const char* f, std::string_view bytes) {
    element list, mac;
    if (!Find(files, f, list) || list.type() != T::ARRAY) return false;
    const std::string want = FleetSealMac(key, id, f, Sha256Hex(bytes));
    for (element e : Arr(list))
      if (Find(e, "mac", mac) && mac.type() == T::STRING && Str(mac) == want) return true;
    return false;
  };
  if (!sealed("node.json", node_text) || !sealed("run/record.json", rec_text)) return false;

  auto info = ParseJson(node_text, node_path);
  if (!info || !info->is_object()) return false;

  // The record: its header, schema and shape (ReadRecordJsonFile's), on simdjson's tree.
  if (TextNeedsNlohmann(rec_text)) return false;
  element rec;  // the seal's tree is not read after this
  if (Parser().parse(rec_buf.data(), nr, false).get(rec) != simdjson::SUCCESS) return false;
  if (!RecordTreeOk(rec)) return false;
  const std::vector<Leg> legs = LegsOf(At(rec, "legs"));

  // ReadAttempt's reading of the A/B parts.
  std::string headline, better;
  std::optional<double> band_log;
  nlohmann::json pairs = nlohmann::json::array();
  element extra, src, x;
  bool has_src = false;
  const bool has_extra = Find(rec, "extra", extra) && extra.type() == T::OBJECT;
  if (has_extra && Find(extra, "verdict", x) && x.type() == T::OBJECT && Find(x, "pairs", src)) {
    src = x;
    has_src = true;
  } else if (has_extra && Find(extra, "blocks_so_far", x) && x.type() == T::OBJECT) {
    src = x;
    has_src = true;
  }
  if (has_src) {
    element recorded;
    const bool has_recorded = Find(src, "pairs", recorded);
    for (auto [k, to] : {std::pair{"headline", &headline}, std::pair{"better", &better}})
      if (Find(src, k, x)) {
        if (x.type() != T::STRING) return false;  // nlohmann's value() would throw
        *to = Str(x);
      }
    if (Find(src, "band_log", x) && IsNumber(x)) band_log = Num(x);
    element bsf;
    if (!band_log && Find(extra, "blocks_so_far", bsf) && bsf.type() == T::OBJECT &&
        Find(bsf, "band_log", x) && IsNumber(x))
      band_log = Num(x);
    if (!FormPairs(rec, legs, recorded, has_recorded, headline, better, pairs)) return false;
  }

  out.node_info = std::move(*info);
  out.record = SlimRecord(rec, legs);
  out.headline = std::move(headline);
  out.better = std::move(better);
  out.band_log = band_log;
  out.pairs = std::move(pairs);
  return true;
}

}  // namespace vouch
