// A fleet run directory, as `vouch fleet merge` reads it (issue 21): the plan (fleet.json), a
// node's node.json and its record.json, each written by a job on another machine. The input
// holds the three files, split by marker lines; they become DIR/fleet.json and
// DIR/nodes/n1/r0-t0-a0/{node.json,run/record.json}, with the same attempt copied under n2 (the
// copy check reads both), each sealed under the fleet's key as the worker would, and DIR is
// read and merged as an A/B and as a run.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "fleet/evidence.h"
#include "fleet/merge.h"
#include "fleet/merge_runs.h"
#include "fleet/trust.h"
#include "fuzz_util.h"

namespace {

constexpr std::string_view kNodeMark = "\n--node.json--\n";
constexpr std::string_view kRecordMark = "\n--record.json--\n";

std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void Write(const std::filesystem::path& p, std::string_view body) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out.write(body.data(), static_cast<std::streamsize>(body.size()));
  if (!out) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view all = vouch::fuzz::AsText(data, size);
  std::string_view plan = all, node, record;
  if (auto r = all.find(kRecordMark); r != std::string_view::npos) {
    record = all.substr(r + kRecordMark.size());
    plan = all.substr(0, r);
  }
  if (auto n = plan.find(kNodeMark); n != std::string_view::npos) {
    node = plan.substr(n + kNodeMark.size());
    plan = plan.substr(0, n);
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/vouch-fuzz-fleet-XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) std::abort();
  const std::filesystem::path d(dir);
  Write(d / "fleet.json", plan);
  // The fleet's key, and each attempt sealed under it as the worker seals it (fleet/trust.h):
  // the merge reads past the seal into the evidence, as it does a genuine node's.
  if (!vouch::CreateFleetKey(dir)) std::abort();
  auto key = vouch::ReadFleetKey(dir);
  for (const char* n : {"n1", "n2"}) {
    const std::string task = std::string(n) == "n1" ? "r0-t0" : "r0-t1";
    const auto attempt = d / "nodes" / n / (task + "-a0");
    if (!node.empty()) Write(attempt / "node.json", node);
    if (!record.empty()) Write(attempt / "run" / "record.json", record);
    if (key && (!node.empty() || !record.empty()))
      (void)vouch::SealFleetAttempt(*key, attempt.string(), {n, task, 0});
  }
  // Read twice: the fast reading of an A/B attempt (fleet/attempt_fast.h) and the ordinary one
  // must give the same evidence, the same merged record and text, or the same error.
  std::string seen[2];
  for (int fast = 0; fast < 2; ++fast) {
    auto ev = vouch::ReadFleetEvidence(dir, {}, fast == 1);
    if (!ev) {
      seen[fast] = "error: " + ev.error().message;
      continue;
    }
    (void)vouch::FleetGaps(*ev);
    auto ab = vouch::MergeFleetAb(*ev);
    seen[fast] = Dump(vouch::FleetAbJson(*ev, ab)) + vouch::RenderFleetAbText(ab);
    auto runs = vouch::MergeFleetRuns(*ev);
    seen[fast] += Dump(vouch::FleetRunsJson(*ev, runs)) + vouch::RenderFleetRunsText(runs);
    for (const auto& x : ev->problems) seen[fast] += "\nproblem: " + x;
    for (const auto& x : ev->refusals) seen[fast] += "\nrefusal: " + x;
  }
  if (seen[0] != seen[1]) std::abort();
  std::error_code ec;
  std::filesystem::remove_all(d, ec);
  return 0;
}
