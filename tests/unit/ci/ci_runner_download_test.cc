// SPDX-License-Identifier: Apache-2.0
// The CI templates' runner install (docs/ci.md, "Installing the runner in CI"), as the CI would
// run it, without network: the GitHub action's install step and the GitLab job's prelude fetch a
// runner tarball (a file:// URL through the real curl, or a GitHub release URL through the curl
// stand-in), check its sha256, extract it, and the job's `perfwarden run` and `perfwarden gate` are
// then the extracted perfwarden's, not one on PATH. A wrong or missing sha256 (refused; "skip"
// runs unchecked with a warning), a missing release and a perfwarden-path / PERFWARDEN_BIN that
// wins over the download are covered too.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "tests/unit/ci/ci_shell.h"

namespace perfwarden {
namespace {

using namespace perfwarden::ci_test;  // NOLINT(build/namespaces): the shared fixture

class CiRunnerDownloadTest : public CiShellTest {
 protected:
  void SetUp() override {
    CiShellTest::SetUp();
    // The only perfwarden is the tarball's: one on PATH would hide a job that ignored the download.
    fs::remove(dir_ / "bin" / "perfwarden");
    // The tarball's perfwarden: the stand-in, which also answers --version and logs where it ran.
    const fs::path top = dir_ / "make" / "perfwarden-runner-v9.9.9";
    fs::create_directories(top / "bin");
    std::string fake = kFakePerfwarden;
    fake.insert(fake.find('\n') + 1,
                "[ \"${1:-}\" = --version ] && { echo 'perfwarden v9.9.9'; exit 0; }\n"
                "echo \"ran $0\" >>\"$FAKE/log\"\n");
    std::ofstream(top / "bin" / "perfwarden") << fake;
    fs::permissions(top / "bin" / "perfwarden", fs::perms::owner_all);
    tarball_ = dir_ / "perfwarden-runner-v9.9.9-linux-x86_64.tar.gz";
    Outcome made = Shell("tar -C " + Quote((dir_ / "make").string()) + " -czf " +
                         Quote(tarball_.string()) + " perfwarden-runner-v9.9.9");
    ASSERT_EQ(made.exit_code, 0) << made.output;
    Outcome sum = Shell("sha256sum " + Quote(tarball_.string()));
    ASSERT_EQ(sum.exit_code, 0) << sum.output;
    sha256_ = sum.output.substr(0, 64);
    url_ = "file://" + tarball_.string();
  }

