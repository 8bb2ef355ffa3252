// vouch's JSON in and out, in one place.
//
// In: ParseJson/ReadJsonFile refuse nesting deeper than a stated limit before nlohmann builds
// (and later copies or dumps, both recursive) a tree, and turn every nlohmann error
// (a syntax error, a number that overflows a double such as 1E601) into an Error naming the
// file. A JsonSchema then checks every field a reader uses: its type, that a number is
// finite, that an integer fits the range of the C++ field it is read into (a clock of 2^32 +
// 1980 MHz must not become 1980), so the reader after it cannot throw or cut a value. Errors
// name the file and the field path: "baseline.json: 'metrics[2].value' must be a finite number".
//
// Out: DumpJson is the one serialiser of every writer. It replaces invalid UTF-8 (a kernel
// name from a profiler, a command-line argument) instead of throwing out of the writer.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/result.h"

namespace simdjson::dom {
class element;
}  // namespace simdjson::dom

namespace vouch {

// Deeper than this is not a file vouch or a benchmark tool writes.
inline constexpr int kMaxJsonDepth = 128;

// Parses TEXT; WHERE (a file name) starts every error.
Result<nlohmann::json> ParseJson(std::string_view text, std::string_view where,
                                 int max_depth = kMaxJsonDepth);
// Reads PATH through BoundedFile (a regular file of at most MAX_BYTES) and parses it.
Result<nlohmann::json> ReadJsonFile(const std::string& path, std::uint64_t max_bytes,
                                    int max_depth = kMaxJsonDepth);
// Where TEXT nests deeper than MAX_DEPTH: the byte offset, or npos. Strings are skipped.
std::size_t FindExcessiveNesting(std::string_view text, int max_depth);
// Whether TEXT holds what simdjson and nlohmann read differently (a bare -0, a \u escape of a
// surrogate): a reader of simdjson's tree must then leave it to ParseJson.
bool TextNeedsNlohmann(std::string_view text);
// OUT: nlohmann's tree of simdjson's E, as ParseJson builds it (a repeated key keeps its last
// value); false where a container lies deeper than MAX_DEPTH levels.
bool DomToJson(const simdjson::dom::element& e, nlohmann::json& out, int max_depth = kMaxJsonDepth);

// Frees J's tree, leaving J null. nlohmann's destructor first moves every value of a tree
// through one growing stack (most of the cost of dropping a parsed record); this frees each
// value where it lies, children first. Below kMaxJsonDepth levels nlohmann's own destructor
// frees the rest, so a deep tree cannot exhaust the call stack.
void FreeJson(nlohmann::json& j);

// The one dump of every writer: invalid UTF-8 becomes U+FFFD instead of an exception.
std::string DumpJson(const nlohmann::json& j, int indent = -1);
std::string DumpJson(const nlohmann::ordered_json& j, int indent = -1);
bool IsValidUtf8(std::string_view s);
// Lower-case hex of the bytes, to keep raw bytes that are not UTF-8 (argv) beside the
// replaced text.
std::string HexBytes(std::string_view s);
// When any of ARGS is not UTF-8 (DumpJson would replace bytes of it): every arg in hex, to
// sit beside the replaced text as the exact bytes; null when all are UTF-8.
nlohmann::json HexIfNotUtf8(const std::vector<std::string>& args);

// What a field must be. Unknown keys are allowed (a newer writer may add some); every key a
// reader uses must be declared.
class JsonSchema {
 public:
  struct Field;
  static JsonSchema Any();
  static JsonSchema String();
  static JsonSchema Bool();
  static JsonSchema Number();  // finite
  static JsonSchema Number(double lo, double hi);
  static JsonSchema Integer(std::int64_t lo, std::int64_t hi);
  static JsonSchema Unsigned(std::uint64_t hi = ~std::uint64_t{0});
  static JsonSchema Object(std::vector<Field> fields);
  static JsonSchema Array(JsonSchema element);
  static JsonSchema Map(JsonSchema value);  // an object with any keys, every value of one kind
  JsonSchema OrNull() const;

  // "a finite number", "an integer in [0, 2147483647]", ...
  std::string Describe() const;
  // Error "WHERE: 'PATH' must be ..." for the first field that breaks the schema.
  Status Check(const nlohmann::json& j, std::string_view where) const;
  // Whether Check would pass on ParseJson's tree of simdjson's E, without building it
  // (json_schema_dom.cc). Stricter where the two could differ: an object that repeats a key
  // this schema declares is refused (nlohmann keeps the last). A reader that gets false runs
  // Check on the tree for the error.
  bool Accepts(const simdjson::dom::element& e) const;

 private:
  enum class Kind { kAny, kString, kBool, kNumber, kInteger, kUnsigned, kObject, kArray, kMap };
  struct PathStep {  // a key, or (KEY null) an index
    const std::string* key;
    std::size_t index;
  };
  static std::string PathText(const std::vector<PathStep>& path);
  Status CheckAt(const nlohmann::json& j, std::string_view where,
                 std::vector<PathStep>& path) const;
  Kind kind_ = Kind::kAny;
  bool nullable_ = false;
  double lo_ = 0, hi_ = 0;
  std::int64_t ilo_ = 0, ihi_ = 0;
  std::uint64_t uhi_ = 0;
  std::shared_ptr<const std::vector<Field>> fields_;
  // An object's declared keys, sorted, with their index in FIELDS_ (for Accepts).
  std::shared_ptr<const std::vector<std::pair<std::string, std::uint32_t>>> sorted_keys_;
  std::shared_ptr<const JsonSchema> element_;
};

struct JsonSchema::Field {
  std::string key;
  JsonSchema schema;
  bool required = true;
};

// Shorthands for schema tables.
inline JsonSchema::Field Must(std::string key, JsonSchema s) {
  return {std::move(key), std::move(s), true};
}
inline JsonSchema::Field May(std::string key, JsonSchema s) {
  return {std::move(key), std::move(s), false};
}

}  // namespace vouch
