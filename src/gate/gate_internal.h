// Helpers shared by the gate's renderers (gate.cc: text; gate_render.cc: Markdown, JSON).
#pragma once

#include <string>
#include <vector>

#include "gate/gate.h"

namespace vouch::gate_internal {

std::string OverallLine(const GateReport& r);
std::string WarnHint(const GateReport& r);
std::string NotJudgedLine(const GateReport& r);
std::string NoiseLine(const GateReport& r);
// One line per row with an MDE: "decode: this gate could not have failed a change smaller
// than 4.10 % (...)".
std::vector<std::string> MdeLines(const GateReport& r);
std::vector<std::string> Cells(const GateRow& r);
std::string MarkdownEscape(const std::string& s);

}  // namespace vouch::gate_internal
