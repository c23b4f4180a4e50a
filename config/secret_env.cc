// SPDX-License-Identifier: Apache-2.0
#include "config/secret_env.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

namespace perfwarden::config {
namespace {

// Exact names, compared as written (variable names are case-sensitive).
constexpr std::array<std::string_view, 23> kCredentials = {
    // perfwarden's: the runner's project token, the merge-request note's GitLab token, and the
    // server's secrets (a job that starts a server beside the runner has them).
    "PERFWARDEN_TOKEN", "PERFWARDEN_GITLAB_TOKEN", "PERFWARDEN_ADMIN_TOKEN",
    "PERFWARDEN_DATABASE_URL", "PERFWARDEN_HISTORY_WEBHOOK_URL",
    // GitHub Actions: the job's token as workflows and gh export it, the runtime token (caches,
    // artifacts) and the OIDC token request (a cloud login as the repository).
    "GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN",
    "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL",
    // GitLab CI: the job token (and its old name), the job's JWTs, the registry, deploy and
    // dependency proxy passwords, and the clone URL, which carries the job token.
    "CI_JOB_TOKEN", "CI_BUILD_TOKEN", "CI_JOB_JWT", "CI_JOB_JWT_V1", "CI_JOB_JWT_V2",
    "CI_REGISTRY_PASSWORD", "CI_DEPLOY_PASSWORD", "CI_DEPENDENCY_PROXY_PASSWORD",
    "CI_REPOSITORY_URL",
    // Azure Pipelines' job token, whose name has no separator before TOKEN.
    "SYSTEM_ACCESSTOKEN",
    // Buildkite's agent token.
    "BUILDKITE_AGENT_ACCESS_TOKEN"};

// The last words of a name that says secret: HF_TOKEN, NPM_TOKEN, AWS_SECRET_ACCESS_KEY,
// OPENAI_API_KEY, DB_PASSWORD, or the word alone (TOKEN).
constexpr std::array<std::string_view, 7> kSecretWords = {
    "TOKEN", "SECRET", "PASSWORD", "API_KEY", "ACCESS_KEY", "SECRET_KEY", "PRIVATE_KEY"};

bool SaysSecret(std::string_view name) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  const std::string_view text = upper;
  return std::any_of(kSecretWords.begin(), kSecretWords.end(), [&](std::string_view word) {
    return text == word || (text.ends_with(word) && text[text.size() - word.size() - 1] == '_');
  });
}

}  // namespace

SecretEnv ClassifyEnv(std::string_view name) {
  if (std::find(kCredentials.begin(), kCredentials.end(), name) != kCredentials.end()) {
    return SecretEnv::kCredential;
  }
  return SaysSecret(name) ? SecretEnv::kSecretLike : SecretEnv::kNone;
}

}  // namespace perfwarden::config
