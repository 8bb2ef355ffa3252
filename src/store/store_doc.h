// The store's documents and cells read back: a stored record document goes through the same
// checks as a record.json (schema, version, shape), and a cell where a number is required is a
// number or an error naming the row, never a 0 made up from text. Nothing here talks to a
// database, so the fuzz target for stored documents (fuzz/fuzz_store.cc) builds it alone.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/sql.h"
#include "telemetry/sample.h"
#include "util/result.h"

namespace vouch {

// A stored record document (runs.record_json) as `history show` and `report --run` read it:
// valid JSON, a 'vouch.record' of the version this vouch reads, and the record's shape
// (CheckRecordShape). WHERE names the store and the row; every error starts with it.
Result<nlohmann::json> ParseStoredRecord(std::string_view text, std::string_view where);

// A leg's stored clock and power series (windows.series_json, LegSeries' shape: t0_unix_s and
// the arrays t_s, sm_mhz, power_w and busy, one entry per point) and a stored gate
// (gates.gate_json: a 'vouch.gate' object, every field a reader uses of its type). JSON
// nested deeper than such a document is (8 levels) is refused before it is read; an error
// starts with WHERE and names the field.
Result<nlohmann::json> ParseStoredSeries(std::string_view text, std::string_view where);
Result<nlohmann::json> ParseStoredGate(std::string_view text, std::string_view where);

// A cell where a number is required. An integer, or a real that is a whole number in range
// (StoredInt); a finite number (StoredReal); NULL allowed (StoredOptReal). Text, NULL or a
// non-finite value is an error "WHERE is text ('abc'), not a number ...".
Result<std::int64_t> StoredInt(const SqlValue& v, std::string_view where);
Result<double> StoredReal(const SqlValue& v, std::string_view where);
Result<std::optional<double>> StoredOptReal(const SqlValue& v, std::string_view where);

// A leg's samples file (SOURCE/legs[i].dir/window.samples_file), when it is there and readable.
std::optional<std::vector<Sample>> ReadLegSamples(const std::string& source,
                                                  const nlohmann::json& leg);
// The same of the leg's DIR and its window's samples FILE.
std::optional<std::vector<Sample>> ReadLegSamplesFile(const std::string& source,
                                                      const std::string& dir,
                                                      const std::string& file);

}  // namespace vouch
