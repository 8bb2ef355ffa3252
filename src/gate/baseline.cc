#include "gate/baseline.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <ctime>
#include <nlohmann/json.hpp>
#include <set>

#include "gate/advice.h"
#include "gate/noise.h"
#include "util/fs.h"
#include "util/json_io.h"
#include "util/median.h"
#include "util/number.h"
#include "util/strings.h"

namespace vouch {
namespace {

using nlohmann::json;

// A baseline is a few KiB; anything this large is not one.
constexpr std::uint64_t kMaxBaselineBytes = 16ull << 20;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string NowUtc() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

const char* TypeName(const json& j) { return j.type_name(); }

// Checked field access: every error names the origin and the dotted field path, so a hand
// edited baseline tells its editor exactly what to fix.
class Reader {
 public:
  explicit Reader(const std::string& origin) : origin_(origin) {}

  Error Bad(const std::string& field, const std::string& what) const {
    return MakeError("baseline {}: field '{}': {}", origin_, field, what);
  }

  Result<const json*> Field(const json& obj, const std::string& path, const char* key,
                            bool required = true) const {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (!required) return static_cast<const json*>(nullptr);
      return Bad(Join(path, key), "missing (regenerate the file with `vouch baseline`)");
    }
    return &*it;
  }

  Result<std::string> String(const json& obj, const std::string& path, const char* key,
                             bool required = true) const {
    auto f = Field(obj, path, key, required);
    if (!f) return f.error();
    if (*f == nullptr) return std::string();
    if (!(*f)->is_string())
      return Bad(Join(path, key), fmt::format("expected a string, got {}", TypeName(**f)));
    return (*f)->get<std::string>();
  }

  // A finite number. nullopt when absent or null and allow_null.
  Result<std::optional<double>> Number(const json& obj, const std::string& path, const char* key,
                                       bool allow_null) const {
    auto f = Field(obj, path, key, !allow_null);
    if (!f) return f.error();
    if (*f == nullptr || (allow_null && (*f)->is_null())) return std::optional<double>();
    if (!(*f)->is_number())
      return Bad(Join(path, key), fmt::format("expected a number, got {}", TypeName(**f)));
    double v = (*f)->get<double>();
    if (!std::isfinite(v)) return Bad(Join(path, key), "not a finite number");
    return std::optional<double>(v);
  }

  Result<long long> Integer(const json& obj, const std::string& path, const char* key) const {
    auto f = Field(obj, path, key);
    if (!f) return f.error();
    if (!(*f)->is_number_integer())
      return Bad(Join(path, key), fmt::format("expected an integer, got {}",
                                              (*f)->is_number() ? (*f)->dump() : TypeName(**f)));
    return (*f)->get<long long>();
  }

  // REQUIRED false: an absent field is false (files from before it).
  Result<bool> Bool(const json& obj, const std::string& path, const char* key,
                    bool required = true) const {
    auto f = Field(obj, path, key, required);
    if (!f) return f.error();
    if (*f == nullptr) return false;
    if (!(*f)->is_boolean())
      return Bad(Join(path, key), fmt::format("expected true or false, got {}", TypeName(**f)));
    return (*f)->get<bool>();
  }

  static std::string Join(const std::string& path, const char* key) {
    return path.empty() ? std::string(key) : path + "." + key;
  }

