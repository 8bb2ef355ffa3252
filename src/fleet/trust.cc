#include "fleet/trust.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
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

// SHA-256 fetched from the provider once: OpenSSL 3's HMAC() looks its MAC and digest up again
// at every call (two seals a node of a fleet merge).
const EVP_MD* SealMd() {
  static const EVP_MD* md = [] {
    const EVP_MD* m = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    return m ? m : EVP_sha256();
  }();
  return md;
}

bool SealSha256(std::string_view in, unsigned char* out) {
  unsigned int n = 0;
  return EVP_Digest(in.data(), in.size(), out, &n, SealMd(), nullptr) == 1 && n == 32;
}

// The evidence file's lstat: a regular file (kRegular), absent (kAbsent), or something else.
enum class TrustPresent { kAbsent, kRegular, kOther };
TrustPresent TrustLook(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return TrustPresent::kAbsent;
  return S_ISREG(st.st_mode) ? TrustPresent::kRegular : TrustPresent::kOther;
}

}  // namespace

// HMAC (RFC 2104) of SHA-256, block 64 bytes: H((K ^ opad) || H((K ^ ipad) || msg)).
std::string FleetSealMac(const std::string& key, const AttemptIdentity& id, std::string_view file,
                         const std::string& sha256) {
  const std::string msg = fmt::format("vouch.fleet.seal/1\n{}\n{}\n{}\n{}\n{}", id.node, id.task,
                                      id.attempt, file, sha256);
  unsigned char k[64] = {0};
  if (key.size() > sizeof k) {
    if (!SealSha256(key, k)) return "";
  } else {
    std::memcpy(k, key.data(), key.size());
  }
  std::string inner(64, '\0');
  for (size_t i = 0; i < 64; ++i) inner[i] = static_cast<char>(k[i] ^ 0x36);
  inner += msg;
  std::string outer(64 + 32, '\0');
  for (size_t i = 0; i < 64; ++i) outer[i] = static_cast<char>(k[i] ^ 0x5c);
  if (!SealSha256(inner, reinterpret_cast<unsigned char*>(outer.data() + 64))) return "";
  unsigned char out[32];
  if (!SealSha256(outer, out)) return "";
  return TrustHex(out, sizeof out);
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
