// Physical plausibility (issue 38): a figure a GPU cannot produce is refused. A metric whose
// unit is a rate of bytes or of floating-point operations is compared with the GPU's ceilings:
// those measured on it (device-to-device copy bandwidth, dense GEMM peak per dtype; `vouch
// doctor --calibrate`, once per boot) and the datasheet peaks where the GPU is known. Above a
// measured ceiling by more than the two noises, or above a datasheet peak at all, it is refused
// with both figures, the ceiling's source and its date. Pure: the ceilings are given.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace vouch {

enum class RateKind { kBytes, kFlops };

struct RateUnit {
  RateKind kind = RateKind::kBytes;
  double per_second = 1;  // the unit in bytes/s or FLOP/s: "GB/s" 1e9, "GiB/s" 2^30
};
// "GB/s", "TB/s", "GiB/s", "MB/s", "B/s", "bytes/s", "TFLOP/s", "TFLOPS", "GFLOP/s", "PFLOP/s"...
// (case of the prefix kept: "Gb/s" is bits); nullopt for any other unit.
std::optional<RateUnit> ParseRateUnit(std::string_view unit);

struct Ceiling {
  RateKind kind = RateKind::kBytes;
  std::string quantity;  // "copy_bandwidth", "memory_bandwidth", "gemm_bf16", "gemm_fp8"...
  double per_second = 0;
  double noise = 0;       // relative spread of a measured ceiling (0 for a datasheet figure)
  bool measured = false;  // measured on this GPU (else a datasheet upper bound)
  std::string source;     // "vouch doctor --calibrate", "NVIDIA H100 SXM datasheet"
  std::string date;       // when measured, or the datasheet's edition
};

// The datasheet peaks of a GPU by its NVML name ("NVIDIA H100 80GB HBM3", "NVIDIA H200",
// "NVIDIA A100-SXM4-80GB"...): memory bandwidth and dense (no sparsity) tensor peaks per dtype.
// Empty for a GPU not in the table.
std::vector<Ceiling> DatasheetCeilings(std::string_view gpu_name);

// The dtype a FLOP-rate metric is about, from its name ("gemm_bf16_tflops" -> "bf16"), or "".
std::string DtypeHint(std::string_view metric_name);

struct RateCheck {
  bool refused = false;
  std::string reason;  // when refused: both figures, the ceiling's source and date
  std::string note;    // when passed: the ceiling it was held to ("58 % of ...")
};
// Checks VALUE in UNIT (a rate unit, see ParseRateUnit) of metric NAME against CEILINGS.
// METRIC_NOISE: the metric's own relative spread (0 when unknown). nullopt when the unit is not
// a rate of bytes or FLOPs, or no ceiling applies.
std::optional<RateCheck> CheckRate(std::string_view name, double value, std::string_view unit,
                                   double metric_noise, const std::vector<Ceiling>& ceilings);

nlohmann::json ToJson(const Ceiling& c);
Result<Ceiling> CeilingFromJson(const nlohmann::json& j, const std::string& where);

}  // namespace vouch