  // The directory of the extracted perfwarden:
  // <temp>/perfwarden-runner.XXXXXX/perfwarden-runner-v9.9.9/ bin, under RUNNER_TEMP / TMPDIR
  // (dir_), never the directory the tarball was made in.
  ::testing::AssertionResult RanExtracted(const std::string& log) {
    const std::regex ran(
        "ran " + dir_.string() +
        "/perfwarden-runner\\.[A-Za-z0-9]{6}/perfwarden-runner-v9\\.9\\.9/bin/perfwarden\n");
    if (std::regex_search(log, ran)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "no run of the extracted perfwarden in:\n" << log;
  }

  fs::path tarball_;
  std::string sha256_, url_;
};

TEST_F(CiRunnerDownloadTest, TheActionInstallsTheTarballAndTheJobUsesIt) {
  Outcome o = RunAction({{"token", "pwt_secret"}, {"download-url", url_}, {"sha256", sha256_}},
                        {{"GITHUB_EVENT_NAME", "push"}});
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Contains(o.output, "sha256 " + sha256_ + " verified"));
  EXPECT_TRUE(Contains(o.output, "perfwarden v9.9.9 at "));
  const std::string path = outputs_["steps.install.outputs.perfwarden-path"];
  EXPECT_TRUE(Contains(path, "/perfwarden-runner-v9.9.9/bin/perfwarden"));
  EXPECT_EQ(path.rfind(dir_.string() + "/perfwarden-runner.", 0), 0u) << path;
  EXPECT_EQ(Read(dir_ / "github_path"), fs::path(path).parent_path().string() + "\n");
  const std::string log = Log();
  EXPECT_TRUE(Contains(log, "curl GET " + url_ + "\n"));
  EXPECT_TRUE(RanExtracted(log));
  EXPECT_TRUE(Contains(log, "perfwarden run --config perfwarden.yaml --paired\n"));
  EXPECT_TRUE(Contains(log, "perfwarden gate --config perfwarden.yaml --junit "));
  EXPECT_EQ(outputs_["steps.gate.outputs.outcome"], "pass");
}

TEST_F(CiRunnerDownloadTest, TheActionBuildsTheReleaseUrlAndInstallOnlyStopsThere) {
  // version + release-repository: the GitHub release asset (served by the curl stand-in).
  const fs::path asset = dir_ / "github/acme/perfwarden/releases/download/v9.9.9" /
                         "perfwarden-runner-v9.9.9-linux-x86_64.tar.gz";
  fs::create_directories(asset.parent_path());
  fs::copy_file(tarball_, asset);
  Outcome o = RunAction({{"token", "pwt_secret"},
                         {"version", "v9.9.9"},
                         {"release-repository", "acme/perfwarden"},
                         {"sha256", sha256_},
                         {"install-only", "true"}},
                        {{"GITHUB_EVENT_NAME", "push"}});
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_EQ(Log(),
            "curl GET https://github.com/acme/perfwarden/releases/download/v9.9.9/"
            "perfwarden-runner-v9.9.9-linux-x86_64.tar.gz\n");  // no perfwarden run, no gate
  EXPECT_TRUE(Contains(outputs_["steps.install.outputs.perfwarden-path"], "/bin/perfwarden"));
  EXPECT_EQ(outputs_.count("steps.run.outputs.exit-code"), 0u);

  // A release without that asset: a configuration error (2), not an outage, and nothing runs.
  std::ofstream(dir_ / "log", std::ios::trunc);
  o = RunAction({{"token", "pwt_secret"}, {"version", "v0.0.1"}, {"sha256", sha256_}},
                {{"GITHUB_EVENT_NAME", "push"}});
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_TRUE(Contains(o.output,
                       "no runner at https://github.com/perfwarden/perfwarden/releases/"
                       "download/v0.0.1/perfwarden-runner-v0.0.1-linux-x86_64.tar.gz"));
  EXPECT_EQ(outputs_["steps.install.outputs.outcome"], "error");
  EXPECT_FALSE(Contains(Log(), "perfwarden "));
  // An unreachable URL: an outage (3), the job to repeat.
  o = RunAction({{"token", "t"},
                 {"download-url", "file://" + dir_.string() + "/none.tar.gz"},
                 {"sha256", sha256_}},
                {{"GITHUB_EVENT_NAME", "push"}});
  EXPECT_EQ(o.exit_code, 3) << o.output;
  EXPECT_EQ(outputs_["steps.install.outputs.outcome"], "infrastructure");
  // A version that is no tag (it becomes part of a URL): refused before any download.
  std::ofstream(dir_ / "log", std::ios::trunc);
  o = RunAction({{"token", "t"}, {"version", "v1/../../x"}}, {{"GITHUB_EVENT_NAME", "push"}});
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_EQ(Log(), "");
}

TEST_F(CiRunnerDownloadTest, TheActionRefusesAWrongSha256) {
  std::string wrong = sha256_;
  wrong[0] = wrong[0] == '0' ? '1' : '0';
  Outcome o = RunAction({{"token", "pwt_secret"}, {"download-url", url_}, {"sha256", wrong}},
                        {{"GITHUB_EVENT_NAME", "pull_request"}, {"PR", "4"}});
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_TRUE(Contains(o.output, "::error title=perfwarden::sha256 mismatch for " + url_ +
                                     ": expected " + wrong + ", got " + sha256_));
  EXPECT_EQ(outputs_["steps.install.outputs.outcome"], "error");
  EXPECT_FALSE(Contains(Log(), "ran "));
  EXPECT_FALSE(Contains(Log(), "perfwarden "));
  // Not a SHA-256 at all.
  o = RunAction({{"token", "t"}, {"download-url", url_}, {"sha256", "abc"}},
                {{"GITHUB_EVENT_NAME", "push"}});
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_TRUE(Contains(o.output, "sha256: 64 hexadecimal digits"));
}

TEST_F(CiRunnerDownloadTest, TheActionRefusesADownloadWithoutSha256UnlessToldToSkip) {
  // No sha256: refused before anything is downloaded, with the input named.
  Outcome o = RunAction({{"token", "t"}, {"download-url", url_}}, {{"GITHUB_EVENT_NAME", "push"}});
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_TRUE(Contains(o.output,
                       "::error title=perfwarden::sha256: required with version or "
                       "download-url: the tarball's SHA-256, its line in the "
                       "release's sha256sums (or \"skip\" to run it unchecked)"));
  EXPECT_EQ(outputs_["steps.install.outputs.outcome"], "error");
  EXPECT_EQ(Log(), "");
  o = RunAction({{"token", "t"}, {"version", "v9.9.9"}}, {{"GITHUB_EVENT_NAME", "push"}});
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_EQ(Log(), "");
  // "skip": the runner runs unchecked, and a warning says so.
  o = RunAction({{"token", "t"}, {"download-url", url_}, {"sha256", "skip"}},
                {{"GITHUB_EVENT_NAME", "push"}});
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(
      Contains(o.output, "::warning title=perfwarden::sha256 is \"skip\": the runner from " + url_ +
                             " runs unchecked"));
  EXPECT_FALSE(Contains(o.output, "verified"));
  EXPECT_TRUE(RanExtracted(Log()));
}

TEST_F(CiRunnerDownloadTest, PerfwardenPathWinsOverTheDownload) {
  // perfwarden-path is the stand-in; version is ignored (a notice), nothing is downloaded.
  std::ofstream(dir_ / "bin" / "perfwarden") << kFakePerfwarden;
  fs::permissions(dir_ / "bin" / "perfwarden", fs::perms::owner_all);
  Outcome o = RunAction({{"token", "t"},
                         {"version", "v9.9.9"},
                         {"perfwarden-path", (dir_ / "bin/perfwarden").string()}},
                        {{"GITHUB_EVENT_NAME", "push"}});
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Contains(o.output, "perfwarden-path is set: version and download-url are not used"));
  EXPECT_FALSE(Contains(Log(), "curl "));
  EXPECT_TRUE(Contains(Log(), "perfwarden run --config perfwarden.yaml --paired\n"));
  // Neither set: perfwarden on PATH.
  std::ofstream(dir_ / "log", std::ios::trunc);
  o = RunAction({{"token", "t"}}, {{"GITHUB_EVENT_NAME", "push"}});
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_EQ(outputs_["steps.install.outputs.perfwarden-path"], "perfwarden");
  EXPECT_FALSE(Contains(Log(), "curl "));
}

TEST_F(CiRunnerDownloadTest, TheGitlabPreludeInstallsTheTarballAndTheJobUsesIt) {
  const Env base = {{"PERFWARDEN_TOKEN", "t"}, {"TMPDIR", dir_.string()}};
  Env env = base;
  env["PERFWARDEN_DOWNLOAD_URL"] = url_;
  env["PERFWARDEN_SHA256"] = sha256_;
  env["CI_MERGE_REQUEST_IID"] = "9";
  env["GATE_EXIT"] = "1";
  Outcome o = RunGitlab(env);
  EXPECT_EQ(o.exit_code, 1) << o.output;  // the gate's regression, from the extracted perfwarden
  EXPECT_TRUE(Contains(o.output, "sha256 " + sha256_ + " verified"));
  const std::string log = Log();
  EXPECT_TRUE(RanExtracted(log));
  EXPECT_TRUE(Contains(log, "perfwarden run --paired\n"));
  EXPECT_TRUE(Contains(log, "perfwarden gate --junit perfwarden-junit.xml "));

  // PERFWARDEN_VERSION: the release asset of PERFWARDEN_RELEASE_REPOSITORY.
  const fs::path asset = dir_ / "github/perfwarden/perfwarden/releases/download/v9.9.9" /
                         "perfwarden-runner-v9.9.9-linux-x86_64.tar.gz";
  fs::create_directories(asset.parent_path());
  fs::copy_file(tarball_, asset);
  std::ofstream(dir_ / "log", std::ios::trunc);
  env = base;
  env["PERFWARDEN_VERSION"] = "v9.9.9";
  env["PERFWARDEN_SHA256"] = sha256_;
  o = RunGitlab(env);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Contains(Log(),
                       "curl GET https://github.com/perfwarden/perfwarden/releases/download/"
                       "v9.9.9/perfwarden-runner-v9.9.9-linux-x86_64.tar.gz\n"));
  EXPECT_TRUE(RanExtracted(Log()));

