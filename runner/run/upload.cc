// SPDX-License-Identifier: Apache-2.0
#include "runner/run/upload.h"

#include <chrono>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/version.h"
#include "runner/git/git_repo.h"

namespace perfwarden::run {

std::string TestbedFingerprint(const telemetry::HostFingerprint& host,
                               const std::string& gpu_fingerprint_json) {
  nlohmann::json json = nlohmann::json::parse(telemetry::ToJson(host), nullptr, false);
  if (!json.is_object()) json = nlohmann::json::object();
  json.erase("hostname");
  if (!gpu_fingerprint_json.empty()) {
    nlohmann::json gpu = nlohmann::json::parse(gpu_fingerprint_json, nullptr, false);
    if (gpu.is_object()) json["gpu"] = std::move(gpu);
  }
  return json.dump();
}

Result<std::string> NewRunId() {
  unsigned char bytes[16];
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  if (!urandom.read(reinterpret_cast<char*>(bytes), sizeof bytes)) {
    return MakeError(ErrorCode::kInternal, "cannot read /dev/urandom");
  }
  bytes[6] = static_cast<unsigned char>((bytes[6] & 0x0f) | 0x40);  // version 4
  bytes[8] = static_cast<unsigned char>((bytes[8] & 0x3f) | 0x80);  // RFC 4122 variant
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 0xf];
  }
  return out;
}

std::string NowRfc3339() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[80];
  std::snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<int>(millis));
  return text;
}

Result<wire::RunUpload> BuildUpload(const config::RunnerConfig& config, const UploadInputs& in,
                                    std::vector<std::string>* warnings) {
  auto repo = git::Repository::Open(config.base_dir.string());
  if (!repo) {
    return MakeError(repo.error().code,
                     "perfwarden run measures a git commit: " + repo.error().message);
  }
  auto head = repo->Describe("HEAD");
  if (!head) return tl::unexpected(head.error());

  wire::RunUpload upload;
  auto id = NewRunId();
  if (!id) return tl::unexpected(id.error());
  upload.id = *id;
  upload.project = config.server.project;
  upload.branch = !in.branch.empty() ? in.branch : in.ci.branch;
  if (upload.branch.empty()) {
    auto branch = repo->CurrentBranch();
    if (!branch) return tl::unexpected(branch.error());
    upload.branch = *branch;
  }
  if (upload.branch.empty()) {
    return InvalidArgument(
        "HEAD is detached and no CI branch variable is set: name the branch with --branch",
        "branch");
  }
  upload.target_branch = !in.target_branch.empty()      ? in.target_branch
                         : !in.ci.target_branch.empty() ? in.ci.target_branch
                                                        : config.target_branch;
  upload.commit.sha = head->sha;
  upload.commit.parents = head->parents;
  upload.commit.time = head->time;
  upload.commit.subject = head->subject;
  upload.commit.author = head->author;

  // History for the baseline: a pull-request run lists the first-parent chain from its
  // merge-base with the target branch; a run of the target branch itself, the chain from its
  // commit's first parent (docs/wire-format.md, "ancestry").
  if (upload.branch != upload.target_branch) {
    auto base = repo->MergeBase("HEAD", upload.target_branch);
    if (base) {
      upload.merge_base = *base;
      auto chain = repo->FirstParentChain(*base, kAncestryLength);
      if (chain) upload.ancestry = *chain;
    } else if (warnings != nullptr) {
      warnings->push_back("no merge-base with " + upload.target_branch + " (" +
                          base.error().message + "); the server will find no baseline");
    }
  } else if (!head->parents.empty()) {
    auto chain = repo->FirstParentChain(head->parents.front(), kAncestryLength);
    if (chain) upload.ancestry = *chain;
  }

  upload.testbed.name = config.testbed;
  upload.testbed.fingerprint_json = TestbedFingerprint(in.host, in.gpu_fingerprint_json);
  upload.ci.provider = in.ci.provider;
  upload.ci.job_url = in.ci.job_url;
  upload.ci.pr = in.ci.pr;
  nlohmann::json extra = nlohmann::json::parse(telemetry::ToJson(in.ci), nullptr, false);
  if (extra.is_object()) {
    for (const char* key : {"provider", "job_url", "pr"}) extra.erase(key);
    if (!in.host.hostname.empty()) extra["host"] = in.host.hostname;
    upload.ci.extra_json = extra.dump();
  }
  upload.runner_version = std::string(Version());
  upload.started_at = in.started_at;
  upload.finished_at = in.finished_at;
  upload.results = in.results;
  return upload;
}

}  // namespace perfwarden::run
