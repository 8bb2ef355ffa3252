// JsonSchema::Accepts: the schema's check of simdjson's tree, for a reader that never builds
// nlohmann's (the fleet merge's records). It answers whether JsonSchema::Check would pass on
// the tree ParseJson builds from the same text (util/json_io.cc's ToNlohmann: a number without
// '-' is unsigned, a repeated key keeps its last value), and nothing more: the error is
// Check's, on the tree, when this says no.
#include <simdjson.h>

#include <algorithm>
#include <bitset>
#include <cmath>
#include <string_view>

#include "util/json_io.h"

namespace vouch {

bool JsonSchema::Accepts(const simdjson::dom::element& e) const {
  using T = simdjson::dom::element_type;
  const T t = e.type();
  if (t == T::NULL_VALUE && nullable_) return true;
  // nlohmann's reading of an integer: unsigned unless negative.
  const bool is_unsigned = t == T::UINT64 || (t == T::INT64 && e.get_int64().value_unsafe() >= 0);
  auto unsigned_value = [&]() -> std::uint64_t {
    return t == T::UINT64 ? e.get_uint64().value_unsafe()
                          : static_cast<std::uint64_t>(e.get_int64().value_unsafe());
  };
  switch (kind_) {
    case Kind::kAny:
      return true;
    case Kind::kString:
      return t == T::STRING;
    case Kind::kBool:
      return t == T::BOOL;
    case Kind::kNumber: {
      double v = 0;
      if (t == T::DOUBLE)
        v = e.get_double().value_unsafe();
      else if (is_unsigned)
        v = static_cast<double>(unsigned_value());
      else if (t == T::INT64)
        v = static_cast<double>(e.get_int64().value_unsafe());
      else
        return false;
      return std::isfinite(v) && v >= lo_ && v <= hi_;
    }
    case Kind::kInteger: {
      if (is_unsigned) {
        const std::uint64_t v = unsigned_value();
        return ihi_ >= 0 && v <= static_cast<std::uint64_t>(ihi_) &&
               static_cast<std::int64_t>(v) >= ilo_;
      }
      if (t != T::INT64) return false;
      const std::int64_t v = e.get_int64().value_unsafe();
      return v >= ilo_ && v <= ihi_;
    }
    case Kind::kUnsigned:
      return is_unsigned && unsigned_value() <= uhi_;
    case Kind::kObject: {
      if (t != T::OBJECT) return false;
      const auto& keys = *sorted_keys_;
      if (keys.size() > 64) return false;  // the caller's Check decides
      std::bitset<64> seen;
      // A copy, not a reference into get_object()'s result, which the loop would outlive.
      const simdjson::dom::object o = e.get_object().value_unsafe();
      // Each key is looked for from the field after the one the key before it matched (vouch
      // writes keys sorted, as KEYS are).
      const std::size_t n = keys.size();
      std::size_t at = 0;
      for (simdjson::dom::key_value_pair kv : o) {
        const std::string_view k = kv.key;
        std::size_t found = n;
        for (std::size_t step = 0; step < n; ++step) {
          const std::size_t c = at + step < n ? at + step : at + step - n;
          const std::string& d = keys[c].first;
          if (std::string_view(d) == k) {
            found = c;
            break;
          }
        }
        if (found == n) continue;  // a key no reader uses
        at = found + 1 < n ? found + 1 : 0;
        const std::uint32_t i = keys[found].second;
        if (seen.test(i)) return false;  // repeated: nlohmann keeps the last
        seen.set(i);
        if (!(*fields_)[i].schema.Accepts(kv.value)) return false;
      }
      for (std::size_t i = 0; i < fields_->size(); ++i)
        if ((*fields_)[i].required && !seen.test(i)) return false;
      return true;
    }
    case Kind::kArray: {
      if (t != T::ARRAY) return false;
      const simdjson::dom::array a = e.get_array().value_unsafe();
      for (simdjson::dom::element v : a)
        if (!element_->Accepts(v)) return false;
      return true;
    }
    case Kind::kMap: {
      if (t != T::OBJECT) return false;
      // Every value is checked, a repeated key's first ones too: stricter than Check.
      const simdjson::dom::object o = e.get_object().value_unsafe();
      for (simdjson::dom::key_value_pair kv : o)
        if (!element_->Accepts(kv.value)) return false;
      return true;
    }
  }
  return false;
}

}  // namespace vouch
