// Issue 36, class 3: secrets by every way a command carries them, through the real binary. A
// libpq keyword string in an environment variable, curl's cookies and user:password, signed
// URLs, URL passwords and auth-like flag names never reach a record, a leg's files, the lock
// file, an A/B plan, a summary or a pull request comment in clear.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_util.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing_util::Has;
using Res = testing_util::ShellResult;

const std::string kBusy = VOUCH_SOURCE_DIR "/tests/data/sim/h200_copy_busy.jsonl";
constexpr const char* kFast = "--min-busy-readings 5";

// Each secret is unique, so that finding it anywhere is a leak.
constexpr const char* kSecrets[] = {"PGPW1",   "ODBCPW2", "CK3",  "CK4",   "UPW5",  "UPW6",
                                    "PP7",     "PS8",     "AU9",  "SG10",  "SG11",  "SG12",
                                    "URLPW13", "AT14",    "PW15", "TOK16", "KEY17", "CK18"};

class SecretsCli : public testing_util::ScratchDirTest {
 protected:
  Res Vouch(const std::string& args, int timeout_s = 90) const {
    return VouchOnSim(kBusy, args, timeout_s);
  }
  // Every file under REL, concatenated.
  std::string AllFiles(const std::string& rel) const {
    std::string all;
    for (const auto& e : fs::recursive_directory_iterator(D(rel)))
      if (e.is_regular_file()) {
        std::ifstream in(e.path(), std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        all += ss.str();
      }
    return all;
  }
  static void ExpectNoSecret(const std::string& where, const std::string& text) {
    for (const char* s : kSecrets) EXPECT_FALSE(Has(text, s)) << s << " in " << where;
  }
};

// The command line of the leg, as a shell reads it: every family of credential.
const char* kLegArgs =
    "--cookie 'sid=CK3' -b 'a=CK4; b=CK18' --user alice:UPW5 -u bob:UPW6 --passphrase PP7 "
    "--pass PS8 --auth AU9 'https://b.s3.amazonaws.com/k?X-Amz-Signature=SG10&x=1' "
    "'https://a.blob.core.windows.net/c?sv=1&sig=SG11' "
    "'https://storage.googleapis.com/b/o?X-Goog-Signature=SG12' https://u:URLPW13@h.example/x "
    "'https://h.example/cb?access_token=AT14' --password=PW15 --token TOK16 --api-key KEY17 "
    "-H 'Cookie: s=1' --n 4";

TEST_F(SecretsCli, EveryFamilyOfCredentialIsRedactedInTheRecordTheLegsAndTheLock) {
  Script("leg.sh",
         "sleep 0.8\necho '{\"name\":\"tok_s\",\"value\":100,\"unit\":\"tok/s\","
         "\"better\":\"higher\"}' >> \"$VOUCH_METRICS\"\n");
  auto r = Vouch(
      fmt::format("run {} --warmup 0 --reps 1 --out r --env 'DB_DSN=host=db user=u password=PGPW1 "
                  "sslmode=require' --env 'ODBC=Server=s;Uid=u;Pwd=ODBCPW2;' -- ./leg.sh {}",
                  kFast, kLegArgs));
  ASSERT_EQ(r.rc, 0) << r.out;
  ExpectNoSecret("the output", r.out);
  ExpectNoSecret("r/", AllFiles("r"));
  std::ifstream lock(D("lock"));
  ExpectNoSecret("the lock file", std::string(std::istreambuf_iterator<char>(lock), {}));

  auto rec = Json("r/record.json");
  const json& arm = rec["recipe"]["arms"][0];
  EXPECT_EQ(arm["env"]["DB_DSN"], "host=db user=u password=<redacted> sslmode=require");
  EXPECT_EQ(arm["env"]["ODBC"], "Server=s;Uid=u;Pwd=<redacted>;");
  EXPECT_EQ(arm["argv"], json({"./leg.sh",
                               "--cookie",
                               "<redacted>",
                               "-b",
                               "<redacted>",
                               "--user",
                               "alice:<redacted>",
                               "-u",
                               "bob:<redacted>",
                               "--passphrase",
                               "<redacted>",
                               "--pass",
                               "<redacted>",
                               "--auth",
                               "<redacted>",
                               "https://b.s3.amazonaws.com/k?X-Amz-Signature=<redacted>&x=1",
                               "https://a.blob.core.windows.net/c?sv=1&sig=<redacted>",
                               "https://storage.googleapis.com/b/o?X-Goog-Signature=<redacted>",
                               "https://u:<redacted>@h.example/x",
                               "https://h.example/cb?access_token=<redacted>",
                               "--password=<redacted>",
                               "--token",
                               "<redacted>",
                               "--api-key",
                               "<redacted>",
                               "-H",
                               "Cookie: <redacted>",
                               "--n",
                               "4"}));
  // The reproduce line says how many values it lacks: 16 in the leg's arguments, 2 in --env.
  EXPECT_EQ(rec["recipe"]["reproduce_note"],
            "18 secret values were redacted as <redacted>: put them back to reproduce");
  // `lock status` prints the holder's command as the lock file keeps it.
  auto st = testing_util::Shell(
      fmt::format("cd {} && VOUCH_LOCK_FILE={}/lock {} lock status", D(), D(), VOUCH_BINARY));
  ExpectNoSecret("lock status", st.out);
}

// An A/B keeps its plan (extra.ab_plan: the arms' environments, as given and as run), its
// summary and its Markdown: each had a redaction of its own, by the variable's name only.
TEST_F(SecretsCli, AnAbPlanItsSummaryAndItsMarkdownCarryNoSecret) {
  Script("leg.sh",
         "sleep 0.5\necho \"{\\\"name\\\":\\\"tok_s\\\",\\\"value\\\":$SPEED,\\\"unit\\\":"
         "\\\"tok/s\\\",\\\"better\\\":\\\"higher\\\"}\" >> \"$VOUCH_METRICS\"\n");
  auto r = Vouch(fmt::format(
      "ab {} --pairs 4 --seed 1 --band 1 --out r --markdown pr.md "
      "--a-env SPEED=100 --b-env SPEED=101 "
      "--a-env 'DB_DSN=host=db password=PGPW1' --b-env 'DB_URL=postgres://u:URLPW13@db/x' "
      "-- ./leg.sh --user alice:UPW5 --pass PS8",
      kFast));
  ASSERT_NE(r.rc, 1) << r.out;
  ASSERT_TRUE(fs::exists(D("r/record.json"))) << r.out;
  ExpectNoSecret("the output", r.out);
  ExpectNoSecret("r/", AllFiles("r"));
  std::ifstream md(D("pr.md"));
  ExpectNoSecret("pr.md", std::string(std::istreambuf_iterator<char>(md), {}));
  auto plan = Json("r/record.json")["extra"]["ab_plan"];
  EXPECT_EQ(plan["a_env"], json({"SPEED=100", "DB_DSN=host=db password=<redacted>"}));
  EXPECT_EQ(plan["b_env"], json({"SPEED=101", "DB_URL=postgres://u:<redacted>@db/x"}));
  EXPECT_EQ(plan["a"]["env"]["DB_DSN"], "host=db password=<redacted>");
  EXPECT_EQ(plan["b"]["env"]["DB_URL"], "postgres://u:<redacted>@db/x");
  EXPECT_EQ(plan["a"]["argv"],
            json({"./leg.sh", "--user", "alice:<redacted>", "--pass", "<redacted>"}));
}

}  // namespace
}  // namespace vouch
