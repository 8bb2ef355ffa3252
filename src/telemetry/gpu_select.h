// Which GPUs a leg's window samples. A command can only use the GPUs CUDA lets it see, so
// CUDA_VISIBLE_DEVICES decides (resolved the way CUDA resolves it); --gpu overrides it; with
// neither, every GPU is sampled. GPUs that were named (by either) must each be busy in the
// window; GPUs sampled only because nothing was named may stay idle (recorded as unused).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "telemetry/sample.h"
#include "util/result.h"

namespace vouch {

struct GpuSelection {
  std::vector<int> gpus;  // NVML indices, ascending
  bool named = false;     // named by --gpu or CUDA_VISIBLE_DEVICES: each must be busy
  std::string source;     // "--gpu 0,1", "CUDA_VISIBLE_DEVICES=1", or "all GPUs (none named)"
  std::vector<std::string> notes;  // worth a warning and a caveat in the record
};

// CUDA_VISIBLE_DEVICES as CUDA reads it: comma-separated indices or GPU UUIDs (a unique
// prefix such as "GPU-8932f937" will do), in the order given; the first entry that names no
// GPU (or repeats one) ends the list, and entries after it are ignored. The result is NVML
// indices in CUDA's order. An error when no GPU is left, or for MIG instances (vouch samples
// whole GPUs). NOTES receives what the user should know (ignored entries; index order).
Result<std::vector<int>> ResolveCudaVisibleDevices(const std::string& value,
                                                   const std::vector<StaticState>& gpus,
                                                   const std::optional<std::string>& device_order,
                                                   std::vector<std::string>* notes);

// ASKED: the --gpu list (NVML indices); CUDA_VISIBLE: the variable as the command will see
// it (nullopt when unset); DEVICE_ORDER: CUDA_DEVICE_ORDER likewise; GPUS: every GPU.
Result<GpuSelection> SelectGpus(const std::vector<int>& asked,
                                const std::optional<std::string>& cuda_visible,
                                const std::optional<std::string>& device_order,
                                const std::vector<StaticState>& gpus);

}  // namespace vouch
