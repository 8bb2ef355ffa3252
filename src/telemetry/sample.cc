#include "telemetry/sample.h"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "telemetry/fixed6.h"
#include "telemetry/sample_parse.h"
#include "util/bounded_file.h"
#include "util/json_dump.h"
#include "util/json_io.h"
#include "util/strings.h"

namespace vouch {
namespace {

struct ReasonInfo {
  std::uint64_t bit;
  const char* name;
  const char* advice;
};

// nvml.h: nvmlClocksEventReason*.
constexpr ReasonInfo kReasons[] = {
    {0x1, "gpu_idle", "the GPU had no work"},
    {0x2, "applications_clocks_setting", "the applications clock setting holds the clock down"},
    {0x4, "sw_power_cap",
     "the GPU hit its power limit and the driver lowered the clock (lock the clocks with "
     "--lock-clocks, or expect the clock to wander)"},
    {0x8, "hw_slowdown", "hardware slowdown (power brake or temperature): check cooling and power"},
    {0x10, "sync_boost", "sync boost with other GPUs holds the clock"},
    {0x20, "sw_thermal_slowdown", "the GPU is too hot: let it cool or improve cooling"},
    {0x40, "hw_thermal_slowdown", "hardware thermal slowdown: the GPU is far too hot"},
    {0x80, "hw_power_brake_slowdown", "external power brake asserted"},
    {0x100, "display_clock_setting", "the display clock setting holds the clock down"},
};

// Read only after the schema checked the field's type and range (so get<T> cannot cut it).
template <class T>
std::optional<T> Opt(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<T>();
}

// Plausible bounds of every telemetry field: a value past them is a corrupt or hostile
// stream, never a reading (an SM clock of 2^32 + 1980 MHz must not replay as 1980).
constexpr std::int64_t kMaxMhz = 100000;
constexpr std::int64_t kMaxPowerMw = 100000000;  // 100 kW
constexpr std::uint64_t kMaxMemBytes = 1ull << 50;
constexpr double kMaxTimeS = 1e11;  // ~3000 years

const JsonSchema& SampleSchema() {
  static const JsonSchema s = JsonSchema::Object({
      May("gpu", JsonSchema::Integer(0, 1023)),
      Must("t_s", JsonSchema::Number(-kMaxTimeS, kMaxTimeS)),
      May("unix_s", JsonSchema::Number(0, kMaxTimeS)),
      May("sm_mhz", JsonSchema::Integer(0, kMaxMhz).OrNull()),
      May("mem_mhz", JsonSchema::Integer(0, kMaxMhz).OrNull()),
      May("power_mw", JsonSchema::Integer(0, kMaxPowerMw).OrNull()),
      May("util_gpu_pct", JsonSchema::Integer(0, 100).OrNull()),
      May("util_mem_pct", JsonSchema::Integer(0, 100).OrNull()),
      May("reasons", JsonSchema::Unsigned().OrNull()),
      May("mem_used_bytes", JsonSchema::Unsigned(kMaxMemBytes).OrNull()),
      May("temp_c", JsonSchema::Integer(-273, 1000).OrNull()),
  });
  return s;
}

}  // namespace

std::string ReasonName(std::uint64_t bit) {
  for (const auto& r : kReasons)
    if (r.bit == bit) return r.name;
  return fmt::format("reason_0x{:x}", bit);
}

std::string ReasonAdvice(std::uint64_t bit) {
  for (const auto& r : kReasons)
    if (r.bit == bit) return r.advice;
  return "";
}

std::vector<std::string> ReasonNames(std::uint64_t reasons) {
  std::vector<std::string> out;
  for (int b = 0; b < 64; ++b)
    if (reasons & (1ull << b)) out.push_back(ReasonName(1ull << b));
  return out;
}

nlohmann::json ToJson(const Sample& s) {
  nlohmann::json j;
  j["gpu"] = s.gpu;
  j["t_s"] = s.t_s;
  j["unix_s"] = s.unix_s;
  if (s.sm_mhz) j["sm_mhz"] = *s.sm_mhz;
  if (s.mem_mhz) j["mem_mhz"] = *s.mem_mhz;
  if (s.power_mw) j["power_mw"] = *s.power_mw;
  if (s.util_gpu_pct) j["util_gpu_pct"] = *s.util_gpu_pct;
  if (s.util_mem_pct) j["util_mem_pct"] = *s.util_mem_pct;
  if (s.reasons) j["reasons"] = *s.reasons;
  if (s.mem_used_bytes) j["mem_used_bytes"] = *s.mem_used_bytes;
  if (s.temp_c) j["temp_c"] = *s.temp_c;
  return j;
}

nlohmann::json ToJson(const ProcessSnapshot& p) {
  nlohmann::json procs = nlohmann::json::array();
  for (const auto& q : p.processes) {
    nlohmann::json e = {{"pid", q.pid}, {"name", q.name}};
    if (q.used_bytes) e["used_bytes"] = *q.used_bytes;
    procs.push_back(std::move(e));
  }
  return {{"gpu", p.gpu}, {"t_s", p.t_s}, {"unix_s", p.unix_s}, {"processes", procs}};
}

// The samples stream's line: the same fields as ToJson(Sample), formatted without
// building a JSON tree (the sampler writes 100 lines a second per GPU). The formats are compiled
// (FMT_COMPILE) and written through a plain pointer into a stack array appended once (fmt's
// growable buffer appended each literal piece through a call), the two times by FormatFixed6:
// parsing the format strings at run time, appending through a back_insert_iterator and fmt's
// float formatter were most of a poll round's instructions (issue 24; callgrind in
// bench/telemetry/sampler_cpu.sh). The array holds the longest line: two times of at most 317
// characters each (fmt's "{:.6f}" of the largest double) and eight integer fields.
void AppendJsonLine(const Sample& s, std::string* out) {
  char line[1024];
  char* it = line;
  it = fmt::format_to(it, FMT_COMPILE("{{\"gpu\":{},\"t_s\":"), s.gpu);
  it = FormatFixed6(it, s.t_s);
  it = fmt::format_to(it, FMT_COMPILE(",\"unix_s\":"));
  it = FormatFixed6(it, s.unix_s);
  if (s.sm_mhz) it = fmt::format_to(it, FMT_COMPILE(",\"sm_mhz\":{}"), *s.sm_mhz);
  if (s.mem_mhz) it = fmt::format_to(it, FMT_COMPILE(",\"mem_mhz\":{}"), *s.mem_mhz);
  if (s.power_mw) it = fmt::format_to(it, FMT_COMPILE(",\"power_mw\":{}"), *s.power_mw);
  if (s.util_gpu_pct) it = fmt::format_to(it, FMT_COMPILE(",\"util_gpu_pct\":{}"), *s.util_gpu_pct);
  if (s.util_mem_pct) it = fmt::format_to(it, FMT_COMPILE(",\"util_mem_pct\":{}"), *s.util_mem_pct);
  if (s.reasons) it = fmt::format_to(it, FMT_COMPILE(",\"reasons\":{}"), *s.reasons);
  if (s.mem_used_bytes)
    it = fmt::format_to(it, FMT_COMPILE(",\"mem_used_bytes\":{}"), *s.mem_used_bytes);
  if (s.temp_c) it = fmt::format_to(it, FMT_COMPILE(",\"temp_c\":{}"), *s.temp_c);
  *it++ = '}';
  *it++ = '\n';
  out->append(line, static_cast<std::size_t>(it - line));
}

void AppendJsonLine(const ProcessSnapshot& p, std::string* out) {
  // The tree's keys in its (sorted) order: gpu, processes (name, pid, used_bytes), t_s, unix_s.
  auto integer = [&](auto v) { AppendJsonInteger(*out, v); };
  out->append("{\"gpu\":");
  integer(p.gpu);
  out->append(",\"processes\":[");
  bool first = true;
  for (const auto& q : p.processes) {
    out->append(first ? "{\"name\":" : ",{\"name\":");
    first = false;
    AppendJsonString(*out, q.name);
    out->append(",\"pid\":");
    integer(q.pid);
    if (q.used_bytes) {
      out->append(",\"used_bytes\":");
      integer(*q.used_bytes);
    }
    out->push_back('}');
  }
  out->append("],\"t_s\":");
  AppendJsonNumber(*out, p.t_s);
  out->append(",\"unix_s\":");
  AppendJsonNumber(*out, p.unix_s);
  out->append("}\n");
}

nlohmann::json ToJson(const StaticState& s) {
  nlohmann::json j = {{"index", s.index},
                      {"name", s.name},
                      {"uuid", s.uuid},
                      {"pci_bus_id", s.pci_bus_id},
                      {"driver_version", s.driver_version},
                      {"cuda_driver_version", s.cuda_driver_version}};
  j["max_sm_mhz"] = s.max_sm_mhz ? nlohmann::json(*s.max_sm_mhz) : nlohmann::json();
  j["app_sm_mhz"] = s.app_sm_mhz ? nlohmann::json(*s.app_sm_mhz) : nlohmann::json();
  j["persistence"] = s.persistence ? nlohmann::json(*s.persistence) : nlohmann::json();
  j["total_mem_bytes"] = s.total_mem_bytes ? nlohmann::json(*s.total_mem_bytes) : nlohmann::json();
  j["not_supported"] = s.not_supported;
  return j;
}

const JsonSchema& StaticStateSchema() {
  static const JsonSchema s = JsonSchema::Object({
      May("index", JsonSchema::Integer(0, 1023)),
      May("name", JsonSchema::String()),
      May("uuid", JsonSchema::String()),
      May("pci_bus_id", JsonSchema::String()),
      May("driver_version", JsonSchema::String()),
      May("cuda_driver_version", JsonSchema::String()),
      May("max_sm_mhz", JsonSchema::Integer(0, kMaxMhz).OrNull()),
      May("app_sm_mhz", JsonSchema::Integer(0, kMaxMhz).OrNull()),
      May("persistence", JsonSchema::Bool().OrNull()),
      May("total_mem_bytes", JsonSchema::Unsigned(kMaxMemBytes).OrNull()),
      May("not_supported", JsonSchema::Array(JsonSchema::String())),
  });
  return s;
}

Result<StaticState> StaticStateFromJson(const nlohmann::json& j, const std::string& where) {
  if (auto ok = StaticStateSchema().Check(j, where); !ok) return ok.error();
  return StaticStateFromCheckedJson(j);
}

StaticState StaticStateFromCheckedJson(const nlohmann::json& j) {
  StaticState s;
  s.index = j.value("index", 0);
  s.name = j.value("name", "");
  s.uuid = j.value("uuid", "");
  s.pci_bus_id = j.value("pci_bus_id", "");
  s.driver_version = j.value("driver_version", "");
  s.cuda_driver_version = j.value("cuda_driver_version", "");
  s.max_sm_mhz = Opt<int>(j, "max_sm_mhz");
  s.app_sm_mhz = Opt<int>(j, "app_sm_mhz");
  s.persistence = Opt<bool>(j, "persistence");
  s.total_mem_bytes = Opt<std::uint64_t>(j, "total_mem_bytes");
  if (j.contains("not_supported"))
    s.not_supported = j.at("not_supported").get<std::vector<std::string>>();
  return s;
}

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// A JSON number token at P (the grammar exactly: no leading zero, no '+', digits after '.');
// its end, or nullptr. INTEGRAL: no fraction and no exponent.
const char* NumberToken(const char* p, const char* end, bool* integral) {
  auto digits = [&](const char* q) {
    const char* d = q;
    while (q < end && *q >= '0' && *q <= '9') ++q;
    return q == d ? nullptr : q;
  };
  const char* q = p;
  if (q < end && *q == '-') ++q;
  if (q < end && *q == '0')
    ++q;
  else if (!(q = digits(q)))
    return nullptr;
  *integral = true;
  if (q < end && *q == '.') {
    *integral = false;
    if (!(q = digits(q + 1))) return nullptr;
  }
  if (q < end && (*q == 'e' || *q == 'E')) {
    *integral = false;
    ++q;
    if (q < end && (*q == '+' || *q == '-')) ++q;
    if (!(q = digits(q))) return nullptr;
  }
  return q;
}

}  // namespace

