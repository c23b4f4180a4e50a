// SPDX-License-Identifier: Apache-2.0
// Secrets and the suites' environment: which names config/secret_env.h treats as credentials or
// as secret-looking, a suite's pass_env as perfwarden.yaml declares it (and every way to get it
// wrong), and HideCredentials, which takes the token out of the process environment while
// ProcessEnvironment (and so LoadRunnerConfig) still answers it.
#include "config/secret_env.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/environment.h"
#include "config/runner_config.h"

namespace perfwarden::config {
namespace {

namespace fs = std::filesystem;

TEST(SecretEnv, ClassifiesNames) {
  const struct {
    const char* name;
    SecretEnv want;
  } cases[] = {
      {"PERFWARDEN_TOKEN", SecretEnv::kCredential},
      {"PERFWARDEN_GITLAB_TOKEN", SecretEnv::kCredential},
      {"PERFWARDEN_ADMIN_TOKEN", SecretEnv::kCredential},
      {"PERFWARDEN_DATABASE_URL", SecretEnv::kCredential},
      {"GITHUB_TOKEN", SecretEnv::kCredential},
      {"GH_TOKEN", SecretEnv::kCredential},
      {"GH_ENTERPRISE_TOKEN", SecretEnv::kCredential},
      {"ACTIONS_RUNTIME_TOKEN", SecretEnv::kCredential},
      {"ACTIONS_ID_TOKEN_REQUEST_TOKEN", SecretEnv::kCredential},
      {"ACTIONS_ID_TOKEN_REQUEST_URL", SecretEnv::kCredential},
      {"CI_JOB_TOKEN", SecretEnv::kCredential},
      {"CI_JOB_JWT", SecretEnv::kCredential},
      {"CI_JOB_JWT_V2", SecretEnv::kCredential},
      {"CI_REGISTRY_PASSWORD", SecretEnv::kCredential},
      {"CI_DEPLOY_PASSWORD", SecretEnv::kCredential},
      {"CI_REPOSITORY_URL", SecretEnv::kCredential},
      {"SYSTEM_ACCESSTOKEN", SecretEnv::kCredential},
      {"HF_TOKEN", SecretEnv::kSecretLike},
      {"hf_token", SecretEnv::kSecretLike},
      {"NPM_TOKEN", SecretEnv::kSecretLike},
      {"TOKEN", SecretEnv::kSecretLike},
      {"MY_SECRET", SecretEnv::kSecretLike},
      {"DB_PASSWORD", SecretEnv::kSecretLike},
      {"OPENAI_API_KEY", SecretEnv::kSecretLike},
      {"AWS_SECRET_ACCESS_KEY", SecretEnv::kSecretLike},
      {"DJANGO_SECRET_KEY", SecretEnv::kSecretLike},
      {"SIGNING_PRIVATE_KEY", SecretEnv::kSecretLike},
      {"PATH", SecretEnv::kNone},
      {"HOME", SecretEnv::kNone},
      {"PERFWARDEN_CONFIG", SecretEnv::kNone},
      {"PERFWARDEN_TESTBED", SecretEnv::kNone},
      {"PERFWARDEN_BASELINE_CACHE", SecretEnv::kNone},
      {"CI", SecretEnv::kNone},
      {"GITHUB_SHA", SecretEnv::kNone},
      {"CI_JOB_ID", SecretEnv::kNone},
      {"ACTIONS_CACHE_URL", SecretEnv::kNone},
      {"TOKENIZERS_PARALLELISM", SecretEnv::kNone},
      {"MAX_TOKENS", SecretEnv::kNone},
      {"HFTOKEN", SecretEnv::kNone},
      {"AWS_ACCESS_KEY_ID", SecretEnv::kNone},
      {"github_token", SecretEnv::kSecretLike},  // not the runner's credential, but says secret
  };
  for (const auto& c : cases) {
    EXPECT_EQ(ClassifyEnv(c.name), c.want) << c.name;
  }
}

Result<RunnerConfig> ParseSuite(const std::string& suite) {
  return ParseRunnerConfig("version: 1\nsuites:\n" + suite, "perfwarden.yaml", "/repo");
}

TEST(SecretEnv, PassEnvIsReadForEveryType) {
  auto config = ParseSuite(
      "  - {name: a, type: gbench, binary: b, pass_env: [HF_TOKEN, OPENAI_API_KEY]}\n"
      "  - {name: c, type: command, command: x, pass_env: [HF_TOKEN], env: {A: '1'}}\n"
      "  - {name: t, type: train, command: y}\n");
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->suites[0].pass_env, (std::vector<std::string>{"HF_TOKEN", "OPENAI_API_KEY"}));
  EXPECT_EQ(config->suites[1].pass_env, std::vector<std::string>{"HF_TOKEN"});
  EXPECT_TRUE(config->suites[2].pass_env.empty());
}

TEST(SecretEnv, PassEnvRejectsCredentialsBadNamesAndClashes) {
  const struct {
    std::string suite;
    std::string message;
  } cases[] = {
      {"  - {name: a, type: gbench, binary: b, pass_env: [HF_TOKEN, GITHUB_TOKEN]}\n",
       "perfwarden.yaml:3:61: suites[0].pass_env[1]: GITHUB_TOKEN is perfwarden's or the CI job's "
       "credential and never reaches a suite"},
      {"  - {name: a, type: gbench, binary: b, pass_env: [PERFWARDEN_TOKEN]}\n",
       "perfwarden.yaml:3:51: suites[0].pass_env[0]: PERFWARDEN_TOKEN is perfwarden's"},
      {"  - {name: a, type: command, command: x, pass_env: [CI_JOB_TOKEN]}\n",
       "perfwarden.yaml:3:53: suites[0].pass_env[0]: CI_JOB_TOKEN is perfwarden's"},
      {"  - {name: a, type: gbench, binary: b, pass_env: ['HF-TOKEN']}\n",
       "perfwarden.yaml:3:51: suites[0].pass_env[0]: bad variable name \"HF-TOKEN\""},
      {"  - {name: a, type: gbench, binary: b, env: {HF_TOKEN: x}, pass_env: [HF_TOKEN]}\n",
       "perfwarden.yaml:3:71: suites[0].pass_env[0]: HF_TOKEN is set by env too: keep one"},
      {"  - {name: a, type: gbench, binary: b, pass_env: HF_TOKEN}\n",
       "perfwarden.yaml:3:50: suites[0].pass_env: expected a list of strings"},
      {"  - {name: a, type: gbench, binary: b, pass_envs: [HF_TOKEN]}\n",
       "perfwarden.yaml:3:40: suites[0].pass_envs: unknown key (allowed: name, type, build, "
       "repetitions, env, pass_env, timeout, binary, filter, min_time, args, command, warmup)"},
  };
  for (const auto& c : cases) {
    auto config = ParseSuite(c.suite);
    ASSERT_FALSE(config) << c.suite;
    EXPECT_EQ(config.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(config.error().message.rfind(c.message, 0), 0u)
        << c.suite << "\n got: " << config.error().message;
  }
}

TEST(SecretEnv, HideCredentialsKeepsThemForTheConfigOnly) {
  ::setenv("PERFWARDEN_TOKEN", "pwt_hidden", 1);
  ::setenv("GITHUB_TOKEN", "ghs_hidden", 1);
  ::setenv("HF_TOKEN", "hf_kept", 1);
  EXPECT_EQ(HideCredentials(), 2);
  EXPECT_EQ(std::getenv("PERFWARDEN_TOKEN"), nullptr);
  EXPECT_EQ(std::getenv("GITHUB_TOKEN"), nullptr);
  ASSERT_NE(std::getenv("HF_TOKEN"), nullptr);  // secret-looking: a suite may pass it on
  EXPECT_STREQ(std::getenv("HF_TOKEN"), "hf_kept");
  const EnvLookup env = ProcessEnvironment();
  EXPECT_EQ(env("PERFWARDEN_TOKEN"), "pwt_hidden");
  EXPECT_EQ(env("GITHUB_TOKEN"), "ghs_hidden");
  EXPECT_EQ(env("HF_TOKEN"), "hf_kept");
  EXPECT_EQ(env("PERFWARDEN_NO_SUCH_VARIABLE"), std::nullopt);
  EXPECT_EQ(HideCredentials(), 0);  // nothing left to hide; what was hidden stays answered
  EXPECT_EQ(env("PERFWARDEN_TOKEN"), "pwt_hidden");

  // Every verb loads perfwarden.yaml this way, long after main hid the token.
  const fs::path file = fs::temp_directory_path() /
                        ("secret_env_test-" + std::to_string(::getpid()) + "-perfwarden.yaml");
  std::ofstream(file) << "version: 1\nserver: {url: 'https://perf.example', project: p}\n"
                         "suites:\n  - {name: a, type: command, command: x}\n";
  auto config = LoadRunnerConfig(file.string());
  fs::remove(file);
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->server.token, "pwt_hidden");
  ::unsetenv("HF_TOKEN");
}

}  // namespace
}  // namespace perfwarden::config
