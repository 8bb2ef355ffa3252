// An exact rank test for two samples that do not overlap: the Mann-Whitney U test at U = 0
// (Mann and Whitney 1947, Ann. Math. Statist. 18:50-60). Under the null hypothesis that both
// samples come from one continuous distribution, every ordering of the m + n values is equally
// likely, and the two orderings in which one sample lies wholly below the other have
// probability 2 / C(m + n, m) together: the exact two-sided p value of complete separation.
// No mean, median or variance is taken, so two modes in a sample cannot bias it: the test
// says only that every value of one side is beyond every value of the other.
#pragma once

#include <cstddef>
#include <optional>
#include <span>

namespace vouch {

struct Separation {
  int direction = 0;       // +1: every y above every x; -1: every y below every x
  double gap_log = 0;      // ln(min upper / max lower) when every value is positive, else 0
  double p_two_sided = 1;  // 2 / C(m + n, m), at most 1
  std::size_t m = 0, n = 0;
};

// The exact two-sided p value of complete separation of samples of M and N values.
double SeparationP(std::size_t m, std::size_t n);

// X and Y separated (no value of one inside the other's range, no tie between them): the
// direction, the gap and the p value; nullopt when they overlap or touch, or a side is empty
// or holds a non-finite value.
std::optional<Separation> CompleteSeparation(std::span<const double> x, std::span<const double> y);

}  // namespace vouch
