#include "util/json_io.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstring>
#include <string>

namespace vouch {
namespace {

using nlohmann::json;

TEST(JsonIo, NumberOverflowIsAnErrorNamingTheFile) {
  auto r = ParseJson(R"({"metrics": [{"value": 1E601}]})", "baseline.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind("baseline.json: not valid JSON", 0), 0u) << r.error().message;
  EXPECT_NE(r.error().message.find("1E601"), std::string::npos) << r.error().message;
}

TEST(JsonIo, DeepNestingIsRefusedBeforeParsing) {
  std::string deep(100000, '[');
  deep += std::string(100000, ']');
  auto r = ParseJson(deep, "record.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "record.json: nested deeper than 128 levels (at byte 128); not a file vouch reads");
  // Brackets inside strings do not count.
  auto ok = ParseJson(R"({"a": "[[[[[[[[\"[[[["})", "x", 2);
  EXPECT_TRUE(ok.ok());
}

TEST(JsonIo, NestingAtTheLimitIsReadAndOneDeeperIsRefused) {
  for (const char* open : {"[", "{\"k\":"}) {
    const bool obj = open[0] == '{';
    auto nest = [&](int depth) {
      std::string t;
      for (int i = 0; i < depth; ++i) t += open;
      t += "1";
      for (int i = 0; i < depth; ++i) t += obj ? "}" : "]";
      return t;
    };
    EXPECT_TRUE(ParseJson(nest(128), "x.json").ok()) << open;
    auto r = ParseJson(nest(129), "x.json");
    ASSERT_FALSE(r.ok()) << open;
    EXPECT_EQ(r.error().message,
              fmt::format("x.json: nested deeper than 128 levels (at byte {}); not a file vouch "
                          "reads",
                          obj ? 128 * 5 : 128));
    EXPECT_TRUE(ParseJson(nest(3), "x.json", 3).ok()) << open;
    EXPECT_FALSE(ParseJson(nest(4), "x.json", 3).ok()) << open;
  }
}

TEST(JsonIo, KeysInAnyOrderOrRepeatedGiveNlohmannsTree) {
  for (const char* text :
       {R"({"a": 1, "b": {"y": [1, -2, 2.5], "x": null}, "c": "s"})",
        R"({"c": 1, "b": 2, "a": 3, "b": 4})", R"({"k": 1, "k": {"z": 1, "a": 2}, "a": true})",
        R"([{"b": 1, "a": 2}, {}, [], {"a": {"a": {"a": 0}}}])"}) {
    auto r = ParseJson(text, "x.json");
    ASSERT_TRUE(r.ok()) << text;
    EXPECT_EQ(r->dump(), json::parse(text).dump()) << text;
  }
}

TEST(JsonIo, SchemaNamesTheFieldPath) {
  JsonSchema s = JsonSchema::Object(
      {Must("metrics", JsonSchema::Array(JsonSchema::Object(
                           {Must("name", JsonSchema::String()), Must("value", JsonSchema::Number()),
                            May("readings", JsonSchema::Integer(0, 2147483647))}))),
       May("note", JsonSchema::String().OrNull())});
  auto doc =
      json::parse(R"({"metrics": [{"name": "a", "value": 1}, {"name": "b", "value": "x"}]})");
  auto st = s.Check(doc, "baseline.json");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message,
            "baseline.json: 'metrics[1].value' must be a finite number (got string)");

  doc = json::parse(R"({"metrics": [{"name": "a", "value": 1, "readings": 4294969276}]})");
  st = s.Check(doc, "w.json");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message,
            "w.json: 'metrics[0].readings' must be an integer in [0, 2147483647] (got 4294969276)");

  doc = json::parse(R"({"metrics": [{"name": "a"}], "note": null})");
  st = s.Check(doc, "w.json");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message, "w.json: 'metrics[0].value' is missing");

  doc = json::parse(R"({"metrics": [{"name": "a", "value": 2.5, "readings": 3}], "note": null})");
  EXPECT_TRUE(s.Check(doc, "w.json").ok());
  // An integer field given a fraction is refused (a float-to-int cast would be undefined).
  doc = json::parse(R"({"metrics": [{"name": "a", "value": 2.5, "readings": 1e300}]})");
  EXPECT_FALSE(s.Check(doc, "w.json").ok());
}

// Accepts (simdjson's tree) says what Check (nlohmann's tree of the same text) says, or refuses
// where the two trees could differ (a declared key repeated).
TEST(JsonIo, SchemaAcceptsOnSimdjsonsTreeAsCheckDoes) {
  JsonSchema s = JsonSchema::Object(
      {Must("metrics", JsonSchema::Array(JsonSchema::Object(
                           {Must("name", JsonSchema::String()), Must("value", JsonSchema::Number()),
                            May("readings", JsonSchema::Integer(-5, 2147483647)),
                            May("bytes", JsonSchema::Unsigned(1000).OrNull()),
                            May("ok", JsonSchema::Bool())}))),
       May("note", JsonSchema::String().OrNull()),
       May("by", JsonSchema::Map(JsonSchema::Number(0, 1)))});
  const char* docs[] = {
      R"({"metrics": [{"name": "a", "value": 1}]})",
      R"({"metrics": [{"name": "a", "value": 2.5, "readings": 3, "bytes": null}], "note": null})",
      R"({"metrics": [{"name": "a", "value": 1, "readings": -5, "bytes": 1000, "ok": true}]})",
      R"({"metrics": [], "by": {"x": 0.5, "y": 1}, "other": [1, {"deep": [2]}]})",
      R"({"metrics": [{"name": "b", "value": "x"}]})",
      R"({"metrics": [{"name": "a"}]})",
      R"({"metrics": [{"name": "a", "value": 1, "readings": 4294969276}]})",
      R"({"metrics": [{"name": "a", "value": 1, "readings": -6}]})",
      R"({"metrics": [{"name": "a", "value": 1, "readings": 1.0}]})",
      R"({"metrics": [{"name": "a", "value": 1, "bytes": -1}]})",
      R"({"metrics": [{"name": "a", "value": 1, "bytes": 1001}]})",
      R"({"metrics": [{"name": "a", "value": 1, "ok": 1}]})",
      R"({"metrics": [{"name": "a", "value": 1}], "note": 3})",
      R"({"metrics": [{"name": "a", "value": 1}], "by": {"x": 2}})",
      R"({"metrics": {"name": "a"}})",
      R"({"metrics": [{"name": "a", "value": 18446744073709551615}]})",
      R"([1, 2])",
      R"(null)",
  };
  simdjson::dom::parser parser;
  for (const char* text : docs) {
    simdjson::dom::element e;
    ASSERT_EQ(parser.parse(text, std::strlen(text)).get(e), simdjson::SUCCESS) << text;
    EXPECT_EQ(s.Accepts(e), s.Check(json::parse(text), "t").ok()) << text;
  }
  // A declared key twice: nlohmann keeps the last; Accepts refuses rather than guess.
  const std::string twice = R"({"metrics": [{"name": "a", "value": "x", "value": 1}]})";
  simdjson::dom::element e;
  ASSERT_EQ(parser.parse(twice).get(e), simdjson::SUCCESS);
  EXPECT_TRUE(s.Check(json::parse(twice), "t").ok());
  EXPECT_FALSE(s.Accepts(e));
}

TEST(JsonIo, DumpReplacesInvalidUtf8) {
  json j = {{"kernel", std::string("gemm\xff\xfe")}};
  EXPECT_EQ(DumpJson(j), "{\"kernel\":\"gemm\xEF\xBF\xBD\xEF\xBF\xBD\"}");
  EXPECT_FALSE(IsValidUtf8("gemm\xff"));
  EXPECT_FALSE(IsValidUtf8("\xc3"));          // cut short
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));      // overlong
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));  // surrogate
  EXPECT_TRUE(IsValidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_EQ(HexBytes("a\xff"), "61ff");
}

TEST(JsonIo, FreeJsonFreesAnyTreeAndLeavesNull) {
  json j = json::parse(R"({"a": [1, {"b": [[], {}], "c": "text"}], "d": {"e": null}})");
  FreeJson(j);
  EXPECT_TRUE(j.is_null());
  // Far deeper than the cleared levels: nlohmann's own destructor frees the rest.
  json deep = json::array();
  json* at = &deep;
  for (int i = 0; i < 100000; ++i) at = &at->emplace_back(json::object())["k"];
  *at = "leaf";
  FreeJson(deep);
  EXPECT_TRUE(deep.is_null());
}

}  // namespace
}  // namespace vouch
