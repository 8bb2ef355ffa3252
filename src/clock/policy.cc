#include "clock/policy.h"

#include <nlohmann/json.hpp>

namespace vouch {

nlohmann::json ToJson(const Policy& p) {
  return {{"min_busy_readings", p.min_busy_readings},
          {"min_busy_fraction", p.min_busy_fraction},
          {"max_spread", p.max_spread},
          {"max_median_offset", p.max_median_offset},
          {"max_mean_offset", p.max_mean_offset},
          {"default_update_period_s", p.default_update_period_s},
          {"memory_margin", p.memory_margin}};
}

Result<Policy> PolicyFromJson(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) return MakeError("{}: 'policy' must be an object", where);
  Policy p;
  try {
    p.min_busy_readings = j.value("min_busy_readings", p.min_busy_readings);
    p.min_busy_fraction = j.value("min_busy_fraction", p.min_busy_fraction);
    p.max_spread = j.value("max_spread", p.max_spread);
    p.max_median_offset = j.value("max_median_offset", p.max_median_offset);
    p.max_mean_offset = j.value("max_mean_offset", p.max_mean_offset);
    p.default_update_period_s = j.value("default_update_period_s", p.default_update_period_s);
    p.memory_margin = j.value("memory_margin", p.memory_margin);
  } catch (const nlohmann::json::exception& e) {
    return MakeError("{}: bad policy: {}", where, e.what());
  }
  return p;
}

}  // namespace vouch
