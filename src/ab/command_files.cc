#include "ab/command_files.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "util/hash.h"
#include "util/json_io.h"
#include "util/strings.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;

bool IsInterpreter(const std::string& exe) {
  std::string n = fs::path(exe).filename().string();
  for (const char* p : {"python", "pypy", "perl", "ruby", "node", "Rscript", "julia", "lua"})
    if (n.rfind(p, 0) == 0) return true;
  for (const char* p : {"bash", "sh", "dash", "zsh", "ksh"})
    if (n == p) return true;
  return false;
}

bool IsPython(const std::string& exe) {
  std::string n = fs::path(exe).filename().string();
  return n.rfind("python", 0) == 0 || n.rfind("pypy", 0) == 0;
}

std::string Env(const std::vector<std::pair<std::string, std::string>>& env, const char* key) {
  for (auto it = env.rbegin(); it != env.rend(); ++it)
    if (it->first == key) return it->second;
  const char* v = std::getenv(key);
  return v ? v : "";
}

fs::path Under(const std::string& cwd, const std::string& p) {
  fs::path path(p);
  if (path.is_absolute() || cwd.empty()) return path;
  return fs::path(cwd) / path;
}

bool IsFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

std::string Words(const std::vector<std::string>& argv, const std::vector<std::size_t>& skip) {
  std::vector<std::string> rest;
  for (std::size_t i = 0; i < argv.size(); ++i)
    if (std::find(skip.begin(), skip.end(), i) == skip.end()) rest.push_back(argv[i]);
  return ShellJoin(rest);
}

}  // namespace

CommandFiles ResolveCommandFiles(const std::vector<std::string>& argv, const std::string& path_env,
                                 const std::string& cwd) {
  CommandFiles f;
  if (argv.empty()) {
    f.note = "no command";
    return f;
  }
  const std::string& w0 = argv[0];
  if (w0.find('/') != std::string::npos) {
    if (IsFile(Under(cwd, w0))) f.executable = fs::absolute(Under(cwd, w0)).string();
  } else {
    std::size_t start = 0;
    while (start <= path_env.size()) {
      std::size_t end = path_env.find(':', start);
      if (end == std::string::npos) end = path_env.size();
      std::string dir = path_env.substr(start, end - start);
      if (dir.empty()) dir = ".";
      fs::path c = Under(cwd, (fs::path(dir) / w0).string());
      if (IsFile(c) && ::access(c.c_str(), X_OK) == 0) {
        f.executable = fs::absolute(c).string();
        break;
      }
      start = end + 1;
    }
  }
  if (f.executable.empty()) {
    f.note = fmt::format("'{}' not found (PATH or working directory)", w0);
    return f;
  }
  f.file_words.push_back(0);
  if (!IsInterpreter(f.executable)) return f;
  bool python = IsPython(f.executable);
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string& w = argv[i];
    if (w == "-c" || w == "-m" || w == "-e" || w == "--eval") break;  // inline code, a module
    if (python && (w == "-W" || w == "-X" || w == "--check-hash-based-pycs")) {
      ++i;
      continue;
    }
    if (!w.empty() && w[0] == '-') continue;
    if (IsFile(Under(cwd, w))) {
      f.scripts.push_back(fs::absolute(Under(cwd, w)).string());
      f.file_words.push_back(i);
    }
    break;  // the first operand is the script; the rest are its arguments
  }
  return f;
}

Result<CommandArmsReport> CheckCommandArms(const Arm& a, const Arm& b) {
  CommandArmsReport r;
  auto add = [&](ArmsSeverity s, std::string code, std::string message) {
    r.findings.push_back({s, std::move(code), std::move(message)});
  };
  if (a.shell || b.shell) {
    add(ArmsSeverity::kInfo, "shell_arms",
        "the arms run through a shell: their files are not resolved or hashed (use "
        "--artifact-a/-b)");
    return r;
  }
  r.a = ResolveCommandFiles(a.argv, Env(a.env, "PATH"), a.cwd);
  r.b = ResolveCommandFiles(b.argv, Env(b.env, "PATH"), b.cwd);
  for (const auto* side : {&r.a, &r.b}) {
    const std::string& label = side == &r.a ? a.name : b.name;
    if (side->executable.empty()) {
      add(ArmsSeverity::kWarn, "unresolved",
          fmt::format("arm {}: {}: its command is not hashed", label, side->note));
      continue;
    }
    auto& out = side == &r.a ? r.hashes_a : r.hashes_b;
    std::vector<std::string> files = {side->executable};
    files.insert(files.end(), side->scripts.begin(), side->scripts.end());
    for (const auto& p : files) {
      auto h = Sha256OfPath(p);
      if (!h) return MakeError("arm {}: {}", label, h.error().message);
      out.push_back({p, *h});
    }
  }
  if (r.hashes_a.empty() || r.hashes_b.empty()) return r;
  bool same_files = r.hashes_a.size() == r.hashes_b.size();
  for (std::size_t i = 0; same_files && i < r.hashes_a.size(); ++i)
    same_files = r.hashes_a[i].sha256 == r.hashes_b[i].sha256;
  std::vector<std::string> listed;
  for (const auto& h : r.hashes_a)
    listed.push_back(
        fmt::format("{} {}", fs::path(h.path).filename().string(), h.sha256.substr(0, 16)));
  if (!same_files) {
    std::vector<std::string> lb;
    for (const auto& h : r.hashes_b)
      lb.push_back(
          fmt::format("{} {}", fs::path(h.path).filename().string(), h.sha256.substr(0, 16)));
    add(ArmsSeverity::kInfo, "hashes_differ",
        fmt::format("the arms run different files ({}: {}; {}: {}); on their own the hashes prove "
                    "nothing (a build root, RPATH, __FILE__ differ too): a control that moved "
                    "does",
                    a.name, fmt::join(listed, ", "), b.name, fmt::join(lb, ", ")));
    return r;
  }
  std::string rest_a = Words(a.argv, r.a.file_words), rest_b = Words(b.argv, r.b.file_words);
  bool same_args = rest_a == rest_b, same_env = a.env == b.env;
  if (same_args && same_env) {
    r.fatal = true;
    add(ArmsSeverity::kFatal, "same_artifact",
        fmt::format("arms {} and {} run byte-identical files ({}) with the same arguments and "
                    "environment: one artifact measured twice ({} vs {})",
                    a.name, b.name, fmt::join(listed, ", "), ShellJoin(a.argv), ShellJoin(b.argv)));
    return r;
  }
  std::vector<std::string> what;
  if (!same_args) what.push_back(fmt::format("arguments ('{}' vs '{}')", rest_a, rest_b));
  if (!same_env) what.push_back("environment");
  add(ArmsSeverity::kInfo, "same_binary",
      fmt::format("a same-binary A/B: both arms run {}; they differ only in their {}: that "
                  "switch is the change",
                  fmt::join(listed, ", "), fmt::join(what, " and ")));
  return r;
}

std::string RenderCommandArmsJson(const CommandArmsReport& r) {
  auto hashes = [](const std::vector<ArtifactHash>& v) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& h : v) j.push_back({{"path", h.path}, {"sha256", h.sha256}});
    return j;
  };
  nlohmann::json f = nlohmann::json::array();
  for (const auto& x : r.findings)
    f.push_back(
        {{"severity", ArmsSeverityName(x.severity)}, {"code", x.code}, {"message", x.message}});
  return DumpJson(nlohmann::json{
      {"a", hashes(r.hashes_a)}, {"b", hashes(r.hashes_b)}, {"findings", f}, {"fatal", r.fatal}});
}

}  // namespace vouch
