// The measured ceilings of `vouch doctor --calibrate`, once per boot: each GPU's device-to-device
// copy bandwidth, measured through the CUDA driver API loaded at run time (dlopen
// "libcuda.so.1": no CUDA header or library at build time), and the store that keeps them with
// the device's UUID and the boot id they were measured in. A later run uses them only on the
// same GPU in the same boot. (The dense GEMM peak per dtype needs cuBLAS and is not measured
// yet: the datasheet peaks bound FLOP rates.)
#pragma once

#include <string>
#include <vector>

#include "roof/roof.h"
#include "util/result.h"

namespace vouch {

struct GpuCeilings {
  std::string uuid, name, boot_id;
  double measured_unix_s = 0;
  std::vector<Ceiling> ceilings;
};

// Measures the copy bandwidth of the GPU whose NVML UUID is UUID: REPEATS timed batches of
// device-to-device copies of BYTES (read and written: 2 x BYTES per copy, as busy.cu counts);
// the ceiling is the best batch, its noise the relative spread of the batches. An error when
// there is no CUDA driver or no such GPU.
Result<Ceiling> MeasureCopyBandwidth(const std::string& uuid, std::size_t bytes = 1ull << 30,
                                     int repeats = 5);

// Where the store keeps a GPU's ceilings: $VOUCH_CEILINGS_DIR, else $XDG_CACHE_HOME/vouch, else
// ~/.cache/vouch; the file is ceilings-UUID.json.
std::string CeilingsPath(const std::string& uuid);
Status WriteGpuCeilings(const GpuCeilings& c);
// The stored ceilings of UUID when they were measured in BOOT_ID; an empty list when none were
// stored, or in another boot (a stale calibration is not used); an error for a damaged file.
Result<std::vector<Ceiling>> ReadGpuCeilings(const std::string& uuid, const std::string& boot_id);

}  // namespace vouch
