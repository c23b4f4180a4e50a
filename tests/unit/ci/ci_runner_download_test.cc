// SPDX-License-Identifier: Apache-2.0
// The CI templates' runner install (docs/ci.md, "Installing the runner in CI"), as the CI would
// run it, without network: the GitHub action's install step and the GitLab job's prelude fetch a
// runner tarball (a file:// URL through the real curl, or a GitHub release URL through the curl
// stand-in), check its sha256, extract it, and the job's `perfgate run` and `perfgate gate` are
// then the extracted perfgate's, not one on PATH. A wrong or missing sha256 (refused; "skip"
// runs unchecked with a warning), a missing release and a perfgate-path / PERFGATE_BIN that wins
// over the download are covered too.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "tests/unit/ci/ci_shell.h"

namespace perfgate {
namespace {

using namespace perfgate::ci_test;  // NOLINT(build/namespaces): the shared fixture

class CiRunnerDownloadTest : public CiShellTest {
 protected:
  void SetUp() override {
    CiShellTest::SetUp();
    // The only perfgate is the tarball's: one on PATH would hide a job that ignored the download.
    fs::remove(dir_ / "bin" / "perfgate");
    // The tarball's perfgate: the stand-in, which also answers --version and logs where it ran.
    const fs::path top = dir_ / "make" / "perfgate-runner-v9.9.9";
    fs::create_directories(top / "bin");
    std::string fake = kFakePerfgate;
    fake.insert(fake.find('\n') + 1,
                "[ \"${1:-}\" = --version ] && { echo 'perfgate v9.9.9'; exit 0; }\n"
                "echo \"ran $0\" >>\"$FAKE/log\"\n");
    std::ofstream(top / "bin" / "perfgate") << fake;
    fs::permissions(top / "bin" / "perfgate", fs::perms::owner_all);
    tarball_ = dir_ / "perfgate-runner-v9.9.9-linux-x86_64.tar.gz";
    Outcome made = Shell("tar -C " + Quote((dir_ / "make").string()) + " -czf " +
                         Quote(tarball_.string()) + " perfgate-runner-v9.9.9");
    ASSERT_EQ(made.exit_code, 0) << made.output;
    Outcome sum = Shell("sha256sum " + Quote(tarball_.string()));
    ASSERT_EQ(sum.exit_code, 0) << sum.output;
    sha256_ = sum.output.substr(0, 64);
    url_ = "file://" + tarball_.string();
  }

