#include "ab/arms.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "util/bounded_file.h"
#include "util/hash.h"
#include "util/json_io.h"
#include "util/number.h"
#include "util/strings.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

constexpr size_t kChunkBytes = 1 << 20;

std::string Short(const std::string& sha) { return sha.substr(0, 16); }

std::optional<double> ParseNumber(const std::string& s) {
  auto v = ParseFiniteDouble(Trim(s), "");
  if (!v) return std::nullopt;
  return *v;
}

bool SameValue(const std::string& a, const std::string& b) {
  auto na = ParseNumber(a), nb = ParseNumber(b);
  if (na && nb) return *na == *nb;
  return a == b;
}

// Regular files of an artifact: the file itself, or a directory's files in sorted order
// (the order Sha256OfPath hashes them in).
Result<std::vector<std::string>> FilesOf(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return std::vector<std::string>{path};
  std::vector<std::string> files;
  for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_regular_file()) files.push_back(it->path().string());
  }
  if (ec) return MakeError("cannot walk {}: {}", path, ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

std::string NormaliseRoot(std::string root) {
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  return root;
}

int Rank(ArmsSeverity s) { return static_cast<int>(s); }

}  // namespace

std::string_view ArmsSeverityName(ArmsSeverity s) {
  switch (s) {
    case ArmsSeverity::kFatal:
      return "fatal";
    case ArmsSeverity::kRefuse:
      return "refuse";
    case ArmsSeverity::kWarn:
      return "warn";
    case ArmsSeverity::kInfo:
      return "info";
  }
  return "info";
}

Result<std::optional<Occurrences>> FindInFile(const std::string& file, const std::string& needle) {
  if (needle.empty()) return MakeError("cannot search {} for an empty string", file);
  // Only a regular file (an artifact that is a FIFO or a device would never end).
  if (auto f = BoundedFile::Open(file, kNoSizeCap); !f)
    return MakeError("cannot search {}", f.error().message);
  std::ifstream in(file, std::ios::binary);
  if (!in) return MakeError("cannot open {} to search it: {}", file, std::strerror(errno));
  const size_t n = needle.size();
  std::string buf;         // the last n-1 bytes of the previous chunk, then this chunk
  std::uint64_t base = 0;  // file offset of buf[0]
  std::uint64_t next = 0;  // file offset where the next search starts (no double counts)
  std::vector<char> chunk(kChunkBytes);
  Occurrences occ;
  bool found = false;
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    auto got = static_cast<size_t>(in.gcount());
    if (got == 0) break;
    buf.append(chunk.data(), got);
    for (size_t i = buf.find(needle, static_cast<size_t>(next - base)); i != std::string::npos;
         i = buf.find(needle, i + n)) {
      if (!found) occ.first_offset = base + i;
      found = true;
      ++occ.count;
      next = base + i + n;
    }
    // Keep a tail that a match spanning the chunk boundary could start in.
    size_t keep_from = buf.size() >= n - 1 ? buf.size() - (n - 1) : 0;
    buf.erase(0, keep_from);
    base += keep_from;
    next = std::max(next, base);
  }
  if (in.bad()) return MakeError("cannot read {} while searching it", file);
  if (!found) return std::optional<Occurrences>();
  return std::optional<Occurrences>(occ);
}