// One sample line as the sampler writes it: a flat object of the known fields with numbers
// (or null where the schema allows it), each within the schema's range. Anything else (an
// unknown or repeated key, an escape, a value of another type or out of range) is left to
// the full parse, which accepts it or says why not. About 20x faster than building a JSON
// tree and checking it: a long --sim stream loads in a fraction of the time.
bool ParseFlatSampleLine(std::string_view line, Sample* out) {
  enum Field { kGpu, kT, kUnix, kSm, kMem, kPower, kUtilGpu, kUtilMem, kReasons, kMemUsed, kTemp };
  struct Key {
    std::string_view name;
    Field field;
  };
  static constexpr Key kKeys[] = {{"gpu", kGpu},
                                  {"t_s", kT},
                                  {"unix_s", kUnix},
                                  {"sm_mhz", kSm},
                                  {"mem_mhz", kMem},
                                  {"power_mw", kPower},
                                  {"util_gpu_pct", kUtilGpu},
                                  {"util_mem_pct", kUtilMem},
                                  {"reasons", kReasons},
                                  {"mem_used_bytes", kMemUsed},
                                  {"temp_c", kTemp}};
  Sample s;
  unsigned seen = 0;
  size_t next = 0;  // the index in kKeys of the key expected next
  const char* p = line.data();
  const char* end = p + line.size();
  auto skip = [&] {
    while (p < end && IsSpace(*p)) ++p;
  };
  skip();
  if (p == end || *p++ != '{') return false;
  skip();
  if (p < end && *p == '}') return false;  // t_s is required
  for (;;) {
    skip();
    if (p == end || *p++ != '"') return false;
    const Key* key = nullptr;
    // The sampler writes the keys in kKeys's order: the one after the last is tried first
    // (a name with its closing quote; no name holds a quote or a backslash).
    if (next < std::size(kKeys)) {
      const auto& c = kKeys[next];
      if (static_cast<size_t>(end - p) > c.name.size() && p[c.name.size()] == '"' &&
          std::string_view(p, c.name.size()) == c.name) {
        key = &c;
        p += c.name.size() + 1;
      }
    }
    if (!key) {
      const char* k = p;
      while (p < end && *p != '"' && *p != '\\') ++p;
      if (p == end || *p != '"') return false;
      std::string_view name(k, static_cast<size_t>(p - k));
      ++p;
      for (const auto& c : kKeys)
        if (c.name == name) {
          key = &c;
          break;
        }
    }
    if (!key || (seen & (1u << key->field))) return false;
    seen |= 1u << key->field;
    next = static_cast<size_t>(key - kKeys) + 1;
    skip();
    if (p == end || *p++ != ':') return false;
    skip();
    if (end - p >= 4 && std::string_view(p, 4) == "null") {
      if (key->field == kGpu || key->field == kT || key->field == kUnix) return false;
      p += 4;
    } else {
      bool integral = false;
      const char* q = NumberToken(p, end, &integral);
      if (!q) return false;
      auto integer = [&](std::int64_t lo, std::int64_t hi, auto* dst) {
        std::int64_t v = 0;
        auto r = std::from_chars(p, q, v);
        if (!integral || r.ec != std::errc() || r.ptr != q || v < lo || v > hi) return false;
        *dst = static_cast<std::remove_reference_t<decltype(**dst)>>(v);
        return true;
      };
      auto unsigned_ = [&](std::uint64_t hi, std::optional<std::uint64_t>* dst) {
        std::uint64_t v = 0;
        auto r = std::from_chars(p, q, v);
        if (!integral || *p == '-' || r.ec != std::errc() || r.ptr != q || v > hi) return false;
        *dst = v;
        return true;
      };
      auto number = [&](double lo, double hi, double* dst) {
        double v = 0;
        auto r = std::from_chars(p, q, v);
        if (r.ec != std::errc() || r.ptr != q || !std::isfinite(v) || v < lo || v > hi)
          return false;
        *dst = v;
        return true;
      };
      bool ok = false;
      switch (key->field) {
        case kGpu: {
          std::optional<int> g;
          ok = integer(0, 1023, &g);
          if (ok) s.gpu = *g;
          break;
        }
        case kT:
          ok = number(-kMaxTimeS, kMaxTimeS, &s.t_s);
          break;
        case kUnix:
          ok = number(0, kMaxTimeS, &s.unix_s);
          break;
        case kSm:
          ok = integer(0, kMaxMhz, &s.sm_mhz);
          break;
        case kMem:
          ok = integer(0, kMaxMhz, &s.mem_mhz);
          break;
        case kPower:
          ok = integer(0, kMaxPowerMw, &s.power_mw);
          break;
        case kUtilGpu:
          ok = integer(0, 100, &s.util_gpu_pct);
          break;
        case kUtilMem:
          ok = integer(0, 100, &s.util_mem_pct);
          break;
        case kReasons:
          ok = unsigned_(UINT64_MAX, &s.reasons);
          break;
        case kMemUsed:
          ok = unsigned_(kMaxMemBytes, &s.mem_used_bytes);
          break;
        case kTemp:
          ok = integer(-273, 1000, &s.temp_c);
          break;
      }
      if (!ok) return false;
      p = q;
    }
    skip();
    if (p == end) return false;
    if (*p == ',') {
      ++p;
      continue;
    }
    if (*p++ != '}') return false;
    break;
  }
  skip();
  if (p != end || !(seen & (1u << kT))) return false;
  *out = s;
  return true;
}

