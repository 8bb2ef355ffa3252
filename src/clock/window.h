// A window: the folds of the GPUs sampled over one leg, the static state they were taken
// at, and the verdict. Judging is pure: a window is judged after it is written.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "clock/fold.h"
#include "clock/policy.h"
#include "telemetry/sample.h"

namespace vouch {

struct GpuWindow {
  StaticState state;
  Fold fold;
};

enum class WindowStatus { kValid, kInvalid, kIdle };
const char* ToString(WindowStatus s);

struct WindowVerdict {
  WindowStatus status = WindowStatus::kIdle;
  std::vector<std::string> reasons;  // why it is not valid, in words a user can act on
  std::vector<std::string> notes;    // facts worth knowing that do not refuse it
};

struct WindowSummary {
  int schema_version = 1;
  bool simulated = false;
  std::string device;  // "NVML 580.159.04" or "simulated device replaying FILE"
  std::string hostname, kernel, boot_id;
  std::vector<std::string> command;
  double started_unix_s = 0, ended_unix_s = 0;
  // The measured region (begin/end markers) the window was judged over, if any.
  std::optional<double> region_begin_unix_s, region_end_unix_s;
  Policy policy;
  std::vector<GpuWindow> gpus;
  std::vector<std::string> caveats;
  std::string samples_file;  // the raw samples, relative to the summary
  WindowVerdict verdict;
};

// Judges each GPU's fold. With several GPUs, a GPU with no busy reading is noted as not used
// and left out, unless none was busy (then the window is idle).
WindowVerdict JudgeWindow(const std::vector<GpuWindow>& gpus, const Policy& policy);
// The per-GPU reasons, prefixed with the GPU when PREFIX is set.
std::vector<std::string> JudgeFold(const Fold& f, const Policy& policy, const std::string& prefix);

nlohmann::json ToJson(const WindowSummary& w);
Result<WindowSummary> WindowSummaryFromJson(const nlohmann::json& j, const std::string& where);
Result<WindowSummary> ReadWindowSummary(const std::string& path);

std::string RenderWindowText(const WindowSummary& w);

// Pairing: two windows are comparable only when every rule holds.
struct PairRule {
  std::string rule;
  std::string a, b;  // both values, as text
  bool pass = false;
  bool waived = false;
};

struct PairVerdict {
  bool paired = false;
  std::vector<PairRule> rules;
  std::vector<std::string> caveats;
};

// ALLOW_CROSS_BOOT waives the boot id only, and stamps a caveat.
PairVerdict PairWindows(const WindowSummary& a, const WindowSummary& b, const Policy& policy,
                        bool allow_cross_boot);
nlohmann::json ToJson(const PairVerdict& p);
std::string RenderPairText(const PairVerdict& p);

// |a - b| relative to the lower of the two (a 2470 vs 2190 MHz pair is 12.79 % apart).
double RelativeOffset(double a, double b);

}  // namespace vouch
