// `history add`'s reading of a record in order, the common case (issue 39: `history add` at
// most 1.2x the CPU of sqlite3 replaying the same rows). The record is read once into
// simdjson's tree; its header, schema and leg rules (ReadRecordJsonFile's) are checked there
// (JsonSchema::Accepts), the stored document is dumped from it, and the rows are store_rows.h's
// rules read through DomJson: no nlohmann tree is built, walked, dumped or freed.
//
// Where anything is not plain (a journal beside the record, a file that cannot be read, text
// the two parsers could read differently, a header, schema or leg rule that refuses it, a key
// repeated, a field nlohmann would convert with an error) this reading declines
// and the ordinary one decides, and words any error: the rows and the errors of `history add`
// are the ordinary reading's, byte for byte (store_fast_test.cc, fuzz/fuzz_store.cc).
#include <filesystem>

#include "record/journal.h"
#include "record/record.h"
#include "record/record_dom.h"
#include "store/store.h"
#include "util/bounded_file.h"
#include "util/dom_json.h"
#include "util/json_io.h"
// After dom_json.h: the rules' DumpJson of a DomJson is found where they are stated.
#include "store/store_rows.h"

namespace vouch {
namespace {

std::optional<PreparedRecord> Prepare(std::string_view text, const std::string& source) {
  if (TextNeedsNlohmann(text)) return std::nullopt;
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(text.data(), text.size(), true).get(root) != simdjson::SUCCESS)
    return std::nullopt;
  if (!RecordTreeOk(root)) return std::nullopt;
  std::string document;
  document.reserve(text.size());
  if (!AppendSortedDomJson(document, root, kMaxJsonDepth)) return std::nullopt;
  return store_rows::Rows(DomJson(root), source, std::move(document), kRecordSchemaVersion);
}

}  // namespace

std::optional<PreparedRecord> PrepareRecordTextFast(std::string_view text,
                                                    const std::string& source) {
  try {
    return Prepare(text, source);
  } catch (const DomJson::Mismatch&) {
    return std::nullopt;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

std::optional<PreparedRecord> PrepareRecordFast(const std::string& record_path,
                                                const std::string& source) {
  // A journal beside the record is assembled into it, or checked against it, by the
  // ordinary reading.
  std::error_code ec;
  const auto journal = std::filesystem::path(record_path).parent_path() / kLegJournalFile;
  if (std::filesystem::exists(journal, ec) || ec) return std::nullopt;
  // One buffer for every record this thread reads, as ReadJsonFile keeps; a large one is not
  // kept.
  thread_local std::string buf;
  auto file = BoundedFile::Open(record_path, kMaxRecordFileBytes);
  if (!file) return std::nullopt;
  auto n = file->ReadInto(buf);
  if (!n) return std::nullopt;
  auto out = PrepareRecordTextFast(std::string_view(buf.data(), *n), source);
  if (buf.size() > (std::size_t{16} << 20)) std::string().swap(buf);
  return out;
}

}  // namespace vouch
