// Helpers shared by commands: opening the device the global options chose, policy flags.
#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "clock/policy.h"
#include "command.h"
#include "lock/lock.h"
#include "telemetry/device.h"
#include "telemetry/gpu_select.h"

namespace vouch::cli {

// The simulated device when --sim/VOUCH_SIM is set, else NVML. Prints the error on failure.
std::unique_ptr<Device> OpenDevice(const GlobalOptions& g);

// Adds --gpu to APP: GPU indices, repeatable or as a comma list (--gpu 0,1 --gpu 3).
CLI::Option* AddGpuOption(CLI::App& app, std::vector<int>& gpus, const std::string& help);

// --markdown FILE|- on a command that prints a table: FILE also gets WHAT as Markdown; "-"
// prints the Markdown instead of the text (the command's own branch: `markdown == "-"`).
CLI::Option* AddMarkdownOption(CLI::App& app, std::string& markdown, const std::string& what);
// Writes RENDER() to the --markdown FILE; nothing for "" or "-". False when FILE cannot be
// written, the error printed as "vouch COMMAND: cannot write FILE: ...".
bool WriteMarkdownFile(const std::string& markdown, const std::function<std::string()>& render,
                       std::string_view command);

// Takes the measurement lock for COMMAND (vouch's command name, e.g. "run"), saying at once,
// when it is held, who holds it and how long vouch will wait.
Result<MeasureLock> TakeLock(const GlobalOptions& g, const std::string& command,
                             const std::string& measured, double timeout_s);

// A timeout: 0 (never), or KMINTIMEOUTS to KMAXTIMEOUTS seconds (a year), finite.
inline constexpr double kMinTimeoutS = 0.01, kMaxTimeoutS = 365.0 * 24 * 3600;
// A CLI11 check for an option in seconds: finite, 0 or from MIN_NONZERO to MAX.
CLI::Validator Seconds(double min_nonzero, double max);

// The options of one judged window around a command, shared by `clock sample` and the
// commands that run legs (run, baseline, gate, ab).
struct WindowFlags {
  std::vector<int> gpus;
  double interval_ms = 10, timeout_s = 0, lock_timeout_s = 60;
  std::optional<int> lock_clocks;
  bool require_lock_clocks = false;
  bool gpu_trace = false;     // --gpu-trace: inject the CUPTI tracer into the command
  std::string gpu_trace_lib;  // --gpu-trace-lib: where it is (default: found beside vouch)
  void Add(CLI::App& app);
};

// The tracer library for --gpu-trace: GIVEN, else $VOUCH_CUPTI_LIB, else libvouch_cupti.so
// beside the vouch binary or in ../lib (the build tree, .carry). An error that says where it
// looked and how to build it when there is none.
Result<std::string> FindTracerLibrary(const std::string& given);

// Policy overrides on the command line; percentages are given in percent.
struct PolicyFlags {
  std::optional<int> min_busy_readings;
  std::optional<double> min_busy_pct, max_spread_pct, max_median_offset_pct, max_mean_offset_pct;
  std::optional<double> memory_margin_pct;
  std::optional<double> max_throttled_pct;
  void Add(CLI::App& app);
  Policy Apply(Policy p) const;
};

// The GPUs a window samples: --gpu when given, else the GPUs CUDA_VISIBLE_DEVICES lets the
// command see (from ENV, the command's added variables, else vouch's own environment; only
// when HONOUR_CUDA_VISIBLE), else all. telemetry/gpu_select.h has the rules.
Result<GpuSelection> ChooseGpus(const std::vector<int>& asked, Device& device,
                                const std::vector<std::pair<std::string, std::string>>& env,
                                bool honour_cuda_visible = true);

}  // namespace vouch::cli