Result<ArmsReport> CheckArms(const ArmInput& a, const ArmInput& b) {
  ArmsReport report;
  auto add = [&](ArmsSeverity s, std::string code, std::string message) {
    report.findings.push_back({s, std::move(code), std::move(message)});
  };
  const std::string la = a.label.empty() ? "A" : a.label;
  const std::string lb = b.label.empty() ? "B" : b.label;

  // Artifact hashes.
  for (const auto* arm : {&a, &b}) {
    auto& out = arm == &a ? report.hashes_a : report.hashes_b;
    const std::string& label = arm == &a ? la : lb;
    for (const auto& path : arm->artifacts) {
      auto h = Sha256OfPath(path);
      if (!h) return MakeError("arm {}: artifact: {}", label, h.error().message);
      out.push_back({path, *h});
    }
  }
  const bool have_artifacts = !a.artifacts.empty() || !b.artifacts.empty();
  bool all_differ = have_artifacts;
  bool same_artifact = false;  // said as fatal: no later finding contradicts it
  if (!have_artifacts) {
    add(ArmsSeverity::kInfo, "same_binary",
        "no artifacts given: a same-binary A/B (a runtime switch); the controls decide");
  } else if (a.artifacts.size() != b.artifacts.size()) {
    all_differ = false;
    add(ArmsSeverity::kRefuse, "artifact_count",
        fmt::format("arm {} names {} artifacts and arm {} names {}: artifacts are compared in "
                    "pairs by position; name the same artifacts for both arms",
                    la, a.artifacts.size(), lb, b.artifacts.size()));
  }
  for (size_t i = 0; i < std::min(report.hashes_a.size(), report.hashes_b.size()); ++i) {
    const auto& ha = report.hashes_a[i];
    const auto& hb = report.hashes_b[i];
    if (ha.sha256 == hb.sha256) {
      all_differ = false;
      same_artifact = true;
      add(ArmsSeverity::kFatal, "same_artifact",
          fmt::format("arms {} and {} are one artifact: sha256 {} for both ({} and {})", la, lb,
                      ha.sha256, ha.path, hb.path));
    }
  }
  if (all_differ && !report.hashes_a.empty()) {
    std::string list;
    for (size_t i = 0; i < report.hashes_a.size(); ++i)
      list += fmt::format("{}{} {} vs {}", i ? "; " : "",
                          fs::path(report.hashes_a[i].path).filename().string(),
                          Short(report.hashes_a[i].sha256), Short(report.hashes_b[i].sha256));
    add(ArmsSeverity::kInfo, "hashes_differ",
        fmt::format("artifact hashes differ ({}); on their own they prove nothing", list));
  }

  // Artifacts that embed their own build or source root.
  for (const auto* arm : {&a, &b}) {
    const std::string& label = arm == &a ? la : lb;
    for (const auto& raw_root : arm->roots) {
      std::string root = NormaliseRoot(raw_root);
      if (root.empty() || root == "/")
        return MakeError(
            "arm {}: root '{}' is too broad to search for; name the build or "
            "source directory",
            label, raw_root);
      for (const auto& artifact : arm->artifacts) {
        auto files = FilesOf(artifact);
        if (!files) return MakeError("arm {}: {}", label, files.error().message);
        std::vector<EmbeddedRoot> hits;
        for (const auto& file : *files) {
          auto occ = FindInFile(file, root);
          if (!occ) return MakeError("arm {}: {}", label, occ.error().message);
          if (*occ)
            hits.push_back({label, artifact, file, root, (*occ)->first_offset, (*occ)->count});
        }
        if (hits.empty()) continue;
        const EmbeddedRoot& h = hits.front();
        std::string where =
            h.file == artifact ? artifact : fmt::format("{} (in {})", artifact, h.file);
        add(ArmsSeverity::kWarn, "embedded_root",
            fmt::format("arm {}: {} embeds its root '{}' at byte offset {} ({} occurrence{}{}): "
                        "its hash cannot tell two builds apart (RPATH, __FILE__); rely on a "
                        "control",
                        label, where, root, h.offset, h.count, h.count == 1 ? "" : "s",
                        hits.size() > 1 ? fmt::format("; {} files in all", hits.size()) : ""));
        report.embedded_roots.insert(report.embedded_roots.end(), hits.begin(), hits.end());
      }
    }
  }

  // Behavioural controls.
  std::set<std::string> names;
  for (const auto& [k, v] : a.behavioural) names.insert(k);
  for (const auto& [k, v] : b.behavioural) names.insert(k);
  for (const auto& name : names) {
    auto ia = a.behavioural.find(name);
    auto ib = b.behavioural.find(name);
    if (ia == a.behavioural.end() || ib == b.behavioural.end()) {
      add(ArmsSeverity::kWarn, "control_unpaired",
          fmt::format("behavioural control '{}' is given for arm {} only; it is not compared", name,
                      ia == a.behavioural.end() ? lb : la));
    } else if (SameValue(ia->second, ib->second)) {
      add(ArmsSeverity::kWarn, "control_equal",
          fmt::format("behavioural control '{}' is equal in both arms ({}): a stale binary, or "
                      "a change that did not take effect",
                      name, ia->second));
    } else {
      ++report.controls_moved;
      add(ArmsSeverity::kInfo, "control_moved",
          fmt::format("behavioural control '{}' moved: {} {}, {} {}", name, la, ia->second, lb,
                      ib->second));
    }
  }

  // Source controls, paired by name.
  std::map<std::string, std::pair<const SourceControl*, const SourceControl*>> sources;
  for (const auto* arm : {&a, &b}) {
    const std::string& label = arm == &a ? la : lb;
    for (const auto& s : arm->sources) {
      auto& slot = arm == &a ? sources[s.name].first : sources[s.name].second;
      if (slot != nullptr)
        return MakeError("arm {}: source control '{}' is named twice", label, s.name);
      slot = &s;
    }
  }
  for (const auto& [name, pair] : sources) {
    if (pair.first == nullptr || pair.second == nullptr) {
      add(ArmsSeverity::kWarn, "control_unpaired",
          fmt::format("source control '{}' is given for arm {} only; it is not compared", name,
                      pair.first == nullptr ? lb : la));
      continue;
    }
    auto ha = Sha256OfPath(pair.first->path);
    if (!ha) return MakeError("arm {}: source control '{}': {}", la, name, ha.error().message);
    auto hb = Sha256OfPath(pair.second->path);
    if (!hb) return MakeError("arm {}: source control '{}': {}", lb, name, hb.error().message);
    if (*ha == *hb) {
      add(ArmsSeverity::kWarn, "source_equal",
          fmt::format("source control '{}' has one hash in both arms (sha256 {}): the two arms "
                      "were built from one source",
                      name, *ha));
    } else {
      ++report.controls_moved;
      add(ArmsSeverity::kInfo, "source_moved",
          fmt::format("source control '{}' moved: {} {}, {} {}", name, la, Short(*ha), lb,
                      Short(*hb)));
    }
  }

  // Identity: equal times are noise, equal counts are identity; both equal is one artifact
  // measured twice (the second seed's #672).
  for (const auto& [name, sa] : a.call_stats) {
    auto it = b.call_stats.find(name);
    if (it == b.call_stats.end()) continue;
    const CallStat& sb = it->second;
    if (sa.calls == sb.calls && sa.time_ns == sb.time_ns) {
      add(ArmsSeverity::kRefuse, "identity",
          fmt::format("'{}': identical call counts ({}) and identical times ({} ns) in both arms: "
                      "equal times are noise, equal counts are identity; this looks like one "
                      "artifact measured twice",
                      name, sa.calls, sa.time_ns));
    } else if (sa.calls == sb.calls) {
      add(ArmsSeverity::kInfo, "equal_calls",
          fmt::format("'{}': equal call counts ({}) in both arms, times differ ({} vs {} ns)", name,
                      sa.calls, sa.time_ns, sb.time_ns));
    }
  }

  // A verdict needs a control that moved; a different hash alone proves nothing.
  if (report.controls_moved == 0) {
    const bool any_control = !a.behavioural.empty() || !b.behavioural.empty() ||
                             !a.sources.empty() || !b.sources.empty();
    const char* what = any_control ? "no control moved" : "no control was given";
    if (same_artifact) {
      // The arms are one artifact (fatal above): "only the hashes differ" would contradict it.
    } else if (have_artifacts && all_differ) {
      add(ArmsSeverity::kRefuse, "hash_only",
          fmt::format("only the artifact hashes differ; {}: a different hash does not prove two "
                      "builds differ (the build root is embedded, RPATH, __FILE__); name a "
                      "behavioural control (a value the arms computed) or a source control that "
                      "moved",
                      what));
    } else {
      add(ArmsSeverity::kRefuse, "no_control_moved",
          fmt::format("{}: nothing shows that the two arms differ; name a behavioural control "
                      "(a value the arms computed, such as a dispatch counter) that moved",
                      what));
    }
  }

  std::stable_sort(report.findings.begin(), report.findings.end(),
                   [](const ArmsFinding& x, const ArmsFinding& y) {
                     return Rank(x.severity) < Rank(y.severity);
                   });
  report.distinct =
      std::none_of(report.findings.begin(), report.findings.end(), [](const ArmsFinding& f) {
        return f.severity == ArmsSeverity::kFatal || f.severity == ArmsSeverity::kRefuse;
      });
  return report;
}

