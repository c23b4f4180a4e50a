// SPDX-License-Identifier: Apache-2.0
// runner/run/process.h: the environment a real child (/usr/bin/env) inherits. The credentials
// (PERFWARDEN_TOKEN, GITHUB_TOKEN, CI_JOB_TOKEN, GitLab's clone URL) never reach it, not even when
// named in pass_env; a secret-looking variable reaches it only when passed; the rest (PATH,
// HOME) and what `env` sets reach it as before.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>

#include "runner/run/process.h"

namespace perfwarden::run {
namespace {

namespace fs = std::filesystem;

// The child's environment as NAME -> VALUE.
std::map<std::string, std::string> ChildEnvironment(ProcessOptions options) {
  const fs::path out =
      fs::temp_directory_path() / ("child_env_test-" + std::to_string(::getpid()) + ".txt");
  options.argv = {"/usr/bin/env"};
  options.output_file = out;
  auto result = RunProcess(options);
  EXPECT_TRUE(result) << result.error().ToString();
  if (result) {
    EXPECT_EQ(result->exit_code, 0);
  }
  std::map<std::string, std::string> env;
  std::istringstream lines(FileText(out));
  fs::remove(out);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t eq = line.find('=');
    if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return env;
}

class ChildEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const auto& [name, value] : kSet) ::setenv(name, value, 1);
  }
  void TearDown() override {
    for (const auto& [name, value] : kSet) ::unsetenv(name);
  }

  static constexpr std::pair<const char*, const char*> kSet[] = {
      {"PERFWARDEN_TOKEN", "pwt_s3kr1t"},
      {"GITHUB_TOKEN", "ghs_s3kr1t"},
      {"CI_JOB_TOKEN", "job_s3kr1t"},
      {"CI_REPOSITORY_URL", "https://gitlab-ci-token:job_s3kr1t@gitlab.example/g/p.git"},
      {"HF_TOKEN", "hf_passed"},
      {"OPENAI_API_KEY", "sk_not_passed"},
      {"CHILD_ENV_TEST_PLAIN", "plain"},
  };
};

TEST_F(ChildEnvTest, CredentialsNeverReachTheChild) {
  ProcessOptions options;
  options.pass_env = {"HF_TOKEN", "GITHUB_TOKEN"};  // the credential is not passed all the same
  options.env = {{"SET_BY_SUITE", "1"}};
  const auto env = ChildEnvironment(options);
  ASSERT_FALSE(env.empty());
  for (const char* name : {"PERFWARDEN_TOKEN", "GITHUB_TOKEN", "CI_JOB_TOKEN", "CI_REPOSITORY_URL",
                           "OPENAI_API_KEY"}) {
    EXPECT_EQ(env.count(name), 0u) << name << "=" << env.at(name);
  }
  for (const auto& [name, value] : env) {
    EXPECT_EQ(value.find("s3kr1t"), std::string::npos) << name << "=" << value;
  }
  EXPECT_EQ(env.at("HF_TOKEN"), "hf_passed");
  EXPECT_EQ(env.at("CHILD_ENV_TEST_PLAIN"), "plain");
  EXPECT_EQ(env.at("SET_BY_SUITE"), "1");
  ASSERT_NE(std::getenv("PATH"), nullptr);
  EXPECT_EQ(env.at("PATH"), std::getenv("PATH"));
  if (const char* home = std::getenv("HOME"); home != nullptr) {
    EXPECT_EQ(env.at("HOME"), home);
  }
}

TEST_F(ChildEnvTest, SecretLookingVariablesNeedPassEnv) {
  const auto env = ChildEnvironment(ProcessOptions{});
  EXPECT_EQ(env.count("HF_TOKEN"), 0u);
  EXPECT_EQ(env.count("OPENAI_API_KEY"), 0u);
  EXPECT_EQ(env.at("CHILD_ENV_TEST_PLAIN"), "plain");
}

TEST_F(ChildEnvTest, WhatTheSuiteSetsIsNotFiltered) {
  // A value written in perfwarden.yaml is the repository's, not a secret of the job.
  ProcessOptions options;
  options.env = {{"NPM_TOKEN", "dummy-from-yaml"}};
  const auto env = ChildEnvironment(options);
  EXPECT_EQ(env.at("NPM_TOKEN"), "dummy-from-yaml");
}

}  // namespace
}  // namespace perfwarden::run
