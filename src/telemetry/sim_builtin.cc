#include "telemetry/sim_builtin.h"

namespace vouch {

const BuiltinSimScenario* FindBuiltinSimScenario(std::string_view name) {
  for (const auto& s : BuiltinSimScenarios())
    if (name == s.name) return &s;
  return nullptr;
}

std::string BuiltinSimScenarioNames() {
  std::string out;
  for (const auto& s : BuiltinSimScenarios())
    out += (out.empty() ? "" : ", ") + std::string(s.name);
  return out;
}

}  // namespace vouch
