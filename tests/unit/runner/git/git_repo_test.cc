// SPDX-License-Identifier: Apache-2.0
// perfwarden::git::Repository against real repositories that each test builds with the git command
// line in a temp dir: fixed identity and dates, no user or system git config, so the histories
// are the same on a developer's machine and on a fresh CI runner.
#include "runner/git/git_repo.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace perfwarden::git {
namespace {

namespace fs = std::filesystem;

struct History {
  std::string c1, c2, f1, f2, c3, merge, c6;  // see BuildMerged
};

class GitRepoTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
    setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1);
    setenv("GIT_AUTHOR_NAME", "Ada Lovelace", 1);
    setenv("GIT_AUTHOR_EMAIL", "ada@example.com", 1);
    setenv("GIT_COMMITTER_NAME", "Ada Lovelace", 1);
    setenv("GIT_COMMITTER_EMAIL", "ada@example.com", 1);
  }

  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "perfwarden_git_test_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    repo_ = root_ / "repo";
  }

  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  // Runs `git <args>` in `dir` and returns its stdout without the final newline; a failing
  // command fails the test.
  std::string Git(const fs::path& dir, const std::string& args) {
    const std::string command = "cd '" + dir.string() +
                                "' && git -c user.name='Ada Lovelace' -c user.email=ada@example.com"
                                " -c init.defaultBranch=main -c commit.gpgsign=false"
                                " -c advice.detachedHead=false " +
                                args + " 2>/dev/null";
    FILE* pipe = popen(command.c_str(), "r");
    if (pipe == nullptr) {
      ADD_FAILURE() << "popen failed: " << command;
      return "";
    }
    std::string out;
    char buffer[4096];
    while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
    const int status = pclose(pipe);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command << "\n" << out;
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }

  static void Write(const fs::path& path, const std::string& content) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << content;
  }

  static std::string Read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // Each commit one minute after the previous, so time order is creation order.
  void Tick(const std::string& date = "") {
    const std::string value =
        date.empty() ? std::to_string(1795165872 + 60 * ++clock_) + " +0100" : date;
    setenv("GIT_AUTHOR_DATE", value.c_str(), 1);
    setenv("GIT_COMMITTER_DATE", value.c_str(), 1);
  }

  std::string Commit(const std::string& subject, const std::string& file,
                     const std::string& content, const std::string& date = "") {
    Write(repo_ / file, content);
    Git(repo_, "add -A");
    Tick(date);
    Git(repo_, "commit -q -m '" + subject + "'");
    return Git(repo_, "rev-parse HEAD");
  }

  // main: c1 - c2 - c3, feature: c2 - f1 - f2 (fork point c2); HEAD on main.
  History BuildForked() {
    Git(root_, "init -q repo");
    History h;
    h.c1 = Commit("c1", "a.txt", "1\n");
    h.c2 = Commit("c2", "a.txt", "2\n");
    Git(repo_, "checkout -q -b feature");
    h.f1 = Commit("f1", "f.txt", "f1\n");
    h.f2 = Commit("f2", "f.txt", "f2\n");
    Git(repo_, "checkout -q main");
    h.c3 = Commit("c3", "a.txt", "3\n");
    return h;
  }

  // BuildForked, then main merges feature (merge = c3 + f2) and moves on to c6.
  History BuildMerged() {
    History h = BuildForked();
    Tick();
    Git(repo_, "merge -q --no-ff -m 'merge feature' feature");
    h.merge = Git(repo_, "rev-parse HEAD");
    h.c6 = Commit("c6", "a.txt", "6\n");
    return h;
  }

  // Throws (GoogleTest reports it as a failure) so that tests can hold a plain Repository.
  static Repository Open(const fs::path& path) {
    auto repo = Repository::Open(path.string());
    if (!repo) throw std::runtime_error(repo.error().ToString());
    return std::move(*repo);
  }

  fs::path root_;
  fs::path repo_;
  int clock_ = 0;
};

std::vector<std::string> Shas(const std::vector<CommitInfo>& commits) {
  std::vector<std::string> shas;
  for (const auto& c : commits) shas.push_back(c.sha);
  return shas;
}

using Strings = std::vector<std::string>;

