// A window: the folds of the GPUs sampled over one leg, the static state they were taken
// at, and the verdict. Judging is pure: a window is judged after it is written.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "clock/fold.h"
#include "clock/policy.h"
#include "telemetry/sample.h"
#include "throttle/throttle.h"

namespace vouch {

struct GpuWindow {
  StaticState state;
  Fold fold;
  // Named by --gpu or CUDA_VISIBLE_DEVICES: the command was meant to use it, so it must be
  // busy. A GPU sampled only because nothing was named may stay idle (it is then "unused").
  bool named = false;
  // The driver's violation counters between the window's edges, where the device has them.
  std::optional<ThrottleFold> throttle;
};

enum class WindowStatus { kValid, kInvalid, kIdle };
const char* ToString(WindowStatus s);

// Each GPU's own verdict: "valid", "invalid", "idle" (no busy reading; counts against the
// window when the GPU was named or is the only one) or "unused" (idle, not named: not judged).
struct GpuVerdict {
  int gpu = 0;
  std::string status;
  std::vector<std::string> reasons;
};

struct WindowVerdict {
  WindowStatus status = WindowStatus::kIdle;
  std::vector<GpuVerdict> gpus;      // one per GPU of the window, in its order
  std::vector<std::string> reasons;  // why it is not valid, in words a user can act on
  std::vector<std::string> notes;    // facts worth knowing that do not refuse it
  // Problems with the measurement that do not refuse the window but that a user must see
  // (shown with the leg and kept in the record): a GPU whose memory the leg nearly filled.
  std::vector<std::string> warnings;
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
  std::string gpu_source;  // how the GPUs were chosen: "CUDA_VISIBLE_DEVICES=0,1", "--gpu 1"
  std::vector<std::string> caveats;
  std::string samples_file;  // the raw samples, relative to the summary
  WindowVerdict verdict;
};

// Judges each GPU's fold, and the window from them: idle when no GPU was busy; invalid when a
// busy GPU breaks a rule or a named GPU sat idle (the reason says which GPU); else valid. A
// GPU that was not named and sat idle is recorded as unused and not judged. SOURCE says how
// the GPUs were named, for the reasons.
WindowVerdict JudgeWindow(const std::vector<GpuWindow>& gpus, const Policy& policy,
                          const std::string& source = "");
inline WindowVerdict JudgeWindow(const WindowSummary& w) {
  return JudgeWindow(w.gpus, w.policy, w.gpu_source);
}
// The SM clock mean that paces a leg over several GPUs: the lowest busy-clock mean of the
// busy GPUs (ranks wait for the slowest at each collective). Nullopt when none was busy.
std::optional<double> PacingClockMean(const WindowSummary& w);
std::optional<double> PacingClockMedian(const WindowSummary& w);
// The per-GPU reasons, prefixed with the GPU when PREFIX is set.
std::vector<std::string> JudgeFold(const Fold& f, const Policy& policy, const std::string& prefix);

nlohmann::json ToJson(const WindowSummary& w);
// Every field a window summary reader uses, with its type and range (util/json_io.h).
const JsonSchema& WindowSummarySchema();
Result<WindowSummary> WindowSummaryFromJson(const nlohmann::json& j, const std::string& where);
// The same of J that already passed WindowSummarySchema (a record's leg windows pass it in
// CheckRecordShape): the header is checked, the schema is not walked again.
Result<WindowSummary> WindowSummaryFromCheckedJson(const nlohmann::json& j,
                                                   const std::string& where);
// Its first checks: an object whose schema is 'vouch.window', version 1.
Status CheckWindowHeader(const nlohmann::json& j, std::string_view where);
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
// The same rules as a Markdown table (a pull request or a notebook).
std::string RenderPairMarkdown(const PairVerdict& p);

// |a - b| relative to the lower of the two (a 2470 vs 2190 MHz pair is 12.79 % apart).
double RelativeOffset(double a, double b);

}  // namespace vouch