Result<Sample> SampleFromJsonLine(std::string_view line, const std::string& where) {
  if (Sample s; ParseFlatSampleLine(line, &s)) return s;
  return SampleFromJsonTree(line, where);
}

Result<Sample> SampleFromJsonTree(std::string_view line, const std::string& where) {
  auto parsed = ParseJson(line, where, 8);
  if (!parsed) return parsed.error();
  const nlohmann::json& j = *parsed;
  if (!j.is_object()) return MakeError("{}: a sample must be a JSON object", where);
  if (auto ok = SampleSchema().Check(j, where); !ok) return ok.error();
  Sample s;
  s.gpu = j.value("gpu", 0);
  s.t_s = j["t_s"].get<double>();
  s.unix_s = j.value("unix_s", 0.0);
  s.sm_mhz = Opt<int>(j, "sm_mhz");
  s.mem_mhz = Opt<int>(j, "mem_mhz");
  s.power_mw = Opt<std::int64_t>(j, "power_mw");
  s.util_gpu_pct = Opt<int>(j, "util_gpu_pct");
  s.util_mem_pct = Opt<int>(j, "util_mem_pct");
  s.reasons = Opt<std::uint64_t>(j, "reasons");
  s.mem_used_bytes = Opt<std::uint64_t>(j, "mem_used_bytes");
  s.temp_c = Opt<int>(j, "temp_c");
  return s;
}

