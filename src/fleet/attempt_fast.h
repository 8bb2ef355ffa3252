// The fleet merge's reading of one A/B attempt whose evidence is in order, the common case
// (issue 39: a fleet merge at least 2x faster than Python loading the same files). Each file
// is read once: its SHA-256 for the seal and simdjson's tree from the same bytes; the record's
// schema is checked on that tree (JsonSchema::Accepts) and the pairs are formed again from its
// legs there, without an nlohmann tree of the record (ReadAttempt's cost: a tree of every
// record, its schema walked, each leg's window built for every pair it is in).
//
// Every check of the ordinary reading (evidence.cc's ReadAttempt, trust.h's
// VerifyFleetAttempt) is made. Where any of them would say anything at all (a file missing or
// another user's, a link, a seal that does not match, a record the schema refuses, a journal
// to assemble, a pair a pairing rule refuses, listed pairs that differ from the legs) this
// reading declines, and the attempt is read the ordinary way, which words it: what the merge
// says of such an attempt is the ordinary reading's, word for word.
#pragma once

#include <string>
#include <vector>

#include "fleet/evidence.h"
#include "util/fs.h"

namespace vouch {

// A (its node, task_id, attempt and dir set) as ReadAttempt, a clean VerifyFleetAttempt under
// KEY and SlimAbRecord leave it; TOP and RUN: the listings of its folder and of its run/.
// False, A untouched, where the ordinary reading must decide.
bool ReadAbAttemptFast(FleetAttempt& a, const std::vector<DirEntry>& top,
                       const std::vector<DirEntry>& run, const std::string& key);

}  // namespace vouch
