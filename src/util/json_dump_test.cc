// DumpJson's compact path writes what nlohmann's dump(-1) writes, byte for byte.
#include "util/json_dump.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "util/json_io.h"

namespace vouch {
namespace {

std::string Nlohmann(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string RandomString(std::mt19937& rng) {
  // ASCII with its controls, a NUL, then UTF-8 and bytes that are not (one array: GCC 12 saw a
  // false out-of-bounds copy in the concatenation of two strings).
  static const char kRaw[] =
      "aZ09 \"\\/\b\f\n\r\t\x01\x1f\x7f"
      "\0"
      "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xff\xc3\xed\xa0\x80";
  static const std::string kBytes(kRaw, sizeof kRaw - 1);
  std::string s;
  for (std::size_t n = rng() % 12; n > 0; --n) s += kBytes[rng() % kBytes.size()];
  return s;
}

nlohmann::json RandomTree(std::mt19937& rng, int depth) {
  switch (rng() % (depth > 4 ? 7 : 9)) {
    case 0:
      return nullptr;
    case 1:
      return rng() % 2 == 0;
    case 2:
      return static_cast<std::int64_t>(rng()) - (std::int64_t{1} << 31) * (rng() % 3);
    case 3:
      return static_cast<std::uint64_t>(rng()) << (rng() % 33);
    case 4: {
      static const double kOdd[] = {0.0,
                                    -0.0,
                                    1e-7,
                                    1e21,
                                    1796115924.444916,
                                    0.1,
                                    -3.5e-300,
                                    1e300,
                                    123456789012345678.0,
                                    std::numeric_limits<double>::infinity(),
                                    std::numeric_limits<double>::quiet_NaN(),
                                    std::numeric_limits<double>::denorm_min()};
      if (rng() % 2) return kOdd[rng() % std::size(kOdd)];
      return std::ldexp(static_cast<double>(rng()), static_cast<int>(rng() % 80) - 60);
    }
    case 5:
    case 6:
      return RandomString(rng);
    case 7: {
      nlohmann::json a = nlohmann::json::array();
      for (std::size_t n = rng() % 5; n > 0; --n) a.push_back(RandomTree(rng, depth + 1));
      return a;
    }
    default: {
      nlohmann::json o = nlohmann::json::object();
      for (std::size_t n = rng() % 5; n > 0; --n) o[RandomString(rng)] = RandomTree(rng, depth + 1);
      return o;
    }
  }
}

TEST(JsonDump, CompactIsNlohmannsDumpOnRandomTrees) {
  std::mt19937 rng(24);
  for (int i = 0; i < 20000; ++i) {
    auto j = RandomTree(rng, 0);
    ASSERT_EQ(DumpJson(j), Nlohmann(j)) << i;
  }
}

TEST(JsonDump, EveryAsciiByteAndTheEdges) {
  std::string all;
  for (int c = 0; c < 0x80; ++c) all += static_cast<char>(c);
  for (const nlohmann::json& j :
       {nlohmann::json(all), nlohmann::json::object(), nlohmann::json::array(),
        nlohmann::json({{all, {1, 2.5, nullptr, true, "x"}}}),
        nlohmann::json(std::string("bad \xff utf-8 \xc3")), nlohmann::json::binary({1, 2, 3}),
        // Escapes written before a byte from 0x80 up: the string is handed to nlohmann
        // whole, after what came before it in the dump.
        nlohmann::json({{"k\n", "a\"b\\\n\xc3\xa9 caf\xc3\xa9"}, {"z\t", "\t\x01\xff"}}),
        nlohmann::json(std::numeric_limits<std::int64_t>::min()),
        nlohmann::json(std::numeric_limits<std::uint64_t>::max())})
    EXPECT_EQ(DumpJson(j), Nlohmann(j));
  // The pretty form is nlohmann's own.
  nlohmann::json j = {{"a", {1, 2}}, {"b", "c"}};
  EXPECT_EQ(DumpJson(j, 2), j.dump(2));
}

}  // namespace
}  // namespace vouch
