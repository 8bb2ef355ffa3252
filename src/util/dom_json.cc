#include "util/dom_json.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "util/json_dump.h"
#include "util/json_io.h"

namespace vouch {

std::size_t DomJson::size() const {
  if (is_null()) return 0;
  if (e_.type() == T::ARRAY) return Array().size();
  if (e_.type() == T::OBJECT) return Object().size();
  return 1;
}

simdjson::dom::array DomJson::Array() const {
  if (!is_array()) throw Mismatch{};
  simdjson::dom::array a = e_.get_array().value_unsafe();
  return a;
}

std::optional<DomJson> DomJson::Find(std::string_view key) const {
  std::optional<DomJson> out;
  if (!is_object()) return out;
  for (simdjson::dom::key_value_pair kv : Object())
    if (kv.key == key) out = DomJson(kv.value);  // a repeated key: the last, as nlohmann
  return out;
}

DomJson DomJson::operator[](std::string_view key) const {
  auto m = Find(key);
  if (!m) throw Mismatch{};
  return *m;
}

DomJson DomJson::operator[](std::size_t i) const {
  auto a = Array();
  if (i >= a.size()) throw Mismatch{};
  return DomJson(a.at(i).value_unsafe());
}

std::string_view DomJson::str() const {
  if (!is_string()) throw Mismatch{};
  return e_.get_string().value_unsafe();
}

std::string DomJson::value(std::string_view key, const char* dflt) const {
  if (!is_object()) throw Mismatch{};
  auto m = Find(key);
  return m ? std::string(m->str()) : std::string(dflt);
}

namespace {

simdjson::dom::object ObjectOf(simdjson::dom::element e) {
  simdjson::dom::object o = e.get_object().value_unsafe();
  return o;
}
simdjson::dom::array ArrayOf(simdjson::dom::element e) {
  simdjson::dom::array a = e.get_array().value_unsafe();
  return a;
}

bool AppendSorted(std::string& out, simdjson::dom::element e, int depth, int max_depth) {
  using T = simdjson::dom::element_type;
  switch (e.type()) {
    case T::ARRAY: {
      if (depth > max_depth) return false;
      out += '[';
      bool first = true;
      for (simdjson::dom::element v : ArrayOf(e)) {
        if (!first) out += ',';
        first = false;
        if (!AppendSorted(out, v, depth + 1, max_depth)) return false;
      }
      out += ']';
      return true;
    }
    case T::OBJECT: {
      if (depth > max_depth) return false;
      // std::map<std::string>'s order is std::string's compare: bytes as unsigned char, as
      // std::string_view's. vouch writes its keys in that order; another writer's are sorted
      // here first. A repeated key (nlohmann keeps the last) is declined.
      const simdjson::dom::object o = ObjectOf(e);
      bool sorted = true;
      std::string_view prev;
      bool first = true;
      for (simdjson::dom::key_value_pair kv : o) {
        if (!first && !(prev < kv.key)) sorted = false;
        first = false;
        prev = kv.key;
      }
      auto member = [&](std::string_view key, simdjson::dom::element v) {
        AppendJsonString(out, key);
        out += ':';
        return AppendSorted(out, v, depth + 1, max_depth);
      };
      out += '{';
      if (sorted) {
        first = true;
        for (simdjson::dom::key_value_pair kv : o) {
          if (!first) out += ',';
          first = false;
          if (!member(kv.key, kv.value)) return false;
        }
      } else {
        std::vector<std::pair<std::string_view, simdjson::dom::element>> kvs;
        kvs.reserve(o.size());
        for (simdjson::dom::key_value_pair kv : o) kvs.emplace_back(kv.key, kv.value);
        std::sort(kvs.begin(), kvs.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        for (std::size_t i = 0; i < kvs.size(); ++i) {
          if (i && kvs[i - 1].first == kvs[i].first) return false;
          if (i) out += ',';
          if (!member(kvs[i].first, kvs[i].second)) return false;
        }
      }
      out += '}';
      return true;
    }
    // ToNlohmann's numbers: a non-negative int64 is nlohmann's unsigned, printed the same.
    case T::INT64:
      AppendJsonInteger(out, e.get_int64().value_unsafe());
      return true;
    case T::UINT64:
      AppendJsonInteger(out, e.get_uint64().value_unsafe());
      return true;
    case T::DOUBLE:
      AppendJsonNumber(out, e.get_double().value_unsafe());
      return true;
    case T::STRING:
      AppendJsonString(out, e.get_string().value_unsafe());
      return true;
    case T::BOOL:
      out += e.get_bool().value_unsafe() ? "true" : "false";
      return true;
    case T::NULL_VALUE:
      out += "null";
      return true;
  }
  return false;
}

}  // namespace

bool AppendSortedDomJson(std::string& out, simdjson::dom::element e, int max_depth) {
  return AppendSorted(out, e, 1, max_depth);
}

std::string DumpJson(const DomJson& j) {
  std::string out;
  if (j.is_null())
    out = "null";
  else if (!AppendSorted(out, j.element(), 1, kMaxJsonDepth))
    throw DomJson::Mismatch{};
  return out;
}

}  // namespace vouch
