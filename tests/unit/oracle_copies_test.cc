// The oracle tables under tests/fixtures/oracles are copies of ../shared/oracles (so that a
// clone builds and tests anywhere). When the shared folder is present, the copies must be
// identical to it: an updated oracle fails here until the copy (and the code) follow.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/testing/oracle_csv.h"

namespace perfgate::testing {
namespace {

namespace fs = std::filesystem;

TEST(OracleCopies, IdenticalToSharedOracles) {
  const fs::path shared = PERFGATE_SHARED_ORACLES_DIR;
  if (!fs::exists(shared)) GTEST_SKIP() << "no " << shared << " beside the project";
  int compared = 0;
  for (const char* folder : {"golden", "gbench"}) {
    const fs::path copies = FixturePath(std::string("oracles/") + folder);
    for (const auto& entry : fs::directory_iterator(copies)) {
      const fs::path original = shared / folder / entry.path().filename();
      ASSERT_TRUE(fs::exists(original)) << original << " is gone from the shared oracles";
      EXPECT_EQ(ReadFile(entry.path().string()), ReadFile(original.string()))
          << entry.path() << " differs from " << original;
      ++compared;
    }
    // Every data file of the shared folder has a copy (generators excepted).
    for (const auto& entry : fs::directory_iterator(shared / folder)) {
      const auto ext = entry.path().extension();
      if (ext == ".py" || ext == ".R") continue;
      EXPECT_TRUE(fs::exists(copies / entry.path().filename()))
          << entry.path() << " has no copy in tests/fixtures/oracles";
    }
  }
  EXPECT_GT(compared, 20);
}

}  // namespace
}  // namespace perfgate::testing