TEST_F(GitRepoTest, OpenDiscoversTheRepositoryFromASubdirectory) {
  Git(root_, "init -q repo");
  Commit("first", "sub/dir/x.txt", "x\n");
  Repository repo = Open(repo_ / "sub" / "dir");
  EXPECT_TRUE(fs::equivalent(repo.WorkDir(), repo_)) << repo.WorkDir();
  EXPECT_NE(repo.WorkDir().back(), '/');

  fs::create_directories(root_ / "plain");
  auto outside = Repository::Open((root_ / "plain").string());
  ASSERT_FALSE(outside.has_value());
  EXPECT_EQ(outside.error().code, ErrorCode::kNotFound);
  EXPECT_NE(outside.error().message.find((root_ / "plain").string()), std::string::npos);
}

TEST_F(GitRepoTest, DescribeMatchesGitLog) {
  Git(root_, "init -q repo");
  Commit("first", "a.txt", "1\n", "2026-11-20T10:11:12+01:00");
  Commit("Second change\nwrapped subject\n\nBody text.", "a.txt", "2\n",
         "2026-11-21T08:00:00-05:30");
  Repository repo = Open(repo_);

  auto first = repo.Describe("HEAD~1");
  ASSERT_TRUE(first.has_value()) << first.error().ToString();
  EXPECT_EQ(first->time, "2026-11-20T10:11:12+01:00");
  EXPECT_TRUE(first->parents.empty());
  EXPECT_EQ(first->subject, "first");

  auto head = repo.Describe("HEAD");
  ASSERT_TRUE(head.has_value()) << head.error().ToString();
  std::istringstream expected(Git(repo_, "log -1 --format=%H%n%P%n%an%n%ae%n%aI%n%s"));
  std::vector<std::string> fields;
  for (std::string line; std::getline(expected, line);) fields.push_back(line);
  ASSERT_EQ(fields.size(), 6u);
  EXPECT_EQ(head->sha, fields[0]);
  EXPECT_EQ(head->parents, Strings{fields[1]});
  EXPECT_EQ(head->parents, Strings{first->sha});
  EXPECT_EQ(head->author, "Ada Lovelace");
  EXPECT_EQ(head->author_email, fields[3]);
  EXPECT_EQ(head->time, "2026-11-21T08:00:00-05:30");
  EXPECT_EQ(head->time, fields[4]);
  EXPECT_EQ(head->subject, "Second change wrapped subject");
  EXPECT_EQ(head->subject, fields[5]);
}

TEST_F(GitRepoTest, ResolveShaUnderstandsCommonRevisions) {
  const History h = BuildMerged();
  Tick();
  Git(repo_, "tag -a v1 -m 'release 1' " + h.c1);
  Repository repo = Open(repo_);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"HEAD", h.c6},   {"main", h.c6},     {"feature", h.f2}, {h.c2.substr(0, 7), h.c2},
      {"HEAD~2", h.c3}, {"HEAD~1^2", h.f2}, {"v1", h.c1}};
  for (const auto& [rev, sha] : cases) {
    auto resolved = repo.ResolveSha(rev);
    ASSERT_TRUE(resolved.has_value()) << rev << ": " << resolved.error().ToString();
    EXPECT_EQ(*resolved, sha) << rev;
  }
  EXPECT_NE(Git(repo_, "rev-parse v1"), h.c1);  // v1 is a tag object; it must peel to c1
}

TEST_F(GitRepoTest, BadRevisionsGiveErrorsNamingThem) {
  BuildMerged();
  Repository repo = Open(repo_);
  auto missing = repo.ResolveSha("no-such-branch");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_NE(missing.error().message.find("'no-such-branch'"), std::string::npos);

  auto too_deep = repo.Describe("HEAD~99");
  ASSERT_FALSE(too_deep.has_value());
  EXPECT_NE(too_deep.error().message.find("'HEAD~99'"), std::string::npos);

  auto bad_stop = repo.FirstParentChain("HEAD", 10, "nope~1");
  ASSERT_FALSE(bad_stop.has_value());
  EXPECT_NE(bad_stop.error().message.find("'nope~1'"), std::string::npos);

  auto bad_target = repo.MergeBase("HEAD", "release/9");
  ASSERT_FALSE(bad_target.has_value());
  EXPECT_EQ(bad_target.error().code, ErrorCode::kNotFound);
  EXPECT_NE(bad_target.error().message.find("'release/9'"), std::string::npos);
  EXPECT_NE(bad_target.error().message.find("origin/release/9"), std::string::npos);

  EXPECT_FALSE(repo.ResolveSha("").has_value());
  EXPECT_FALSE(repo.ExportTree("no-such-branch", (root_ / "out").string()).has_value());
  EXPECT_FALSE(fs::exists(root_ / "out"));
}

