// What vouch trusts in a fleet directory (issue 36, class 1). The directory sits on a file
// system the cluster shares, and a job on any node writes into it: a plan or a record that
// another user wrote, or could have rewritten, is not vouch's to run or to merge.
//
//  * Ownership and mode. The plan (fleet.json), its key and every file of a node's evidence
//    must be a regular file (not a symbolic link) owned by the user vouch runs as, that
//    neither its group nor others can write; the folders they are in must not be writable by
//    others unless they have the sticky bit (/tmp's). vouch running as root is no exception:
//    root runs no plan another user planted.
//  * A seal on every node's evidence. The submitter writes a key of 32 random bytes
//    (DIR/fleet.key, mode 0600: only its user reads it, as its jobs do). The worker on each
//    node seals each evidence file as it writes it (node.json, run/record.json at every
//    block, baseline.json): HMAC-SHA256 under the key of the node's identity (node, task,
//    attempt), the file's name and the SHA-256 of its bytes, which hold the writer, host,
//    boot and window times. The merge computes each again: a file edited after vouch wrote
//    it (one number, a band), or a node's evidence copied under another (its writer dropped,
//    its windows moved by 1 us, or as it is), does not match its seal and refuses the merged
//    verdict naming the node. Each file keeps its last two seals: a node killed between
//    writing a record and sealing it still matches the one before.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace vouch {

// PATH, a file vouch acts on: an error saying what is wrong (owner, mode, a link) and the fix.
// WHAT names it ("the fleet plan", "node n1's evidence").
Status CheckOwnFile(const std::string& path, std::string_view what);
// DIR must not be writable by others without the sticky bit (anyone could replace what is in
// it).
Status CheckOwnFolder(const std::string& dir, std::string_view what);

// DIR/fleet.key: created (mode 0600, 32 random bytes in hex) by a new fleet; read (and checked
// as CheckOwnFile does, no mode bit for group or others) by the worker and the merge.
Status CreateFleetKey(const std::string& dir);
Result<std::string> ReadFleetKey(const std::string& dir);

// The evidence files of an attempt's folder that are sealed, relative to it.
inline constexpr std::array<const char*, 3> kSealedFiles = {"node.json", "run/record.json",
                                                            "baseline.json"};

struct AttemptIdentity {
  std::string node, task;
  int attempt = 0;
};

// The seal of one evidence file: HMAC-SHA256 under KEY of ID, FILE (a name of kSealedFiles) and
// SHA256 (the file's digest, hex), in hex.
std::string FleetSealMac(const std::string& key, const AttemptIdentity& id, std::string_view file,
                         const std::string& sha256);

// Seals the files of kSealedFiles that ATTEMPT_DIR holds now into ATTEMPT_DIR/seal.json,
// keeping each file's seal before (the previous version of a record being rewritten).
Status SealFleetAttempt(const std::string& key, const std::string& attempt_dir,
                        const AttemptIdentity& id);
// What is wrong with ATTEMPT_DIR's evidence, each naming the file, the node and the fix: a
// file owned by another user or writable by others, no seal, or a file whose digest is not
// under its seal. Empty when every evidence file there is one vouch wrote for ID.
std::vector<std::string> VerifyFleetAttempt(const std::string& key, const std::string& attempt_dir,
                                            const AttemptIdentity& id);

}  // namespace vouch