std::string RenderArmsText(const ArmsReport& r) {
  std::string out;
  int fatal = 0, refuse = 0;
  for (const auto& f : r.findings) {
    fatal += f.severity == ArmsSeverity::kFatal;
    refuse += f.severity == ArmsSeverity::kRefuse;
  }
  for (const auto& h : r.hashes_a) out += fmt::format("A  sha256 {}  {}\n", h.sha256, h.path);
  for (const auto& h : r.hashes_b) out += fmt::format("B  sha256 {}  {}\n", h.sha256, h.path);
  for (const auto& f : r.findings) {
    std::string sev(ArmsSeverityName(f.severity));
    if (f.severity == ArmsSeverity::kFatal || f.severity == ArmsSeverity::kRefuse)
      for (char& c : sev) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    out += fmt::format("{:<6}  {:<16}  {}\n", sev, f.code, f.message);
  }
  if (r.distinct)
    out += fmt::format("arms: distinct ({} control{} moved)\n", r.controls_moved,
                       r.controls_moved == 1 ? "" : "s");
  else
    out +=
        fmt::format("arms: NOT distinct ({} fatal, {} refused): no A/B verdict from these arms\n",
                    fatal, refuse);
  return out;
}

std::string RenderArmsJson(const ArmsReport& r) {
  ojson j;
  j["schema"] = "vouch.arms";
  j["schema_version"] = 1;
  j["distinct"] = r.distinct;
  j["controls_moved"] = r.controls_moved;
  auto hashes = [](const std::vector<ArtifactHash>& hs) {
    ojson arr = ojson::array();
    for (const auto& h : hs) arr.push_back({{"path", h.path}, {"sha256", h.sha256}});
    return arr;
  };
  j["artifacts"] = {{"a", hashes(r.hashes_a)}, {"b", hashes(r.hashes_b)}};
  ojson roots = ojson::array();
  for (const auto& e : r.embedded_roots)
    roots.push_back({{"arm", e.arm},
                     {"artifact", e.artifact},
                     {"file", e.file},
                     {"root", e.root},
                     {"offset", e.offset},
                     {"count", e.count}});
  j["embedded_roots"] = std::move(roots);
  ojson findings = ojson::array();
  for (const auto& f : r.findings)
    findings.push_back(
        {{"severity", ArmsSeverityName(f.severity)}, {"code", f.code}, {"message", f.message}});
  j["findings"] = std::move(findings);
  return DumpJson(j, 2) + "\n";
}

}  // namespace vouch
