// A leg's metrics held to the GPU's roof (src/roof): a rate of bytes or FLOPs above a ceiling
// of the GPUs its window sampled makes the leg invalid, the reason naming both figures and the
// ceiling's source and date, so that no summary, gate or verdict quotes it.
#pragma once

#include "record/leg_runner.h"
#include "telemetry/device.h"

namespace vouch::cli {

// The ceilings are the datasheet peaks of the leg's GPUs by their names (the lowest, for a
// leg over several). Returns how many metrics were refused.
int RefuseAboveRoof(LegRecord& leg);

// vouch doctor --calibrate: measures GPUS' ceilings (roof/calibrate.h), stores them with the
// device's UUID and boot id and prints them. Returns the exit code.
int CalibrateGpus(Device& device, const std::vector<int>& gpus);

}  // namespace vouch::cli
