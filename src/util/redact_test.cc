#include "util/redact.h"

#include <gtest/gtest.h>

namespace vouch {
namespace {

using V = std::vector<std::string>;

TEST(Redact, EveryFormOfASecretInACommandLine) {
  int n = 0;
  EXPECT_EQ(RedactArgv({"bench", "--token=abc", "--api-key=k1", "--password", "hunter2", "-p",
                        "8080", "HF_TOKEN=x", "--model", "m.gguf"},
                       &n),
            (V{"bench", "--token=<redacted>", "--api-key=<redacted>", "--password", "<redacted>",
               "-p", "8080", "HF_TOKEN=<redacted>", "--model", "m.gguf"}));
  EXPECT_EQ(n, 4);
  EXPECT_EQ(RedactArgv({"run", "--env", "HF_TOKEN=abc", "--", "x"}, &n),
            (V{"run", "--env", "HF_TOKEN=<redacted>", "--", "x"}));
  EXPECT_EQ(n, 1);
  // Already redacted: not counted twice.
  EXPECT_EQ(RedactArgv({"--password", "<redacted>"}, &n), (V{"--password", "<redacted>"}));
  EXPECT_EQ(n, 0);
  EXPECT_EQ(RedactCommandLine("python b.py  --secret s3 --n 4", &n),
            "python b.py  --secret <redacted> --n 4");
  EXPECT_EQ(n, 1);
  EXPECT_TRUE(IsSecretName("hf_token"));
  EXPECT_FALSE(IsSecretName("MODE"));
}

TEST(Redact, UrlPasswordsByShapeWhereverTheUrlStands) {
  int n = 0;
  EXPECT_EQ(RedactUrl("https://user:PASS@host/x?y=1#z", &n),
            "https://user:<redacted>@host/x?y=1#z");
  EXPECT_EQ(n, 1);
  EXPECT_EQ(RedactUrl("postgresql://u:p@ss@h:5432/db"), "postgresql://u:<redacted>@h:5432/db");
  EXPECT_EQ(RedactUrl("postgresql://u@h/db?sslmode=require&password=x&access_token=y", &n),
            "postgresql://u@h/db?sslmode=require&password=<redacted>&access_token=<redacted>");
  EXPECT_EQ(n, 2);
  EXPECT_EQ(RedactUrl("postgresql:///db?host=/tmp"), "postgresql:///db?host=/tmp");
  EXPECT_EQ(RedactUrl("mail a@b then https://x.org/@me"), "mail a@b then https://x.org/@me");
  EXPECT_EQ(RedactUrl("a https://u:1@h b https://v:2@i"),
            "a https://u:<redacted>@h b https://v:<redacted>@i");
  EXPECT_EQ(RedactArgv({"vouch", "run", "--store", "postgresql://u:PASS@db/vouch", "--env",
                        "DATABASE_URL=postgres://u:p@h/db", "--store=https://a:b@c/d", "--", "x"},
                       &n),
            (V{"vouch", "run", "--store", "postgresql://u:<redacted>@db/vouch", "--env",
               "DATABASE_URL=postgres://u:<redacted>@h/db", "--store=https://a:<redacted>@c/d",
               "--", "x"}));
  EXPECT_EQ(n, 3);
  EXPECT_EQ(RedactEnvValue("DATABASE_URL", "postgres://u:p@h/db"), "postgres://u:<redacted>@h/db");
  EXPECT_EQ(RedactEnvValue("HF_TOKEN", "abc"), "<redacted>");
  EXPECT_EQ(RedactEnvValue("MODE", "fast"), "fast");
}

TEST(Redact, AuthorizationHeadersAndSingleDashFlags) {
  int n = 0;
  EXPECT_EQ(RedactArgv({"curl", "-H", "Authorization: Bearer X", "-H", "X-Api-Key: k",
                        "--header=Proxy-Authorization: Basic dTpw", "-H", "Accept: text/plain"},
                       &n),
            (V{"curl", "-H", "Authorization: Bearer <redacted>", "-H", "X-Api-Key: <redacted>",
               "--header=Proxy-Authorization: Basic <redacted>", "-H", "Accept: text/plain"}));
  EXPECT_EQ(n, 3);
  // Inside a shell line, quoted: the words after the header's name.
  EXPECT_EQ(RedactCommandLine("curl -H 'Authorization: Bearer X' https://h/", &n),
            "curl -H 'Authorization: Bearer <redacted>' https://h/");
  EXPECT_EQ(n, 1);
  EXPECT_EQ(RedactCommandLine("curl -H \"authorization: abc123\" u", &n),
            "curl -H \"authorization: <redacted>\" u");
  EXPECT_EQ(n, 1);
  // Go's flag package: one dash, a whole name.
  EXPECT_EQ(RedactArgv({"server", "-token", "X", "-password", "Y", "-v", "2", "-apikey=Z"}, &n),
            (V{"server", "-token", "<redacted>", "-password", "<redacted>", "-v", "2",
               "-apikey=<redacted>"}));
  EXPECT_EQ(n, 3);
}

// Issue 36, class 3: the families credentials come in, each by its shape.
TEST(Redact, EveryFamilyOfCredentialByShape) {
  int n = 0;
  // libpq keyword strings and ODBC strings in a value.
  EXPECT_EQ(RedactEnvValue("DB_DSN", "host=db user=u password=PGPW sslmode=require"),
            "host=db user=u password=<redacted> sslmode=require");
  EXPECT_EQ(RedactEnvValue("DB_DSN", "host=db password='a b c' port=5"),
            "host=db password='<redacted>' port=5");
  EXPECT_EQ(RedactEnvValue("CONN", "Server=s;Uid=u;Pwd=ODBCPW;"), "Server=s;Uid=u;Pwd=<redacted>;");
  EXPECT_EQ(RedactArgv({"psql", "host=db user=u password=PW2"}, &n),
            (V{"psql", "host=db user=u password=<redacted>"}));
  EXPECT_EQ(n, 1);
  // curl: cookies, user:password pairs; a uid:gid pair and a cookie file are kept.
  EXPECT_EQ(
      RedactArgv({"curl", "--cookie", "sid=C1", "-b", "a=C2; b=C3", "-b", "jar.txt", "--user",
                  "alice:UPW", "-u", "bob:UPW2", "--proxy-user=p:UPW3", "https://h/"},
                 &n),
      (V{"curl", "--cookie", "<redacted>", "-b", "<redacted>", "-b", "jar.txt", "--user",
         "alice:<redacted>", "-u", "bob:<redacted>", "--proxy-user=p:<redacted>", "https://h/"}));
  EXPECT_EQ(n, 5);
  EXPECT_EQ(RedactArgv({"docker", "run", "--user", "1000:1000", "-u", "root", "img"}),
            (V{"docker", "run", "--user", "1000:1000", "-u", "root", "img"}));
  EXPECT_EQ(RedactCommandLine("curl -H 'Cookie: sid=C4' -u alice:UPW4 https://h/", &n),
            "curl -H 'Cookie: <redacted>' -u alice:<redacted> https://h/");
  EXPECT_EQ(n, 2);
  // Signed URLs.
  EXPECT_EQ(
      RedactArg("https://b.s3.amazonaws.com/k?X-Amz-Credential=AK&X-Amz-Signature=S1&x=1"),
      "https://b.s3.amazonaws.com/k?X-Amz-Credential=<redacted>&X-Amz-Signature=<redacted>&x=1");
  EXPECT_EQ(RedactArg("https://a.blob.core.windows.net/c?sv=2020&sig=S2"),
            "https://a.blob.core.windows.net/c?sv=2020&sig=<redacted>");
  EXPECT_EQ(RedactArg("https://storage.googleapis.com/b/o?X-Goog-Signature=S3"),
            "https://storage.googleapis.com/b/o?X-Goog-Signature=<redacted>");
  EXPECT_EQ(RedactArg("https://h/x?token=T1&access_token=T2"),
            "https://h/x?token=<redacted>&access_token=<redacted>");
  // Auth-like flag names, in both forms; words that only contain them are kept.
  EXPECT_EQ(RedactArgv({"gpg", "--passphrase", "P1", "--pass", "P2", "--auth", "P3", "--auth=P4",
                        "--passes", "3", "--author", "me", "--significance", "0.05"},
                       &n),
            (V{"gpg", "--passphrase", "<redacted>", "--pass", "<redacted>", "--auth", "<redacted>",
               "--auth=<redacted>", "--passes", "3", "--author", "me", "--significance", "0.05"}));
  EXPECT_EQ(n, 4);
}

}  // namespace
}  // namespace vouch
