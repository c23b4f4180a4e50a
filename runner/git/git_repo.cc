// SPDX-License-Identifier: Apache-2.0
#include "runner/git/git_repo.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <optional>
#include <system_error>
#include <unordered_set>

#include "runner/git/git_internal.h"

namespace perfwarden::git {

using internal::CommitPtr;
using internal::GitError;
using internal::LastMessage;
using internal::OidToHex;

namespace {

constexpr const char* kShallowHint = "shallow clone: fetch more history (fetch-depth: 0)";

tl::unexpected<Error> MovedFrom() {
  return MakeError(ErrorCode::kInternal, "use of a moved-from git::Repository");
}

// RFC 3339 in the author's own offset, as `git log --format=%aI` prints it.
std::string FormatTime(const git_time& when) {
  const std::time_t local = static_cast<std::time_t>(when.time + int64_t{when.offset} * 60);
  std::tm tm{};
  gmtime_r(&local, &tm);
  const int offset = std::abs(when.offset);
  char text[64];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d%c%02d:%02d", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                when.offset < 0 ? '-' : '+', offset / 60, offset % 60);
  return text;
}

// Whether `rev` can fail to resolve because history is missing rather than because the name is
// wrong: ancestry navigation ("HEAD~3", "main^2") or a sha.
bool MayNameUnfetchedCommit(const std::string& rev) {
  if (rev.find_first_of("~^") != std::string::npos) return true;
  return rev.size() >= 4 && rev.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
}

}  // namespace

struct Repository::Impl {
  internal::RepositoryPtr repo;
  std::string workdir;

  bool IsShallow() const { return git_repository_is_shallow(repo.get()) == 1; }

  // For failures while walking history: in a shallow clone the usual cause is a parent object
  // that was never fetched, and the user needs to know how to fix the checkout.
  tl::unexpected<Error> WalkError(int rc, const std::string& context) const {
    const std::string detail = LastMessage();
    tl::unexpected<Error> error = GitError(rc, context);
    if (IsShallow()) {
      error.value().code = ErrorCode::kNotFound;
      error.value().message = context + ": " + kShallowHint + " (" + detail + ")";
    }
    return error;
  }

  Result<git_oid> Resolve(const std::string& rev) const {
    if (rev.empty()) return InvalidArgument("empty git revision");
    git_object* raw = nullptr;
    if (const int rc = git_revparse_single(&raw, repo.get(), rev.c_str()); rc < 0) {
      auto error = GitError(rc, "cannot resolve git revision '" + rev + "'");
      if (rc == GIT_ENOTFOUND && MayNameUnfetchedCommit(rev) && IsShallow()) {
        error.value().message += std::string(" (") + kShallowHint + ")";
      }
      return error;
    }
    internal::ObjectPtr object(raw);
    git_object* peeled = nullptr;
    if (const int rc = git_object_peel(&peeled, object.get(), GIT_OBJECT_COMMIT); rc < 0) {
      return GitError(rc, "git revision '" + rev + "' does not name a commit");
    }
    const git_oid oid = *git_object_id(peeled);
    git_object_free(peeled);
    return oid;
  }

  Result<CommitPtr> Lookup(const git_oid& oid) const {
    git_commit* raw = nullptr;
    if (const int rc = git_commit_lookup(&raw, repo.get(), &oid); rc < 0) {
      return WalkError(rc, "cannot read commit " + OidToHex(oid));
    }
    return CommitPtr(raw);
  }

  Result<CommitInfo> Describe(const git_oid& oid) const {
    auto commit = Lookup(oid);
    if (!commit) return tl::unexpected(commit.error());
    git_commit* c = commit->get();
    CommitInfo info;
    info.sha = OidToHex(oid);
    const unsigned int parent_count = git_commit_parentcount(c);
    for (unsigned int i = 0; i < parent_count; ++i) {
      info.parents.push_back(OidToHex(*git_commit_parent_id(c, i)));
    }
    const git_signature* author = git_commit_author(c);
    info.author = author->name != nullptr ? author->name : "";
    info.author_email = author->email != nullptr ? author->email : "";
    info.time = FormatTime(author->when);
    // git_commit_summary is git's subject: the first paragraph, lines joined by spaces.
    const char* summary = git_commit_summary(c);
    info.subject = summary != nullptr ? summary : "";
    return info;
  }