  // A wrong PERFWARDEN_SHA256: exit 2 with the reason, and perfwarden never runs.
  std::ofstream(dir_ / "log", std::ios::trunc);
  env = base;
  env["PERFWARDEN_DOWNLOAD_URL"] = url_;
  env["PERFWARDEN_SHA256"] = std::string(64, 'a');
  o = RunGitlab(env);
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_TRUE(Contains(o.output, "sha256 mismatch for " + url_ + ": expected " +
                                     std::string(64, 'a') + ", got " + sha256_));
  EXPECT_FALSE(Contains(Log(), "perfwarden "));

  // No PERFWARDEN_SHA256: refused before the download, with the variable named; "skip": the
  // runner runs unchecked, with a warning.
  std::ofstream(dir_ / "log", std::ios::trunc);
  env = base;
  env["PERFWARDEN_DOWNLOAD_URL"] = url_;
  o = RunGitlab(env);
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_TRUE(Contains(o.output,
                       "perfwarden: PERFWARDEN_SHA256: required with PERFWARDEN_VERSION or "
                       "PERFWARDEN_DOWNLOAD_URL: the tarball's SHA-256"));
  EXPECT_EQ(Log(), "");
  env["PERFWARDEN_SHA256"] = "skip";
  o = RunGitlab(env);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Contains(o.output,
                       "perfwarden: warning: PERFWARDEN_SHA256 is \"skip\": the runner "
                       "from " +
                           url_ + " runs unchecked"));
  EXPECT_TRUE(RanExtracted(Log()));

  // PERFWARDEN_BIN set: it runs, nothing is downloaded.
  std::ofstream(dir_ / "log", std::ios::trunc);
  std::ofstream(dir_ / "bin" / "other-perfwarden") << kFakePerfwarden;
  fs::permissions(dir_ / "bin" / "other-perfwarden", fs::perms::owner_all);
  env = base;
  env["PERFWARDEN_VERSION"] = "v9.9.9";
  env["PERFWARDEN_BIN"] = (dir_ / "bin" / "other-perfwarden").string();
  o = RunGitlab(env);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_EQ(Log(), "perfwarden run\n");
}

}  // namespace
}  // namespace perfwarden
