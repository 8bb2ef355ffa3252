// How a printed ratio reads. A bare "ratio B/A 0.906" of a lower-is-better time is read
// backwards by most people (B took 1.107x as long); every ratio vouch prints is the plain
// quotient of the metric's values, named by what it divides, with the word that says which
// side it favours ("B/A time 1.107 (B slower)").
#pragma once

#include <string>
#include <string_view>

#include "metrics/metric.h"

namespace vouch {

// What a unit measures: "time" for s/ms/us/ns, "throughput" for a rate (".../s"), "value"
// otherwise.
std::string_view QuantityOf(std::string_view unit);

// The word for NUM/DEN = RATIO of a metric with direction BETTER: "faster"/"slower" for times
// and rates, "better"/"worse" otherwise, "same" when it prints as 1.0000 (within 5e-5 of 1).
// "" for kNone.
std::string_view RatioWord(double ratio, Better better, std::string_view unit);

// "B/A time 1.1070 (B slower)": NUM and DEN name the sides ("B", "A", "now", "baseline").
std::string RatioReading(std::string_view num, std::string_view den, double ratio, Better better,
                         std::string_view unit);

}  // namespace vouch