  Result<bool> IsAncestor(const git_oid& ancestor, const git_oid& descendant) const {
    if (git_oid_equal(&ancestor, &descendant)) return true;
    internal::ShallowWalkLeakPause pause(IsShallow());
    const int rc = git_graph_descendant_of(repo.get(), &descendant, &ancestor);
    if (rc < 0) {
      return WalkError(rc, "cannot tell whether " + OidToHex(ancestor) + " is an ancestor of " +
                               OidToHex(descendant));
    }
    return rc == 1;
  }

  // Peeled commit of refs/heads/<name> or refs/remotes/<name>; nullopt when there is none.
  Result<std::optional<git_oid>> LookupBranch(const std::string& name, git_branch_t type) const {
    git_reference* raw = nullptr;
    const int rc = git_branch_lookup(&raw, repo.get(), name.c_str(), type);
    if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC) return std::nullopt;
    if (rc < 0) return GitError(rc, "cannot look up branch '" + name + "'");
    internal::ReferencePtr ref(raw);
    git_object* peeled = nullptr;
    if (const int peel_rc = git_reference_peel(&peeled, ref.get(), GIT_OBJECT_COMMIT);
        peel_rc < 0) {
      return GitError(peel_rc, "branch '" + name + "' does not point at a commit");
    }
    const git_oid oid = *git_object_id(peeled);
    git_object_free(peeled);
    return oid;
  }

  Result<git_oid> ResolveTarget(const std::string& target) const {
    if (target.empty()) return InvalidArgument("empty target branch");
    std::vector<std::string> candidates = {target, "origin/" + target};
    auto remotes = internal::RemoteNames(repo.get());
    if (!remotes) return tl::unexpected(remotes.error());
    for (const auto& remote : *remotes) {
      if (remote != "origin") candidates.push_back(remote + "/" + target);
    }

    for (size_t i = 0; i < candidates.size(); ++i) {
      auto found = LookupBranch(candidates[i], i == 0 ? GIT_BRANCH_LOCAL : GIT_BRANCH_REMOTE);
      if (!found) return tl::unexpected(found.error());
      if (*found) return **found;
    }
    auto as_revision = Resolve(target);
    if (!as_revision) {
      std::string tried = "local branch '" + target + "'";
      for (size_t i = 1; i < candidates.size(); ++i) tried += ", '" + candidates[i] + "'";
      return MakeError(ErrorCode::kNotFound,
                       "target branch '" + target + "' not found (tried " + tried +
                           " and a revision: " + as_revision.error().message + ")");
    }
    return *as_revision;
  }
};

