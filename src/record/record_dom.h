// A record's checks, on simdjson's tree: for the readers that never build nlohmann's tree of
// it (fleet/attempt_fast.cc, store/store_fast.cc).
#pragma once

namespace simdjson::dom {
class element;
}  // namespace simdjson::dom

namespace vouch {

// Whether ReadRecordJsonFile's checks of a record (CheckRecordHeader: schema 'vouch.record'
// at kRecordSchemaVersion; CheckRecordShape: RecordSchema, a leg index is one leg, a metric
// has one of 'value' and 'text') pass on the tree ParseJson builds of the same text; false
// where any would not (or where the two trees could differ: JsonSchema::Accepts), and the
// ordinary reading then words the error.
bool RecordTreeOk(const simdjson::dom::element& rec);

}  // namespace vouch
