#include "util/json_io.h"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "util/bounded_file.h"
#include "util/json_dump.h"

namespace vouch {
namespace {

// nlohmann's value of simdjson's element: the same tree nlohmann's own parser builds (a
// repeated key keeps its last value, a number without '-', '.' or exponent is unsigned).
// False when a container lies deeper than MAX_DEPTH (DEPTH: E's own, the root's is 1), where
// ParseJson's scan of the text refuses it; the scan runs only then.
bool ToNlohmann(simdjson::dom::element e, nlohmann::json& out, int depth, int max_depth) {
  using T = simdjson::dom::element_type;
  switch (e.type()) {
    case T::ARRAY: {
      if (depth > max_depth) return false;
      out = nlohmann::json::array();
      auto& arr = out.get_ref<nlohmann::json::array_t&>();
      simdjson::dom::array a;
      if (e.get_array().get(a) != simdjson::SUCCESS) break;
      arr.reserve(a.size());
      for (simdjson::dom::element v : a)
        if (!ToNlohmann(v, arr.emplace_back(), depth + 1, max_depth)) return false;
      break;
    }
    case T::OBJECT: {
      if (depth > max_depth) return false;
      out = nlohmann::json::object();
      auto& obj = out.get_ref<nlohmann::json::object_t&>();
      simdjson::dom::object o;
      if (e.get_object().get(o) != simdjson::SUCCESS) break;
      // vouch writes its keys sorted: each goes at the end, without a search of the map (the
      // hint is checked against the last key). A key out of order is searched for; a repeated
      // one is found, and its value overwritten (nlohmann keeps the last).
      for (simdjson::dom::key_value_pair kv : o) {
        auto at = obj.emplace_hint(obj.end(), std::string(kv.key), nullptr);
        if (!ToNlohmann(kv.value, at->second, depth + 1, max_depth)) return false;
      }
      break;
    }
    case T::INT64: {
      const std::int64_t v = e.get_int64().value_unsafe();
      if (v >= 0)
        out = static_cast<std::uint64_t>(v);
      else
        out = v;
      break;
    }
    case T::UINT64:
      out = e.get_uint64().value_unsafe();
      break;
    case T::DOUBLE:
      out = e.get_double().value_unsafe();
      break;
    case T::STRING:
      out = std::string(e.get_string().value_unsafe());
      break;
    case T::BOOL:
      out = e.get_bool().value_unsafe();
      break;
    case T::NULL_VALUE:
      out = nullptr;
      break;
  }
  return true;
}

// Text where the two parsers could build different trees from a valid document: a bare
// -0 (nlohmann: a signed integer) and a \u escape of a surrogate (simdjson's checks of
// unpaired ones are not nlohmann's). Such text goes to nlohmann alone.
bool NeedsNlohmann(std::string_view text) {
  for (std::size_t at = text.find("-0"); at != std::string_view::npos;
       at = text.find("-0", at + 1)) {
    const char next = at + 2 < text.size() ? text[at + 2] : ' ';
    if (next == ',' || next == ']' || next == '}' || next == ' ' || next == '\n' || next == '\r' ||
        next == '\t')
      return true;
  }
  for (std::size_t at = text.find("\\u"); at != std::string_view::npos;
       at = text.find("\\u", at + 1)) {
    if (at + 3 < text.size() && (text[at + 2] == 'd' || text[at + 2] == 'D') &&
        std::strchr("89abcdefABCDEF", text[at + 3]) != nullptr && text[at + 3] != '\0')
      return true;
  }
  return false;
}

// simdjson's reading of TEXT as nlohmann's tree; nullopt whenever it is not certain to be
// the tree nlohmann builds (then nlohmann parses it, and words any error itself).
std::optional<nlohmann::json> FastParse(std::string_view text, int max_depth) {
  if (NeedsNlohmann(text)) return std::nullopt;
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(text.data(), text.size(), true).get(root) != simdjson::SUCCESS)
    return std::nullopt;
  nlohmann::json out;
  if (!ToNlohmann(root, out, 1, max_depth)) return std::nullopt;
  return out;
}

}  // namespace

bool TextNeedsNlohmann(std::string_view text) { return NeedsNlohmann(text); }

bool DomToJson(const simdjson::dom::element& e, nlohmann::json& out, int max_depth) {
  return ToNlohmann(e, out, 1, max_depth);
}

namespace {

// Empties J's containers, children first: each is then freed by its parent's clear() without
// nlohmann's stack.
void ClearChildren(nlohmann::json& j, int depth) {
  if (depth > kMaxJsonDepth) return;
  if (j.is_object()) {
    auto& o = j.get_ref<nlohmann::json::object_t&>();
    for (auto& kv : o)
      if (kv.second.is_structured()) ClearChildren(kv.second, depth + 1);
    o.clear();
  } else if (j.is_array()) {
    auto& a = j.get_ref<nlohmann::json::array_t&>();
    for (auto& v : a)
      if (v.is_structured()) ClearChildren(v, depth + 1);
    a.clear();
  }
}

}  // namespace

