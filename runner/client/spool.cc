// SPDX-License-Identifier: Apache-2.0
#include "runner/client/spool.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

namespace perfwarden::client {
namespace {

namespace fs = std::filesystem;

constexpr char kTempPrefix[] = ".tmp-";
constexpr char kSuffix[] = ".json";
constexpr char kRejectedDir[] = "rejected";

tl::unexpected<Error> IoError(const std::string& what, const fs::path& path, int error_number) {
  return MakeError(ErrorCode::kUnavailable,
                   "spool: " + what + " " + path.string() + ": " + std::strerror(error_number));
}

tl::unexpected<Error> IoError(const std::string& what, const fs::path& path,
                              const std::error_code& error) {
  return MakeError(ErrorCode::kUnavailable,
                   "spool: " + what + " " + path.string() + ": " + error.message());
}

// Makes a rename or unlink in `dir` durable (the entry itself lives in the directory).
Result<void> FsyncDir(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open directory", dir, errno);
  const int synced = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  if (synced != 0) return IoError("cannot fsync directory", dir, saved);
  return {};
}

Result<void> WriteAll(int fd, const std::string& text, const fs::path& path) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError("cannot write", path, errno);
    done += static_cast<size_t>(n);
  }
  return {};
}

// Writes `dir/name` atomically: a uniquely named temp file in the same directory (so rename is
// atomic and cannot cross file systems), fsync, rename over the target, fsync of the directory.
Result<fs::path> WriteAtomically(const fs::path& dir, const std::string& name,
                                 const std::string& text) {
  static std::atomic<uint64_t> counter{0};
  const fs::path target = dir / name;
  fs::path temp;
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 16; ++attempt) {
    temp = dir / (std::string(kTempPrefix) + name + "." + std::to_string(::getpid()) + "." +
                  std::to_string(counter.fetch_add(1)));
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) return IoError("cannot create", temp, errno);
  }
  if (fd < 0) return IoError("cannot create", temp, EEXIST);
  auto fail = [&](tl::unexpected<Error> error) -> tl::unexpected<Error> {
    if (fd >= 0) ::close(fd);
    ::unlink(temp.c_str());
    return error;
  };
  if (auto written = WriteAll(fd, text, temp); !written)
    return fail(tl::unexpected(written.error()));
  if (::fsync(fd) != 0) return fail(IoError("cannot fsync", temp, errno));
  const int closed = ::close(fd);
  fd = -1;
  if (closed != 0) return fail(IoError("cannot close", temp, errno));
  if (::rename(temp.c_str(), target.c_str()) != 0)
    return fail(IoError("cannot rename", temp, errno));
  if (auto synced = FsyncDir(dir); !synced) return tl::unexpected(synced.error());
  return target;
}

// The <run_id>.json files of `dir`, oldest first; an absent directory is an empty list.
Result<std::vector<SpooledRun>> ListJson(const fs::path& dir) {
  std::vector<SpooledRun> runs;
  std::error_code error;
  fs::directory_iterator it(dir, error);
  if (error == std::errc::no_such_file_or_directory) return runs;
  if (error) return IoError("cannot list", dir, error);
  for (; it != fs::directory_iterator(); it.increment(error)) {
    if (error) return IoError("cannot list", dir, error);
    const std::string name = it->path().filename().string();
    if (!name.ends_with(kSuffix)) continue;
    const std::string run_id = name.substr(0, name.size() - std::strlen(kSuffix));
    if (!IsValidSpoolRunId(run_id)) continue;  // temp files start with '.', which is not valid
    std::error_code stat_error;
    if (!it->is_regular_file(stat_error)) continue;
    const fs::file_time_type mtime = fs::last_write_time(it->path(), stat_error);
    if (stat_error) continue;  // removed meanwhile by another process
    runs.push_back(SpooledRun{run_id, it->path(), mtime});
  }
  std::sort(runs.begin(), runs.end(), [](const SpooledRun& a, const SpooledRun& b) {
    return a.mtime != b.mtime ? a.mtime < b.mtime : a.run_id < b.run_id;
  });
  return runs;
}

}  // namespace

bool IsValidSpoolRunId(const std::string& run_id) {
  if (run_id.empty() || run_id.size() > 128) return false;
  return std::all_of(run_id.begin(), run_id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
  });
}

