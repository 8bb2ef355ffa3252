#include "clock/policy.h"

#include <nlohmann/json.hpp>

#include "util/json_io.h"

namespace vouch {

nlohmann::json ToJson(const Policy& p) {
  nlohmann::json j = {{"min_busy_readings", p.min_busy_readings},
                      {"min_busy_fraction", p.min_busy_fraction},
                      {"max_spread", p.max_spread},
                      {"max_median_offset", p.max_median_offset},
                      {"max_mean_offset", p.max_mean_offset},
                      {"default_update_period_s", p.default_update_period_s},
                      {"memory_margin", p.memory_margin}};
  if (p.max_throttled_share) j["max_throttled_share"] = *p.max_throttled_share;
  return j;
}

const JsonSchema& PolicySchema() {
  static const JsonSchema s = JsonSchema::Object({
      May("min_busy_readings", JsonSchema::Integer(0, 1000000000)),
      May("min_busy_fraction", JsonSchema::Number(0, 1)),
      May("max_spread", JsonSchema::Number(0, 1e6)),
      May("max_median_offset", JsonSchema::Number(0, 1e6)),
      May("max_mean_offset", JsonSchema::Number(0, 1e6)),
      May("default_update_period_s", JsonSchema::Number(1e-6, 1e6)),
      May("memory_margin", JsonSchema::Number(0, 1)),
      May("max_throttled_share", JsonSchema::Number(0, 1)),
  });
  return s;
}

Result<Policy> PolicyFromJson(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) return MakeError("{}: 'policy' must be an object", where);
  if (auto ok = PolicySchema().Check(j, where); !ok) return ok.error();
  return PolicyFromCheckedJson(j);
}

Policy PolicyFromCheckedJson(const nlohmann::json& j) {
  Policy p;
  p.min_busy_readings = j.value("min_busy_readings", p.min_busy_readings);
  p.min_busy_fraction = j.value("min_busy_fraction", p.min_busy_fraction);
  p.max_spread = j.value("max_spread", p.max_spread);
  p.max_median_offset = j.value("max_median_offset", p.max_median_offset);
  p.max_mean_offset = j.value("max_mean_offset", p.max_mean_offset);
  p.default_update_period_s = j.value("default_update_period_s", p.default_update_period_s);
  p.memory_margin = j.value("memory_margin", p.memory_margin);
  if (j.contains("max_throttled_share"))
    p.max_throttled_share = j["max_throttled_share"].get<double>();
  return p;
}

}  // namespace vouch