void FreeJson(nlohmann::json& j) {
  ClearChildren(j, 1);
  j = nullptr;
}

std::size_t FindExcessiveNesting(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;  // the escaped character cannot end the string
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::string_view::npos;
}

Result<nlohmann::json> ParseJson(std::string_view text, std::string_view where, int max_depth) {
  // A document simdjson reads, no deeper than MAX_DEPTH, passes the scan below: it runs only
  // on the rest (the scan was a twentieth of `vouch fleet merge`).
  if (auto fast = FastParse(text, max_depth)) return std::move(*fast);
  if (auto at = FindExcessiveNesting(text, max_depth); at != std::string_view::npos)
    return MakeError("{}: nested deeper than {} levels (at byte {}); not a file vouch reads", where,
                     max_depth, at);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return MakeError("{}: not valid JSON (truncated or corrupt?): {}", where, e.what());
  } catch (const nlohmann::json::exception& e) {
    // out_of_range 406: a number such as 1E601 overflows a double.
    return MakeError("{}: not valid JSON: {}", where, e.what());
  }
}

Result<nlohmann::json> ReadJsonFile(const std::string& path, std::uint64_t max_bytes,
                                    int max_depth) {
  // One buffer for the text of every file this thread reads (a fleet merge reads two per
  // node): no allocation, zeroing or fresh pages per file. A large one is not kept.
  thread_local std::string buf;
  auto file = BoundedFile::Open(path, max_bytes);
  if (!file) return file.error();
  auto n = file->ReadInto(buf);
  if (!n) return n.error();
  const std::string_view text(buf.data(), *n);
  auto parsed = text.find_first_not_of(" \t\r\n") == std::string_view::npos
                    ? Result<nlohmann::json>(MakeError("{}: the file is empty", path))
                    : ParseJson(text, path, max_depth);
  if (buf.size() > (std::size_t{16} << 20)) std::string().swap(buf);
  return parsed;
}

std::string DumpJson(const nlohmann::json& j, int indent) {
  if (indent < 0) {  // the same bytes, written faster (util/json_dump.h)
    std::string out;
    AppendCompactJson(out, j);
    return out;
  }
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string DumpJson(const nlohmann::ordered_json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

bool IsValidUtf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    int n = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      n = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + static_cast<std::size_t>(n) >= s.size()) return false;
    for (int k = 1; k <= n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8.
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += static_cast<std::size_t>(n) + 1;
  }
  return true;
}

std::string HexBytes(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * s.size());
  for (unsigned char c : s) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 0xF]);
  }
  return out;
}

nlohmann::json HexIfNotUtf8(const std::vector<std::string>& args) {
  bool all_utf8 = true;
  for (const auto& a : args) all_utf8 = all_utf8 && IsValidUtf8(a);
  if (all_utf8) return nullptr;
  nlohmann::json out = nlohmann::json::array();
  for (const auto& a : args) out.push_back(HexBytes(a));
  return out;
}

JsonSchema JsonSchema::Any() { return JsonSchema(); }

JsonSchema JsonSchema::String() {
  JsonSchema s;
  s.kind_ = Kind::kString;
  return s;
}

JsonSchema JsonSchema::Bool() {
  JsonSchema s;
  s.kind_ = Kind::kBool;
  return s;
}

JsonSchema JsonSchema::Number() {
  return Number(-std::numeric_limits<double>::max(), std::numeric_limits<double>::max());
}

JsonSchema JsonSchema::Number(double lo, double hi) {
  JsonSchema s;
  s.kind_ = Kind::kNumber;
  s.lo_ = lo;
  s.hi_ = hi;
  return s;
}

JsonSchema JsonSchema::Integer(std::int64_t lo, std::int64_t hi) {
  JsonSchema s;
  s.kind_ = Kind::kInteger;
  s.ilo_ = lo;
  s.ihi_ = hi;
  return s;
}

JsonSchema JsonSchema::Unsigned(std::uint64_t hi) {
  JsonSchema s;
  s.kind_ = Kind::kUnsigned;
  s.uhi_ = hi;
  return s;
}

JsonSchema JsonSchema::Object(std::vector<Field> fields) {
  JsonSchema s;
  s.kind_ = Kind::kObject;
  s.fields_ = std::make_shared<const std::vector<Field>>(std::move(fields));
  std::vector<std::pair<std::string, std::uint32_t>> keys;
  for (std::size_t i = 0; i < s.fields_->size(); ++i)
    keys.emplace_back((*s.fields_)[i].key, static_cast<std::uint32_t>(i));
  std::sort(keys.begin(), keys.end());
  s.sorted_keys_ = std::make_shared<const decltype(keys)>(std::move(keys));
  return s;
}