TEST_F(GitRepoTest, CurrentBranchNamesTheBranchAndIsEmptyWhenDetached) {
  Git(root_, "init -q repo");
  {
    Repository unborn = Open(repo_);
    auto branch = unborn.CurrentBranch();
    ASSERT_TRUE(branch.has_value()) << branch.error().ToString();
    EXPECT_EQ(*branch, "main");
  }
  Commit("first", "a.txt", "1\n");
  Repository repo = Open(repo_);
  EXPECT_EQ(repo.CurrentBranch().value(), "main");
  Git(repo_, "checkout -q -b feature/x");
  EXPECT_EQ(repo.CurrentBranch().value(), "feature/x");
  Git(repo_, "checkout -q --detach");
  EXPECT_EQ(repo.CurrentBranch().value(), "");
}

TEST_F(GitRepoTest, MergeBaseIsTheForkPointNotTheTargetTip) {
  const History h = BuildForked();
  Git(repo_, "checkout -q feature");
  Repository repo = Open(repo_);
  EXPECT_EQ(repo.MergeBase("HEAD", "main").value(), h.c2);
  EXPECT_EQ(repo.MergeBase("feature", "main").value(), h.c2);
  EXPECT_EQ(repo.MergeBase("feature", h.c3).value(), h.c2);  // target as a plain revision
  EXPECT_EQ(repo.MergeBase("main", "main").value(), h.c3);

  Git(repo_, "checkout -q --orphan unrelated");
  Commit("unrelated root", "u.txt", "u\n");
  auto none = repo.MergeBase("HEAD", "main");
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().code, ErrorCode::kNotFound);
  EXPECT_NE(none.error().message.find("share no commit"), std::string::npos);
}

TEST_F(GitRepoTest, MergeBaseFindsTheTargetOnRemotes) {
  const History h = BuildForked();
  Git(root_, "clone -q repo clone");
  const fs::path clone = root_ / "clone";
  Git(clone, "checkout -q -b topic origin/feature");
  Git(clone, "branch -q -D main");
  Repository repo = Open(clone);
  EXPECT_EQ(repo.ResolveSha("origin/main").value(), h.c3);
  EXPECT_EQ(repo.MergeBase("HEAD", "main").value(), h.c2);  // via origin/main

  Git(clone, "branch -q main " + h.f1);  // a local branch wins over origin/main
  EXPECT_EQ(repo.MergeBase("HEAD", "main").value(), h.f1);

  Git(clone, "branch -q -D main");
  Git(clone, "remote rename origin upstream");
  EXPECT_EQ(repo.MergeBase("HEAD", "main").value(), h.c2);  // via upstream/main
}

TEST_F(GitRepoTest, FirstParentChainLeavesOutMergedCommits) {
  const History h = BuildMerged();
  Repository repo = Open(repo_);
  EXPECT_EQ(repo.FirstParentChain("HEAD", 100).value(), (Strings{h.c6, h.merge, h.c3, h.c2, h.c1}));
  EXPECT_EQ(repo.FirstParentChain("HEAD", 2).value(), (Strings{h.c6, h.merge}));
  EXPECT_EQ(repo.FirstParentChain("HEAD", 100, h.c3).value(), (Strings{h.c6, h.merge, h.c3}));
  EXPECT_EQ(repo.FirstParentChain("HEAD", 2, h.c2).value(), (Strings{h.c6, h.merge}));
  EXPECT_EQ(repo.FirstParentChain("HEAD", 100, h.f1).value().size(), 5u);  // not on the chain
  EXPECT_EQ(repo.FirstParentChain("feature", 100).value(), (Strings{h.f2, h.f1, h.c2, h.c1}));
  EXPECT_TRUE(repo.FirstParentChain("HEAD", 0).value().empty());
}

