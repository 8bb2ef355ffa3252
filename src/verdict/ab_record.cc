#include "verdict/ab_record.h"

#include "clock/policy.h"
#include "util/redact.h"

namespace vouch::verdict {
namespace {

// The one redaction (util/redact.h): by name and by the value's shape.
std::vector<std::string> RedactEnv(const std::vector<std::string>& env) {
  std::vector<std::string> out;
  for (const auto& kv : env) out.push_back(RedactArg(kv));
  return out;
}

nlohmann::json ArmJson(const Arm& a) {
  nlohmann::json env = nlohmann::json::object();
  for (const auto& [k, v] : a.env) env[k] = RedactEnvValue(k, v);
  return {{"name", a.name}, {"argv", RedactArgv(a.argv)}, {"env", env}, {"shell", a.shell}};
}

Arm ArmFromJson(const nlohmann::json& j) {
  Arm a;
  a.name = j.at("name").get<std::string>();
  a.argv = j.at("argv").get<std::vector<std::string>>();
  for (const auto& [k, v] : j.at("env").items()) a.env.emplace_back(k, v.get<std::string>());
  a.shell = j.value("shell", false);
  return a;
}

}  // namespace

nlohmann::json AbPlanJson(const AbPlan& plan, const AbRules& rules,
                          const std::vector<std::string>& a_env,
                          const std::vector<std::string>& b_env) {
  return {{"a", ArmJson(plan.a)},
          {"b", ArmJson(plan.b)},
          {"a_env", RedactEnv(a_env)},
          {"b_env", RedactEnv(b_env)},
          {"warmup", plan.warmup},
          {"pairs", plan.pairs},
          {"max_pairs", plan.max_pairs ? nlohmann::json(*plan.max_pairs) : nlohmann::json()},
          {"calibrate", plan.calibrate},
          {"band_log", plan.band.half_width_log},
          {"confidence", plan.confidence},
          {"allow_cross_boot", plan.allow_cross_boot},
          {"headline", plan.headline},
          {"seed", plan.seed},
          {"change_not_on_gpu", rules.change_not_on_gpu},
          {"allow_modes", rules.allow_modes}};
}

Result<RecordedAbPlan> AbPlanFromRecord(const nlohmann::json& rec, const std::string& where) {
  if (!rec.is_object() || rec.value("kind", "") != "ab")
    return MakeError("{}: a '{}' record, not one of vouch ab", where,
                     rec.is_object() ? rec.value("kind", "?") : "?");
  static const nlohmann::json kNone;
  const auto& extra = rec.contains("extra") ? rec["extra"] : kNone;
  if (!extra.is_object() || !extra.contains("ab_plan") || !extra["ab_plan"].is_object())
    return MakeError(
        "{}: the record keeps no A/B plan (extra.ab_plan; written by a vouch older than ab "
        "--from): its legs cannot be replayed",
        where);
  try {
    const auto& j = extra["ab_plan"];
    RecordedAbPlan r;
    r.plan.a = ArmFromJson(j.at("a"));
    r.plan.b = ArmFromJson(j.at("b"));
    r.a_env = j.value("a_env", std::vector<std::string>{});
    r.b_env = j.value("b_env", std::vector<std::string>{});
    r.plan.warmup = j.at("warmup").get<int>();
    r.plan.pairs = j.at("pairs").get<int>();
    if (j.contains("max_pairs") && j["max_pairs"].is_number_integer())
      r.plan.max_pairs = j["max_pairs"].get<int>();
    r.plan.calibrate = j.at("calibrate").get<int>();
    r.plan.band.half_width_log = j.at("band_log").get<double>();
    r.plan.confidence = j.at("confidence").get<double>();
    r.plan.allow_cross_boot = j.at("allow_cross_boot").get<bool>();
    r.plan.headline = j.at("headline").get<std::string>();
    r.plan.seed = j.at("seed").get<std::uint64_t>();
    r.rules.change_not_on_gpu = j.value("change_not_on_gpu", false);
    r.rules.allow_modes = j.value("allow_modes", false);
    auto pol = PolicyFromJson(rec.contains("policy") ? rec["policy"] : kNone, where + ": policy");
    if (!pol) return pol.error();
    r.plan.policy = *pol;
    return r;
  } catch (const nlohmann::json::exception& e) {
    return MakeError("{}: extra.ab_plan is malformed ({})", where, e.what());
  }
}

}  // namespace vouch::verdict
