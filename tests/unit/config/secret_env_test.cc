// Secrets and the suites' environment: which names config/secret_env.h treats as credentials or
// as secret-looking.
#include "config/secret_env.h"

#include <gtest/gtest.h>

#include <string>

namespace perfgate::config {
namespace {

TEST(SecretEnv, ClassifiesNames) {
  const struct {
    const char* name;
    SecretEnv want;
  } cases[] = {
      {"PERFGATE_TOKEN", SecretEnv::kCredential},
      {"PERFGATE_GITLAB_TOKEN", SecretEnv::kCredential},
      {"PERFGATE_ADMIN_TOKEN", SecretEnv::kCredential},
      {"PERFGATE_DATABASE_URL", SecretEnv::kCredential},
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
      {"PERFGATE_CONFIG", SecretEnv::kNone},
      {"PERFGATE_TESTBED", SecretEnv::kNone},
      {"PERFGATE_BASELINE_CACHE", SecretEnv::kNone},
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

}  // namespace
}  // namespace perfgate::config
