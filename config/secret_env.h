// SPDX-License-Identifier: Apache-2.0
// Which environment variables hold secrets, in one list: the runner starts builds, benchmarks and
// training runs that a pull request controls, so they inherit its environment without them
// (runner/run/process.h), and the perfwarden.yaml reader checks a suite's `pass_env` against it
// (docs/config.md, "Secrets and the suites' environment").
#pragma once

#include <string_view>

namespace perfwarden::config {

enum class SecretEnv {
  kNone,
  // perfwarden's own secrets and the CI job's credentials (GITHUB_TOKEN, CI_JOB_TOKEN, ...): never
  // given to a suite, not even through pass_env.
  kCredential,
  // A name that says secret (*_TOKEN, *_SECRET, *_PASSWORD, *_API_KEY, *_ACCESS_KEY,
  // *_SECRET_KEY, *_PRIVATE_KEY, any case): dropped unless the suite's pass_env names it.
  kSecretLike,
};

SecretEnv ClassifyEnv(std::string_view name);

}  // namespace perfwarden::config
