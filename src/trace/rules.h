// Component rules: kernel name pattern -> component, first match wins, the rest is "other".
//
// File formats (either):
//   JSON:  {"components": [{"name": "gemm", "pattern": "gemm|cutlass"}, ...]}
//   lines: gemm = gemm|cutlass        (one rule a line; '#' starts a comment)
// Patterns are RE2 regular expressions (linear time: no backreferences or lookaround) searched
// anywhere in the kernel name, case-insensitively.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "util/result.h"

namespace re2 {
class RE2;
}

namespace vouch::trace {

struct Rule {
  std::string component;
  std::string pattern;
};

struct Rules {
  std::vector<Rule> rules;
  std::string source;  // the file, or "built-in"

  // The component of a kernel name ("other" when no rule matches). Linear in the name's length
  // (the summary calls it once per distinct name).
  std::string Classify(const std::string& kernel_name) const;

  std::vector<std::shared_ptr<const re2::RE2>> compiled;  // filled by Compile()
  // Compiles every pattern; one RE2 rejects is an error naming the source, the component and
  // the pattern.
  Status Compile();
};

// Families that cover most PyTorch/cuBLAS/cuDNN/CUTLASS decode traces; --rules replaces them.
Rules DefaultRules();
Result<Rules> LoadRules(const std::string& path);
Result<Rules> ParseRules(const std::string& text, const std::string& label);

}  // namespace vouch::trace
