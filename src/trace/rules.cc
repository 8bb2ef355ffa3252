#include "trace/rules.h"

#include <re2/re2.h>

#include <nlohmann/json.hpp>

#include "util/fs.h"
#include "util/json_io.h"
#include "util/strings.h"

namespace vouch::trace {

std::string Rules::Classify(const std::string& kernel_name) const {
  for (std::size_t i = 0; i < compiled.size(); ++i)
    if (RE2::PartialMatch(kernel_name, *compiled[i])) return rules[i].component;
  return "other";
}

Status Rules::Compile() {
  compiled.clear();
  RE2::Options o;
  o.set_case_sensitive(false);
  o.set_log_errors(false);
  for (const auto& r : rules) {
    auto re = std::make_shared<const RE2>(r.pattern, o);
    if (!re->ok())
      return MakeError(
          "{}: the pattern of component '{}' is not a valid regular expression (RE2: {}; there are "
          "no backreferences or lookaround): {}",
          source, r.component, re->error(), r.pattern);
    compiled.push_back(std::move(re));
  }
  return OkStatus();
}

Rules DefaultRules() {
  Rules r;
  r.source = "built-in";
  r.rules = {
      {"attention", "flash|fmha|sdpa|attn|attention"},
      {"gemm", "gemm|cutlass|nvjet|cublas|xmma|splitkreduce|matmul"},
      {"norm", "norm"},
      {"reduce", "reduce|reduction|softmax|argmax"},
      {"copy_gather", "copy|gather|index|cat_|transpose"},
      {"elementwise", "elementwise|vectorized|unrolled|silu|gelu|relu|add|mul"},
  };
  (void)r.Compile();  // the built-in patterns are valid (tested)
  return r;
}

Result<Rules> ParseRules(const std::string& text, const std::string& label) {
  Rules r;
  r.source = label;
  std::string trimmed = Trim(text);
  if (!trimmed.empty() && trimmed[0] == '{') {
    auto parsed = ParseJson(text, label);
    if (!parsed)
      return MakeError(
          "{}; expected {{\"components\": [{{\"name\": ..., \"pattern\": "
          "...}}]}}",
          parsed.error().message);
    nlohmann::json j = std::move(*parsed);
    if (!j.contains("components") || !j["components"].is_array())
      return MakeError(
          "{}: no \"components\" array; expected {{\"components\": [{{\"name\": ..., \"pattern\": "
          "...}}]}}",
          label);
    std::size_t i = 0;
    for (const auto& c : j["components"]) {
      if (!c.is_object() || !c.contains("name") || !c.contains("pattern") ||
          !c["name"].is_string() || !c["pattern"].is_string())
        return MakeError("{}: components[{}] needs string fields \"name\" and \"pattern\"", label,
                         i);
      r.rules.push_back({c["name"].get<std::string>(), c["pattern"].get<std::string>()});
      ++i;
    }
  } else {
    int line_no = 0;
    for (const auto& line : Split(text, '\n')) {
      ++line_no;
      std::string l = Trim(line);
      if (l.empty() || l[0] == '#') continue;
      auto eq = l.find('=');
      if (eq == std::string::npos)
        return MakeError("{}:{}: expected 'component = regex', got '{}'", label, line_no, l);
      std::string name = Trim(l.substr(0, eq));
      std::string pattern = Trim(l.substr(eq + 1));
      if (name.empty() || pattern.empty())
        return MakeError("{}:{}: expected 'component = regex' with both sides non-empty", label,
                         line_no);
      r.rules.push_back({name, pattern});
    }
  }
  if (r.rules.empty())
    return MakeError("{}: no rules; write at least one 'component = regex'", label);
  if (auto s = r.Compile(); !s.ok()) return s.error();
  return r;
}

Result<Rules> LoadRules(const std::string& path) {
  auto text = ReadFile(path, 16 << 20);
  if (!text.ok()) return text.error();
  return ParseRules(*text, path);
}

}  // namespace vouch::trace
