#include "record/record_dom.h"

#include <set>

#include "record/record.h"
#include "util/dom_json.h"
#include "util/json_io.h"

namespace vouch {

bool RecordTreeOk(const simdjson::dom::element& root) {
  try {
    const DomJson rec(root);
    const auto schema = rec.member("schema"), version = rec.member("schema_version");
    if (!schema.is_string() || schema.str() != "vouch.record" || !version.is_number_integer() ||
        version.get<std::int64_t>() != kRecordSchemaVersion)
      return false;
    if (!RecordSchema().Accepts(root)) return false;
    std::set<std::int64_t> seen;
    for (const DomJson l : rec["legs"]) {
      if (!seen.insert(l["index"].get<std::int64_t>()).second) return false;
      for (const DomJson m : l["metrics"])
        if (m.contains("value") == m.contains("text")) return false;
    }
    return true;
  } catch (const DomJson::Mismatch&) {
    return false;
  }
}

}  // namespace vouch
