// --store on run, baseline, gate and ab: the record just written goes into the history store.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

namespace vouch::cli {

struct StoreFlag {
  std::string url;
  bool asked = false;
  CLI::Option* option = nullptr;
  // --store [PATH|postgresql://...]: without a value, VOUCH_STORE or the default store.
  void Add(CLI::App& app);
  bool Asked() const { return option && option->count() > 0; }
};

// Ingests the record in DIR (and GATE, the gate table judged on it, when given) into the
// store when --store was given. Prints what happened on stderr. False on failure.
bool StoreResult(const StoreFlag& flag, const std::string& command, const std::string& dir,
                 const nlohmann::json* gate = nullptr, const std::string& baseline_path = "");

}  // namespace vouch::cli
