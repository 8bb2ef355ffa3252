#include "fleet/trust.h"

#include <fcntl.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>

#include "util/fs.h"
#include "util/hash.h"
#include "util/json_io.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;

std::string TrustUserName(uid_t uid) {
  struct passwd pw {};
  struct passwd* out = nullptr;
  char buf[4096];
  if (::getpwuid_r(uid, &pw, buf, sizeof buf, &out) == 0 && out) return out->pw_name;
  return "?";
}

std::string TrustMode(mode_t m) { return fmt::format("{:04o}", m & 07777); }

std::string TrustHex(const unsigned char* p, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += digits[p[i] >> 4];
    out += digits[p[i] & 15];
  }
  return out;
}

// The evidence file's lstat: a regular file (kRegular), absent (kAbsent), or something else.
enum class TrustPresent { kAbsent, kRegular, kOther };
TrustPresent TrustLook(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return TrustPresent::kAbsent;
  return S_ISREG(st.st_mode) ? TrustPresent::kRegular : TrustPresent::kOther;
}

}  // namespace

// HMAC-SHA256 by OpenSSL's EVP_MAC: the MAC fetched once and a context keyed once per key,
// duplicated for each message. OpenSSL 3's one-shot HMAC() fetches its MAC and digest again at
// every call, two seals a node of a fleet merge (issue 39).
std::string FleetSealMac(const std::string& key, const AttemptIdentity& id, std::string_view file,
                         const std::string& sha256) {
  const std::string msg = fmt::format("vouch.fleet.seal/1\n{}\n{}\n{}\n{}\n{}", id.node, id.task,
                                      id.attempt, file, sha256);
  static std::mutex mu;
  static std::string keyed_with;
  static EVP_MAC_CTX* keyed = nullptr;
  EVP_MAC_CTX* ctx = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!keyed || keyed_with != key) {
      static EVP_MAC* const mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
      if (!mac) return "";
      EVP_MAC_CTX* fresh = EVP_MAC_CTX_new(mac);
      char digest[] = "SHA256";
      const OSSL_PARAM params[] = {
          OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
          OSSL_PARAM_construct_end()};
      if (!fresh || EVP_MAC_init(fresh, reinterpret_cast<const unsigned char*>(key.data()),
                                 key.size(), params) != 1) {
        EVP_MAC_CTX_free(fresh);
        return "";
      }
      EVP_MAC_CTX_free(keyed);
      keyed = fresh;
      keyed_with = key;
    }
    ctx = EVP_MAC_CTX_dup(keyed);
  }
  if (!ctx) return "";
  unsigned char out[EVP_MAX_MD_SIZE];
  size_t len = 0;
  const bool ok =
      EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(msg.data()), msg.size()) == 1 &&
      EVP_MAC_final(ctx, out, &len, sizeof out) == 1;
  EVP_MAC_CTX_free(ctx);
  return ok ? TrustHex(out, len) : "";
}

Status CheckOwnFile(const std::string& path, std::string_view what) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0)
    return MakeError("{} ({}): cannot be read: {}", path, what, std::strerror(errno));
  if (S_ISLNK(st.st_mode))
    return MakeError(
        "{} ({}) is a symbolic link: vouch acts only on its own files there; replace the link "
        "with the file it names after checking it",
        path, what);
  if (!S_ISREG(st.st_mode)) return MakeError("{} ({}) is not a regular file", path, what);
  const uid_t me = ::geteuid();
  if (st.st_uid != me)
    return MakeError(
        "{} ({}) is owned by {} (uid {}), not by you ({}, uid {}): vouch does not run or trust "
        "what another user wrote; check its content, then `chown {} {}`, or start anew",
        path, what, TrustUserName(st.st_uid), st.st_uid, TrustUserName(me), me, TrustUserName(me),
        path);
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return MakeError(
        "{} ({}) can be written by {} (mode {}): anyone there could have changed it; check its "
        "content, then `chmod go-w {}`",
        path, what, (st.st_mode & S_IWOTH) ? "anyone" : "its group", TrustMode(st.st_mode), path);
  return CheckOwnFolder(fs::path(path).parent_path().string(), what);
}

Status CheckOwnFolder(const std::string& dir, std::string_view what) {
  struct stat st {};
  const std::string d = dir.empty() ? "." : dir;
  if (::stat(d.c_str(), &st) != 0)
    return MakeError("{} ({}): cannot be read: {}", d, what, std::strerror(errno));
  if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
    return MakeError(
        "{} (the folder of {}) can be written by anyone and has no sticky bit (mode {}): anyone "
        "could have replaced what is in it; `chmod o-w {}` after checking it, or use a folder of "
        "your own",
        d, what, TrustMode(st.st_mode), d);
  return OkStatus();
}

Status CreateFleetKey(const std::string& dir) {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof bytes) != 1)
    return MakeError("{}/fleet.key: no random bytes from OpenSSL", dir);
  const std::string path = (fs::path(dir) / "fleet.key").string();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return MakeError("{}: cannot create: {}", path, std::strerror(errno));
  const std::string text = TrustHex(bytes, sizeof bytes) + "\n";
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                  ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) return MakeError("{}: cannot write: {}", path, std::strerror(errno));
  return OkStatus();
}

