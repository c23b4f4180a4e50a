// SPDX-License-Identifier: Apache-2.0
// Logging: secrets are redacted in plain and JSON output, JSON lines are valid and escaped,
// levels filter, and RedactSecrets handles each kind of secret.
#include "config/logging.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace perfwarden::config {
namespace {

constexpr char kToken[] = "pwt_abcdefghijklmnopqrstuvwxyzABCDEFGHIJK-_0123";

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class LoggingTest : public ::testing::Test {
 protected:
  // The default logger must not keep pointing at this test's stream.
  void TearDown() override { ASSERT_TRUE(SetupLogging(LogConfig{})); }

  std::ostringstream out_;
};

TEST_F(LoggingTest, PlainRedactsTokens) {
  ASSERT_TRUE(SetupLogging({LogLevel::kInfo, LogFormat::kPlain}, out_));
  spdlog::info("request with Authorization: Bearer {}", kToken);
  spdlog::warn("created token {} for project x", kToken);
  spdlog::error("cannot connect to host=db user=pg password=hunter2 dbname=perfwarden");
  const auto lines = Lines(out_.str());
  ASSERT_EQ(lines.size(), 3u) << out_.str();
  EXPECT_EQ(out_.str().find(kToken), std::string::npos) << out_.str();
  EXPECT_EQ(out_.str().find("hunter2"), std::string::npos) << out_.str();
  EXPECT_TRUE(lines[0].ends_with(" [info] request with Authorization: Bearer ***")) << lines[0];
  EXPECT_TRUE(lines[1].ends_with(" [warn] created token *** for project x")) << lines[1];
  EXPECT_NE(
      lines[2].find("[error] cannot connect to host=db user=pg password=*** dbname=perfwarden"),
      std::string::npos)
      << lines[2];
  // RFC 3339 UTC timestamp first.
  EXPECT_EQ(lines[0][4], '-');
  EXPECT_EQ(lines[0][10], 'T');
  EXPECT_EQ(lines[0][23], 'Z') << lines[0];
}

TEST_F(LoggingTest, JsonRedactsTokensAndIsValid) {
  ASSERT_TRUE(SetupLogging({LogLevel::kDebug, LogFormat::kJson}, out_));
  spdlog::debug("auth header \"Bearer {}\"\n\tnext line", kToken);
  spdlog::info("dsn postgresql://perfwarden:s3cret@localhost:5432/perfwarden");
  spdlog::info("bad bytes \xff\xfe and a control \x01 and \xc3\xa9");
  const auto lines = Lines(out_.str());
  ASSERT_EQ(lines.size(), 3u) << out_.str();
  EXPECT_EQ(out_.str().find(kToken), std::string::npos) << out_.str();
  EXPECT_EQ(out_.str().find("s3cret"), std::string::npos) << out_.str();

  const auto first = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(first.size(), 3u);
  EXPECT_EQ(first.at("level"), "debug");
  EXPECT_EQ(first.at("msg"), "auth header \"Bearer ***\"\n\tnext line");
  EXPECT_TRUE(first.at("ts").get<std::string>().ends_with("Z"));

  EXPECT_EQ(nlohmann::json::parse(lines[1]).at("msg"),
            "dsn postgresql://perfwarden:***@localhost:5432/perfwarden");
  // Invalid UTF-8 becomes U+FFFD; valid multi-byte characters pass through.
  EXPECT_EQ(nlohmann::json::parse(lines[2]).at("msg"),
            "bad bytes \xef\xbf\xbd\xef\xbf\xbd and a control \x01 and \xc3\xa9");
}

TEST_F(LoggingTest, LevelFilters) {
  ASSERT_TRUE(SetupLogging({LogLevel::kWarn, LogFormat::kJson}, out_));
  spdlog::info("hidden");
  spdlog::warn("shown");
  spdlog::critical("also shown");
  const auto lines = Lines(out_.str());
  ASSERT_EQ(lines.size(), 2u) << out_.str();
  EXPECT_EQ(nlohmann::json::parse(lines[0]).at("level"), "warn");
  EXPECT_EQ(nlohmann::json::parse(lines[1]).at("level"), "critical");
}

TEST_F(LoggingTest, PlainKeepsOneRecordPerLine) {
  ASSERT_TRUE(SetupLogging({LogLevel::kInfo, LogFormat::kPlain}, out_));
  spdlog::info("line one\nfake [error] line two");
  const auto lines = Lines(out_.str());
  ASSERT_EQ(lines.size(), 1u) << out_.str();
  EXPECT_TRUE(lines[0].ends_with("line one\\nfake [error] line two")) << lines[0];
}

TEST(RedactSecrets, Matrix) {
  const std::string token = kToken;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"nothing secret here", "nothing secret here"},
      {"", ""},
      {"Bearer " + token, "Bearer ***"},
      {"authorization: bearer abc.def-ghi", "authorization: bearer ***"},
      {"BEARER   xyz", "BEARER   ***"},
      {"Bearer", "Bearer"},
      {"unbearable xyz", "unbearable xyz"},
      {"token=" + token + ", next", "token=***, next"},
      {"[" + token + "]", "[***]"},
      {"tokens start with pwt_", "tokens start with pwt_"},
      {"host=db password=hunter2 user=x", "host=db password=*** user=x"},
      {"host=db password='a b\\'c' user=x", "host=db password=*** user=x"},
      {"PGPASSWORD=hunter2 psql", "PGPASSWORD=*** psql"},
      {"postgresql://db/x?user=u&password=hunter2&sslmode=require",
       "postgresql://db/x?user=u&password=***&sslmode=require"},
      {"postgresql://user:pa:ss@host:5432/db", "postgresql://user:***@host:5432/db"},
      {"postgres://user@host/db", "postgres://user@host/db"},
      {"http://example.com/a@b", "http://example.com/a@b"},
      {"password=", "password="},
  };
  for (const auto& [input, expected] : cases) {
    EXPECT_EQ(RedactSecrets(input), expected) << input;
  }
}

}  // namespace
}  // namespace perfwarden::config
