// `vouch help TOPIC` prints the documents a user needs, compiled into the binary (issue 37):
// from a folder with no docs/ beside it, byte for byte the Markdown it was built from; and no
// command's help points to a source path the user's machine does not have.
#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "test_util.h"

namespace vouch {
namespace {

using testing_util::Has;
using testing_util::Shell;

std::string ReadSource(const std::string& rel) {
  std::ifstream in(std::string(VOUCH_SOURCE_DIR) + "/" + rel, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class HelpCli : public testing_util::ScratchDirTest {
 protected:
  // Run in the scratch folder, which has no docs/ and no tests/.
  testing_util::ShellResult Vouch(const std::string& args) const {
    return Shell(fmt::format("cd {} && {} {}", D(), VOUCH_BINARY, args));
  }
};

const std::vector<std::pair<std::string, std::string>> kTopics = {
    {"metrics", "docs/metrics.md"},
    {"gpu-trace", "docs/gpu-trace.md"},
    {"sim", "tests/data/sim/README.md"},
    {"exit-codes", "docs/exit-codes.md"},
    {"bisect-method", "docs/bisect.md"},
    {"throttle", "docs/throttle.md"},
    {"roof", "docs/roof.md"},
};

TEST_F(HelpCli, EachTopicPrintsItsDocumentOfflineByteForByte) {
  // The list the build embeds is the list tested here.
  const std::string list = ReadSource("cli/help_topics.cmake");
  for (const auto& [name, file] : kTopics) {
    EXPECT_TRUE(Has(list, fmt::format("\"{}|{}|", name, file))) << name << " not in the list";
    const std::string doc = ReadSource(file);
    ASSERT_GT(doc.size(), 500u) << file;
    auto r = Vouch("help " + name);
    EXPECT_EQ(r.rc, 0) << name;
    EXPECT_EQ(r.out, doc) << "vouch help " << name << " differs from " << file;
  }
}

TEST_F(HelpCli, UsageListsEveryTopicAfterTheCommands) {
  auto r = Vouch("help");
  ASSERT_EQ(r.rc, 0) << r.out;
  const size_t topics = r.out.find("help topics");
  ASSERT_NE(topics, std::string::npos) << r.out;
  EXPECT_LT(r.out.find("commands:"), topics);
  for (const auto& [name, file] : kTopics)
    EXPECT_TRUE(Has(r.out.substr(topics), "  " + name + " ")) << name << " missing:\n" << r.out;
  EXPECT_TRUE(Has(r.out, "`vouch help TOPIC` a document")) << r.out;
}

TEST_F(HelpCli, NoCommandsHelpPointsToASourcePath) {
  auto usage = Vouch("help");
  ASSERT_EQ(usage.rc, 0);
  // The commands: the lines between "commands:" and "help topics".
  std::istringstream in(usage.out.substr(usage.out.find("commands:")));
  std::vector<std::string> commands;
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line) && line.rfind("  ", 0) == 0) {
    // "  trace summarize   what it does": the name is the words before the run of spaces.
    const std::string rest = line.substr(2);
    commands.push_back(rest.substr(0, rest.find("  ")));
  }
  ASSERT_GE(commands.size(), 15u) << usage.out;
  for (const auto& c : commands) {
    auto r = Vouch("help " + c);
    EXPECT_EQ(r.rc, 0) << c << ":\n" << r.out;
    for (const char* path : {"docs/", "tests/data", "src/", ".md)"})
      EXPECT_FALSE(Has(r.out, path)) << "vouch help " << c << " names " << path << ":\n" << r.out;
  }
  // Where the run's help named docs/metrics.md, it names the topic.
  EXPECT_TRUE(Has(Vouch("help run").out, "`vouch help metrics`"));
  EXPECT_TRUE(Has(Vouch("help run").out, "`vouch help gpu-trace`"));
}

TEST_F(HelpCli, AnUnknownTopicIsAnUnknownCommand) {
  auto r = Vouch("help metricz");
  EXPECT_EQ(r.rc, 64) << r.out;
  EXPECT_TRUE(Has(r.out, "unknown command 'metricz'")) << r.out;
}

}  // namespace
}  // namespace vouch
