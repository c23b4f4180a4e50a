// SPDX-License-Identifier: Apache-2.0
// Which CI system the runner is in, read from the variables the CI sets (GitHub Actions, GitLab
// CI, or any CI that sets CI=true): the job's URL and the pull/merge request, which the server
// shows next to a verdict, plus branch, target branch and commit as the CI sees them (useful when
// the checkout is a detached HEAD). The result feeds the upload's "ci" object.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace perfwarden::telemetry {

struct CiMetadata {
  std::string provider;  // "github", "gitlab", "ci" (another CI that sets CI=true), "" (none)
  std::string job_url;
  std::optional<std::int64_t> pr;  // the pull/merge request number, when the run is for one
  std::string branch;              // the source branch of a PR, else the branch built
  std::string target_branch;       // the branch a PR merges into; "" outside PRs
  // The commit the CI checked out. For GitHub pull_request events this is the *merge* commit
  // (refs/pull/N/merge), not the PR head; the head sha is only in the event payload
  // ($GITHUB_EVENT_PATH), not in the environment. GitLab merged-results pipelines likewise check
  // out a merge commit; extra["head_sha"] then holds the source branch's sha.
  std::string commit_sha;
  std::string repository_url;
  std::string run_id;                        // GitHub: the workflow run; GitLab: the pipeline
  std::map<std::string, std::string> extra;  // more keys for the upload's "ci" object

  bool operator==(const CiMetadata&) const = default;
};

// Returns the value of a variable, nullopt when unset. Set-but-empty variables count as unset,
// as CI systems export empty ones (GITHUB_HEAD_REF outside pull requests).
using GetEnv = std::function<std::optional<std::string>(const std::string&)>;

CiMetadata DetectCi(const GetEnv& getenv);
// The process environment (::getenv).
CiMetadata DetectCi();

// The wire's "ci" object: provider, job_url, pr, run_id, repository_url, then the extra keys.
// Branch, target branch and commit are not repeated here: they are top-level wire fields.
// Empty values are left out; no CI gives "{}".
std::string ToJson(const CiMetadata& ci);

}  // namespace perfwarden::telemetry
