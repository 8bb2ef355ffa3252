// Room for the events a reader is about to add, in transparent huge pages where the system
// leaves them to madvise: event vectors of hundreds of MB are touched for the first time by a
// reader, and a fault per 4 KiB page is dear on a VM (a 5 M-row nsys export: ~140,000 faults).
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vouch::trace {

// Asks for huge pages over the 2 MiB-aligned part of [DATA, DATA + BYTES); no effect where
// the system does not allow it.
inline void AdviseHugePages(const void* data, std::size_t bytes) {
  const auto page = std::uintptr_t{2} << 20;
  const auto lo = (reinterpret_cast<std::uintptr_t>(data) + page - 1) & ~(page - 1);
  const auto hi = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(page - 1);
  if (hi > lo) ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
}

// Reserves room for N more events in V (one allocation instead of repeated doubling).
template <class T>
void ReserveEvents(std::vector<T>* v, std::size_t n) {
  if (v->capacity() - v->size() >= n) return;
  v->reserve(v->size() + n);
  AdviseHugePages(v->data(), v->capacity() * sizeof(T));
}

}  // namespace vouch::trace
