// simdjson's tree read through the part of nlohmann::json's const interface that the store's
// row rules use (store/store_rows.h), so that one template states those rules for both trees:
// `history add` reads a record without building nlohmann's tree of it (issue 39: the tree, its
// freeing and its dump were a third of the command's CPU).
//
// Where nlohmann would convert the value, so does this (a number read as another number type,
// a missing key's default); where nlohmann would throw or assert (a string read as a number,
// a missing key read with [], value() of a non-object), this throws DomJson::Mismatch: the
// reader then declines, and the ordinary reading words the error.
#pragma once

#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace vouch {

class DomJson {
 public:
  struct Mismatch {};
  using T = simdjson::dom::element_type;

  DomJson() = default;  // null, as a missing member reads
  explicit DomJson(simdjson::dom::element e) : e_(e), null_(false) {}

  bool is_null() const { return null_ || e_.type() == T::NULL_VALUE; }
  bool is_object() const { return !null_ && e_.type() == T::OBJECT; }
  bool is_array() const { return !null_ && e_.type() == T::ARRAY; }
  bool is_string() const { return !null_ && e_.type() == T::STRING; }
  bool is_boolean() const { return !null_ && e_.type() == T::BOOL; }
  bool is_number_integer() const {
    return !null_ && (e_.type() == T::INT64 || e_.type() == T::UINT64);
  }
  bool is_number() const { return is_number_integer() || (!null_ && e_.type() == T::DOUBLE); }

  // nlohmann's size() and empty(): a container's elements, 0 for null, 1 for a scalar.
  std::size_t size() const;
  bool empty() const { return size() == 0; }

  // The member KEY (the last of a repeated key, as nlohmann keeps it), in one pass over the
  // object; nullopt where missing or not an object.
  std::optional<DomJson> Find(std::string_view key) const;
  bool contains(std::string_view key) const { return Find(key).has_value(); }
  DomJson member(std::string_view key) const { return Find(key).value_or(DomJson()); }
  DomJson operator[](std::string_view key) const;  // Mismatch where missing
  DomJson operator[](std::size_t i) const;         // Mismatch past the end
  DomJson at(std::string_view key) const { return (*this)[key]; }
  DomJson front() const { return (*this)[std::size_t{0}]; }

  template <class V>
  V get() const {
    if constexpr (std::is_same_v<V, std::string>) {
      return std::string(str());
    } else if constexpr (std::is_same_v<V, bool>) {
      if (!is_boolean()) throw Mismatch{};
      return e_.get_bool().value_unsafe();
    } else {
      static_assert(std::is_arithmetic_v<V>);
      // nlohmann's get of a number type: any number (or a boolean) converted.
      if (null_) throw Mismatch{};
      switch (e_.type()) {
        case T::INT64:
          return static_cast<V>(e_.get_int64().value_unsafe());
        case T::UINT64:
          return static_cast<V>(e_.get_uint64().value_unsafe());
        case T::DOUBLE:
          return static_cast<V>(e_.get_double().value_unsafe());
        case T::BOOL:
          return static_cast<V>(e_.get_bool().value_unsafe());
        default:
          throw Mismatch{};
      }
    }
  }
  std::string_view str() const;  // Mismatch unless a string

  // nlohmann's value(KEY, DEFAULT): Mismatch on a non-object (nlohmann throws), DEFAULT where
  // KEY is missing, else the member converted as get() converts it.
  std::string value(std::string_view key, const char* dflt) const;
  template <class V>
  V value(std::string_view key, V dflt) const {
    if (!is_object()) throw Mismatch{};
    auto m = Find(key);
    return m ? m->get<V>() : dflt;
  }

  // An array's elements in order; none for null (nlohmann's iteration). An object's values,
  // which nlohmann would iterate, are a Mismatch: no rule of the store iterates one.
  class Iter {
   public:
    explicit Iter(simdjson::dom::array::iterator it) : it_(it) {}
    DomJson operator*() const { return DomJson(*it_); }
    Iter& operator++() {
      ++it_;
      return *this;
    }
    bool operator!=(const Iter& o) const { return it_ != o.it_; }

   private:
    simdjson::dom::array::iterator it_;
  };
  Iter begin() const { return is_null() ? Iter({}) : Iter(Array().begin()); }
  Iter end() const { return is_null() ? Iter({}) : Iter(Array().end()); }

  // KEY and value of each member in key order (nlohmann's items()); a tree that
  // AppendSortedDomJson accepted repeats no key.
  template <class F>
  void ForEachItem(F each) const {
    if (!is_object()) return;
    std::vector<std::pair<std::string_view, simdjson::dom::element>> kvs;
    for (simdjson::dom::key_value_pair kv : Object()) kvs.emplace_back(kv.key, kv.value);
    std::stable_sort(kvs.begin(), kvs.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [k, v] : kvs) each(std::string(k), DomJson(v));
  }

  simdjson::dom::element element() const { return e_; }

 private:
  simdjson::dom::array Array() const;  // Mismatch unless an array
  // The object itself, by value: (not `for (kv : e.get_object().value_unsafe())`, which
  // iterates a reference into a temporary gone before the loop starts).
  simdjson::dom::object Object() const {
    simdjson::dom::object o = e_.get_object().value_unsafe();
    return o;
  }
  simdjson::dom::element e_;
  bool null_ = true;
};

// The compact dump of E, byte for byte DumpJson of nlohmann's tree of the same text (each
// object's keys in std::map's order), where no object repeats a key and no container is deeper
// than MAX_DEPTH; false, OUT partly written, otherwise.
bool AppendSortedDomJson(std::string& out, simdjson::dom::element e, int max_depth);
// DumpJson of a DomJson whose tree AppendSortedDomJson accepted.
std::string DumpJson(const DomJson& j);

}  // namespace vouch