 private:
  const std::string& origin_;
};

#define VOUCH_TRY_ASSIGN(lhs, expr)         \
  do {                                      \
    auto vouch_r_ = (expr);                 \
    if (!vouch_r_) return vouch_r_.error(); \
    lhs = std::move(*vouch_r_);             \
  } while (0)

Result<ClockState> ParseClock(const Reader& r, const json& obj) {
  const std::string path = "clock";
  if (!obj.is_object())
    return r.Bad(path, fmt::format("expected an object, got {}", TypeName(obj)));
  ClockState c;
  VOUCH_TRY_ASSIGN(c.valid, r.Bool(obj, path, "valid"));
  VOUCH_TRY_ASSIGN(c.simulated, r.Bool(obj, path, "simulated", false));
  // An invalid clock state may lack the figures (nothing attributed them).
  bool need = c.valid;
  VOUCH_TRY_ASSIGN(c.gpu_uuid, r.String(obj, path, "gpu_uuid", need));
  VOUCH_TRY_ASSIGN(c.boot_id, r.String(obj, path, "boot_id", need));
  VOUCH_TRY_ASSIGN(c.driver, r.String(obj, path, "driver", false));
  std::optional<double> v;
  VOUCH_TRY_ASSIGN(v, r.Number(obj, path, "sm_median_mhz", !need));
  c.sm_median_mhz = v.value_or(0);
  VOUCH_TRY_ASSIGN(v, r.Number(obj, path, "sm_mean_mhz", !need));
  c.sm_mean_mhz = v.value_or(0);
  if (c.valid && (c.sm_median_mhz <= 0 || c.sm_mean_mhz <= 0))
    return r.Bad(path, "a valid clock state needs positive sm_median_mhz and sm_mean_mhz");
  return c;
}

Result<BaselineMetric> ParseMetric(const Reader& r, const json& obj, const std::string& path) {
  if (!obj.is_object())
    return r.Bad(path, fmt::format("expected an object, got {}", TypeName(obj)));
  BaselineMetric m;
  VOUCH_TRY_ASSIGN(m.name, r.String(obj, path, "name"));
  if (m.name.empty()) return r.Bad(path + ".name", "empty metric name");
  std::optional<double> v;
  VOUCH_TRY_ASSIGN(v, r.Number(obj, path, "value", false));
  m.value = *v;
  VOUCH_TRY_ASSIGN(m.unit, r.String(obj, path, "unit"));
  std::string better;
  VOUCH_TRY_ASSIGN(better, r.String(obj, path, "better"));
  if (better != "higher" && better != "lower")
    return r.Bad(path + ".better",
                 fmt::format("expected \"higher\" or \"lower\", got \"{}\"", better));
  m.better = better == "higher" ? Better::kHigher : Better::kLower;
  VOUCH_TRY_ASSIGN(m.fail_pct, r.Number(obj, path, "fail_pct", true));
  VOUCH_TRY_ASSIGN(m.warn_pct, r.Number(obj, path, "warn_pct", true));
  if (m.fail_pct && *m.fail_pct < 0) return r.Bad(path + ".fail_pct", "negative threshold");
  if (m.warn_pct && *m.warn_pct < 0) return r.Bad(path + ".warn_pct", "negative threshold");
  VOUCH_TRY_ASSIGN(m.skip_env, r.String(obj, path, "skip_env", false));
  const json* trials = nullptr;
  VOUCH_TRY_ASSIGN(trials, r.Field(obj, path, "trials", false));
  if (trials != nullptr) {  // absent in files from before vouch kept every trial
    if (!trials->is_array())
      return r.Bad(path + ".trials", fmt::format("expected an array, got {}", TypeName(*trials)));
    for (size_t i = 0; i < trials->size(); ++i) {
      const json& t = (*trials)[i];
      if (!t.is_number() || !std::isfinite(t.get<double>()))
        return r.Bad(fmt::format("{}.trials[{}]", path, i), "expected a finite number");
      m.trials.push_back(t.get<double>());
    }
  }
  const json* samples = nullptr;
  VOUCH_TRY_ASSIGN(samples, r.Field(obj, path, "samples", false));
  if (samples != nullptr) {
    if (!samples->is_array())
      return r.Bad(path + ".samples", fmt::format("expected an array, got {}", TypeName(*samples)));
    for (size_t i = 0; i < samples->size(); ++i) {
      const json& t = (*samples)[i];
      if (!t.is_number() || !std::isfinite(t.get<double>()))
        return r.Bad(fmt::format("{}.samples[{}]", path, i), "expected a finite number");
      m.samples.push_back(t.get<double>());
    }
  }
  const json* config = nullptr;
  VOUCH_TRY_ASSIGN(config, r.Field(obj, path, "config", false));
  if (config != nullptr) {
    if (!config->is_object())
      return r.Bad(path + ".config", fmt::format("expected an object, got {}", TypeName(*config)));
    for (const auto& [key, val] : config->items()) {
      if (!val.is_string())
        return r.Bad(path + ".config." + key,
                     fmt::format("expected a string, got {}", TypeName(val)));
      m.config[key] = val.get<std::string>();
    }
  }
  return m;
}

// Written in field order (ordered_json) so that a diff of two baselines reads naturally.
using ojson = nlohmann::ordered_json;

ojson ClockToJson(const ClockState& c) {
  ojson j;
  j["valid"] = c.valid;
  j["gpu_uuid"] = c.gpu_uuid;
  j["boot_id"] = c.boot_id;
  j["driver"] = c.driver;
  j["sm_median_mhz"] = c.sm_median_mhz;
  j["sm_mean_mhz"] = c.sm_mean_mhz;
  if (c.simulated) j["simulated"] = true;
  return j;
}

ojson OptionalNumber(const std::optional<double>& v) { return v ? ojson(*v) : ojson(nullptr); }

}  // namespace

