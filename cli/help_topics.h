// The documents `vouch help TOPIC` prints (metrics, gpu-trace, sim, exit-codes), compiled
// into the binary at configure time from their Markdown (cli/help_topics.cmake lists them).
#pragma once

#include <string_view>
#include <vector>

namespace vouch::cli {

struct HelpTopic {
  const char* name;     // `vouch help NAME`
  const char* source;   // the Markdown file it was compiled from (relative to the source root)
  const char* summary;  // one line for `vouch help`
  std::string_view text;
};

const std::vector<HelpTopic>& HelpTopics();
// The topic named NAME, or nullptr.
const HelpTopic* FindHelpTopic(std::string_view name);

}  // namespace vouch::cli
