// The history store's documents read back: runs.record_json as `history show` and
// `report --run` read it (ParseStoredRecord: JSON, schema, version, the record's shape), then
// what they do with it; a leg's stored series and a stored gate (ParseStoredSeries,
// ParseStoredGate); and the checked conversion of a cell where a number is required.
// Pick 1 (store_add): `history add`'s reading of simdjson's tree (PrepareRecordTextFast) against
// the ordinary reading of the same text: where the first gives rows, the second gives the same,
// byte for byte (a difference aborts).
#include <cstdlib>
#include <string>

#include "fuzz_util.h"
#include "record/record.h"
#include "store/store_doc.h"
#include "store/store_rows.h"

namespace {

std::string Cells(const vouch::PreparedRecord& p) {
  auto row = [](const std::vector<vouch::SqlValue>& r) {
    std::string out;
    for (const auto& v : r) {
      if (std::holds_alternative<std::monostate>(v))
        out += "null";
      else if (const auto* i = std::get_if<std::int64_t>(&v))
        out += "i" + std::to_string(*i);
      else if (const auto* d = std::get_if<double>(&v))
        out += fmt::format("d{:.17g}", *d);
      else
        out += "s" + std::get<std::string>(v);
      out += '|';
    }
    return out + "\n";
  };
  std::string out = p.out.run_key + " " + p.content + "\n" + row(p.run_row);
  for (const auto* t : {&p.legs, &p.windows, &p.metrics, &p.summaries})
    for (const auto& r : *t) out += row(r);
  for (const auto* o : {&p.ab_verdict, &p.baseline, &p.gate}) out += *o ? row(**o) : "none\n";
  return out;
}

// The ordinary reading (ReadRecordJsonFile, then PrepareGuarded) of TEXT, no journal beside it.
std::optional<vouch::PreparedRecord> Ordinary(std::string_view text) {
  auto rec = vouch::ParseJson(text, "fuzz");
  if (!rec || !vouch::CheckRecordHeader(*rec, "fuzz") || !vouch::CheckRecordShape(*rec, "fuzz"))
    return std::nullopt;
  if (!rec->is_object() || rec->value("schema", "") != "vouch.record" ||
      rec->value("schema_version", 0) != vouch::kRecordSchemaVersion)
    return std::nullopt;
  try {
    return vouch::store_rows::Rows(*rec, "", vouch::DumpJson(*rec), vouch::kRecordSchemaVersion);
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = vouch::fuzz::AsText(data, size);
  if (VOUCH_FUZZ_PICK == 1) {
    if (auto fast = vouch::PrepareRecordTextFast(text, "")) {
      auto ordinary = Ordinary(text);
      if (!ordinary || Cells(*fast) != Cells(*ordinary)) std::abort();
    }
    return 0;
  }
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
