#include "clock/fold.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <tuple>

#include "util/json_io.h"

namespace vouch {
namespace {

// The values that the driver refreshes at its update period.
auto Key(const Sample& s) {
  return std::tie(s.sm_mhz, s.mem_mhz, s.power_mw, s.util_gpu_pct, s.util_mem_pct, s.reasons);
}

// Counts of readings are ints; a hostile stream (t_s jumping by 1e300 s) must neither overflow
// them nor cast an out-of-range double to int (undefined). Both saturate at a count no real
// window reaches.
constexpr int kMaxCount = 1000000000;

int ToCount(double x) {
  if (!(x > 0)) return 0;  // also NaN
  if (x >= kMaxCount) return kMaxCount;
  return static_cast<int>(std::lround(x));
}

void AddCount(int& acc, int n) {
  acc = static_cast<int>(std::min<long long>(kMaxCount, static_cast<long long>(acc) + n));
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Statistics over values each standing for WEIGHT readings.
std::optional<ClockStats> WeightedStats(const std::vector<std::pair<double, int>>& vw) {
  long total = 0;
  for (const auto& [v, w] : vw) total += w;
  if (total == 0) return std::nullopt;
  auto sorted = vw;
  std::sort(sorted.begin(), sorted.end());
  auto at = [&](long k) {  // value of the k-th reading (0-based) in sorted order
    long acc = 0;
    for (const auto& [v, w] : sorted) {
      acc += w;
      if (k < acc) return v;
    }
    return sorted.back().first;
  };
  ClockStats s;
  s.min = sorted.front().first;
  s.max = sorted.back().first;
  s.median = total % 2 ? at(total / 2) : (at(total / 2 - 1) + at(total / 2)) / 2;
  double sum = 0;
  for (const auto& [v, w] : vw) sum += v * w;
  s.mean = sum / static_cast<double>(total);
  return s;
}

nlohmann::json StatsJson(const std::optional<ClockStats>& s) {
  if (!s) return nullptr;
  return {{"min", s->min}, {"median", s->median}, {"max", s->max}, {"mean", s->mean}};
}

std::optional<ClockStats> StatsFromJson(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  ClockStats s;
  s.min = it->at("min").get<double>();
  s.median = it->at("median").get<double>();
  s.max = it->at("max").get<double>();
  // A window recorded without a mean keeps NaN here; the pairing refuses it.
  s.mean = it->contains("mean") && !it->at("mean").is_null() ? it->at("mean").get<double>()
                                                             : std::nan("");
  return s;
}

}  // namespace

bool IsBusy(const Sample& s) {
  bool util_busy = s.util_gpu_pct.has_value() && *s.util_gpu_pct > 0;
  if (s.reasons.has_value()) return (*s.reasons & kReasonGpuIdle) == 0 && util_busy;
  return util_busy;
}

ReadingSeries ToReadings(const std::vector<Sample>& samples, double default_period_s) {
  ReadingSeries out;
  out.polls = static_cast<int>(samples.size());
  if (samples.empty()) return out;
  // Runs of identical values.
  std::vector<size_t> starts;
  for (size_t i = 0; i < samples.size(); ++i)
    if (i == 0 || Key(samples[i]) != Key(samples[i - 1])) starts.push_back(i);
  std::vector<double> gaps;
  for (size_t i = 1; i < samples.size(); ++i) gaps.push_back(samples[i].t_s - samples[i - 1].t_s);
  double poll_s = gaps.empty() ? default_period_s : Median(gaps);
  // The update period: the typical spacing of value changes. Needs a few changes to trust.
  std::vector<double> change_gaps;
  for (size_t k = 1; k < starts.size(); ++k)
    change_gaps.push_back(samples[starts[k]].t_s - samples[starts[k - 1]].t_s);
  out.poll_interval_s = poll_s;
  double period = default_period_s;
  if (change_gaps.size() >= 5) {
    period = Median(change_gaps);
    out.period_measured = true;
  }
  // Polls slower than the driver's period see a new value at (nearly) every poll: the change
  // spacing is then the poll interval, and the readings between polls are invisible. Only a
  // period measured well above the poll interval is the driver's own.
  if (poll_s > 1.25 * default_period_s && period < 1.5 * poll_s) {
    out.polls_slower_than_updates = true;
    out.period_measured = false;
    out.update_period_s = default_period_s;
    double span = samples.back().t_s - samples.front().t_s + poll_s;
    for (size_t k = 0; k < starts.size(); ++k) {
      size_t b = starts[k], e = k + 1 < starts.size() ? starts[k + 1] : samples.size();
      Reading r;
      r.value = samples[b];
      r.polls = static_cast<int>(e - b);
      r.count = r.polls;  // each poll saw at most one reading
      r.busy = IsBusy(samples[b]);
      out.readings += r.count;
      out.runs.push_back(std::move(r));
    }
    out.missed_readings =
        std::max(0, static_cast<int>(std::lround(span / default_period_s)) - out.readings);
    return out;
  }
  period = std::max(period, poll_s);  // a poll can see at most one update
  if (!(period > 0)) period = default_period_s;
  out.update_period_s = period;
  for (size_t k = 0; k < starts.size(); ++k) {
    size_t b = starts[k], e = k + 1 < starts.size() ? starts[k + 1] : samples.size();
    // Observed time of the run: each poll covers up to one period; a longer gap is time
    // nobody watched (counted as missed readings, not as readings).
    double observed = 0;
    for (size_t i = b; i < e; ++i) {
      double gap = i + 1 < samples.size() ? samples[i + 1].t_s - samples[i].t_s : poll_s;
      observed += std::min(gap, period);
      if (gap > 1.5 * period) AddCount(out.missed_readings, std::max(0, ToCount(gap / period) - 1));
    }
    Reading r;
    r.value = samples[b];
    r.polls = static_cast<int>(e - b);
    r.count = std::max(1, ToCount(observed / period));
    r.busy = IsBusy(samples[b]);
    AddCount(out.readings, r.count);
    out.runs.push_back(std::move(r));
  }
  return out;
}

std::optional<DriverReadings> CountDriverReadings(const std::string& quantity,
                                                  const std::vector<DriverSample>& driver,
                                                  const std::vector<Sample>& polls,
                                                  double from_unix_s, double to_unix_s) {
  std::vector<double> ts;
  for (const auto& d : driver) {
    double t = static_cast<double>(d.timestamp_us) * 1e-6;
    if (t >= from_unix_s && t <= to_unix_s) ts.push_back(t);
  }
  if (ts.empty()) return std::nullopt;
  std::sort(ts.begin(), ts.end());
  DriverReadings r;
  r.quantity = quantity;
  r.readings = static_cast<int>(ts.size());
  std::vector<double> gaps;
  for (size_t i = 1; i < ts.size(); ++i) gaps.push_back(ts[i] - ts[i - 1]);
  r.period_s = gaps.empty() ? 0 : Median(gaps);
  std::vector<double> at;
  for (const auto& p : polls) at.push_back(p.unix_s);
  std::sort(at.begin(), at.end());
  for (size_t i = 0; i < ts.size(); ++i) {
    // The last reading lives at least to the end of the span.
    double end = i + 1 < ts.size() ? ts[i + 1] : std::max(ts[i] + r.period_s, to_unix_s) + 1e-9;
    auto it = std::lower_bound(at.begin(), at.end(), ts[i]);
    bool seen = it != at.end() && *it < end;
    if (!seen) ++r.missed;
  }
  return r;
}

Fold FoldWindow(const std::vector<Sample>& samples, const Policy& policy) {
  Fold f;
  if (samples.empty()) return f;
  f.gpu = samples.front().gpu;
  f.first_unix_s = samples.front().unix_s;
  f.last_unix_s = samples.back().unix_s;
  ReadingSeries rs = ToReadings(samples, policy.default_update_period_s);
  f.polls = rs.polls;
  f.readings = rs.readings;
  f.missed_readings = rs.missed_readings;
  f.update_period_s = rs.update_period_s;
  f.period_measured = rs.period_measured;
  f.poll_interval_s = rs.poll_interval_s;
  f.polls_slower_than_updates = rs.polls_slower_than_updates;
  std::vector<std::pair<double, int>> sm, mem, power;
  std::map<int, int> busy_by_bit;
  for (const auto& r : rs.runs) {
    if (!r.busy) {
      AddCount(f.idle_readings, r.count);
      continue;
    }
    AddCount(f.busy_readings, r.count);
    if (r.value.sm_mhz) sm.emplace_back(*r.value.sm_mhz, r.count);
    if (r.value.mem_mhz) mem.emplace_back(*r.value.mem_mhz, r.count);
    if (r.value.power_mw) power.emplace_back(static_cast<double>(*r.value.power_mw), r.count);
    if (r.value.reasons) {
      f.reasons_union |= *r.value.reasons;
      for (int b = 0; b < 64; ++b)
        if (*r.value.reasons & (1ull << b)) AddCount(busy_by_bit[b], r.count);
    }
  }
  // Peak memory and temperature are not part of the run key: take them from every poll.
  for (const auto& s : samples) {
    if (s.mem_used_bytes)
      f.peak_mem_used_bytes = std::max(f.peak_mem_used_bytes.value_or(0), *s.mem_used_bytes);
    if (s.temp_c) f.max_temp_c = std::max(f.max_temp_c.value_or(-1000), *s.temp_c);
  }
  f.busy_fraction = f.readings ? static_cast<double>(f.busy_readings) / f.readings : 0;
  f.sm_mhz = WeightedStats(sm);
  f.mem_mhz = WeightedStats(mem);
  f.power_mw = WeightedStats(power);
  if (f.sm_mhz && f.sm_mhz->median > 0)
    f.spread = (f.sm_mhz->max - f.sm_mhz->min) / f.sm_mhz->median;
  for (const auto& [bit, n] : busy_by_bit)
    f.busy_fraction_by_reason[ReasonName(1ull << bit)] = static_cast<double>(n) / f.busy_readings;
  return f;
}

std::vector<Sample> SelectGpu(const std::vector<Sample>& samples, int gpu) {
  std::vector<Sample> out;
  for (const auto& s : samples)
    if (s.gpu == gpu) out.push_back(s);
  return out;
}

std::vector<Sample> Slice(const std::vector<Sample>& samples, double from_unix_s,
                          double to_unix_s) {
  std::vector<Sample> out;
  for (const auto& s : samples)
    if (s.unix_s >= from_unix_s && s.unix_s <= to_unix_s) out.push_back(s);
  return out;
}

nlohmann::json ToJson(const Fold& f) {
  nlohmann::json j = {{"gpu", f.gpu},
                      {"polls", f.polls},
                      {"readings", f.readings},
                      {"busy_readings", f.busy_readings},
                      {"idle_readings", f.idle_readings},
                      {"missed_readings", f.missed_readings},
                      {"update_period_s", f.update_period_s},
                      {"update_period_measured", f.period_measured},
                      {"poll_interval_s", f.poll_interval_s},
                      {"polls_slower_than_updates", f.polls_slower_than_updates},
                      {"busy_fraction", f.busy_fraction},
                      {"sm_mhz", StatsJson(f.sm_mhz)},
                      {"spread", f.spread ? nlohmann::json(*f.spread) : nlohmann::json()},
                      {"mem_mhz", StatsJson(f.mem_mhz)},
                      {"power_mw", StatsJson(f.power_mw)},
                      {"reasons_union", f.reasons_union},
                      {"reasons_union_names", ReasonNames(f.reasons_union)},
                      {"busy_fraction_by_reason", f.busy_fraction_by_reason},
                      {"first_unix_s", f.first_unix_s},
                      {"last_unix_s", f.last_unix_s}};
  j["peak_mem_used_bytes"] =
      f.peak_mem_used_bytes ? nlohmann::json(*f.peak_mem_used_bytes) : nlohmann::json();
  j["max_temp_c"] = f.max_temp_c ? nlohmann::json(*f.max_temp_c) : nlohmann::json();
  nlohmann::json driver = nlohmann::json::array();
  for (const auto& d : f.driver)
    driver.push_back({{"quantity", d.quantity},
                      {"readings", d.readings},
                      {"period_s", d.period_s},
                      {"missed", d.missed}});
  j["driver_samples"] = driver;
  j["driver_samples_errors"] = f.driver_errors;
  return j;
}

const JsonSchema& FoldSchema() {
  constexpr std::int64_t kCount = 1000000000;  // readings, polls: far past any window
  const JsonSchema count = JsonSchema::Integer(0, kCount);
  const JsonSchema stats =
      JsonSchema::Object({Must("min", JsonSchema::Number()), Must("median", JsonSchema::Number()),
                          Must("max", JsonSchema::Number()),
                          May("mean", JsonSchema::Number().OrNull())})
          .OrNull();
  static const JsonSchema s = JsonSchema::Object({
      May("gpu", JsonSchema::Integer(0, 1023)),
      May("polls", count),
      Must("readings", count),
      Must("busy_readings", count),
      May("idle_readings", count),
      May("missed_readings", count),
      May("update_period_s", JsonSchema::Number(0, 1e6)),
      May("update_period_measured", JsonSchema::Bool()),
      Must("busy_fraction", JsonSchema::Number(0, 1)),
      May("sm_mhz", stats),
      May("spread", JsonSchema::Number().OrNull()),
      May("mem_mhz", stats),
      May("power_mw", stats),
      May("reasons_union", JsonSchema::Unsigned()),
      May("busy_fraction_by_reason", JsonSchema::Map(JsonSchema::Number(0, 1))),
      May("peak_mem_used_bytes", JsonSchema::Unsigned().OrNull()),
      May("max_temp_c", JsonSchema::Integer(-273, 1000).OrNull()),
      May("first_unix_s", JsonSchema::Number()),
      May("last_unix_s", JsonSchema::Number()),
      May("poll_interval_s", JsonSchema::Number(0, 1e6)),
      May("polls_slower_than_updates", JsonSchema::Bool()),
      May("driver_samples",
          JsonSchema::Array(JsonSchema::Object(
              {Must("quantity", JsonSchema::String()), Must("readings", count),
               Must("period_s", JsonSchema::Number(0, 1e6)), Must("missed", count)}))),
      May("driver_samples_errors", JsonSchema::Array(JsonSchema::String())),
  });
  return s;
}

Result<Fold> FoldFromJson(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) return MakeError("{}: a fold must be a JSON object", where);
  if (auto ok = FoldSchema().Check(j, where); !ok) return ok.error();
  return FoldFromCheckedJson(j);
}

Fold FoldFromCheckedJson(const nlohmann::json& j) {
  Fold f;
  f.gpu = j.value("gpu", 0);
  f.polls = j.value("polls", 0);
  f.readings = j.at("readings").get<int>();
  f.busy_readings = j.at("busy_readings").get<int>();
  f.idle_readings = j.value("idle_readings", std::max(0, f.readings - f.busy_readings));
  f.missed_readings = j.value("missed_readings", 0);
  f.update_period_s = j.value("update_period_s", 0.0);
  f.period_measured = j.value("update_period_measured", false);
  f.poll_interval_s = j.value("poll_interval_s", 0.0);
  f.polls_slower_than_updates = j.value("polls_slower_than_updates", false);
  f.busy_fraction = j.at("busy_fraction").get<double>();
  f.sm_mhz = StatsFromJson(j, "sm_mhz");
  if (j.contains("spread") && !j["spread"].is_null()) f.spread = j["spread"].get<double>();
  f.mem_mhz = StatsFromJson(j, "mem_mhz");
  f.power_mw = StatsFromJson(j, "power_mw");
  f.reasons_union = j.value("reasons_union", std::uint64_t{0});
  if (j.contains("busy_fraction_by_reason"))
    f.busy_fraction_by_reason = j["busy_fraction_by_reason"].get<std::map<std::string, double>>();
  if (j.contains("peak_mem_used_bytes") && !j["peak_mem_used_bytes"].is_null())
    f.peak_mem_used_bytes = j["peak_mem_used_bytes"].get<std::uint64_t>();
  if (j.contains("max_temp_c") && !j["max_temp_c"].is_null())
    f.max_temp_c = j["max_temp_c"].get<int>();
  f.first_unix_s = j.value("first_unix_s", 0.0);
  f.last_unix_s = j.value("last_unix_s", 0.0);
  if (auto d = j.find("driver_samples"); d != j.end())
    for (const auto& x : *d)
      f.driver.push_back({x.at("quantity").get<std::string>(), x.at("readings").get<int>(),
                          x.at("period_s").get<double>(), x.at("missed").get<int>()});
  if (auto e = j.find("driver_samples_errors"); e != j.end())
    f.driver_errors = e->get<std::vector<std::string>>();
  return f;
}

}  // namespace vouch