TEST_F(GitRepoTest, ListRangeFollowsFirstParentsOrAllParents) {
  const History h = BuildMerged();
  Repository repo = Open(repo_);
  auto first_parent = repo.ListRange(h.c2, "HEAD", true);
  ASSERT_TRUE(first_parent.has_value()) << first_parent.error().ToString();
  EXPECT_EQ(Shas(*first_parent), (Strings{h.c3, h.merge, h.c6}));
  EXPECT_EQ(first_parent->front().subject, "c3");
  EXPECT_EQ(first_parent->at(1).parents, (Strings{h.c3, h.f2}));

  auto all = repo.ListRange(h.c2, "HEAD", false);
  ASSERT_TRUE(all.has_value()) << all.error().ToString();
  const Strings shas = Shas(*all);
  EXPECT_EQ(std::set<std::string>(shas.begin(), shas.end()),
            (std::set<std::string>{h.c3, h.f1, h.f2, h.merge, h.c6}));
  EXPECT_EQ(shas.back(), h.c6);
  std::set<std::string> seen;  // oldest first: every parent inside the range comes earlier
  for (const auto& commit : *all) {
    for (const auto& parent : commit.parents) {
      if (parent != h.c2) {
        EXPECT_EQ(seen.count(parent), 1u) << commit.subject;
      }
    }
    seen.insert(commit.sha);
  }

  // good on the merged branch: bad's first-parent line down to what good reaches (c2).
  EXPECT_EQ(Shas(repo.ListRange(h.f1, h.c6, true).value()), (Strings{h.c3, h.merge, h.c6}));
  EXPECT_EQ(Shas(repo.ListRange(h.f1, h.c6, false).value()), (Strings{h.f2, h.c3, h.merge, h.c6}));
  EXPECT_TRUE(repo.ListRange(h.c6, h.c6, true).value().empty());

  for (const auto& [good, bad] : {std::pair{h.c6, h.c2}, std::pair{h.c3, h.f2}}) {
    auto reversed = repo.ListRange(good, bad, false);
    ASSERT_FALSE(reversed.has_value());
    EXPECT_EQ(reversed.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(reversed.error().message.find("not an ancestor"), std::string::npos);
  }
}

TEST_F(GitRepoTest, IsAncestorFollowsEveryParent) {
  const History h = BuildMerged();
  Repository repo = Open(repo_);
  EXPECT_TRUE(repo.IsAncestor(h.c2, h.c6).value());
  EXPECT_TRUE(repo.IsAncestor(h.f1, "main").value());
  EXPECT_TRUE(repo.IsAncestor(h.c6, h.c6).value());
  EXPECT_FALSE(repo.IsAncestor(h.c6, h.c2).value());
  EXPECT_FALSE(repo.IsAncestor(h.c3, h.f2).value());
  EXPECT_FALSE(repo.IsAncestor("nope", h.c6).has_value());
}

TEST_F(GitRepoTest, ExportTreeWritesAnOlderCommitAndLeavesTheCheckoutAlone) {
  Git(root_, "init -q repo");
  Write(repo_ / "bin" / "run.sh", "#!/bin/sh\necho hi\n");
  fs::permissions(repo_ / "bin" / "run.sh", fs::perms::owner_exec, fs::perm_options::add);
  fs::create_symlink("a.txt", repo_ / "link");
  Write(repo_ / "dir" / "sub" / "deep.txt", "deep\n");
  Write(repo_ / ".gitattributes", "crlf.txt eol=crlf\n");
  Write(repo_ / "crlf.txt", "x\ny\n");
  const std::string old_sha = Commit("old", "a.txt", "one\n");
  fs::permissions(repo_ / "bin" / "run.sh",
                  fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                  fs::perm_options::remove);
  fs::remove(repo_ / "link");
  Write(repo_ / "new.txt", "new\n");
  const std::string head_sha = Commit("new", "a.txt", "two\n");

  Repository repo = Open(repo_);
  const fs::path out = root_ / "probes" / "old";
  auto exported = repo.ExportTree(old_sha.substr(0, 10), out.string());
  ASSERT_TRUE(exported.has_value()) << exported.error().ToString();
  EXPECT_EQ(Read(out / "a.txt"), "one\n");
  EXPECT_EQ(Read(out / "dir" / "sub" / "deep.txt"), "deep\n");
  EXPECT_EQ(Read(out / "crlf.txt"), "x\r\ny\r\n");
  EXPECT_TRUE(fs::is_symlink(out / "link"));
  EXPECT_EQ(fs::read_symlink(out / "link"), "a.txt");
  struct stat script {};
  ASSERT_EQ(stat((out / "bin" / "run.sh").c_str(), &script), 0);
  EXPECT_NE(script.st_mode & S_IXUSR, 0u);
  struct stat plain {};
  ASSERT_EQ(stat((out / "a.txt").c_str(), &plain), 0);
  EXPECT_EQ(plain.st_mode & S_IXUSR, 0u);
  EXPECT_FALSE(fs::exists(out / "new.txt"));
  EXPECT_FALSE(fs::exists(out / ".git"));

  // The repository did not move: same HEAD, same branch, clean index and working tree.
  EXPECT_EQ(Git(repo_, "rev-parse HEAD"), head_sha);
  EXPECT_EQ(repo.CurrentBranch().value(), "main");
  EXPECT_EQ(Git(repo_, "status --porcelain"), "");
  EXPECT_EQ(Read(repo_ / "a.txt"), "two\n");

  auto again = repo.ExportTree(old_sha, out.string());  // not empty any more
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code, ErrorCode::kInvalidArgument);
  fs::create_directories(root_ / "empty");
  ASSERT_TRUE(repo.ExportTree("HEAD", (root_ / "empty").string()).has_value());
  EXPECT_EQ(Read(root_ / "empty" / "new.txt"), "new\n");
  EXPECT_FALSE(fs::exists(root_ / "empty" / "link"));
}

