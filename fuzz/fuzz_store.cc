// The history store's documents read back: runs.record_json as `history show` and
// `report --run` read it (ParseStoredRecord: JSON, schema, version, the record's shape), then
// what they do with it; a leg's stored series and a stored gate (ParseStoredSeries,
// ParseStoredGate); and the checked conversion of a cell where a number is required.
#include <string>

#include "fuzz_util.h"
#include "record/record.h"
#include "store/store_doc.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = vouch::fuzz::AsText(data, size);
  auto doc = vouch::ParseStoredRecord(text, "history store fuzz: runs row x (record_json)");
  if (doc) {
    (void)vouch::RenderRecordText(*doc);
    (void)vouch::RecordMedians(*doc, "run", "stored");
    (void)vouch::RecordMedians(*doc, "A", "stored");
    (void)vouch::RecordClockState(*doc, "run");
  }
  // The other stored documents: a leg's series (windows.series_json) and a gate
  // (gates.gate_json), each shape-checked and depth-bounded before use.
  if (auto s = vouch::ParseStoredSeries(text, "history store fuzz: windows row (series_json)"))
    (void)s->dump();
  if (auto g = vouch::ParseStoredGate(text, "history store fuzz: a gates row (gate_json)"))
    (void)g->value("overall", "?");
  // A cell as text (what SQLite keeps when a non-number is written to a REAL column).
  (void)vouch::StoredReal(vouch::SqlValue(std::string(text)), "summaries row x: median");
  (void)vouch::StoredInt(vouch::SqlValue(std::string(text)), "schema_version.version");
  return 0;
}