Result<std::vector<Sample>> ReadSampleStream(const std::string& path) {
  auto text = ReadBoundedFile(path, kMaxSamplesFileBytes);
  if (!text) return MakeError("telemetry stream {}", text.error().message);
  return ParseSampleStream(*text, path);
}

namespace {

// A process snapshot line. One searcher for every line: string_view::find stopped at each '"'
// of a sample line to compare, about a quarter of reading a samples file.
bool IsProcessLine(std::string_view line) {
  static constexpr std::string_view kKey = "\"processes\"";
  static const std::boyer_moore_horspool_searcher kSearch(kKey.begin(), kKey.end());
  return std::search(line.begin(), line.end(), kSearch) != line.end();
}

}  // namespace

Result<std::vector<Sample>> ParseSampleStream(std::string_view text, const std::string& path) {
  std::vector<Sample> out;
  out.reserve(text.size() / 160 + 1);  // a full sample line is 150-190 bytes
  struct Stamp {
    double t_s = 0, unix_s = 0;
  };
  std::vector<std::optional<Stamp>> last;  // per GPU index (0..1023, the reader's range)
  LineReader lines(text);
  LineReader::Line l;
  while (lines.Next(&l)) {
    std::string_view line = l.text;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    // A flat sample line first: a process snapshot is never one (its "processes" key is no
    // sample field), so only a line the flat reader refuses is searched for the key (the
    // search of every line was a fifth of reading a stream).
    Sample fast;
    const bool flat = ParseFlatSampleLine(line, &fast);
    if (!flat && IsProcessLine(line)) continue;  // process snapshots
    auto s = flat ? Result<Sample>(fast)
                  : SampleFromJsonTree(line, fmt::format("{}:{}", path, l.number));
    if (!s)
      return MakeError(
          "{}{}", s.error().message,
          l.terminated ? "" : " (the last line is cut short: the stream was truncated)");
    // Each GPU's own timeline, on both clocks: a unix_s that steps back would put the polls
    // of two moments into one window (`clock replay --from --to` counted 399 polls in 2 s).
    // A stream without unix_s (0) has the t_s timeline only.
    if (last.size() <= static_cast<size_t>(s->gpu)) last.resize(static_cast<size_t>(s->gpu) + 1);
    if (auto& prev = last[static_cast<size_t>(s->gpu)]) {
      if (s->t_s < prev->t_s)
        return MakeError("{}:{}: t_s goes backwards ({} after {}, GPU {})", path, l.number, s->t_s,
                         prev->t_s, s->gpu);
      if (s->unix_s > 0 && prev->unix_s > 0 && s->unix_s < prev->unix_s)
        return MakeError(
            "{}:{}: unix_s steps back ({:.6f} after {:.6f}, GPU {}): the wall clock was set back "
            "while the stream was recorded, or the stream was spliced; its times are not one "
            "timeline, so no window can be cut from it",
            path, l.number, s->unix_s, prev->unix_s, s->gpu);
    }
    last[static_cast<size_t>(s->gpu)] = Stamp{s->t_s, s->unix_s};
    out.push_back(std::move(*s));
  }
  if (out.empty()) return MakeError("telemetry stream {} holds no samples (empty file?)", path);
  return out;
}

}  // namespace vouch
