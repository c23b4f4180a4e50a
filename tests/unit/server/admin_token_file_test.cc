// SPDX-License-Identifier: Apache-2.0
// The first start's admin token goes to <data dir>/admin-token, readable by its owner only.
#include "server/admin_token_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace perfwarden::server {
namespace {

namespace fs = std::filesystem;

class AdminTokenFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/perfwarden-admin-token-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string Read(const std::string& path) {
    std::stringstream text;
    text << std::ifstream(path).rdbuf();
    return text.str();
  }
  static unsigned Mode(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777;
  }

  std::string dir_;
};

TEST_F(AdminTokenFileTest, WritesTheTokenForItsOwnerOnly) {
  const mode_t old_umask = ::umask(0);  // the widest umask: the file must still be 0600
  auto path = WriteAdminTokenFile(dir_ + "/data", "pwt_secret");
  ::umask(old_umask);
  ASSERT_TRUE(path.has_value()) << path.error().ToString();
  EXPECT_EQ(*path, dir_ + "/data/admin-token");
  EXPECT_EQ(Read(*path), "pwt_secret\n");
  EXPECT_EQ(Mode(*path), 0600u);
  EXPECT_EQ(Mode(dir_ + "/data"), 0700u);  // made by it
}

TEST_F(AdminTokenFileTest, ReplacesAnOlderFileAndDoesNotWriteThroughALink) {
  const std::string path = dir_ + "/admin-token";
  const std::string elsewhere = dir_ + "/elsewhere";
  std::ofstream(elsewhere) << "keep\n";
  ::chmod(elsewhere.c_str(), 0644);
  ASSERT_EQ(::symlink(elsewhere.c_str(), path.c_str()), 0);
  auto written = WriteAdminTokenFile(dir_, "pwt_new");
  ASSERT_TRUE(written.has_value()) << written.error().ToString();
  EXPECT_EQ(Read(elsewhere), "keep\n");
  EXPECT_FALSE(fs::is_symlink(path));
  EXPECT_EQ(Read(path), "pwt_new\n");
  EXPECT_EQ(Mode(path), 0600u);
}

TEST_F(AdminTokenFileTest, AFailureNamesThePath) {
  std::ofstream(dir_ + "/file") << "x";
  auto written = WriteAdminTokenFile(dir_ + "/file", "pwt_x");  // not a directory
  ASSERT_FALSE(written.has_value());
  EXPECT_EQ(written.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(written.error().message.find(dir_ + "/file"), std::string::npos)
      << written.error().message;
}

}  // namespace
}  // namespace perfwarden::server
