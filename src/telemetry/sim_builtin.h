// Built-in simulated-device scenarios: `vouch --sim NAME` replays one without a file, from any
// directory (embedded at build time by src/telemetry/embed_sim.cmake).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vouch {

struct BuiltinSimScenario {
  const char* name;         // "h200-busy"
  const char* source;       // the stream it was built from, relative to the source tree
  std::string_view stream;  // JSONL telemetry, the fixture format
};

const std::vector<BuiltinSimScenario>& BuiltinSimScenarios();
// The scenario called NAME, or nullptr.
const BuiltinSimScenario* FindBuiltinSimScenario(std::string_view name);
// "h200-busy, h200x2-busy", for messages.
std::string BuiltinSimScenarioNames();

}  // namespace vouch
