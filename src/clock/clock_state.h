// The clock state a figure was taken at: the GPU, its boot and driver, and the pacing SM clock
// over the measured windows. A baseline pins it; a record carries it; a gate compares the two.
#pragma once

#include <string>

namespace vouch {

// valid=false means no clock window attributes it (then every comparison that uses it is
// unattributed).
struct ClockState {
  std::string gpu_uuid;
  std::string boot_id;
  std::string driver;
  double sm_median_mhz = 0;
  double sm_mean_mhz = 0;
  bool valid = false;
  bool simulated = false;  // the clocks are a replay of a simulated device, not a measurement
};

}  // namespace vouch
