#include "telemetry/gpu_select.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

#include "util/strings.h"

namespace vouch {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && Lower(s.substr(0, prefix.size())) == Lower(prefix);
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

std::string List(const std::vector<int>& g) { return fmt::format("{}", fmt::join(g, ",")); }

}  // namespace

Result<std::vector<int>> ResolveCudaVisibleDevices(const std::string& value,
                                                   const std::vector<StaticState>& gpus,
                                                   const std::optional<std::string>& device_order,
                                                   std::vector<std::string>* notes) {
  const int count = static_cast<int>(gpus.size());
  std::string range = count == 0 ? "none" : fmt::format("0..{}", count - 1);
  if (Trim(value).empty())
    return MakeError(
        "CUDA_VISIBLE_DEVICES is set but empty: the command can see no GPU, so there is nothing "
        "to sample (unset it, or name the GPUs with --gpu)");
  std::vector<int> out;
  bool by_index = false;
  std::string stop_why;
  std::vector<std::string> entries = Split(value, ',');
  size_t i = 0;
  for (; i < entries.size(); ++i) {
    std::string e = Trim(entries[i]);
    int idx = -1;
    if (StartsWithNoCase(e, "MIG-"))
      return MakeError(
          "CUDA_VISIBLE_DEVICES entry '{}' names a MIG instance: vouch samples whole GPUs; name "
          "the GPU that holds it with --gpu",
          e);
    if (AllDigits(e)) {
      long v = e.size() > 9 ? count : std::stol(e);
      if (v < count) idx = static_cast<int>(v);
      if (idx < 0) stop_why = fmt::format("is not a GPU here (GPUs {})", range);
      by_index = true;
    } else if (e.size() > 1 && e[0] == '-' && AllDigits(e.substr(1))) {
      stop_why = fmt::format("is not a GPU here (GPUs {})", range);
    } else if (StartsWithNoCase(e, "GPU-")) {
      std::vector<int> hits;
      for (int g = 0; g < count; ++g)
        if (StartsWithNoCase(gpus[static_cast<size_t>(g)].uuid, e)) hits.push_back(g);
      if (hits.size() == 1)
        idx = hits[0];
      else
        stop_why = hits.empty() ? "matches no GPU's UUID here"
                                : fmt::format("matches the UUIDs of GPUs {}", List(hits));
    } else {
      stop_why = "is neither a GPU index nor a GPU UUID";
    }
    if (idx >= 0 && std::find(out.begin(), out.end(), idx) != out.end()) {
      stop_why = fmt::format("repeats GPU {}", idx);
      idx = -1;
    }
    if (idx < 0) {
      stop_why = fmt::format("entry '{}' {}", e, stop_why);
      break;
    }
    out.push_back(idx);
  }
  if (out.empty())
    return MakeError(
        "CUDA_VISIBLE_DEVICES='{}' leaves the command no GPU: {} (CUDA ignores it and every entry "
        "after it); fix the variable, or name the GPUs with --gpu",
        value, stop_why);
  if (i < entries.size() && notes)
    notes->push_back(fmt::format(
        "CUDA_VISIBLE_DEVICES='{}': {}; CUDA ignores it and every entry after it, so the command "
        "sees GPU(s) {} only",
        value, stop_why, List(out)));
  bool alike = std::all_of(gpus.begin(), gpus.end(),
                           [&](const StaticState& s) { return s.name == gpus.front().name; });
  if (by_index && !alike && device_order.value_or("") != "PCI_BUS_ID" && notes)
    notes->push_back(
        "CUDA numbers GPUs fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID, and this machine's "
        "GPUs are not all alike: CUDA's index N may not be NVML's index N, which vouch assumed. "
        "Set CUDA_DEVICE_ORDER=PCI_BUS_ID or name the GPUs by UUID");
  return out;
}

Result<GpuSelection> SelectGpus(const std::vector<int>& asked,
                                const std::optional<std::string>& cuda_visible,
                                const std::optional<std::string>& device_order,
                                const std::vector<StaticState>& gpus) {
  const int count = static_cast<int>(gpus.size());
  if (count == 0) return MakeError("the device has no GPU to sample");
  GpuSelection s;
  if (!asked.empty()) {
    for (int g : asked) {
      if (g < 0 || g >= count)
        return MakeError("--gpu {}: the device has {} GPU(s), numbered 0..{}", g, count, count - 1);
      if (std::find(s.gpus.begin(), s.gpus.end(), g) == s.gpus.end()) s.gpus.push_back(g);
    }
    std::sort(s.gpus.begin(), s.gpus.end());
    s.named = true;
    s.source = "--gpu " + List(s.gpus);
    if (cuda_visible) {
      std::vector<std::string> ignored;
      auto seen = ResolveCudaVisibleDevices(*cuda_visible, gpus, device_order, &ignored);
      if (!seen) {
        s.notes.push_back(fmt::format("vouch samples GPU(s) {} (--gpu), but {}", List(s.gpus),
                                      seen.error().message));
      } else {
        std::vector<int> v = *seen;
        std::sort(v.begin(), v.end());
        if (v != s.gpus)
          s.notes.push_back(fmt::format(
              "vouch samples GPU(s) {} (--gpu), but CUDA_VISIBLE_DEVICES='{}' lets the command "
              "use GPU(s) {}",
              List(s.gpus), *cuda_visible, List(v)));
      }
    }
    return s;
  }
  if (cuda_visible) {
    auto seen = ResolveCudaVisibleDevices(*cuda_visible, gpus, device_order, &s.notes);
    if (!seen) return seen.error();
    s.gpus = *seen;
    std::sort(s.gpus.begin(), s.gpus.end());
    s.named = true;
    s.source = fmt::format("CUDA_VISIBLE_DEVICES={}", *cuda_visible);
    return s;
  }
  for (int g = 0; g < count; ++g) s.gpus.push_back(g);
  s.source = "all GPUs (none named)";
  return s;
}

}  // namespace vouch
