// SPDX-License-Identifier: Apache-2.0
#include "runner/git/git_internal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <set>
#include <string_view>
#include <system_error>

#if defined(__SANITIZE_ADDRESS__)
#define PERFWARDEN_GIT_HAS_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define PERFWARDEN_GIT_HAS_LSAN 1
#endif
#endif
#ifdef PERFWARDEN_GIT_HAS_LSAN
#include <sanitizer/lsan_interface.h>
#endif

namespace perfwarden::git::internal {
namespace {

std::string ErrnoText(int err) { return std::generic_category().message(err); }

tl::unexpected<Error> IoError(const std::string& what, const std::filesystem::path& path, int err) {
  return MakeError(ErrorCode::kInternal, what + " " + path.string() + ": " + ErrnoText(err));
}

// A git tree may be crafted; these names would write outside the export directory or plant a
// repository inside it (git's own checkout refuses the same ones).
bool IsSafeEntryName(std::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos) {
    return false;
  }
  if (name.size() == 4) {
    std::string lower(name);
    for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (lower == ".git") return false;
  }
  return true;
}

// O_EXCL|O_NOFOLLOW: a duplicate entry or a symlink planted by an earlier entry is an error
// rather than a write through the link.
Result<void> WriteFile(const std::filesystem::path& path, const char* data, size_t size,
                       bool executable) {
  const mode_t mode = executable ? 0777 : 0666;  // narrowed by the umask, as git does
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) return IoError("cannot create", path, errno);
  size_t written = 0;
  while (written < size) {
    const ssize_t n = ::write(fd, data + written, size - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return IoError("cannot write", path, err);
    }
    written += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) return IoError("cannot write", path, errno);
  return {};
}

struct Exporter {
  git_repository* repo;
  git_oid commit_id;

  Result<void> WriteBlob(const git_tree_entry* entry, const std::filesystem::path& path,
                         const std::string& repo_path, git_filemode_t mode) {
    git_blob* raw_blob = nullptr;
    if (const int rc = git_blob_lookup(&raw_blob, repo, git_tree_entry_id(entry)); rc < 0) {
      return GitError(rc, "cannot read blob of " + repo_path);
    }
    BlobPtr blob(raw_blob);
    if (mode == GIT_FILEMODE_LINK) {
      const std::string target(static_cast<const char*>(git_blob_rawcontent(blob.get())),
                               static_cast<size_t>(git_blob_rawsize(blob.get())));
      if (target.empty() || target.find('\0') != std::string::npos) {
        return MakeError(ErrorCode::kInvalidArgument, "invalid symlink target in " + repo_path);
      }
      if (::symlink(target.c_str(), path.c_str()) != 0) {
        return IoError("cannot create symlink", path, errno);
      }
      return {};
    }
    git_blob_filter_options options;
    if (const int rc = git_blob_filter_options_init(&options, GIT_BLOB_FILTER_OPTIONS_VERSION);
        rc < 0) {
      return GitError(rc, "cannot set up filters for " + repo_path);
    }
    options.flags |= GIT_BLOB_FILTER_ATTRIBUTES_FROM_COMMIT;
    git_oid_cpy(&options.attr_commit_id, &commit_id);
    git_buf filtered = GIT_BUF_INIT;
    if (const int rc = git_blob_filter(&filtered, blob.get(), repo_path.c_str(), &options);
        rc < 0) {
      return GitError(rc, "cannot filter " + repo_path);
    }
    auto written =
        WriteFile(path, filtered.ptr, filtered.size, mode == GIT_FILEMODE_BLOB_EXECUTABLE);
    git_buf_dispose(&filtered);
    return written;
  }

