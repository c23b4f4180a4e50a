// SPDX-License-Identifier: Apache-2.0
// libgit2 plumbing shared by runner/git's .cc files: process-wide initialisation, owning
// handles, translation of libgit2 return codes into perfwarden::Error, and writing a tree to disk.
// Internal: it includes git2.h, so nothing outside runner/git may include it (perfwarden_git links
// libgit2 privately); the public face is git_repo.h.
#pragma once

#include <git2.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"

namespace perfwarden::git::internal {

// Calls git_libgit2_init exactly once per process (thread-safe static). There is deliberately no
// matching git_libgit2_shutdown: another thread may still hold a repository, and the process
// exit reclaims libgit2's global state.
void EnsureLibgit2Initialized();

template <class T, void (*Free)(T*)>
struct Freer {
  void operator()(T* p) const { Free(p); }
};
template <class T, void (*Free)(T*)>
using Handle = std::unique_ptr<T, Freer<T, Free>>;

using RepositoryPtr = Handle<git_repository, git_repository_free>;
using ObjectPtr = Handle<git_object, git_object_free>;
using CommitPtr = Handle<git_commit, git_commit_free>;
using TreePtr = Handle<git_tree, git_tree_free>;
using BlobPtr = Handle<git_blob, git_blob_free>;
using ReferencePtr = Handle<git_reference, git_reference_free>;
using RevwalkPtr = Handle<git_revwalk, git_revwalk_free>;

// libgit2's description of the last failure on this thread ("unknown libgit2 error" if none).
std::string LastMessage();

// "<context>: <libgit2 message>" with an ErrorCode chosen from libgit2's return code
// (GIT_ENOTFOUND -> kNotFound, spec/ambiguity -> kInvalidArgument, ownership ->
// kPermissionDenied with the safe.directory hint, anything else -> kInternal).
tl::unexpected<Error> GitError(int code, const std::string& context);

// libgit2 1.5's history walks return early without freeing their work queues when a parent
// object is missing (paint_down_to_common behind git_merge_base and git_graph_descendant_of,
// limit_list behind revision walks), which is exactly a shallow clone's boundary. The loss is tens
// of bytes per failed call and the failure is reported, so in sanitizer builds the leak checker
// ignores this thread's allocations while such a walk runs in a shallow repository; walks in
// complete repositories stay fully checked. A no-op without LeakSanitizer.
class ShallowWalkLeakPause {
 public:
  explicit ShallowWalkLeakPause(bool shallow);
  ~ShallowWalkLeakPause();
  ShallowWalkLeakPause(const ShallowWalkLeakPause&) = delete;
  ShallowWalkLeakPause& operator=(const ShallowWalkLeakPause&) = delete;

 private:
  bool active_;
};

// The names of the configured remotes, sorted. Reads the config entries itself: libgit2 1.5's
// git_remote_list matches them with a PCRE2 pattern that leaks on every non-matching entry.
Result<std::vector<std::string>> RemoteNames(git_repository* repo);

// 40 hex digits.
std::string OidToHex(const git_oid& oid);

// Writes every entry of `tree` under `dir` (an existing, empty directory). Blobs go through the
// repository's checkout filters (.gitattributes of `commit_id`, e.g. eol=crlf) and keep their
// mode (executable or not); symlinks become symlinks. Submodules (gitlinks) become empty
// directories, as in a checkout without `--recurse-submodules`. Entry names that could escape
// `dir` ("", ".", "..", ".git", containing '/') are refused.
Result<void> WriteTree(git_repository* repo, const git_tree* tree, const git_oid& commit_id,
                       const std::filesystem::path& dir);

}  // namespace perfwarden::git::internal