Repository::Repository(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Repository::Repository(Repository&&) noexcept = default;
Repository& Repository::operator=(Repository&&) noexcept = default;
Repository::~Repository() = default;

Result<Repository> Repository::Open(const std::string& path) {
  internal::EnsureLibgit2Initialized();
  if (path.empty()) return InvalidArgument("empty repository path");
  git_repository* raw = nullptr;
  if (const int rc = git_repository_open_ext(&raw, path.c_str(), 0, nullptr); rc < 0) {
    if (rc == GIT_ENOTFOUND) {
      return MakeError(ErrorCode::kNotFound, "not a git repository (nor any parent directory): " +
                                                 path + ": " + LastMessage());
    }
    return GitError(rc, "cannot open git repository at " + path);
  }
  auto impl = std::make_unique<Impl>();
  impl->repo.reset(raw);
  if (const char* workdir = git_repository_workdir(raw); workdir != nullptr) {
    impl->workdir = workdir;
    while (impl->workdir.size() > 1 && impl->workdir.back() == '/') impl->workdir.pop_back();
  }
  return Repository(std::move(impl));
}

std::string Repository::WorkDir() const { return impl_ ? impl_->workdir : std::string(); }

Result<std::string> Repository::ResolveSha(const std::string& rev) const {
  if (!impl_) return MovedFrom();
  return impl_->Resolve(rev).map([](const git_oid& oid) { return OidToHex(oid); });
}

Result<CommitInfo> Repository::Describe(const std::string& rev) const {
  if (!impl_) return MovedFrom();
  return impl_->Resolve(rev).and_then([&](const git_oid& oid) { return impl_->Describe(oid); });
}

Result<std::string> Repository::CurrentBranch() const {
  if (!impl_) return MovedFrom();
  git_reference* raw = nullptr;
  // HEAD itself rather than git_repository_head, so that an unborn branch still has its name.
  if (const int rc = git_reference_lookup(&raw, impl_->repo.get(), "HEAD"); rc < 0) {
    return GitError(rc, "cannot read HEAD");
  }
  internal::ReferencePtr head(raw);
  if (git_reference_type(head.get()) != GIT_REFERENCE_SYMBOLIC) return std::string();
  const std::string target = git_reference_symbolic_target(head.get());
  const std::string prefix = "refs/heads/";
  return target.rfind(prefix, 0) == 0 ? target.substr(prefix.size()) : target;
}

Result<std::string> Repository::MergeBase(const std::string& rev, const std::string& target) const {
  if (!impl_) return MovedFrom();
  auto rev_oid = impl_->Resolve(rev);
  if (!rev_oid) return tl::unexpected(rev_oid.error());
  auto target_oid = impl_->ResolveTarget(target);
  if (!target_oid) return tl::unexpected(target_oid.error());
  const bool shallow = impl_->IsShallow();
  internal::ShallowWalkLeakPause pause(shallow);
  git_oid base;
  if (const int rc = git_merge_base(&base, impl_->repo.get(), &*rev_oid, &*target_oid); rc < 0) {
    const std::string context = "no merge-base of '" + rev + "' and target '" + target + "'";
    if (rc == GIT_ENOTFOUND && !shallow) {
      return MakeError(ErrorCode::kNotFound, context + ": the histories share no commit");
    }
    return impl_->WalkError(rc, context);
  }
  return OidToHex(base);
}

Result<std::vector<std::string>> Repository::FirstParentChain(const std::string& from, size_t limit,
                                                              const std::string& stop_at) const {
  if (!impl_) return MovedFrom();
  std::vector<std::string> chain;
  auto from_oid = impl_->Resolve(from);
  if (!from_oid) return tl::unexpected(from_oid.error());
  std::optional<git_oid> stop;
  if (!stop_at.empty()) {
    auto stop_oid = impl_->Resolve(stop_at);
    if (!stop_oid) return tl::unexpected(stop_oid.error());
    stop = *stop_oid;
  }
  if (limit == 0) return chain;
  auto commit = impl_->Lookup(*from_oid);
  if (!commit) return tl::unexpected(commit.error());
  CommitPtr current = std::move(*commit);
  while (true) {
    const git_oid* id = git_commit_id(current.get());
    chain.push_back(OidToHex(*id));
    if (chain.size() >= limit || (stop && git_oid_equal(id, &*stop))) break;
    if (git_commit_parentcount(current.get()) == 0) break;
    git_commit* parent = nullptr;
    const int rc = git_commit_parent(&parent, current.get(), 0);
    if (rc == GIT_ENOTFOUND) break;  // the shallow boundary: what we have is all there is
    if (rc < 0) return impl_->WalkError(rc, "cannot read the first parent of " + chain.back());
    current.reset(parent);
  }
  return chain;
}

Result<std::vector<CommitInfo>> Repository::ListRange(const std::string& good,
                                                      const std::string& bad,
                                                      bool first_parent) const {
  if (!impl_) return MovedFrom();
  auto good_oid = impl_->Resolve(good);
  if (!good_oid) return tl::unexpected(good_oid.error());
  auto bad_oid = impl_->Resolve(bad);
  if (!bad_oid) return tl::unexpected(bad_oid.error());
  if (git_oid_equal(&*good_oid, &*bad_oid)) return std::vector<CommitInfo>();
  auto ancestor = impl_->IsAncestor(*good_oid, *bad_oid);
  if (!ancestor) return tl::unexpected(ancestor.error());
  if (!*ancestor) {
    return InvalidArgument("good '" + good + "' (" + OidToHex(*good_oid) +
                           ") is not an ancestor of bad '" + bad + "' (" + OidToHex(*bad_oid) +
                           ")");
  }

  // Everything reachable from bad and not from good, parents before children.
  internal::ShallowWalkLeakPause pause(impl_->IsShallow());
  git_revwalk* raw_walk = nullptr;
  if (const int rc = git_revwalk_new(&raw_walk, impl_->repo.get()); rc < 0) {
    return GitError(rc, "cannot start a revision walk");
  }
  internal::RevwalkPtr walk(raw_walk);
  git_revwalk_sorting(walk.get(), GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME | GIT_SORT_REVERSE);
  const std::string context = "cannot list " + good + ".." + bad;
  if (const int rc = git_revwalk_push(walk.get(), &*bad_oid); rc < 0) {
    return impl_->WalkError(rc, context);
  }
  if (const int rc = git_revwalk_hide(walk.get(), &*good_oid); rc < 0) {
    return impl_->WalkError(rc, context);
  }
  std::vector<git_oid> range;
  git_oid oid;
  int rc = 0;
  while ((rc = git_revwalk_next(&oid, walk.get())) == 0) range.push_back(oid);
  if (rc != GIT_ITEROVER) return impl_->WalkError(rc, context);

  if (first_parent) {
    // bad's first-parent line stays inside the range until it meets history reachable from
    // good; keep the range's order, restricted to that line.
    std::unordered_set<std::string> in_range;
    for (const auto& id : range) in_range.insert(OidToHex(id));
    std::unordered_set<std::string> line;
    git_oid current = *bad_oid;
    while (in_range.count(OidToHex(current)) != 0) {
      line.insert(OidToHex(current));
      auto commit = impl_->Lookup(current);
      if (!commit) return tl::unexpected(commit.error());
      if (git_commit_parentcount(commit->get()) == 0) break;
      current = *git_commit_parent_id(commit->get(), 0);
    }
    range.erase(std::remove_if(range.begin(), range.end(),
                               [&](const git_oid& id) { return line.count(OidToHex(id)) == 0; }),
                range.end());
  }

  std::vector<CommitInfo> commits;
  commits.reserve(range.size());
  for (const auto& id : range) {
    auto info = impl_->Describe(id);
    if (!info) return tl::unexpected(info.error());
    commits.push_back(std::move(*info));
  }
  return commits;
}

Result<bool> Repository::IsAncestor(const std::string& ancestor,
                                    const std::string& descendant) const {
  if (!impl_) return MovedFrom();
  auto ancestor_oid = impl_->Resolve(ancestor);
  if (!ancestor_oid) return tl::unexpected(ancestor_oid.error());
  auto descendant_oid = impl_->Resolve(descendant);
  if (!descendant_oid) return tl::unexpected(descendant_oid.error());
  return impl_->IsAncestor(*ancestor_oid, *descendant_oid);
}

Result<void> Repository::ExportTree(const std::string& rev, const std::string& dir) const {
  if (!impl_) return MovedFrom();
  if (dir.empty()) return InvalidArgument("empty export directory");
  auto oid = impl_->Resolve(rev);
  if (!oid) return tl::unexpected(oid.error());
  auto commit = impl_->Lookup(*oid);
  if (!commit) return tl::unexpected(commit.error());
  git_tree* raw_tree = nullptr;
  if (const int rc = git_commit_tree(&raw_tree, commit->get()); rc < 0) {
    return impl_->WalkError(rc, "cannot read the tree of " + rev);
  }
  internal::TreePtr tree(raw_tree);

  const std::filesystem::path target(dir);
  std::error_code ec;
  const bool existed = std::filesystem::exists(target, ec);
  if (existed) {
    if (!std::filesystem::is_directory(target, ec) || !std::filesystem::is_empty(target, ec)) {
      return InvalidArgument("export directory '" + dir + "' exists and is not an empty directory");
    }
  } else if (std::filesystem::create_directories(target, ec); ec) {
    return MakeError(ErrorCode::kInternal,
                     "cannot create export directory '" + dir + "': " + ec.message());
  }
  auto written = internal::WriteTree(impl_->repo.get(), tree.get(), *oid, target);
  if (!written) {
    // No half-written tree for a caller to mistake for the commit.
    if (existed) {
      std::error_code remove_ec;
      for (std::filesystem::directory_iterator it(target, ec), end; !ec && it != end;
           it.increment(ec)) {
        std::filesystem::remove_all(it->path(), remove_ec);
      }
    } else {
      std::filesystem::remove_all(target, ec);
    }
  }
  return written;
}

}  // namespace perfwarden::git