const BaselineMetric* Baseline::Find(std::string_view name) const {
  for (const auto& m : metrics)
    if (m.name == name) return &m;
  return nullptr;
}

bool IsVramMetric(std::string_view name, std::string_view unit) {
  std::string n = Lower(name);
  if (n.find("vram") != std::string::npos || n.find("device_mem") != std::string::npos) return true;
  static const std::set<std::string> kByteUnits = {"bytes", "byte", "b",  "kib", "mib",
                                                   "gib",   "kb",   "mb", "gb"};
  return n.find("peak") != std::string::npos && kByteUnits.count(Lower(unit)) > 0;
}

Result<std::pair<std::string, ThresholdOverride>> ParseThresholdSpec(std::string_view spec) {
  const std::string shown(spec);
  size_t eq = spec.rfind('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == spec.size())
    return MakeError(
        "threshold '{}': expected NAME=fail:PCT,warn:PCT (for example tg128.tokens_per_s=fail:3,"
        "warn:1)",
        shown);
  std::string name(spec.substr(0, eq));
  ThresholdOverride o;
  bool any = false;
  for (const std::string& part : Split(spec.substr(eq + 1), ',')) {
    size_t colon = part.find(':');
    std::string key = colon == std::string::npos ? part : part.substr(0, colon);
    std::string val = colon == std::string::npos ? "" : part.substr(colon + 1);
    if (key != "fail" && key != "warn")
      return MakeError("threshold '{}': '{}' is not fail:PCT or warn:PCT", shown, part);
    if (val.empty())
      return MakeError("threshold '{}': '{}' has no percentage (fail:3, or fail:off)", shown, part);
    any = true;
    if (val == "off") {
      (key == "fail" ? o.clear_fail : o.clear_warn) = true;
      continue;
    }
    std::string_view digits = val;
    if (!digits.empty() && digits.back() == '%') digits.remove_suffix(1);
    auto pct = ParseFiniteDouble(digits, "");
    if (!pct || *pct < 0)
      return MakeError("threshold '{}': '{}' is not a percentage >= 0", shown, val);
    (key == "fail" ? o.fail_pct : o.warn_pct) = *pct;
  }
  if (!any) return MakeError("threshold '{}': give fail:PCT and/or warn:PCT", shown);
  return std::pair<std::string, ThresholdOverride>{std::move(name), o};
}

Result<std::map<std::string, ThresholdOverride>> ParseThresholdSpecs(
    const std::vector<std::string>& specs) {
  std::map<std::string, ThresholdOverride> out;
  for (const auto& s : specs) {
    auto p = ParseThresholdSpec(s);
    if (!p) return p.error();
    if (!out.emplace(p->first, p->second).second)
      return MakeError("threshold: metric '{}' is given twice", p->first);
  }
  return out;
}

namespace {

void ApplyOverride(BaselineMetric* m, const ThresholdOverride& o) {
  if (o.clear_fail) m->fail_pct.reset();
  if (o.clear_warn) m->warn_pct.reset();
  if (o.fail_pct) m->fail_pct = o.fail_pct;
  if (o.warn_pct) m->warn_pct = o.warn_pct;
  if (o.skip_env) m->skip_env = *o.skip_env;
}

void ApplyFailAll(BaselineMetric* m, std::optional<double> fail_all) {
  if (fail_all && (!m->fail_pct || *m->fail_pct > *fail_all)) m->fail_pct = *fail_all;
}

std::string Names(const std::vector<BaselineMetric>& ms) {
  std::string out;
  for (size_t i = 0; i < ms.size() && i < 8; ++i) out += (i ? ", " : "") + ms[i].name;
  if (ms.size() > 8) out += fmt::format(", ... ({} in all)", ms.size());
  return out;
}

}  // namespace

Status ApplyThresholdPolicy(Baseline* b, const ThresholdPolicy& policy) {
  if (policy.fail_pct_all && !(*policy.fail_pct_all >= 0 && std::isfinite(*policy.fail_pct_all)))
    return MakeError("--fail-pct {}: not a percentage >= 0", *policy.fail_pct_all);
  for (const auto& [name, o] : policy.overrides) {
    (void)o;
    if (b->Find(name) == nullptr)
      return MakeError("threshold for '{}': the baseline has no such metric (it has: {})", name,
                       Names(b->metrics));
  }
  for (auto& m : b->metrics) {
    ApplyFailAll(&m, policy.fail_pct_all);
    if (auto it = policy.overrides.find(m.name); it != policy.overrides.end())
      ApplyOverride(&m, it->second);
  }
  return OkStatus();
}

Result<Baseline> MakeBaseline(const std::vector<BaselineInput>& inputs, const std::string& headline,
                              const ClockState& clock, const BaselineOptions& options) {
  if (inputs.empty()) return MakeError("baseline: no metrics to pin (the run produced none)");
  Baseline b;
  b.headline = headline;
  b.clock = clock;
  b.record_path = options.record_path;
  b.created_utc = options.created_utc.empty() ? NowUtc() : options.created_utc;
  std::set<std::string> seen;
  for (const auto& in : inputs) {
    if (in.name.empty()) return MakeError("baseline: a metric has an empty name");
    if (!seen.insert(in.name).second)
      return MakeError("baseline: metric '{}' appears twice", in.name);
    if (in.values.empty())
      return MakeError("baseline: metric '{}' has no values (no trial produced it)", in.name);
    for (double v : in.values)
      if (!std::isfinite(v))
        return MakeError("baseline: metric '{}' has a non-finite value ({}); refusing to pin it",
                         in.name, v);
    if (in.better == Better::kNone)
      return MakeError(
          "baseline: metric '{}' has no direction (higher or lower is better); "
          "a gate needs one",
          in.name);
    BaselineMetric m;
    m.name = in.name;
    m.unit = in.unit;
    m.better = in.better;
    m.value = *Median(in.values);
    m.trials = in.values;
    if (in.values.size() == 1) m.samples = in.samples;
    m.config = in.config;
    if (in.name == headline) {
      m.fail_pct = options.headline_fail_pct;
    } else if (IsVramMetric(in.name, in.unit)) {
      m.fail_pct = options.vram_fail_pct;
      m.skip_env = options.vram_skip_env;
    } else {
      m.warn_pct = options.secondary_warn_pct;
    }
    ApplyFailAll(&m, options.fail_pct_all);
    if (auto it = options.overrides.find(in.name); it != options.overrides.end())
      ApplyOverride(&m, it->second);
    if ((m.fail_pct && !(*m.fail_pct >= 0)) || (m.warn_pct && !(*m.warn_pct >= 0)))
      return MakeError("baseline: metric '{}' has a negative threshold", in.name);
    b.trials = std::max(b.trials, static_cast<int>(in.values.size()));
    b.metrics.push_back(std::move(m));
  }
  for (const auto& [name, o] : options.overrides) {
    (void)o;
    if (!seen.count(name))
      return MakeError("baseline: a threshold is given for '{}', which the run did not produce",
                       name);
  }
  if (!seen.count(headline))
    return MakeError("baseline: headline metric '{}' is not among the run's metrics", headline);
  return b;
}

std::vector<std::string> BaselineNoiseWarnings(const Baseline& b, int gate_legs) {
  std::vector<std::string> out;
  int can_fail = 0;
  for (const auto& m : b.metrics) can_fail += m.fail_pct ? 1 : 0;
  const double alpha = kGateFalseFailRate / std::max(1, can_fail);
  for (const auto& m : b.metrics) {
    std::optional<double> threshold = m.fail_pct ? m.fail_pct : m.warn_pct;
    if (!threshold) continue;
    const char* kind = m.fail_pct ? "fail" : "warn";
    if (m.trials.size() == 1) {
      out.push_back(fmt::format(
          "{}: one trial: the gate cannot judge noise from the baseline; pin it with --trials 5 "
          "or more",
          m.name));
      continue;
    }
    auto sd = SdOfLogs(m.trials);
    if (!sd) continue;
    if (Resolves(*sd, static_cast<int>(m.trials.size()), gate_legs, *threshold, alpha)) continue;
    auto lo = std::min_element(m.trials.begin(), m.trials.end());
    auto hi = std::max_element(m.trials.begin(), m.trials.end());
    double spread = m.value != 0 ? (*hi - *lo) / std::abs(m.value) * 100 : 0;
    auto need = TrialsToResolve(*sd, *threshold, alpha);
    out.push_back(fmt::format(
        "{}: the {} trials spread {:.2f} % (log sd {:.2f} %), too noisy to resolve its {} "
        "threshold of {:g} % with a gate of {} legs: unchanged code would often be inconclusive; "
        "{}",
        m.name, m.trials.size(), spread, *sd * 100, kind, *threshold, gate_legs,
        need ? BaselineTrialsAdvice(*need, static_cast<int>(m.trials.size()), gate_legs)
             : std::string("no practical number of trials resolves it: quiet the machine or "
                           "widen the threshold")));
  }
  return out;
}

Result<Baseline> ParseBaseline(std::string_view json_text, const std::string& origin) {
  // The validated reader: depth-limited, and a number past a double (1E601) is an error
  // naming the file, not an exception out of the parser.
  auto parsed = ParseJson(json_text, "baseline " + origin);
  if (!parsed)
    return MakeError(
        "{}; the file may be truncated or hand-edited: regenerate it with `vouch baseline`",
        parsed.error().message);
  json doc = std::move(*parsed);
  if (!doc.is_object())
    return MakeError("baseline {}: expected a JSON object at the top, got {}", origin,
                     TypeName(doc));
  Reader r(origin);
  Baseline b;
  std::string schema;
  VOUCH_TRY_ASSIGN(schema, r.String(doc, "", "schema"));
  if (schema != kBaselineSchema)
    return r.Bad("schema", fmt::format("\"{}\" is not \"{}\": this is not a vouch baseline", schema,
                                       kBaselineSchema));
  long long version = 0;
  VOUCH_TRY_ASSIGN(version, r.Integer(doc, "", "schema_version"));
  if (version > kBaselineSchemaVersion)
    return r.Bad("schema_version",
                 fmt::format("version {} was written by a newer vouch; this vouch reads version "
                             "{}: upgrade vouch",
                             version, kBaselineSchemaVersion));
  if (version < 1) return r.Bad("schema_version", fmt::format("invalid version {}", version));
  b.schema_version = static_cast<int>(version);
  VOUCH_TRY_ASSIGN(b.created_utc, r.String(doc, "", "created_utc"));
  VOUCH_TRY_ASSIGN(b.record_path, r.String(doc, "", "record_path"));
  long long trials = 0;
  VOUCH_TRY_ASSIGN(trials, r.Integer(doc, "", "trials"));
  if (trials < 1 || trials > 1000000)
    return r.Bad("trials", fmt::format("{} is not a plausible trial count", trials));
  b.trials = static_cast<int>(trials);
  if (doc.contains("first_stage_trials")) {
    long long first = 0;
    VOUCH_TRY_ASSIGN(first, r.Integer(doc, "", "first_stage_trials"));
    if (first < 2 || first > trials)
      return r.Bad("first_stage_trials",
                   fmt::format("{} is not between 2 and the {} trials", first, trials));
    b.first_stage_trials = static_cast<int>(first);
  }
  if (doc.contains("max_trials")) {
    long long top = 0;
    VOUCH_TRY_ASSIGN(top, r.Integer(doc, "", "max_trials"));
    if (top < trials || top > 1000000)
      return r.Bad("max_trials",
                   fmt::format("{} is not between the {} trials and 1000000", top, trials));
    b.max_trials = static_cast<int>(top);
  }
  VOUCH_TRY_ASSIGN(b.headline, r.String(doc, "", "headline"));
  VOUCH_TRY_ASSIGN(b.headline_reason, r.String(doc, "", "headline_reason", false));
  const json* clock = nullptr;
  VOUCH_TRY_ASSIGN(clock, r.Field(doc, "", "clock"));
  VOUCH_TRY_ASSIGN(b.clock, ParseClock(r, *clock));
  const json* metrics = nullptr;
  VOUCH_TRY_ASSIGN(metrics, r.Field(doc, "", "metrics"));
  if (!metrics->is_array())
    return r.Bad("metrics", fmt::format("expected an array, got {}", TypeName(*metrics)));
  if (metrics->empty()) return r.Bad("metrics", "empty: a baseline with no metrics gates nothing");
  std::set<std::string> seen;
  for (size_t i = 0; i < metrics->size(); ++i) {
    BaselineMetric m;
    VOUCH_TRY_ASSIGN(m, ParseMetric(r, (*metrics)[i], fmt::format("metrics[{}]", i)));
    if (!seen.insert(m.name).second)
      return r.Bad(fmt::format("metrics[{}].name", i),
                   fmt::format("metric '{}' appears twice", m.name));
    b.metrics.push_back(std::move(m));
  }
  const json* sources = nullptr;
  VOUCH_TRY_ASSIGN(sources, r.Field(doc, "", "metric_sources", false));
  if (sources) {
    if (!sources->is_array() || sources->size() > 1000)
      return r.Bad("metric_sources", "expected an array of at most 1,000 --metric sources");
    for (size_t i = 0; i < sources->size(); ++i) {
      if (!(*sources)[i].is_string())
        return r.Bad(fmt::format("metric_sources[{}]", i),
                     fmt::format("expected a string, got {}", TypeName((*sources)[i])));
      b.metric_sources.push_back((*sources)[i].get<std::string>());
    }
  }
  if (!b.headline.empty() && !seen.count(b.headline))
    return r.Bad("headline", fmt::format("'{}' names no metric in the file", b.headline));
  return b;
}

Result<Baseline> ReadBaseline(const std::string& path) {
  auto text = ReadFile(path, kMaxBaselineBytes);
  if (!text) return MakeError("baseline: {}", text.error().message);
  if (text->empty())
    return MakeError("baseline {}: the file is empty; regenerate it with `vouch baseline`", path);
  return ParseBaseline(*text, path);
}

std::string BaselineToJson(const Baseline& b) {
  ojson j;
  j["schema"] = kBaselineSchema;
  j["schema_version"] = b.schema_version;
  j["created_utc"] = b.created_utc;
  j["record_path"] = b.record_path;
  j["trials"] = b.trials;
  if (b.first_stage_trials > 0) j["first_stage_trials"] = b.first_stage_trials;
  if (b.max_trials > 0) j["max_trials"] = b.max_trials;
  j["headline"] = b.headline;
  j["headline_reason"] = b.headline_reason;
  j["clock"] = ClockToJson(b.clock);
  ojson ms = ojson::array();
  for (const auto& m : b.metrics) {
    ojson o;
    o["name"] = m.name;
    o["value"] = m.value;
    o["unit"] = m.unit;
    o["better"] = BetterName(m.better);
    o["fail_pct"] = OptionalNumber(m.fail_pct);
    o["warn_pct"] = OptionalNumber(m.warn_pct);
    o["skip_env"] = m.skip_env;
    o["trials"] = m.trials;
    if (!m.samples.empty()) o["samples"] = m.samples;
    if (!m.config.empty()) o["config"] = m.config;
    ms.push_back(std::move(o));
  }
  j["metrics"] = std::move(ms);
  if (!b.noise_warnings.empty()) j["noise_warnings"] = b.noise_warnings;
  if (!b.metric_sources.empty()) j["metric_sources"] = b.metric_sources;
  // replace: a path with invalid UTF-8 must not throw out of the writer.
  return DumpJson(j, 2) + "\n";
}

Status WriteBaseline(const std::string& path, const Baseline& baseline) {
  return WriteFileAtomic(path, BaselineToJson(baseline));
}

}  // namespace vouch