  // The directory of the extracted perfgate: <temp>/perfgate-runner.XXXXXX/perfgate-runner-v9.9.9/
  // bin, under RUNNER_TEMP / TMPDIR (dir_), never the directory the tarball was made in.
  ::testing::AssertionResult RanExtracted(const std::string& log) {
    const std::regex ran(
        "ran " + dir_.string() +
        "/perfgate-runner\\.[A-Za-z0-9]{6}/perfgate-runner-v9\\.9\\.9/bin/perfgate\n");
    if (std::regex_search(log, ran)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "no run of the extracted perfgate in:\n" << log;
  }

  fs::path tarball_;
  std::string sha256_, url_;
};

TEST_F(CiRunnerDownloadTest, TheActionInstallsTheTarballAndTheJobUsesIt) {
  Outcome o = RunAction({{"token", "pgt_secret"}, {"download-url", url_}, {"sha256", sha256_}},
                        {{"GITHUB_EVENT_NAME", "push"}});
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Contains(o.output, "sha256 " + sha256_ + " verified"));
  EXPECT_TRUE(Contains(o.output, "perfgate v9.9.9 at "));
  const std::string path = outputs_["steps.install.outputs.perfgate-path"];
  EXPECT_TRUE(Contains(path, "/perfgate-runner-v9.9.9/bin/perfgate"));
  EXPECT_EQ(path.rfind(dir_.string() + "/perfgate-runner.", 0), 0u) << path;
  EXPECT_EQ(Read(dir_ / "github_path"), fs::path(path).parent_path().string() + "\n");
  const std::string log = Log();
  EXPECT_TRUE(Contains(log, "curl GET " + url_ + "\n"));
  EXPECT_TRUE(RanExtracted(log));
  EXPECT_TRUE(Contains(log, "perfgate run --config perfgate.yaml --paired\n"));
  EXPECT_TRUE(Contains(log, "perfgate gate --config perfgate.yaml --junit "));
  EXPECT_EQ(outputs_["steps.gate.outputs.outcome"], "pass");
}

TEST_F(CiRunnerDownloadTest, TheActionBuildsTheReleaseUrlAndInstallOnlyStopsThere) {
  // version + release-repository: the GitHub release asset (served by the curl stand-in).
  const fs::path asset = dir_ / "github/acme/perfgate/releases/download/v9.9.9" /
                         "perfgate-runner-v9.9.9-linux-x86_64.tar.gz";
  fs::create_directories(asset.parent_path());
  fs::copy_file(tarball_, asset);
  Outcome o = RunAction({{"token", "pgt_secret"},
                         {"version", "v9.9.9"},
                         {"release-repository", "acme/perfgate"},
                         {"sha256", sha256_},
                         {"install-only", "true"}},
                        {{"GITHUB_EVENT_NAME", "push"}});
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_EQ(Log(),
            "curl GET https://github.com/acme/perfgate/releases/download/v9.9.9/"
            "perfgate-runner-v9.9.9-linux-x86_64.tar.gz\n");  // no perfgate run, no gate
  EXPECT_TRUE(Contains(outputs_["steps.install.outputs.perfgate-path"], "/bin/perfgate"));
  EXPECT_EQ(outputs_.count("steps.run.outputs.exit-code"), 0u);

  // A release without that asset: a configuration error (2), not an outage, and nothing runs.
  std::ofstream(dir_ / "log", std::ios::trunc);
  o = RunAction({{"token", "pgt_secret"}, {"version", "v0.0.1"}, {"sha256", sha256_}},
                {{"GITHUB_EVENT_NAME", "push"}});
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_TRUE(Contains(o.output,
                       "no runner at https://github.com/perfgate/perfgate/releases/"
                       "download/v0.0.1/perfgate-runner-v0.0.1-linux-x86_64.tar.gz"));
  EXPECT_EQ(outputs_["steps.install.outputs.outcome"], "error");
  EXPECT_FALSE(Contains(Log(), "perfgate "));
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
  Outcome o = RunAction({{"token", "pgt_secret"}, {"download-url", url_}, {"sha256", wrong}},
                        {{"GITHUB_EVENT_NAME", "pull_request"}, {"PR", "4"}});
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_TRUE(Contains(o.output, "::error title=perfgate::sha256 mismatch for " + url_ +
                                     ": expected " + wrong + ", got " + sha256_));
  EXPECT_EQ(outputs_["steps.install.outputs.outcome"], "error");
  EXPECT_FALSE(Contains(Log(), "ran "));
  EXPECT_FALSE(Contains(Log(), "perfgate "));
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
                       "::error title=perfgate::sha256: required with version or "
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
  EXPECT_TRUE(Contains(o.output, "::warning title=perfgate::sha256 is \"skip\": the runner from " +
                                     url_ + " runs unchecked"));
  EXPECT_FALSE(Contains(o.output, "verified"));
  EXPECT_TRUE(RanExtracted(Log()));
}

TEST_F(CiRunnerDownloadTest, PerfgatePathWinsOverTheDownload) {
  // perfgate-path is the stand-in; version is ignored (a notice), nothing is downloaded.
  std::ofstream(dir_ / "bin" / "perfgate") << kFakePerfgate;
  fs::permissions(dir_ / "bin" / "perfgate", fs::perms::owner_all);
  Outcome o = RunAction(
      {{"token", "t"}, {"version", "v9.9.9"}, {"perfgate-path", (dir_ / "bin/perfgate").string()}},
      {{"GITHUB_EVENT_NAME", "push"}});
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Contains(o.output, "perfgate-path is set: version and download-url are not used"));
  EXPECT_FALSE(Contains(Log(), "curl "));
  EXPECT_TRUE(Contains(Log(), "perfgate run --config perfgate.yaml --paired\n"));
  // Neither set: perfgate on PATH.
  std::ofstream(dir_ / "log", std::ios::trunc);
  o = RunAction({{"token", "t"}}, {{"GITHUB_EVENT_NAME", "push"}});
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_EQ(outputs_["steps.install.outputs.perfgate-path"], "perfgate");
  EXPECT_FALSE(Contains(Log(), "curl "));
}

TEST_F(CiRunnerDownloadTest, TheGitlabPreludeInstallsTheTarballAndTheJobUsesIt) {
  const Env base = {{"PERFGATE_TOKEN", "t"}, {"TMPDIR", dir_.string()}};
  Env env = base;
  env["PERFGATE_DOWNLOAD_URL"] = url_;
  env["PERFGATE_SHA256"] = sha256_;
  env["CI_MERGE_REQUEST_IID"] = "9";
  env["GATE_EXIT"] = "1";
  Outcome o = RunGitlab(env);
  EXPECT_EQ(o.exit_code, 1) << o.output;  // the gate's regression, from the extracted perfgate
  EXPECT_TRUE(Contains(o.output, "sha256 " + sha256_ + " verified"));
  const std::string log = Log();
  EXPECT_TRUE(RanExtracted(log));
  EXPECT_TRUE(Contains(log, "perfgate run --paired\n"));
  EXPECT_TRUE(Contains(log, "perfgate gate --junit perfgate-junit.xml "));

  // PERFGATE_VERSION: the release asset of PERFGATE_RELEASE_REPOSITORY.
  const fs::path asset = dir_ / "github/perfgate/perfgate/releases/download/v9.9.9" /
                         "perfgate-runner-v9.9.9-linux-x86_64.tar.gz";
  fs::create_directories(asset.parent_path());
  fs::copy_file(tarball_, asset);
  std::ofstream(dir_ / "log", std::ios::trunc);
  env = base;
  env["PERFGATE_VERSION"] = "v9.9.9";
  env["PERFGATE_SHA256"] = sha256_;
  o = RunGitlab(env);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Contains(Log(),
                       "curl GET https://github.com/perfgate/perfgate/releases/download/"
                       "v9.9.9/perfgate-runner-v9.9.9-linux-x86_64.tar.gz\n"));
  EXPECT_TRUE(RanExtracted(Log()));