SpoolLock::SpoolLock(SpoolLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

SpoolLock& SpoolLock::operator=(SpoolLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

SpoolLock::~SpoolLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

Result<Spool> Spool::Open(fs::path dir) {
  std::error_code error;
  if (!fs::exists(dir, error)) {
    if (error) return IoError("cannot inspect", dir, error);
    fs::create_directories(dir, error);
    if (error) return IoError("cannot create", dir, error);
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, error);
    if (error) return IoError("cannot restrict permissions of", dir, error);
  } else if (!fs::is_directory(dir, error)) {
    return MakeError(ErrorCode::kUnavailable, "spool: " + dir.string() + " is not a directory");
  }
  Spool spool(std::move(dir));
  if (auto cleaned = spool.CleanStaleTemp(); !cleaned) return tl::unexpected(cleaned.error());
  return spool;
}

Result<std::string> Spool::Put(const std::string& run_id, const std::string& upload_json) {
  if (!IsValidSpoolRunId(run_id)) {
    return InvalidArgument("not a valid spool run id (1-128 of A-Z a-z 0-9 - _)", "run_id");
  }
  auto path = WriteAtomically(dir_, run_id + kSuffix, upload_json);
  if (!path) return tl::unexpected(path.error());
  return path->string();
}

Result<std::vector<SpooledRun>> Spool::List() const { return ListJson(dir_); }

Result<std::vector<SpooledRun>> Spool::ListRejected() const {
  return ListJson(dir_ / kRejectedDir);
}

Result<std::string> Spool::Read(const std::string& run_id) const {
  if (!IsValidSpoolRunId(run_id)) return InvalidArgument("not a valid spool run id", "run_id");
  const fs::path path = dir_ / (run_id + kSuffix);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    return MakeError(ErrorCode::kNotFound, "spool: run " + run_id + " is not queued");
  }
  if (fd < 0) return IoError("cannot open", path, errno);
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int saved = errno;
      ::close(fd);
      return IoError("cannot read", path, saved);
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

Result<void> Spool::Remove(const std::string& run_id) {
  if (!IsValidSpoolRunId(run_id)) return InvalidArgument("not a valid spool run id", "run_id");
  const fs::path path = dir_ / (run_id + kSuffix);
  if (::unlink(path.c_str()) != 0) {
    if (errno == ENOENT) {
      return MakeError(ErrorCode::kNotFound, "spool: run " + run_id + " is not queued");
    }
    return IoError("cannot remove", path, errno);
  }
  return FsyncDir(dir_);
}

Result<void> Spool::MarkRejected(const std::string& run_id, const std::string& reason) {
  if (!IsValidSpoolRunId(run_id)) return InvalidArgument("not a valid spool run id", "run_id");
  const fs::path queued = dir_ / (run_id + kSuffix);
  struct stat info {};
  if (::stat(queued.c_str(), &info) != 0) {
    if (errno == ENOENT) {
      return MakeError(ErrorCode::kNotFound, "spool: run " + run_id + " is not queued");
    }
    return IoError("cannot inspect", queued, errno);
  }
  const fs::path rejected = dir_ / kRejectedDir;
  if (::mkdir(rejected.c_str(), 0700) != 0 && errno != EEXIST) {
    return IoError("cannot create", rejected, errno);
  }
  std::string text = reason;
  if (text.empty() || text.back() != '\n') text += '\n';
  if (auto written = WriteAtomically(rejected, run_id + ".error.txt", text); !written) {
    return tl::unexpected(written.error());
  }
  const fs::path target = rejected / (run_id + kSuffix);
  if (::rename(queued.c_str(), target.c_str()) != 0) return IoError("cannot move", queued, errno);
  if (auto synced = FsyncDir(rejected); !synced) return synced;
  return FsyncDir(dir_);
}

Result<size_t> Spool::CleanStaleTemp(std::chrono::seconds max_age) {
  std::error_code error;
  fs::directory_iterator it(dir_, error);
  if (error) return IoError("cannot list", dir_, error);
  const fs::file_time_type cutoff = fs::file_time_type::clock::now() - max_age;
  size_t removed = 0;
  for (; it != fs::directory_iterator(); it.increment(error)) {
    if (error) return IoError("cannot list", dir_, error);
    if (it->path().filename().string().rfind(kTempPrefix, 0) != 0) continue;
    std::error_code stat_error;
    if (!it->is_regular_file(stat_error)) continue;
    const fs::file_time_type mtime = fs::last_write_time(it->path(), stat_error);
    if (stat_error || mtime >= cutoff) continue;  // young: a Put may still be writing it
    if (fs::remove(it->path(), stat_error)) ++removed;
  }
  return removed;
}

Result<SpoolLock> Spool::Lock(std::chrono::milliseconds timeout) const {
  const fs::path path = dir_ / ".lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return IoError("cannot open lock file", path, errno);
  SpoolLock lock(fd);  // closes fd on every error path below
  // flock has no timeout of its own: poll with the non-blocking form until the deadline.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return lock;
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) return IoError("cannot lock", path, errno);
    if (std::chrono::steady_clock::now() >= deadline) {
      return MakeError(ErrorCode::kUnavailable,
                       "spool " + dir_.string() +
                           " is locked by another perfwarden process (waited " +
                           std::to_string(timeout.count()) + " ms)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace perfwarden::client
