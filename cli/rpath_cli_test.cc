// The binaries never look for their libraries in the working directory: an empty or relative
// RPATH/RUNPATH entry would load a library planted wherever vouch (or a leg, through the
// tracer) runs. CMake kept empty entries in the build tree's RPATH for its install-time edit.
// Nor, in the build tree, in the build folder's parent ($ORIGIN/..): a build in /tmp/build would
// load a library planted in /tmp/lib.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "test_util.h"

namespace vouch {
namespace {

using testing_util::Has;
using testing_util::Shell;

class RpathCli : public testing_util::ScratchDirTest {};

// Each RPATH/RUNPATH entry of the ELF file PATH that is empty or relative (not "/..." nor
// "$ORIGIN..."), or leaves the file's folder ("$ORIGIN/.."), as readelf shows them.
std::string BadSearchPathEntries(const std::string& path) {
  auto r = Shell("readelf -d '" + path + "'");
  EXPECT_EQ(r.rc, 0) << r.out;
  std::string bad;
  std::size_t at = 0;
  while ((at = r.out.find("path: [", at)) != std::string::npos) {
    at += 7;
    const std::string list = r.out.substr(at, r.out.find(']', at) - at);
    std::size_t b = 0;
    while (true) {
      const std::size_t e = list.find(':', b);
      const std::string entry = list.substr(b, e == std::string::npos ? e : e - b);
      if (entry.empty() || (entry[0] != '/' && entry.rfind("$ORIGIN", 0) != 0) ||
          entry.find("$ORIGIN/..") != std::string::npos ||
          entry.find("${ORIGIN}") != std::string::npos)
        bad += "'" + entry + "' in [" + list + "]\n";
      if (e == std::string::npos) break;
      b = e + 1;
    }
  }
  return bad;
}

TEST_F(RpathCli, NoLibraryIsSearchedForInTheWorkingDirectory) {
  EXPECT_EQ(BadSearchPathEntries(VOUCH_BINARY), "");
  const auto tracer = std::filesystem::path(VOUCH_BINARY).parent_path() / "libvouch_cupti.so";
  if (std::filesystem::exists(tracer)) {
    EXPECT_EQ(BadSearchPathEntries(tracer.string()), "");
  }
  // And by behaviour: libraries planted here are not loaded.
  for (const char* lib : {"libfmt.so.9", "libsimdjson.so.14", "libsqlite3.so.0", "libcrypto.so.3",
                          "libz.so.1", "libre2.so.9", "libstdc++.so.6", "libm.so.6"})
    std::ofstream(D(lib)) << "not a library\n";
  auto r = Shell("cd " + D() + " && " + VOUCH_BINARY + " --version");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "vouch ")) << r.out;
}

// The same by behaviour for the build folder's parent: a copy of the build tree's binary in a
// folder whose parent holds lib/ with a planted library still starts (it was loaded, and failed,
// while the build RPATH was $ORIGIN/../lib).
TEST_F(RpathCli, NoLibraryIsSearchedForInTheBuildFoldersParent) {
  std::filesystem::create_directories(D("build"));
  std::filesystem::create_directories(D("lib"));
  for (const char* lib : {"libfmt.so.9", "libsimdjson.so.14", "libsqlite3.so.0", "libre2.so.9"})
    std::ofstream(D("lib/") + lib) << "not a library\n";
  std::filesystem::copy_file(VOUCH_BINARY, D("build/vouch"));
  std::filesystem::permissions(D("build/vouch"), std::filesystem::perms::owner_all);
  auto r = Shell(D("build/vouch") + " --version 2>&1");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "vouch ")) << r.out;
}

// One libstdc++ in the process (issue 39): a binary that loads libstdc++.so (itself, or through
// Debian's libsimdjson.so) uses that copy. A static copy beside it exported about 770 of its
// functions for the shared copy to bind to, and set up a second set of streams and locale at
// every start. (A binary with simdjson compiled in loads no libstdc++.so: nothing to check.)
TEST_F(RpathCli, ABinaryThatLoadsLibstdcxxCarriesNoSecondCopy) {
  auto ldd = Shell(std::string("ldd '") + VOUCH_BINARY + "'");
  ASSERT_EQ(ldd.rc, 0) << ldd.out;
  if (!Has(ldd.out, "libstdc++.so.6")) GTEST_SKIP() << "no libstdc++.so loaded: " << ldd.out;
  auto r = Shell(std::string("readelf --dyn-syms -W '") + VOUCH_BINARY +
                 "' | awk '$4 == \"FUNC\" && $5 == \"GLOBAL\" && $7 != \"UND\" && "
                 "$8 ~ /^_Z(N|NK)?St/ {print $8}'");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out, "") << "functions of libstdc++ defined in the binary as well";
}

}  // namespace
}  // namespace vouch
