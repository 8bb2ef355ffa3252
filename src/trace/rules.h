// Component rules: kernel name pattern -> component, first match wins, the rest is "other".
//
// File formats (either):
//   JSON:  {"components": [{"name": "gemm", "pattern": "gemm|cutlass"}, ...]}
//   lines: gemm = gemm|cutlass        (one rule a line; '#' starts a comment)
// Patterns are ECMAScript regular expressions searched anywhere in the kernel name,
// case-insensitively.
#pragma once

#include <regex>
#include <string>
#include <vector>

#include "util/result.h"

namespace vouch::trace {

struct Rule {
  std::string component;
  std::string pattern;
};

struct Rules {
  std::vector<Rule> rules;
  std::string source;  // the file, or "built-in"

  // The component of a kernel name ("other" when no rule matches).
  std::string Classify(const std::string& kernel_name) const;

  std::vector<std::regex> compiled;  // filled by Compile()
  Status Compile();
};

// Families that cover most PyTorch/cuBLAS/cuDNN/CUTLASS decode traces; --rules replaces them.
Rules DefaultRules();
Result<Rules> LoadRules(const std::string& path);
Result<Rules> ParseRules(const std::string& text, const std::string& label);

}  // namespace vouch::trace
