#include "store/store_doc.h"

#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <variant>

#include "clock/fold.h"
#include "record/record.h"
#include "store/store.h"
#include "util/json_dump.h"
#include "util/json_io.h"

namespace vouch {

Result<nlohmann::json> ParseStoredRecord(std::string_view text, std::string_view where) {
  constexpr std::string_view kTail =
      " (the store was edited or damaged, or written by another tool); nothing is read from it";
  auto doc = ParseJson(text, where);
  if (!doc) return MakeError("{}{}", doc.error().message, kTail);
  if (auto h = CheckRecordHeader(*doc, where); !h)
    return MakeError("{}{}", h.error().message, kTail);
  if (auto s = CheckRecordShape(*doc, where); !s)
    return MakeError("{}{}", s.error().message, kTail);
  return std::move(*doc);
}

namespace {

constexpr std::string_view kEditedTail =
    " (the store was edited or damaged, or written by another tool); nothing is read from it";

// Parsed with nesting bounded to DEPTH, then checked against SCHEMA.
Result<nlohmann::json> ParseStoredDoc(std::string_view text, std::string_view where, int depth,
                                      const JsonSchema& schema) {
  auto doc = ParseJson(text, where, depth);
  if (!doc) return MakeError("{}{}", doc.error().message, kEditedTail);
  if (!doc->is_object()) return MakeError("{}: not a JSON object{}", where, kEditedTail);
  if (auto s = schema.Check(*doc, where); !s)
    return MakeError("{}{}", s.error().message, kEditedTail);
  return std::move(*doc);
}

}  // namespace

Result<nlohmann::json> ParseStoredSeries(std::string_view text, std::string_view where) {
  static const JsonSchema kSeries = JsonSchema::Object({
      Must("t0_unix_s", JsonSchema::Number()),
      Must("t_s", JsonSchema::Array(JsonSchema::Number())),
      Must("sm_mhz", JsonSchema::Array(JsonSchema::Number().OrNull())),
      Must("power_w", JsonSchema::Array(JsonSchema::Number().OrNull())),
      May("busy", JsonSchema::Array(JsonSchema::Number().OrNull())),
      May("gpu", JsonSchema::Integer(0, 1023)),
  });
  auto doc = ParseStoredDoc(text, where, 8, kSeries);
  if (!doc) return doc;
  const size_t n = (*doc)["t_s"].size();
  for (const char* k : {"sm_mhz", "power_w", "busy"})
    if (doc->contains(k) && (*doc)[k].size() != n)
      return MakeError("{}: '{}' has {} points and 't_s' {}{}", where, k, (*doc)[k].size(), n,
                       kEditedTail);
  return doc;
}

Result<nlohmann::json> ParseStoredGate(std::string_view text, std::string_view where) {
  static const JsonSchema kGate = JsonSchema::Object({
      May("schema", JsonSchema::String()),
      May("overall", JsonSchema::String()),
      May("clock_attributed", JsonSchema::Bool()),
      May("simulated", JsonSchema::Bool()),
      May("caveats", JsonSchema::Array(JsonSchema::Object({May("code", JsonSchema::String()),
                                                           May("message", JsonSchema::String())}))),
      May("rows",
          JsonSchema::Array(JsonSchema::Object({
              May("metric", JsonSchema::String()),
              May("unit", JsonSchema::String()),
              May("verdict", JsonSchema::String()),
              May("threshold", JsonSchema::String()),
              May("note", JsonSchema::String()),
              May("noise_note", JsonSchema::String()),
              May("baseline", JsonSchema::Number().OrNull()),
              May("now", JsonSchema::Number().OrNull()),
              May("change_pct", JsonSchema::Number().OrNull()),
              May("interval", JsonSchema::Object({May("lo_pct", JsonSchema::Number()),
                                                  May("hi_pct", JsonSchema::Number()),
                                                  May("alpha_one_sided", JsonSchema::Number())})
                                  .OrNull()),
          }))),
  });
  auto doc = ParseStoredDoc(text, where, 16, kGate);
  if (!doc) return doc;
  if (doc->contains("schema") && (*doc)["schema"] != "vouch.gate")
    return MakeError("{}: not a 'vouch.gate' document{}", where, kEditedTail);
  return doc;
}

namespace {

Error NotANumber(const SqlValue& v, std::string_view where, std::string_view what) {
  constexpr std::string_view kTail = ": the store was edited or damaged; nothing is read from it";
  if (const auto* s = std::get_if<std::string>(&v)) {
    std::string shown = s->size() > 40 ? s->substr(0, 40) + "..." : *s;
    return Error{fmt::format("{} is text ('{}'), not {}{}", where, shown, what, kTail)};
  }
  if (std::holds_alternative<std::monostate>(v))
    return Error{fmt::format("{} is NULL, not {}{}", where, what, kTail)};
  if (const auto* d = std::get_if<double>(&v))
    return Error{fmt::format("{} is {}, not {}{}", where, *d, what, kTail)};
  return Error{fmt::format("{} is not {}{}", where, what, kTail)};
}

}  // namespace

Result<std::int64_t> StoredInt(const SqlValue& v, std::string_view where) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
  if (const auto* d = std::get_if<double>(&v))
    // Exactly representable integers only: -2^63 <= d < 2^63, and whole.
    if (std::isfinite(*d) && *d == std::trunc(*d) && *d >= -9223372036854775808.0 &&
        *d < 9223372036854775808.0)
      return static_cast<std::int64_t>(*d);
  return NotANumber(v, where, "an integer");
}

