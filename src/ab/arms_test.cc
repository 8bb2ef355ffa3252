#include "ab/arms.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace vouch {
namespace {

namespace fs = std::filesystem;

class ArmsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("vouch_arms_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& rel, const std::string& content) {
    fs::path p = dir_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }

  static const ArmsFinding* Find(const ArmsReport& r, const std::string& code) {
    for (const auto& f : r.findings)
      if (f.code == code) return &f;
    return nullptr;
  }

  fs::path dir_;
};

TEST_F(ArmsTest, IdenticalArtifactsAreFatal) {
  ArmInput a{"A", {Write("a/bench", "same bytes")}, {}, {{"calls", "10"}}, {}, {}};
  ArmInput b{"B", {Write("b/bench", "same bytes")}, {}, {{"calls", "12"}}, {}, {}};
  auto r = CheckArms(a, b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->distinct);
  ASSERT_FALSE(r->findings.empty());
  EXPECT_EQ(r->findings[0].severity, ArmsSeverity::kFatal);  // fatal sorts first
  EXPECT_EQ(r->findings[0].code, "same_artifact");
  EXPECT_NE(r->findings[0].message.find("arms A and B are one artifact: sha256 " +
                                        r->hashes_a[0].sha256 + " for both"),
            std::string::npos)
      << r->findings[0].message;
  EXPECT_NE(RenderArmsText(*r).find("FATAL"), std::string::npos);
}

// The second seed's #1516: two builds of one source differ only by the build root embedded in
// the artifact. The hashes differ, yet nothing proves two builds: refused, offset reported.
TEST_F(ArmsTest, EmbeddedRootHashOnlyIsRefused) {
  std::string prefix(5000, 'x');
  std::string root_a = "/tmp/b-old", root_b = "/tmp/b-new";
  std::string fa =
      Write("a/libconv.so", prefix + "RPATH=" + root_a + std::string("/lib\0tail", 9) + root_a);
  std::string fb =
      Write("b/libconv.so", prefix + "RPATH=" + root_b + std::string("/lib\0tail", 9) + root_b);
  ArmInput a{"A", {fa}, {root_a + "/"}, {}, {}, {}};
  ArmInput b{"B", {fb}, {root_b}, {}, {}, {}};
  auto r = CheckArms(a, b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NE(r->hashes_a[0].sha256, r->hashes_b[0].sha256);
  EXPECT_FALSE(r->distinct);
  const ArmsFinding* h = Find(*r, "hash_only");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->severity, ArmsSeverity::kRefuse);
  EXPECT_NE(h->message.find("only the artifact hashes differ; no control was given: a different "
                            "hash does not prove two builds differ (the build root is embedded"),
            std::string::npos)
      << h->message;
  ASSERT_EQ(r->embedded_roots.size(), 2u);
  EXPECT_EQ(r->embedded_roots[0].arm, "A");
  EXPECT_EQ(r->embedded_roots[0].root, "/tmp/b-old");  // trailing slash dropped
  EXPECT_EQ(r->embedded_roots[0].offset, 5006u);
  EXPECT_EQ(r->embedded_roots[0].count, 2u);
  EXPECT_EQ(r->embedded_roots[1].arm, "B");
  const ArmsFinding* e = Find(*r, "embedded_root");
  ASSERT_NE(e, nullptr);
  EXPECT_NE(e->message.find("at byte offset 5006 (2 occurrences)"), std::string::npos)
      << e->message;
  EXPECT_NE(RenderArmsJson(*r).find("\"offset\": 5006"), std::string::npos);
}

TEST_F(ArmsTest, ControlsMovedAreAccepted) {
  ArmInput a{"A",
             {Write("a/bench", "build one")},
             {"/nowhere/a"},
             {{"ar.depth_forward", "1414"}},
             {{"conv.cu", Write("a/src/conv.cu", "old kernel")}},
             {}};
  ArmInput b{"B",
             {Write("b/bench", "build two")},
             {"/nowhere/b"},
             {{"ar.depth_forward", "808"}},
             {{"conv.cu", Write("b/src/conv.cu", "new kernel")}},
             {}};
  auto r = CheckArms(a, b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->distinct) << RenderArmsText(*r);
  EXPECT_EQ(r->controls_moved, 2);
  EXPECT_TRUE(r->embedded_roots.empty());
  ASSERT_NE(Find(*r, "control_moved"), nullptr);
  EXPECT_EQ(Find(*r, "control_moved")->message,
            "behavioural control 'ar.depth_forward' moved: A 1414, B 808");
  EXPECT_NE(Find(*r, "source_moved"), nullptr);
  EXPECT_EQ(Find(*r, "hash_only"), nullptr);
  EXPECT_NE(RenderArmsText(*r).find("arms: distinct (2 controls moved)"), std::string::npos);
  EXPECT_NE(RenderArmsJson(*r).find("\"distinct\": true"), std::string::npos);
}

