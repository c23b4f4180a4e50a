// SPDX-License-Identifier: Apache-2.0
// Assembling the run upload (wire format v1) that `perfwarden run` spools and posts: the results,
// the commit and its history from git (sha, parents, branch, merge-base with the target branch
// and the first-parent ancestry the server picks a baseline from), the testbed fingerprint and
// the CI metadata.
#pragma once

#include <string>
#include <vector>

#include "config/runner_config.h"
#include "core/result.h"
#include "runner/telemetry/ci_env.h"
#include "runner/telemetry/host.h"
#include "wire/run_upload.h"

namespace perfwarden::run {

// How many first-parent ancestors an upload lists for baseline selection.
inline constexpr size_t kAncestryLength = 100;

struct UploadInputs {
  std::string branch;         // "" = from CI, else git's current branch
  std::string target_branch;  // "" = from CI, else perfwarden.yaml's target_branch
  telemetry::CiMetadata ci;
  telemetry::HostFingerprint host;
  std::string gpu_fingerprint_json;  // telemetry::ToJson(GpuFingerprint), "" without NVML
  std::string started_at;
  std::string finished_at;
  std::vector<wire::ResultSeries> results;
};

// Messages worth showing (e.g. a shallow clone without a merge-base) go to `warnings`.
Result<wire::RunUpload> BuildUpload(const config::RunnerConfig& config, const UploadInputs& in,
                                    std::vector<std::string>* warnings);

// The fingerprint that names a testbed: the host's stable properties (no host name: CI runners
// are ephemeral) and, on a GPU host, its GPUs under "gpu" (a new driver or power limit is a new
// testbed, so its series start afresh), as a JSON object text.
std::string TestbedFingerprint(const telemetry::HostFingerprint& host,
                               const std::string& gpu_fingerprint_json = "");

// A random (version 4) UUID in canonical lowercase form.
Result<std::string> NewRunId();
// Now, as RFC 3339 UTC with milliseconds.
std::string NowRfc3339();

}  // namespace perfwarden::run