Result<double> StoredReal(const SqlValue& v, std::string_view where) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&v))
    if (std::isfinite(*d)) return *d;
  return NotANumber(v, where, "a finite number");
}

Result<std::optional<double>> StoredOptReal(const SqlValue& v, std::string_view where) {
  if (std::holds_alternative<std::monostate>(v)) return std::optional<double>();
  auto d = StoredReal(v, where);
  if (!d) return d.error();
  return std::optional<double>(*d);
}

std::optional<std::vector<Sample>> ReadLegSamples(const std::string& source,
                                                  const nlohmann::json& l) {
  const auto& w = l["window"];
  if (source.empty() || !l.contains("dir") || !l["dir"].is_string() ||
      !w.contains("samples_file") || !w["samples_file"].is_string())
    return std::nullopt;
  return ReadLegSamplesFile(source, l["dir"].get<std::string>(),
                            w["samples_file"].get<std::string>());
}

std::optional<std::vector<Sample>> ReadLegSamplesFile(const std::string& source,
                                                      const std::string& dir,
                                                      const std::string& file) {
  auto path = std::filesystem::path(source) / dir / file;
  // No stat first: the read opens regular files only (a FIFO, a directory or a missing file
  // is refused there), and the stat was a syscall per leg (3 % of `history add`).
  auto s = ReadSampleStream(path.string());
  if (!s) return std::nullopt;  // a damaged stream leaves the series out, not the run
  return std::move(*s);
}