  // A wrong PERFGATE_SHA256: exit 2 with the reason, and perfgate never runs.
  std::ofstream(dir_ / "log", std::ios::trunc);
  env = base;
  env["PERFGATE_DOWNLOAD_URL"] = url_;
  env["PERFGATE_SHA256"] = std::string(64, 'a');
  o = RunGitlab(env);
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_TRUE(Contains(o.output, "sha256 mismatch for " + url_ + ": expected " +
                                     std::string(64, 'a') + ", got " + sha256_));
  EXPECT_FALSE(Contains(Log(), "perfgate "));

  // No PERFGATE_SHA256: refused before the download, with the variable named; "skip": the
  // runner runs unchecked, with a warning.
  std::ofstream(dir_ / "log", std::ios::trunc);
  env = base;
  env["PERFGATE_DOWNLOAD_URL"] = url_;
  o = RunGitlab(env);
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_TRUE(Contains(o.output,
                       "perfgate: PERFGATE_SHA256: required with PERFGATE_VERSION or "
                       "PERFGATE_DOWNLOAD_URL: the tarball's SHA-256"));
  EXPECT_EQ(Log(), "");
  env["PERFGATE_SHA256"] = "skip";
  o = RunGitlab(env);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Contains(o.output,
                       "perfgate: warning: PERFGATE_SHA256 is \"skip\": the runner "
                       "from " +
                           url_ + " runs unchecked"));
  EXPECT_TRUE(RanExtracted(Log()));

  // PERFGATE_BIN set: it runs, nothing is downloaded.
  std::ofstream(dir_ / "log", std::ios::trunc);
  std::ofstream(dir_ / "bin" / "other-perfgate") << kFakePerfgate;
  fs::permissions(dir_ / "bin" / "other-perfgate", fs::perms::owner_all);
  env = base;
  env["PERFGATE_VERSION"] = "v9.9.9";
  env["PERFGATE_BIN"] = (dir_ / "bin" / "other-perfgate").string();
  o = RunGitlab(env);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_EQ(Log(), "perfgate run\n");
}

}  // namespace
}  // namespace perfgate
