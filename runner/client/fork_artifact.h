// SPDX-License-Identifier: Apache-2.0
// The fork artifact: what the untrusted job of a fork's pull request (no token, no server) hands
// the trusted job that posts it (docs/ci-forks.md). A directory of four files: run.json (the run
// as it would be posted), paired.json (the paired measurement), verdict.json (the verdict judged
// where it was measured; informative) and manifest.json (project, run id, head commit, branch,
// pull request, runner version and the SHA-256 of each file). Written by `perfwarden gate --no-post
// --artifact DIR`; read by `perfwarden publish DIR`, which trusts nothing in it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "wire/paired.h"
#include "wire/run_upload.h"
#include "wire/verdict.h"

namespace perfwarden::client {

inline constexpr char kArtifactFormat[] = "perfwarden-fork-artifact/1";
inline constexpr char kArtifactManifest[] = "manifest.json";
inline constexpr char kArtifactRun[] = "run.json";
inline constexpr char kArtifactPaired[] = "paired.json";
inline constexpr char kArtifactVerdict[] = "verdict.json";

struct ArtifactManifest {
  std::string format = kArtifactFormat;
  std::string project;
  std::string run_id;
  std::string commit;  // the run's head commit, 40 lowercase hex
  std::string branch;
  std::optional<int64_t> pr;  // the pull request, when the CI environment named one
  std::string runner_version;
  std::map<std::string, std::string> files;  // run.json, paired.json, verdict.json -> SHA-256
};

struct Artifact {
  ArtifactManifest manifest;
  wire::RunUpload run;
  wire::PairedMeasurement measurement;
  wire::Verdict verdict;  // judged by the job that measured; never what is posted or rendered
};

// Writes the three files and then manifest.json (with their hashes) into `dir`, created when
// missing; files of an earlier artifact there are replaced. kUnavailable naming the path when a
// file cannot be written.
Result<ArtifactManifest> WriteArtifact(const std::filesystem::path& dir, const Artifact& artifact,
                                       const std::string& runner_version);

struct ArtifactLimits {
  uintmax_t max_file_bytes = uintmax_t{64} << 20;  // the server's default body limit
  uintmax_t max_manifest_bytes = uintmax_t{64} << 10;
};

// What the trusted job knows without the artifact.
struct ArtifactExpectations {
  std::string project;        // perfwarden.yaml's server.project
  std::string commit;         // the head commit the CI event names (40 hex, any case)
  std::optional<int64_t> pr;  // the pull request the event names; nullopt: not checked
  // Branches a run of the artifact may not name (perfwarden.yaml's target_branch): the server
  // refuses them to an ingest-pr token anyway; refused here too, whatever the token.
  std::vector<std::string> refused_branches;
};

// Reads and verifies the artifact in `dir`. The manifest: a JSON object of exactly the known keys
// (format, project, run_id, commit, branch, pr, runner_version, files), `files` exactly run.json,
// paired.json and verdict.json (a name with a path separator or "..": refused as such). Each
// file: a regular file (not a link) of at most max_file_bytes, whose SHA-256 is the manifest's,
// decoded by the strict wire decoders. Then the manifest, the run, the measurement and the
// verdict must agree (project, run id, commit, branch, pull request, testbed) and match `expect`;
// the measurement may not amend a verdict. kInvalidArgument (field "artifact") saying which file
// and what failed, kNotFound when the directory or a file is missing.
Result<Artifact> ReadArtifact(const std::filesystem::path& dir, const ArtifactExpectations& expect,
                              const ArtifactLimits& limits = {});

}  // namespace perfwarden::client