Result<std::string> ReadFleetKey(const std::string& dir) {
  const std::string path = (fs::path(dir) / "fleet.key").string();
  if (TrustLook(path) == TrustPresent::kAbsent)
    return MakeError(
        "{}: missing: the fleet's key seals every node's evidence, and without it none can be "
        "verified (a fleet directory written by a vouch before the seal, or its key removed); "
        "run the fleet again",
        path);
  if (auto s = CheckOwnFile(path, "the fleet's key"); !s) return s.error();
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && (st.st_mode & (S_IRWXG | S_IRWXO)))
    return MakeError("{} (the fleet's key) can be read by others (mode {}): `chmod 600 {}`", path,
                     TrustMode(st.st_mode), path);
  auto text = ReadFile(path, 4096);
  if (!text) return text.error();
  std::string key = *text;
  while (!key.empty() && (key.back() == '\n' || key.back() == ' ')) key.pop_back();
  if (key.size() != 64 || key.find_first_not_of("0123456789abcdef") != std::string::npos)
    return MakeError("{}: not a fleet key (64 hexadecimal digits)", path);
  return key;
}

Status SealFleetAttempt(const std::string& key, const std::string& attempt_dir,
                        const AttemptIdentity& id) {
  const std::string seal_path = (fs::path(attempt_dir) / "seal.json").string();
  nlohmann::json old;
  if (TrustLook(seal_path) == TrustPresent::kRegular)
    if (auto j = ReadJsonFile(seal_path, 1 << 20); j && j->is_object()) old = std::move(*j);
  nlohmann::json files = nlohmann::json::object();
  for (const char* f : kSealedFiles) {
    const std::string path = (fs::path(attempt_dir) / f).string();
    if (TrustLook(path) != TrustPresent::kRegular) continue;
    auto sha = Sha256OfPath(path);
    if (!sha) return sha.error();
    nlohmann::json now = {{"sha256", *sha}, {"mac", FleetSealMac(key, id, f, *sha)}};
    nlohmann::json list = nlohmann::json::array({now});
    // The seal before (the file's previous version), when it is another.
    if (old.contains("files") && old["files"].is_object() && old["files"].contains(f) &&
        old["files"][f].is_array() && !old["files"][f].empty() && old["files"][f][0] != now)
      list.push_back(old["files"][f][0]);
    files[f] = std::move(list);
  }
  const nlohmann::json seal = {{"schema", "vouch.fleet.seal"},
                               {"version", 1},
                               {"node", id.node},
                               {"task", id.task},
                               {"attempt", id.attempt},
                               {"files", std::move(files)}};
  return WriteFileAtomic(seal_path, DumpJson(seal, 2) + "\n");
}

std::vector<std::string> VerifyFleetAttempt(const std::string& key, const std::string& attempt_dir,
                                            const AttemptIdentity& id) {
  std::vector<std::string> out;
  const std::string who = fmt::format("node {}'s evidence", id.node);
  for (const std::string& d : {attempt_dir, (fs::path(attempt_dir) / "run").string()})
    if (TrustLook(d) != TrustPresent::kAbsent)
      if (auto s = CheckOwnFolder(d, who); !s) out.push_back(s.error().message);
  std::vector<const char*> present;
  for (const char* f : kSealedFiles) {
    const std::string path = (fs::path(attempt_dir) / f).string();
    if (TrustLook(path) == TrustPresent::kAbsent) continue;
    if (auto s = CheckOwnFile(path, who); !s) {
      out.push_back(s.error().message);
      continue;
    }
    present.push_back(f);
  }
  if (present.empty()) return out;
  const std::string seal_path = (fs::path(attempt_dir) / "seal.json").string();
  if (TrustLook(seal_path) == TrustPresent::kAbsent) {
    out.push_back(fmt::format(
        "{}: node {}'s evidence has no seal (seal.json): vouch did not write it (or a vouch "
        "before the seal did); it is not merged",
        attempt_dir, id.node));
    return out;
  }
  if (auto s = CheckOwnFile(seal_path, who); !s) {
    out.push_back(s.error().message);
    return out;
  }
  auto seal = ReadJsonFile(seal_path, 1 << 20);
  const nlohmann::json* files = nullptr;
  if (seal && seal->is_object() && seal->contains("files") && (*seal)["files"].is_object())
    files = &(*seal)["files"];
  if (!files) {
    out.push_back(fmt::format("{}: node {}'s seal is unreadable{}", seal_path, id.node,
                              seal ? "" : ": " + seal.error().message));
    return out;
  }
  for (const char* f : present) {
    const std::string path = (fs::path(attempt_dir) / f).string();
    auto sha = Sha256OfPath(path);
    if (!sha) {
      out.push_back(sha.error().message);
      continue;
    }
    const std::string mac = FleetSealMac(key, id, f, *sha);
    bool sealed = false;
    if (files->contains(f) && (*files)[f].is_array())
      for (const auto& e : (*files)[f])
        sealed = sealed || (e.is_object() && e.contains("mac") && e["mac"] == mac);
    if (!sealed)
      out.push_back(fmt::format(
          "{} is not what vouch wrote for node {} (task {}, attempt {}): its digest is not under "
          "the fleet's seal, so it was edited after vouch wrote it, or copied from another "
          "node's folder; node {}'s evidence is refused",
          path, id.node, id.task, id.attempt, id.node));
  }
  return out;
}

}  // namespace vouch