TEST_F(ArmsTest, EqualBehaviouralControlIsReported) {
  ArmInput a{"A", {Write("a/bench", "one")}, {}, {{"calls", "1414"}, {"sum", "3.5"}}, {}, {}};
  ArmInput b{"B", {Write("b/bench", "two")}, {}, {{"calls", "1414.0"}, {"sum", "3.75"}}, {}, {}};
  auto r = CheckArms(a, b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const ArmsFinding* f = Find(*r, "control_equal");
  ASSERT_NE(f, nullptr);  // 1414 == 1414.0 as numbers
  EXPECT_EQ(f->severity, ArmsSeverity::kWarn);
  EXPECT_NE(f->message.find("'calls' is equal in both arms (1414)"), std::string::npos);
  EXPECT_TRUE(r->distinct);  // "sum" moved
  EXPECT_EQ(r->controls_moved, 1);

  // Every control equal: nothing moved, refused.
  b.behavioural["sum"] = "3.5";
  r = CheckArms(a, b);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->distinct);
  ASSERT_NE(Find(*r, "hash_only"), nullptr);
  EXPECT_NE(Find(*r, "hash_only")->message.find("no control moved"), std::string::npos);
}

TEST_F(ArmsTest, EqualSourceHashesAreReported) {
  ArmInput a{"A", {Write("a/bench", "one")}, {}, {}, {{"conv.cu", Write("a/conv.cu", "k")}}, {}};
  ArmInput b{"B", {Write("b/bench", "two")}, {}, {}, {{"conv.cu", Write("b/conv.cu", "k")}}, {}};
  auto r = CheckArms(a, b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const ArmsFinding* f = Find(*r, "source_equal");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("the two arms were built from one source"), std::string::npos);
  EXPECT_FALSE(r->distinct);
}

TEST_F(ArmsTest, IdentityOfCallsAndTimes) {
  ArmInput a{"A", {}, {}, {{"dispatch", "1"}}, {}, {{"conv", {1414, 2.5e6}}}};
  ArmInput b{"B", {}, {}, {{"dispatch", "2"}}, {}, {{"conv", {1414, 2.5e6}}}};
  auto r = CheckArms(a, b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_NE(Find(*r, "same_binary"), nullptr);  // no artifacts: a runtime switch
  const ArmsFinding* f = Find(*r, "identity");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, ArmsSeverity::kRefuse);
  EXPECT_NE(f->message.find("equal times are noise, equal counts are identity"), std::string::npos);
  EXPECT_FALSE(r->distinct);
  // Equal counts, different times: noted, not refused.
  b.call_stats["conv"].time_ns = 2.6e6;
  r = CheckArms(a, b);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Find(*r, "identity"), nullptr);
  EXPECT_NE(Find(*r, "equal_calls"), nullptr);
  EXPECT_TRUE(r->distinct);
}

TEST_F(ArmsTest, SameBinaryWithoutMovedControlIsRefused) {
  ArmInput a{"A", {}, {}, {}, {}, {}};
  ArmInput b{"B", {}, {}, {}, {}, {}};
  auto r = CheckArms(a, b);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->distinct);
  EXPECT_NE(Find(*r, "no_control_moved"), nullptr);
}

TEST_F(ArmsTest, DirectoryArtifactsAndUnpairedInputs) {
  Write("a/pkg/bin/tool", "tool A");
  Write("a/pkg/lib/x.so", "zzz/src/a/conv.cu");
  Write("b/pkg/bin/tool", "tool B");
  ArmInput a{"A", {(dir_ / "a/pkg").string()}, {"/src/a"}, {{"n", "1"}}, {}, {}};
  ArmInput b{"B", {(dir_ / "b/pkg").string(), (dir_ / "b/pkg/bin").string()},
             {},  {{"n", "2"}, {"m", "3"}},
             {},  {}};
  auto r = CheckArms(a, b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->embedded_roots.size(), 1u);
  EXPECT_EQ(r->embedded_roots[0].offset, 3u);
  EXPECT_NE(r->embedded_roots[0].file.find("lib/x.so"), std::string::npos);
  EXPECT_NE(Find(*r, "artifact_count"), nullptr);
  EXPECT_NE(Find(*r, "control_unpaired"), nullptr);
  EXPECT_FALSE(r->distinct);  // artifacts cannot be paired
}

TEST_F(ArmsTest, UnreadableInputsAreErrors) {
  ArmInput a{"A", {(dir_ / "missing").string()}, {}, {}, {}, {}};
  ArmInput b{"B", {Write("b/bench", "x")}, {}, {}, {}, {}};
  auto r = CheckArms(a, b);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("arm A: artifact: cannot hash"), std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("missing"), std::string::npos);

  a.artifacts = {Write("a/bench", "y")};
  a.roots = {"/"};
  r = CheckArms(a, b);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("too broad"), std::string::npos);

  a.roots = {};
  a.sources = {{"conv.cu", (dir_ / "nope.cu").string()}};
  b.sources = {{"conv.cu", Write("b/conv.cu", "k")}};
  r = CheckArms(a, b);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("arm A: source control 'conv.cu'"), std::string::npos);
}

// A match that straddles the 1 MiB streaming chunk boundary is still found, once.
TEST_F(ArmsTest, FindInFileAcrossChunkBoundary) {
  const std::string needle = "/home/ci/build-tree";
  std::string content(1 << 20, 'a');
  content.replace((1 << 20) - 7, needle.size(), needle);
  content += std::string(100, 'b') + needle;
  std::string f = Write("big.bin", content);
  auto occ = FindInFile(f, needle);
  ASSERT_TRUE(occ.ok()) << occ.error().message;
  ASSERT_TRUE(occ->has_value());
  EXPECT_EQ((*occ)->first_offset, static_cast<std::uint64_t>((1 << 20) - 7));
  EXPECT_EQ((*occ)->count, 2u);
  auto none = FindInFile(f, "not-there");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  EXPECT_FALSE(FindInFile((dir_ / "absent").string(), "x").ok());
}

}  // namespace
}  // namespace vouch
