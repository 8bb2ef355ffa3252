#include "roof/roof.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "util/json_io.h"

namespace vouch {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "3.35 TB/s", "989.5 TFLOP/s"
std::string Rate(RateKind kind, double per_s) {
  if (kind == RateKind::kFlops) return fmt::format("{:.1f} TFLOP/s", per_s / 1e12);
  return per_s >= 1e12 ? fmt::format("{:.2f} TB/s", per_s / 1e12)
                       : fmt::format("{:.1f} GB/s", per_s / 1e9);
}

std::string Described(const Ceiling& c) {
  std::string what =
      c.kind == RateKind::kBytes
          ? (c.quantity == "copy_bandwidth" ? "device-to-device copy bandwidth"
                                            : "memory bandwidth")
          : (c.quantity.rfind("gemm_", 0) == 0 ? "dense " + c.quantity.substr(5) + " GEMM peak"
                                               : c.quantity);
  if (c.measured)
    return fmt::format("the {} measured by {} on {} is {} (noise {:.1f} %)", what, c.source, c.date,
                       Rate(c.kind, c.per_second), 100 * c.noise);
  return fmt::format("the {} datasheet {} is {}", c.source, what, Rate(c.kind, c.per_second));
}

struct Sheet {
  const char* match;  // a substring of the NVML name, lower case
  const char* name;   // the datasheet
  double mem_tb_s;
  double fp64, fp32, tf32, bf16, fp8;  // dense TFLOP/s (tensor cores where they have them)
};
// NVIDIA datasheets, dense figures (the sparsity figures are twice these). More specific
// names first: "h100 nvl" before "h100".
constexpr Sheet kSheets[] = {
    {"h100 nvl", "NVIDIA H100 NVL", 3.9, 60, 60, 417.5, 835.5, 1670.5},
    {"h100 pcie", "NVIDIA H100 PCIe", 2.0, 51, 51, 378, 756, 1513},
    {"h100", "NVIDIA H100 SXM", 3.35, 67, 67, 494.5, 989.5, 1979},
    {"h200", "NVIDIA H200 SXM", 4.8, 67, 67, 494.5, 989.5, 1979},
    {"a100 80gb pcie", "NVIDIA A100 80GB PCIe", 1.935, 19.5, 19.5, 156, 312, 0},
    {"a100-pcie-40gb", "NVIDIA A100 40GB PCIe", 1.555, 19.5, 19.5, 156, 312, 0},
    {"a100-sxm4-80gb", "NVIDIA A100 80GB SXM", 2.039, 19.5, 19.5, 156, 312, 0},
    {"a100-sxm4-40gb", "NVIDIA A100 40GB SXM", 1.555, 19.5, 19.5, 156, 312, 0},
    {"l40s", "NVIDIA L40S", 0.864, 0, 91.6, 183, 362.05, 733},
};

}  // namespace

