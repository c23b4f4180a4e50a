// SPDX-License-Identifier: Apache-2.0
// The `perfwarden` executable as CI uses it: exit codes (0 pass, 1 regression, 2 usage or
// input error), the three output formats, --help, and error messages that name the problem.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/version.h"

namespace perfwarden {
namespace {

struct Outcome {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

Outcome Perfwarden(const std::string& args) {
  std::string command = std::string(PERFWARDEN_BIN_DIR) + "/perfwarden " + args + " 2>&1";
  Outcome outcome;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return outcome;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    outcome.out.append(buffer.data(), n);
  int status = pclose(pipe);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

std::string Sample(const std::string& name) {
  return std::string(PERFWARDEN_SOURCE_DIR) + "/bench/workloads/gbench_sample/results/" + name;
}

TEST(CliTest, BundledDemoFindsThePlantedRegression) {
  Outcome o = Perfwarden("compare " + Sample("base.json") + " " + Sample("contender.json"));
  EXPECT_EQ(o.exit_code, 1) << o.out;
  EXPECT_NE(o.out.find("REGRESSION"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("BM_Sort/16384"), std::string::npos) << o.out;
}

TEST(CliTest, SameFileOnBothSidesPasses) {
  Outcome o = Perfwarden("compare " + Sample("base.json") + " " + Sample("base.json"));
  EXPECT_EQ(o.exit_code, 0) << o.out;
  EXPECT_EQ(o.out.find("REGRESSION"), std::string::npos) << o.out;
}

TEST(CliTest, JsonAndMarkdownFormats) {
  Outcome o =
      Perfwarden("compare --format json " + Sample("base.json") + " " + Sample("contender.json"));
  EXPECT_EQ(o.exit_code, 1);
  auto json = nlohmann::json::parse(o.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << o.out;
  EXPECT_EQ(json["metric"], "real_time");
  EXPECT_EQ(json["benchmarks"].size(), 12u);
  int regressions = 0;
  for (const auto& b : json["benchmarks"]) regressions += b["verdict"] == "REGRESSION";
  EXPECT_EQ(regressions, 1);

  o = Perfwarden("compare --format markdown --metric cpu_time " + Sample("base.json") + " " +
                 Sample("contender.json"));
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.out.find("| Benchmark |"), std::string::npos) << o.out;
}

TEST(CliTest, HelpAndVersion) {
  Outcome o = Perfwarden("--help");
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_NE(o.out.find("compare"), std::string::npos);
  o = Perfwarden("compare --help");
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_NE(o.out.find("--threshold"), std::string::npos);
  o = Perfwarden("--version");
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_EQ(o.out, "perfwarden " + std::string(Version()) + "\n");
}

// The version is baked in from git at build time (cmake/version.cmake): in a git checkout it is
// `git describe --tags --always --dirty`, not the project() fallback.
TEST(CliTest, VersionIsGitDescribeOfTheSourceTree) {
  const std::string git = "git -C " + std::string(PERFWARDEN_SOURCE_DIR);
  if (std::system((git + " rev-parse --git-dir >/dev/null 2>&1").c_str()) != 0) {
    // A tarball build: the fallback.
    EXPECT_EQ(Version(), PERFWARDEN_PROJECT_VERSION);
    return;
  }
  FILE* pipe = popen((git + " describe --tags --always 2>/dev/null").c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::array<char, 256> line{};
  const bool read = std::fgets(line.data(), static_cast<int>(line.size()), pipe) != nullptr;
  pclose(pipe);
  ASSERT_TRUE(read);
  std::string described(line.data());
  while (!described.empty() && described.back() == '\n') described.pop_back();
  // "-dirty" may follow (files edited since): the describe of HEAD is the prefix.
  EXPECT_EQ(std::string(Version()).rfind(described, 0), 0u)
      << "baked " << Version() << ", git describes HEAD as " << described;
  EXPECT_EQ(Perfwarden("--version").out, "perfwarden " + std::string(Version()) + "\n");
}

TEST(CliTest, UsageAndInputErrorsExitTwo) {
  struct Case {
    std::string args;
    std::string expect;  // a piece of the message
  };
  const std::string base = Sample("base.json");
  const std::string truncated = (std::filesystem::temp_directory_path() /
                                 ("truncated_for_cli_" + std::to_string(getpid()) + ".json"))
                                    .string();
  {
    std::ofstream out(truncated);
    out << "{\"benchmarks\": [{\"name\": \"BM_A\", \"real_time\": 1";
  }
  const Case cases[] = {
      {"", "subcommand"},
      {"frobnicate", "frobnicate"},
      {"compare " + base, "contender"},
      {"compare /nonexistent/a.json " + base, "/nonexistent/a.json"},
      {"compare " + truncated + " " + base,
       "truncated_for_cli_" + std::to_string(getpid()) + ".json:1:"},
      {"compare --threshold 5 " + base + " " + base, "ambiguous"},
      {"compare --threshold abc " + base + " " + base, "threshold"},
      {"compare --alpha 2 " + base + " " + base, "alpha"},
      {"compare --format xml " + base + " " + base, "format"},
      {"compare --metric no_such_counter " + base + " " + base, "no_such_counter"},
      {"compare --filter '(' " + base + " " + base, "regular expression"},
  };
  for (const auto& c : cases) {
    Outcome o = Perfwarden(c.args);
    EXPECT_EQ(o.exit_code, 2) << c.args << "\n" << o.out;
    EXPECT_NE(o.out.find(c.expect), std::string::npos) << c.args << "\n" << o.out;
  }
  std::remove(truncated.c_str());
}

}  // namespace
}  // namespace perfwarden
