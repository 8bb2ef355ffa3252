#include "cupti/options.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>

namespace vouch_cupti {
namespace {

// Sets (or, with nullptr, unsets) one variable for the test's life and restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_.c_str(), old_.c_str(), 1);
    else
      unsetenv(name_.c_str());
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

TEST(CuptiOptions, LaunchApiRecordsAreOffByDefault) {
  ScopedEnv api("VOUCH_GPU_TRACE_API", nullptr);
  Options o = ReadOptions(getpid());
  EXPECT_FALSE(o.api);
  EXPECT_STREQ(o.api_from, "default");
  EXPECT_TRUE(o.timestamp_callback);
  EXPECT_EQ(o.flush_ms, 0);
  EXPECT_EQ(o.buffer_bytes, std::size_t{2} << 20);
}

TEST(CuptiOptions, LaunchApiRecordsAreOptIn) {
  for (const char* on : {"on", "launch"}) {
    ScopedEnv api("VOUCH_GPU_TRACE_API", on);
    Options o = ReadOptions(getpid());
    EXPECT_TRUE(o.api) << on;
    EXPECT_STREQ(o.api_from, "VOUCH_GPU_TRACE_API");
  }
  for (const char* off : {"off", "yes-please", "1"}) {  // unknown words leave the default (off)
    ScopedEnv api("VOUCH_GPU_TRACE_API", off);
    EXPECT_FALSE(ReadOptions(getpid()).api) << off;
  }
}

TEST(CuptiOptions, OtherSwitchesAndThePath) {
  ScopedEnv path("VOUCH_GPU_TRACE", "/tmp/t.%p.jsonl");
  ScopedEnv mb("VOUCH_GPU_TRACE_BUFFER_MB", "8");
  ScopedEnv clk("VOUCH_GPU_TRACE_CLOCK", "cupti");
  ScopedEnv fl("VOUCH_GPU_TRACE_FLUSH_MS", "250");
  Options o = ReadOptions(1234);
  EXPECT_EQ(o.path, "/tmp/t.1234.jsonl");
  EXPECT_EQ(o.buffer_bytes, std::size_t{8} << 20);
  EXPECT_FALSE(o.timestamp_callback);
  EXPECT_EQ(o.flush_ms, 250);
}

TEST(CuptiOptions, TheLaunchCountIsOnUnlessTurnedOff) {
  {
    ScopedEnv c("VOUCH_GPU_TRACE_COUNT", nullptr);
    ScopedEnv m("VOUCH_GPU_TRACE_COUNT_MS", nullptr);
    Options o = ReadOptions(getpid());
    EXPECT_TRUE(o.count);
    EXPECT_STREQ(o.count_from, "default");
    EXPECT_EQ(o.count_ms, 100);
  }
  {
    ScopedEnv c("VOUCH_GPU_TRACE_COUNT", "off");
    ScopedEnv m("VOUCH_GPU_TRACE_COUNT_MS", "250");
    Options o = ReadOptions(getpid());
    EXPECT_FALSE(o.count);
    EXPECT_STREQ(o.count_from, "VOUCH_GPU_TRACE_COUNT");
    EXPECT_EQ(o.count_ms, 250);
  }
  for (const char* odd : {"yes", "0"}) {  // unknown words leave it on
    ScopedEnv c("VOUCH_GPU_TRACE_COUNT", odd);
    ScopedEnv m("VOUCH_GPU_TRACE_COUNT_MS", "5");  // below 10 ms: the default
    Options o = ReadOptions(getpid());
    EXPECT_TRUE(o.count) << odd;
    EXPECT_EQ(o.count_ms, 100);
  }
}

TEST(CuptiOptions, AppendEscapedWritesAJsonString) {
  std::string s;
  AppendEscaped(&s, "a\"b\\c\n");
  EXPECT_EQ(s, "\"a\\\"b\\\\c\\u000a\"");
}

}  // namespace
}  // namespace vouch_cupti
