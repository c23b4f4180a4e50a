// SPDX-License-Identifier: Apache-2.0
// `perfwarden alerts` through the built executable: the verbs' help, argument errors (exit 2 with
// a message naming the problem), a missing token, and exit 3 when the server is unreachable. The
// renderings of the server's answers are alerts_render_test.cc (runner/report).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/testing/shell.h"

namespace perfwarden::cli {
namespace {

bool Contains(const std::string& text, const std::string& piece) {
  return text.find(piece) != std::string::npos;
}

struct Outcome {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

std::string Binary() { return std::string(PERFWARDEN_BIN_DIR) + "/perfwarden"; }

Outcome Perfwarden(const std::string& args, const std::string& env = "") {
  const testing::ShellOutcome shell = testing::RunShell(env + " " + Binary() + " " + args);
  return {shell.exit_code, shell.output};
}

// Tests of the built executable (the build makes it before this test).
class AlertsCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(Binary())) GTEST_SKIP() << "no " << Binary();
  }
};

TEST_F(AlertsCliTest, HelpListsTheVerbs) {
  Outcome o = Perfwarden("alerts --help");
  EXPECT_EQ(o.exit_code, 0) << o.out;
  for (const char* verb : {"list", "show", "ack", "resolve", "false-positive", "reopen"}) {
    EXPECT_TRUE(Contains(o.out, verb)) << verb << "\n" << o.out;
  }
  o = Perfwarden("alerts list --help");
  EXPECT_EQ(o.exit_code, 0) << o.out;
  for (const char* flag : {"--state", "--kind", "--branch", "--testbed", "--suite", "--benchmark",
                           "--metric", "--limit", "--all", "--format", "--config"}) {
    EXPECT_TRUE(Contains(o.out, flag)) << flag << "\n" << o.out;
  }
  o = Perfwarden("alerts ack --help");
  EXPECT_EQ(o.exit_code, 0) << o.out;
  EXPECT_TRUE(Contains(o.out, "--note")) << o.out;
  EXPECT_TRUE(Contains(Perfwarden("--help").out, "alerts"));
}

TEST_F(AlertsCliTest, UsageErrorsExitTwo) {
  struct Case {
    std::string args;
    std::string expect;
  };
  const Case cases[] = {
      {"alerts", "needs a verb: list, show"},
      {"alerts list extra", "extra"},
      {"alerts frobnicate", "unknown alerts verb 'frobnicate' (available: list"},
      {"alerts show notanumber", "'notanumber' is not an alert id"},
      {"alerts show -- -3", "'-3' is not an alert id"},
      {"alerts show 0", "'0' is not an alert id"},
      {"alerts ack 12abc --note x", "'12abc' is not an alert id"},
      {"alerts show", "ID"},
      {"alerts resolve", "ID"},
      {"alerts list --state closed", "--state"},
      {"alerts list --kind slower", "--kind"},
      {"alerts list --limit 0", "--limit"},
      {"alerts list --format xml", "--format"},
      {"alerts list --config /nonexistent/perfwarden.yaml", "/nonexistent/perfwarden.yaml"},
      {"alerts show 12 --config /nonexistent/perfwarden.yaml", "/nonexistent/perfwarden.yaml"},
  };
  for (const auto& c : cases) {
    Outcome o = Perfwarden(c.args);
    EXPECT_EQ(o.exit_code, 2) << c.args << "\n" << o.out;
    EXPECT_TRUE(Contains(o.out, c.expect)) << c.args << "\n" << o.out;
  }
}

// A perfwarden.yaml naming a server, in a directory removed afterwards.
class ConfigFile {
 public:
  explicit ConfigFile(const std::string& url) {
    dir_ = std::filesystem::temp_directory_path() /
           ("alerts_cli_" + std::to_string(getpid()) + "_" + std::to_string(counter_++));
    std::filesystem::create_directories(dir_);
    std::ofstream(path()) << "version: 1\nserver:\n  url: " << url
                          << "\n  project: demo\nsuites:\n"
                             "  - {name: core, type: gbench, binary: bench/core}\n";
  }
  ~ConfigFile() { std::filesystem::remove_all(dir_); }
  std::string path() const { return (dir_ / "perfwarden.yaml").string(); }

 private:
  static inline int counter_ = 0;
  std::filesystem::path dir_;
};

TEST_F(AlertsCliTest, MissingTokenIsAUsageError) {
  ConfigFile config("http://127.0.0.1:9");
  Outcome o = Perfwarden("alerts list --config " + config.path(), "env -u PERFWARDEN_TOKEN");
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_TRUE(Contains(o.out, "perfwarden: error: PERFWARDEN_TOKEN")) << o.out;
}

TEST_F(AlertsCliTest, UnreachableServerExitsThree) {
  // Port 9 (discard) on loopback: refused at once; the retries' waits are the test's cost.
  ConfigFile config("http://127.0.0.1:9");
  Outcome o = Perfwarden("alerts show 12 --config " + config.path(), "PERFWARDEN_TOKEN=pwt_test");
  EXPECT_EQ(o.exit_code, 3) << o.out;
  EXPECT_TRUE(Contains(o.out, "perfwarden: error:")) << o.out;
}

}  // namespace
}  // namespace perfwarden::cli
