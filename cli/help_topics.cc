#include "help_topics.h"

namespace vouch::cli {

const HelpTopic* FindHelpTopic(std::string_view name) {
  for (const auto& t : HelpTopics())
    if (name == t.name) return &t;
  return nullptr;
}

}  // namespace vouch::cli
