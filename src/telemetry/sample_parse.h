// SampleFromJsonLine's two ways (telemetry/sample.h): a flat line of the known fields read
// directly (false: not such a line, or a value the schema refuses), and the JSON tree checked
// against the schema (every line; the error names WHERE). SampleFromJsonLine tries the first,
// then the second.
#pragma once

#include <string>
#include <string_view>

#include "telemetry/sample.h"

namespace vouch {

bool ParseFlatSampleLine(std::string_view line, Sample* out);
Result<Sample> SampleFromJsonTree(std::string_view line, const std::string& where);

}  // namespace vouch
