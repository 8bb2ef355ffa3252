#include "store_hook.h"

#include <fmt/format.h>

#include "store/store.h"

namespace vouch::cli {

void StoreFlag::Add(CLI::App& app) {
  option = app.add_option("--store", url,
                          "also add the result to the history store: a SQLite file or "
                          "postgresql://...; without a value VOUCH_STORE or "
                          "~/.local/share/vouch/history.sqlite")
               ->expected(0, 1);
}

bool StoreResult(const StoreFlag& flag, const std::string& command, const std::string& dir,
                 const nlohmann::json* gate, const std::string& baseline_path) {
  if (!flag.Asked()) return true;
  auto say = [&](const std::string& m) { fmt::print(stderr, "vouch {}: {}\n", command, m); };
  auto where = ResolveStore(flag.url);
  if (!where) return say(where.error().message), false;
  auto store = Store::Open(where->url);
  if (!store) return say(store.error().message), false;
  auto added = (*store)->AddRecordDir(dir);
  if (!added) return say(added.error().message), false;
  if (gate)
    if (auto s = (*store)->AddGate(added->run_key, *gate, baseline_path); !s)
      return say(s.error().message), false;
  say(fmt::format("history store {}: run {} {}", RedactUrl(where->url),
                  added->run_key.substr(0, 12), IngestResultName(added->result)));
  return true;
}

}  // namespace vouch::cli
