// A kernel's figures from its metrics (issue 39: read as each kernel's rows end, from the
// metrics of that kernel alone, so no kernel's metrics outlive its rows).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ncu/ncu_csv.h"

namespace vouch::ncu::stream_detail {

// The metrics of the kernel being read, by name. The slots outlive the kernel (the next one
// has the same names: no allocation per metric); a generation tells this kernel's from stale.
class KernelMetrics {
 public:
  struct Slot {
    Metric m;
    std::uint64_t gen = 0;
  };
  using Entry = std::pair<const std::string, Slot>;

  Entry& Get(std::string_view name) {
    key_.assign(name);
    return *slots_.try_emplace(key_).first;
  }
  bool Current(const Entry& e) const { return e.second.gen == gen_; }
  const Metric* Find(std::string_view name) const {
    key_.assign(name);
    auto it = slots_.find(key_);
    return it != slots_.end() && Current(*it) ? &it->second.m : nullptr;
  }
  void Set(Entry& e, std::string_view unit, std::string_view value, std::string_view section) {
    e.second.m.unit.assign(unit);
    e.second.m.value.assign(value);
    e.second.m.section.assign(section);
    Mark(e);
  }
  void Mark(Entry& e) {
    if (Current(e)) return;
    e.second.gen = gen_;
    touched_.push_back(&e);
  }
  // How many metrics this kernel has, and which.
  std::size_t count() const { return touched_.size(); }
  const std::vector<const Entry*>& touched() const { return touched_; }
  // The next kernel. FORGET: names are not pinned (details page): a map grown far past one
  // kernel's names (every kernel naming new metrics) is dropped rather than kept for ever.
  void Next(bool forget) {
    if (forget && slots_.size() > 4096 + 8 * touched_.size()) slots_.clear();
    ++gen_;
    touched_.clear();
  }

 private:
  std::unordered_map<std::string, Slot> slots_;  // nodes: entries stay put as it grows
  mutable std::string key_;
  std::uint64_t gen_ = 1;
  std::vector<const Entry*> touched_;
};

// Whether the figures read the metric NAME (the raw page keeps only these columns).
bool Consulted(std::string_view name);

// K's figures from KM (the metrics its rows named). Figures
// that are not numbers (or negative) are left out with a warning in WARNINGS.
void Derive(KernelProfile& k, const KernelMetrics& km, std::vector<std::string>* warnings);

}  // namespace vouch::ncu::stream_detail