JsonSchema JsonSchema::Array(JsonSchema element) {
  JsonSchema s;
  s.kind_ = Kind::kArray;
  s.element_ = std::make_shared<const JsonSchema>(std::move(element));
  return s;
}

JsonSchema JsonSchema::Map(JsonSchema value) {
  JsonSchema s;
  s.kind_ = Kind::kMap;
  s.element_ = std::make_shared<const JsonSchema>(std::move(value));
  return s;
}

JsonSchema JsonSchema::OrNull() const {
  JsonSchema s = *this;
  s.nullable_ = true;
  return s;
}

std::string JsonSchema::Describe() const {
  std::string d;
  switch (kind_) {
    case Kind::kAny:
      d = "any value";
      break;
    case Kind::kString:
      d = "a string";
      break;
    case Kind::kBool:
      d = "true or false";
      break;
    case Kind::kNumber:
      d = lo_ == -std::numeric_limits<double>::max() && hi_ == std::numeric_limits<double>::max()
              ? std::string("a finite number")
              : fmt::format("a number in [{}, {}]", lo_, hi_);
      break;
    case Kind::kInteger:
      d = fmt::format("an integer in [{}, {}]", ilo_, ihi_);
      break;
    case Kind::kUnsigned:
      d = fmt::format("an integer in [0, {}]", uhi_);
      break;
    case Kind::kObject:
    case Kind::kMap:
      d = "an object";
      break;
    case Kind::kArray:
      d = "an array";
      break;
  }
  return nullable_ ? d + " or null" : d;
}

Status JsonSchema::Check(const nlohmann::json& j, std::string_view where) const {
  std::vector<PathStep> path;
  path.reserve(16);
  return CheckAt(j, where, path);
}

std::string JsonSchema::PathText(const std::vector<PathStep>& path) {
  std::string out;
  for (const auto& s : path) {
    if (s.key)
      out += out.empty() ? *s.key : "." + *s.key;
    else
      out += fmt::format("[{}]", s.index);
  }
  return out;
}

// PATH is built as steps, and made text only for an error: a string of it for every field
// checked was most of the check's cost.
Status JsonSchema::CheckAt(const nlohmann::json& j, std::string_view where,
                           std::vector<PathStep>& path) const {
  auto bad = [&]() {
    std::string got = j.is_structured() || j.is_string() ? std::string(j.type_name()) : j.dump();
    if (got.size() > 40) got = got.substr(0, 37) + "...";
    const std::string at = PathText(path);
    return MakeError("{}: '{}' must be {} (got {})", where, at.empty() ? "(top)" : at, Describe(),
                     got);
  };
  if (j.is_null() && nullable_) return OkStatus();
  switch (kind_) {
    case Kind::kAny:
      return OkStatus();
    case Kind::kString:
      return j.is_string() ? OkStatus() : Status(bad());
    case Kind::kBool:
      return j.is_boolean() ? OkStatus() : Status(bad());
    case Kind::kNumber: {
      if (!j.is_number()) return bad();
      const double v = j.get<double>();
      return std::isfinite(v) && v >= lo_ && v <= hi_ ? OkStatus() : Status(bad());
    }
    case Kind::kInteger:
      if (j.is_number_unsigned()) {
        const auto v = j.get<std::uint64_t>();
        return ihi_ >= 0 && v <= static_cast<std::uint64_t>(ihi_) &&
                       static_cast<std::int64_t>(v) >= ilo_
                   ? OkStatus()
                   : Status(bad());
      }
      if (j.is_number_integer()) {
        const auto v = j.get<std::int64_t>();
        return v >= ilo_ && v <= ihi_ ? OkStatus() : Status(bad());
      }
      return bad();
    case Kind::kUnsigned:
      return j.is_number_unsigned() && j.get<std::uint64_t>() <= uhi_ ? OkStatus() : Status(bad());
    case Kind::kObject: {
      if (!j.is_object()) return bad();
      for (const auto& f : *fields_) {
        path.push_back({&f.key, 0});
        auto it = j.find(f.key);
        if (it == j.end()) {
          if (f.required) return MakeError("{}: '{}' is missing", where, PathText(path));
        } else if (auto s = f.schema.CheckAt(*it, where, path); !s) {
          return s;
        }
        path.pop_back();
      }
      return OkStatus();
    }
    case Kind::kArray: {
      if (!j.is_array()) return bad();
      for (std::size_t i = 0; i < j.size(); ++i) {
        path.push_back({nullptr, i});
        if (auto s = element_->CheckAt(j[i], where, path); !s) return s;
        path.pop_back();
      }
      return OkStatus();
    }
    case Kind::kMap: {
      if (!j.is_object()) return bad();
      for (auto it = j.begin(); it != j.end(); ++it) {
        path.push_back({&it.key(), 0});
        if (auto s = element_->CheckAt(*it, where, path); !s) return s;
        path.pop_back();
      }
      return OkStatus();
    }
  }
  return OkStatus();
}

}  // namespace vouch