TEST_F(GitRepoTest, ExportTreeRefusesCraftedEntriesAndLeavesNothingBehind) {
  Git(root_, "init -q repo");
  Commit("first", "a.txt", "a\n");
  Write(root_ / "blob.txt", "evil\n");
  const std::string blob = Git(repo_, "hash-object -w '" + (root_ / "blob.txt").string() + "'");
  Repository repo = Open(repo_);
  fs::create_directories(root_ / "empty");
  for (const std::string name : {"..", ".GIT"}) {
    // "-first.txt" sorts before the crafted entry, so it is written before the refusal.
    Write(root_ / "tree.txt",
          "100644 blob " + blob + "\t-first.txt\n100644 blob " + blob + "\t" + name + "\n");
    const std::string tree = Git(repo_, "mktree < '" + (root_ / "tree.txt").string() + "'");
    Tick();
    const std::string commit = Git(repo_, "commit-tree " + tree + " -m crafted");

    auto fresh = repo.ExportTree(commit, (root_ / "fresh").string());
    ASSERT_FALSE(fresh.has_value()) << name;
    EXPECT_EQ(fresh.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(fresh.error().message.find("'" + name + "'"), std::string::npos);
    EXPECT_FALSE(fs::exists(root_ / "fresh"));

    ASSERT_FALSE(repo.ExportTree(commit, (root_ / "empty").string()).has_value()) << name;
    EXPECT_TRUE(fs::is_directory(root_ / "empty"));
    EXPECT_TRUE(fs::is_empty(root_ / "empty"));
  }
}

TEST_F(GitRepoTest, ShallowCloneStopsChainsAndExplainsMissingMergeBase) {
  const History h = BuildForked();
  Git(root_, "clone -q --depth 1 --no-single-branch file://" + repo_.string() + " shallow");
  Repository repo = Open(root_ / "shallow");
  auto head = repo.Describe("HEAD");
  ASSERT_TRUE(head.has_value()) << head.error().ToString();
  EXPECT_EQ(head->sha, h.c3);
  EXPECT_EQ(repo.FirstParentChain("HEAD", 10).value(), Strings{h.c3});
  EXPECT_EQ(repo.MergeBase("HEAD", "main").value(), h.c3);

  auto base = repo.MergeBase("origin/feature", "main");
  ASSERT_FALSE(base.has_value());
  EXPECT_NE(base.error().message.find("shallow clone: fetch more history (fetch-depth: 0)"),
            std::string::npos)
      << base.error().message;
  auto parent = repo.ResolveSha("HEAD~1");
  ASSERT_FALSE(parent.has_value());
  EXPECT_NE(parent.error().message.find("shallow clone"), std::string::npos);
  auto unknown = repo.ResolveSha("no-such-branch");  // a typo is not blamed on the clone
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().message.find("shallow"), std::string::npos);
  auto ancestry = repo.IsAncestor("origin/feature", "main");
  ASSERT_FALSE(ancestry.has_value());
  EXPECT_NE(ancestry.error().message.find("shallow clone"), std::string::npos);
  auto range = repo.ListRange("origin/feature", "main", false);
  ASSERT_FALSE(range.has_value());
  EXPECT_NE(range.error().message.find("shallow clone"), std::string::npos);
  EXPECT_EQ(repo.ListRange("HEAD", "main", true).value().size(), 0u);
}

TEST_F(GitRepoTest, RepositoryMoves) {
  const History h = BuildForked();
  Repository first = Open(repo_);
  Repository second(std::move(first));
  EXPECT_EQ(second.ResolveSha("HEAD").value(), h.c3);
  Repository third = Open(root_ / "repo" / ".git");
  third = std::move(second);
  EXPECT_EQ(third.ResolveSha("feature").value(), h.f2);
  // Documented: a moved-from Repository answers with errors instead of crashing.
  EXPECT_FALSE(first.ResolveSha("HEAD").has_value());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(first.WorkDir(), "");                      // NOLINT(bugprone-use-after-move)
}

}  // namespace
}  // namespace perfwarden::git