std::optional<RateUnit> ParseRateUnit(std::string_view unit) {
  std::string u(unit);
  u.erase(std::remove(u.begin(), u.end(), ' '), u.end());
  const std::string l = Lower(u);
  // FLOP rates: "TFLOP/s", "TFLOPS", "tflops", "GFLOP/s"... (FLOPS is never bits).
  for (auto [prefix, scale] : std::initializer_list<std::pair<const char*, double>>{
           {"", 1}, {"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"t", 1e12}, {"p", 1e15}}) {
    for (const char* tail : {"flop/s", "flops", "flop/sec"})
      if (l == std::string(prefix) + tail) return RateUnit{RateKind::kFlops, scale};
  }
  // Byte rates: the B must be upper case (b is a bit) unless the word is spelled out.
  if (l == "bytes/s" || l == "byte/s" || l == "bytes_per_second" || u == "B/s")
    return RateUnit{RateKind::kBytes, 1};
  for (auto [prefix, scale] :
       std::initializer_list<std::pair<const char*, double>>{{"K", 1e3},
                                                             {"k", 1e3},
                                                             {"M", 1e6},
                                                             {"G", 1e9},
                                                             {"T", 1e12},
                                                             {"P", 1e15},
                                                             {"Ki", 1024.0},
                                                             {"Mi", 1048576.0},
                                                             {"Gi", 1073741824.0},
                                                             {"Ti", 1099511627776.0}}) {
    if (u == std::string(prefix) + "B/s" || u == std::string(prefix) + "B/sec" ||
        u == std::string(prefix) + "Bps")
      return RateUnit{RateKind::kBytes, scale};
  }
  return std::nullopt;
}

std::vector<Ceiling> DatasheetCeilings(std::string_view gpu_name) {
  const std::string l = Lower(gpu_name);
  for (const auto& s : kSheets) {
    if (l.find(s.match) == std::string::npos) continue;
    std::vector<Ceiling> out;
    auto add = [&](RateKind k, const char* q, double per_s) {
      if (per_s > 0) out.push_back({k, q, per_s, 0, false, fmt::format("{}", s.name), "datasheet"});
    };
    add(RateKind::kBytes, "memory_bandwidth", s.mem_tb_s * 1e12);
    add(RateKind::kFlops, "gemm_fp64", s.fp64 * 1e12);
    add(RateKind::kFlops, "gemm_fp32", s.fp32 * 1e12);
    add(RateKind::kFlops, "gemm_tf32", s.tf32 * 1e12);
    add(RateKind::kFlops, "gemm_bf16", s.bf16 * 1e12);
    add(RateKind::kFlops, "gemm_fp16", s.bf16 * 1e12);
    add(RateKind::kFlops, "gemm_fp8", s.fp8 * 1e12);
    return out;
  }
  return {};
}

std::string DtypeHint(std::string_view metric_name) {
  const std::string l = Lower(metric_name);
  for (const char* d : {"bf16", "fp16", "fp8", "tf32", "fp32", "fp64", "f16", "f32", "f64"}) {
    if (l.find(d) == std::string::npos) continue;
    std::string s = d;
    return s[0] == 'f' && s[1] != 'p' ? "fp" + s.substr(1) : s;
  }
  return "";
}

std::optional<RateCheck> CheckRate(std::string_view name, double value, std::string_view unit,
                                   double metric_noise, const std::vector<Ceiling>& ceilings) {
  auto u = ParseRateUnit(unit);
  if (!u) return std::nullopt;
  const double v = value * u->per_second;
  const std::string dtype = u->kind == RateKind::kFlops ? DtypeHint(name) : "";
  // The ceilings that apply: of this kind; for FLOPs the metric's dtype, or (no dtype in its
  // name) the highest peak of each source, the most lenient reading.
  std::vector<const Ceiling*> apply;
  for (const auto& c : ceilings) {
    if (c.kind != u->kind) continue;
    if (u->kind == RateKind::kFlops && !dtype.empty() && c.quantity != "gemm_" + dtype) continue;
    apply.push_back(&c);
  }
  if (u->kind == RateKind::kFlops && dtype.empty()) {
    std::vector<const Ceiling*> best;
    for (bool measured : {true, false}) {
      const Ceiling* top = nullptr;
      for (const auto* c : apply)
        if (c->measured == measured && (!top || c->per_second > top->per_second)) top = c;
      if (top) best.push_back(top);
    }
    apply = best;
  }
  if (apply.empty()) return std::nullopt;
  RateCheck r;
  const Ceiling* exceeded = nullptr;
  double worst_ratio = 0;
  for (const auto* c : apply) {
    const double limit = c->per_second * (1 + c->noise + metric_noise);
    if (v > limit && v / c->per_second > worst_ratio) {
      exceeded = c;
      worst_ratio = v / c->per_second;
    }
  }
  const std::string figure = fmt::format("'{}' {} {} ({})", name, value, unit, Rate(u->kind, v));
  if (exceeded) {
    r.refused = true;
    r.reason = fmt::format("{} is above what this GPU can do: {}; the figure is {:.2f}x it", figure,
                           Described(*exceeded), worst_ratio);
    for (const auto* c : apply)
      if (c != exceeded) r.reason += "; " + Described(*c);
    r.reason +=
        ". A rate above the device's roof is a cache figure, a miscounted byte or FLOP, "
        "or a timer that missed work; it is not quoted";
    return r;
  }
  const Ceiling* tight = *std::min_element(
      apply.begin(), apply.end(), [](auto* a, auto* b) { return a->per_second < b->per_second; });
  r.note =
      fmt::format("{} is {:.0f} % of {}", figure, 100 * v / tight->per_second, Described(*tight));
  return r;
}

nlohmann::json ToJson(const Ceiling& c) {
  return {{"kind", c.kind == RateKind::kBytes ? "bytes" : "flops"},
          {"quantity", c.quantity},
          {"per_second", c.per_second},
          {"noise", c.noise},
          {"measured", c.measured},
          {"source", c.source},
          {"date", c.date}};
}

Result<Ceiling> CeilingFromJson(const nlohmann::json& j, const std::string& where) {
  static const JsonSchema schema = JsonSchema::Object({
      Must("kind", JsonSchema::String()),
      Must("quantity", JsonSchema::String()),
      Must("per_second", JsonSchema::Number(0, 1e20)),
      May("noise", JsonSchema::Number(0, 10)),
      May("measured", JsonSchema::Bool()),
      Must("source", JsonSchema::String()),
      Must("date", JsonSchema::String()),
  });
  if (auto ok = schema.Check(j, where); !ok) return ok.error();
  Ceiling c;
  const std::string kind = j.at("kind");
  if (kind != "bytes" && kind != "flops")
    return MakeError("{}: 'kind' '{}' must be bytes or flops", where, kind);
  c.kind = kind == "bytes" ? RateKind::kBytes : RateKind::kFlops;
  c.quantity = j.at("quantity");
  c.per_second = j.at("per_second");
  if (!(c.per_second > 0)) return MakeError("{}: 'per_second' must be above 0", where);
  c.noise = j.value("noise", 0.0);
  c.measured = j.value("measured", true);
  c.source = j.at("source");
  c.date = j.at("date");
  return c;
}

}  // namespace vouch