  Result<void> WriteEntries(const git_tree* tree, const std::filesystem::path& dir,
                            const std::string& prefix) {
    const size_t count = git_tree_entrycount(tree);
    for (size_t i = 0; i < count; ++i) {
      const git_tree_entry* entry = git_tree_entry_byindex(tree, i);
      const std::string name = git_tree_entry_name(entry);
      const std::string repo_path = prefix + name;
      if (!IsSafeEntryName(name)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "refusing to export unsafe tree entry '" + repo_path + "'");
      }
      const std::filesystem::path path = dir / name;
      const git_filemode_t mode = git_tree_entry_filemode(entry);
      switch (mode) {
        case GIT_FILEMODE_TREE: {
          if (::mkdir(path.c_str(), 0777) != 0) return IoError("cannot create", path, errno);
          git_tree* raw_subtree = nullptr;
          if (const int rc = git_tree_lookup(&raw_subtree, repo, git_tree_entry_id(entry));
              rc < 0) {
            return GitError(rc, "cannot read tree " + repo_path);
          }
          TreePtr subtree(raw_subtree);
          if (auto done = WriteEntries(subtree.get(), path, repo_path + "/"); !done) return done;
          break;
        }
        case GIT_FILEMODE_BLOB:
        case GIT_FILEMODE_BLOB_EXECUTABLE:
        case GIT_FILEMODE_LINK:
          if (auto done = WriteBlob(entry, path, repo_path, mode); !done) return done;
          break;
        case GIT_FILEMODE_COMMIT:  // a submodule: left empty, its commit is in another repo
          if (::mkdir(path.c_str(), 0777) != 0) return IoError("cannot create", path, errno);
          break;
        default:
          return MakeError(ErrorCode::kInternal, "unsupported file mode " +
                                                     std::to_string(static_cast<int>(mode)) +
                                                     " of " + repo_path);
      }
    }
    return {};
  }
};

}  // namespace

void EnsureLibgit2Initialized() {
  static const int init_count = git_libgit2_init();
  (void)init_count;
}

std::string LastMessage() {
  const git_error* error = git_error_last();
  if (error == nullptr || error->message == nullptr) return "unknown libgit2 error";
  return error->message;
}

tl::unexpected<Error> GitError(int code, const std::string& context) {
  std::string message = context + ": " + LastMessage();
  switch (code) {
    case GIT_ENOTFOUND:
      return MakeError(ErrorCode::kNotFound, std::move(message));
    case GIT_EAMBIGUOUS:
    case GIT_EINVALIDSPEC:
    case GIT_EINVALID:
    case GIT_EPEEL:
      return MakeError(ErrorCode::kInvalidArgument, std::move(message));
    case GIT_EOWNER:
      // Typical in CI containers, where the checkout belongs to another uid.
      return MakeError(ErrorCode::kPermissionDenied,
                       message +
                           " (if the checkout is trusted: git config --global --add "
                           "safe.directory <path>)");
    default:
      return MakeError(ErrorCode::kInternal, std::move(message));
  }
}

ShallowWalkLeakPause::ShallowWalkLeakPause(bool shallow) : active_(shallow) {
#ifdef PERFWARDEN_GIT_HAS_LSAN
  if (active_) __lsan_disable();
#endif
}

ShallowWalkLeakPause::~ShallowWalkLeakPause() {
#ifdef PERFWARDEN_GIT_HAS_LSAN
  if (active_) __lsan_enable();
#else
  static_cast<void>(active_);
#endif
}

Result<std::vector<std::string>> RemoteNames(git_repository* repo) {
  git_config* raw_config = nullptr;
  if (const int rc = git_repository_config_snapshot(&raw_config, repo); rc < 0) {
    return GitError(rc, "cannot read the repository's git config");
  }
  Handle<git_config, git_config_free> config(raw_config);
  git_config_iterator* raw_iterator = nullptr;
  if (const int rc = git_config_iterator_new(&raw_iterator, config.get()); rc < 0) {
    return GitError(rc, "cannot read the repository's git config");
  }
  Handle<git_config_iterator, git_config_iterator_free> iterator(raw_iterator);
  // Entry names come normalised: "remote.<name as written>.url" (or .pushurl).
  std::set<std::string> names;
  git_config_entry* entry = nullptr;
  int rc = 0;
  while ((rc = git_config_next(&entry, iterator.get())) == 0) {
    const std::string_view key = entry->name;
    const std::string_view prefix = "remote.";
    for (const std::string_view suffix : {std::string_view(".url"), std::string_view(".pushurl")}) {
      if (key.size() > prefix.size() + suffix.size() && key.substr(0, prefix.size()) == prefix &&
          key.substr(key.size() - suffix.size()) == suffix) {
        names.emplace(key.substr(prefix.size(), key.size() - prefix.size() - suffix.size()));
        break;
      }
    }
  }
  if (rc != GIT_ITEROVER) return GitError(rc, "cannot read the repository's git config");
  return std::vector<std::string>(names.begin(), names.end());
}

std::string OidToHex(const git_oid& oid) {
  char hex[GIT_OID_HEXSZ + 1];
  git_oid_tostr(hex, sizeof(hex), &oid);
  return hex;
}

Result<void> WriteTree(git_repository* repo, const git_tree* tree, const git_oid& commit_id,
                       const std::filesystem::path& dir) {
  Exporter exporter{repo, commit_id};
  return exporter.WriteEntries(tree, dir, "");
}

}  // namespace perfwarden::git::internal