namespace {

// The samples a series keeps: a reading that repeats the one before (same clock, power and
// busy state) is dropped, the last always kept; then every STRIDE-th, at most 4000.
std::vector<const Sample*> SeriesPoints(const std::vector<Sample>& samples, int gpu) {
  std::vector<const Sample*> mine;
  for (const auto& s : samples)
    if (s.gpu == gpu) mine.push_back(&s);
  const Sample* prev = nullptr;
  std::vector<const Sample*> kept;
  for (size_t i = 0; i < mine.size(); ++i) {
    const Sample* s = mine[i];
    bool last = i + 1 == mine.size();
    if (prev && !last && s->sm_mhz == prev->sm_mhz && s->power_mw == prev->power_mw &&
        IsBusy(*s) == IsBusy(*prev))
      continue;
    kept.push_back(s);
    prev = s;
  }
  size_t stride = kept.size() > 4000 ? (kept.size() + 3999) / 4000 : 1;
  std::vector<const Sample*> out;
  out.reserve((kept.size() + stride - 1) / stride);
  for (size_t i = 0; i < kept.size(); i += stride) out.push_back(kept[i]);
  return out;
}

double SeriesT(const Sample& s, double t0) { return std::round((s.unix_s - t0) * 1000) / 1000; }

double SeriesPowerW(std::int64_t mw) { return std::round(static_cast<double>(mw) / 100) / 10; }

void AppendInt(std::string& out, std::int64_t i) {
  std::array<char, 24> buf{};
  auto r = std::to_chars(buf.data(), buf.data() + buf.size(), i);
  out.append(buf.data(), r.ptr);
}

// "[a,b,...]" of EACH's appends.
template <class F>
void AppendArray(std::string& out, const std::vector<const Sample*>& pts, F each) {
  out += '[';
  for (size_t i = 0; i < pts.size(); ++i) {
    if (i) out += ',';
    each(*pts[i]);
  }
  out += ']';
}

}  // namespace

nlohmann::json LegSeries(const std::vector<Sample>& samples, int gpu, double t0) {
  nlohmann::json t = nlohmann::json::array(), sm = nlohmann::json::array(),
                 pw = nlohmann::json::array(), busy = nlohmann::json::array();
  for (const Sample* s : SeriesPoints(samples, gpu)) {
    t.push_back(SeriesT(*s, t0));
    sm.push_back(s->sm_mhz ? nlohmann::json(*s->sm_mhz) : nlohmann::json());
    pw.push_back(s->power_mw ? nlohmann::json(SeriesPowerW(*s->power_mw)) : nlohmann::json());
    busy.push_back(IsBusy(*s) ? 1 : 0);
  }
  return {{"t0_unix_s", t0}, {"t_s", t}, {"sm_mhz", sm}, {"power_w", pw}, {"busy", busy}};
}

std::string LegSeriesText(const std::vector<Sample>& samples, int gpu, double t0) {
  const auto pts = SeriesPoints(samples, gpu);
  std::string out;
  out.reserve(64 + pts.size() * 32);
  // nlohmann's order: the keys sorted.
  out += "{\"busy\":";
  AppendArray(out, pts, [&](const Sample& s) { out += IsBusy(s) ? '1' : '0'; });
  out += ",\"power_w\":";
  AppendArray(out, pts, [&](const Sample& s) {
    if (s.power_mw)
      AppendJsonNumber(out, SeriesPowerW(*s.power_mw));
    else
      out += "null";
  });
  out += ",\"sm_mhz\":";
  AppendArray(out, pts, [&](const Sample& s) {
    if (s.sm_mhz)
      AppendInt(out, *s.sm_mhz);
    else
      out += "null";
  });
  out += ",\"t0_unix_s\":";
  AppendJsonNumber(out, t0);
  out += ",\"t_s\":";
  AppendArray(out, pts, [&](const Sample& s) { AppendJsonNumber(out, SeriesT(s, t0)); });
  out += '}';
  return out;
}

void AttachLegSeries(nlohmann::json& rec, const std::string& dir) {
  if (!rec.contains("legs") || !rec["legs"].is_array()) return;
  for (auto& l : rec["legs"]) {
    if (!l.is_object() || !l.contains("window") || !l["window"].is_object()) continue;
    auto samples = ReadLegSamples(dir, l);
    if (!samples) continue;
    nlohmann::json per = nlohmann::json::array();
    const auto& w = l["window"];
    double t0 = w.value("started_unix_s", samples->front().unix_s);
    if (w.contains("gpus") && w["gpus"].is_array())
      for (const auto& g : w["gpus"]) {
        int gpu = g.is_object() && g.contains("fold") && g["fold"].is_object()
                      ? g["fold"].value("gpu", 0)
                      : 0;
        auto sj = LegSeries(*samples, gpu, t0);
        sj["gpu"] = gpu;
        per.push_back(std::move(sj));
      }
    l["series"] = per;
  }
}

}  // namespace vouch
