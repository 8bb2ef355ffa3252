#include "ab/command_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace vouch {
namespace {

namespace fs = std::filesystem;

class CommandFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("vouch_cmdfiles_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "bin");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& rel, const std::string& content, bool exec = false) {
    fs::path p = dir_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    if (exec) ::chmod(p.c_str(), 0755);
    return p.string();
  }
  Arm MakeArm(const std::string& name, std::vector<std::string> argv) {
    Arm a;
    a.name = name;
    a.argv = std::move(argv);
    a.env = {{"PATH", (dir_ / "bin").string()}};
    a.cwd = dir_.string();
    return a;
  }
  static const ArmsFinding* Find(const CommandArmsReport& r, const std::string& code) {
    for (const auto& f : r.findings)
      if (f.code == code) return &f;
    return nullptr;
  }
  fs::path dir_;
};

TEST_F(CommandFilesTest, TwoByteIdenticalBinariesAreOneArtifact) {
  std::string x = Write("build1/bench", "ELF same bytes", true);
  std::string y = Write("build2/bench", "ELF same bytes", true);
  auto r =
      CheckCommandArms(MakeArm("A", {x, "--n", "5"}), MakeArm("B", {"build2/bench", "--n", "5"}));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->fatal);
  const ArmsFinding* f = Find(*r, "same_artifact");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, ArmsSeverity::kFatal);
  EXPECT_NE(f->message.find("arms A and B run byte-identical files (bench "), std::string::npos)
      << f->message;
  EXPECT_EQ(r->hashes_a.size(), 1u);
  EXPECT_EQ(r->hashes_a[0].sha256, r->hashes_b[0].sha256);
  EXPECT_EQ(r->b.executable, fs::absolute(y).string());
}

TEST_F(CommandFilesTest, SameBinaryOtherArgumentsOrEnvironment) {
  Write("bin/bench", "ELF", true);
  auto r = CheckCommandArms(MakeArm("A", {"bench", "--scale", "1"}),
                            MakeArm("B", {"bench", "--scale", "1.03"}));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->fatal);
  const ArmsFinding* f = Find(*r, "same_binary");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("a same-binary A/B: both arms run bench "), std::string::npos);
  EXPECT_NE(f->message.find("arguments ('--scale 1' vs '--scale 1.03')"), std::string::npos)
      << f->message;
  Arm a = MakeArm("A", {"bench"}), b = MakeArm("B", {"bench"});
  b.env.push_back({"MODE", "fast"});
  r = CheckCommandArms(a, b);
  ASSERT_TRUE(r.ok());
  f = Find(*r, "same_binary");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("differ only in their environment"), std::string::npos) << f->message;
}

TEST_F(CommandFilesTest, DifferentFilesProveNothingOnTheirOwn) {
  Write("a/bench", "ELF one", true);
  Write("b/bench", "ELF two", true);
  auto r = CheckCommandArms(MakeArm("A", {"a/bench"}), MakeArm("B", {"b/bench"}));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->fatal);
  const ArmsFinding* f = Find(*r, "hashes_differ");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("on their own the hashes prove nothing"), std::string::npos);
}

TEST_F(CommandFilesTest, InterpreterScriptsAreHashed) {
  Write("bin/python3", "#!interp", true);
  Write("old/bench.py", "print(1)\n");
  Write("new/bench.py", "print(1)\n");
  Write("other/bench.py", "print(2)\n");
  auto r = CheckCommandArms(MakeArm("A", {"python3", "-u", "old/bench.py", "--steps", "8"}),
                            MakeArm("B", {"python3", "-u", "new/bench.py", "--steps", "8"}));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->a.scripts.size(), 1u);
  EXPECT_EQ(fs::path(r->a.scripts[0]).filename(), "bench.py");
  EXPECT_TRUE(r->fatal);  // one script twice: byte-identical
  r = CheckCommandArms(MakeArm("A", {"python3", "old/bench.py"}),
                       MakeArm("B", {"python3", "other/bench.py"}));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->fatal);
  EXPECT_NE(Find(*r, "hashes_differ"), nullptr);
  ASSERT_EQ(r->hashes_a.size(), 2u);  // the interpreter and the script
  // A module or inline code: no script file; the interpreter alone is hashed.
  CommandFiles m =
      ResolveCommandFiles({"python3", "-m", "old.bench"}, (dir_ / "bin").string(), dir_.string());
  EXPECT_FALSE(m.executable.empty());
  EXPECT_TRUE(m.scripts.empty());
  CommandFiles w = ResolveCommandFiles({"python3", "-W", "ignore", "old/bench.py"},
                                       (dir_ / "bin").string(), dir_.string());
  ASSERT_EQ(w.scripts.size(), 1u);
}

TEST_F(CommandFilesTest, UnresolvedAndShellArmsSaySo) {
  auto r = CheckCommandArms(MakeArm("A", {"no-such-bench"}), MakeArm("B", {"no-such-bench", "-x"}));
  ASSERT_TRUE(r.ok());
  const ArmsFinding* f = Find(*r, "unresolved");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, ArmsSeverity::kWarn);
  EXPECT_NE(f->message.find("arm A: 'no-such-bench' not found"), std::string::npos) << f->message;
  Arm a = MakeArm("A", {"echo 1"}), b = MakeArm("B", {"echo 2"});
  a.shell = b.shell = true;
  r = CheckCommandArms(a, b);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(Find(*r, "shell_arms"), nullptr);
  EXPECT_NE(RenderCommandArmsJson(*r).find("\"shell_arms\""), std::string::npos);
}

}  // namespace
}  // namespace vouch
