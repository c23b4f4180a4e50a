// SPDX-License-Identifier: Apache-2.0
// A git repository as perfwarden needs it (libgit2 underneath, hidden behind a pimpl): the commit
// a run measured and its ancestry (for the server's baseline choice), merge-bases with a target
// branch, commit ranges for bisect, and exports of old commits into scratch directories that
// leave the user's HEAD, index and working tree alone.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"

namespace perfwarden::git {

struct CommitInfo {
  std::string sha;                   // 40 hex digits
  std::vector<std::string> parents;  // as recorded in the commit, first parent first; the
                                     // objects may be missing in a shallow clone
  std::string author;
  std::string author_email;
  std::string time;     // author time, RFC 3339 with the author's offset: 2026-11-20T10:11:12+01:00
  std::string subject;  // first paragraph of the message, lines joined (git log's %s)
};

// Not thread-safe: use one Repository per thread (libgit2's rule for git_repository). A
// moved-from Repository answers every call with an error (WorkDir: "").
class Repository {
 public:
  // Opens the repository containing `path`, searching upwards like git does (a bare repository
  // is accepted; then WorkDir() is "").
  static Result<Repository> Open(const std::string& path);

  Repository(Repository&&) noexcept;
  Repository& operator=(Repository&&) noexcept;
  Repository(const Repository&) = delete;
  Repository& operator=(const Repository&) = delete;
  ~Repository();

  // The working tree's top directory, without a trailing '/'; "" for a bare repository.
  std::string WorkDir() const;

  // Any revision git understands ("HEAD", "main", "origin/main", a short sha, "HEAD~2",
  // "v1.2^{}" ...), peeled to a commit (annotated tags resolve to their commit). Errors name
  // the revision; kNotFound when it does not exist, kInvalidArgument when it is ambiguous.
  Result<std::string> ResolveSha(const std::string& rev) const;

  Result<CommitInfo> Describe(const std::string& rev) const;

  // Current branch name ("feature/x"); "" on a detached HEAD. A branch without commits yet
  // (fresh `git init`) still has its name.
  Result<std::string> CurrentBranch() const;

  // Merge-base of `rev` with the target branch `target`, resolved in this order: local branch
  // "<target>", "origin/<target>", "<remote>/<target>" for the other remotes (by name), then
  // `target` as a revision. kNotFound when the target is none of these or the histories share
  // no commit; in a shallow clone the error says "shallow clone: fetch more history
  // (fetch-depth: 0)".
  Result<std::string> MergeBase(const std::string& rev, const std::string& target) const;

  // First-parent chain from `from` (inclusive), newest first, at most `limit` commits (limit 0:
  // empty), ending after `stop_at` (inclusive) when it is given and reached. Stops cleanly,
  // returning what it has, where a parent object is missing (shallow clone).
  Result<std::vector<std::string>> FirstParentChain(const std::string& from, size_t limit,
                                                    const std::string& stop_at = "") const;

  // Commits in (good, bad], oldest first, parents before children (ties by commit time), for
  // bisect. first_parent: only bad's first-parent line down to the first commit reachable from
  // good. Empty when good == bad; kInvalidArgument when good is not an ancestor of bad.
  Result<std::vector<CommitInfo>> ListRange(const std::string& good, const std::string& bad,
                                            bool first_parent) const;

  // True when `ancestor` is reachable from `descendant`, or they are the same commit (as
  // `git merge-base --is-ancestor`).
  Result<bool> IsAncestor(const std::string& ancestor, const std::string& descendant) const;

  // Writes the files of `rev` into `dir` (created with its parents when missing; when it exists
  // it must be an empty directory). A plain export of the commit's tree: files with their
  // executable bit, symlinks, .gitattributes filters (eol) applied; no .git, no HEAD, index
  // or working-tree change. Submodules are left as empty directories.
  Result<void> ExportTree(const std::string& rev, const std::string& dir) const;

 private:
  struct Impl;
  explicit Repository(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfwarden::git
