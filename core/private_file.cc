// SPDX-License-Identifier: Apache-2.0
#include "core/private_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace perfwarden {
namespace {

tl::unexpected<Error> Failed(const std::string& what, const std::filesystem::path& path,
                             int error) {
  return MakeError(ErrorCode::kUnavailable,
                   "cannot " + what + " " + path.string() + ": " + std::strerror(error));
}

}  // namespace

Result<void> WritePrivateFile(const std::filesystem::path& path, std::string_view text,
                              std::optional<std::pair<uid_t, gid_t>> owner) {
  // A new inode each time: an older file (whatever its mode or links) is not written through.
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return Failed("replace", path, errno);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Failed("create", path, errno);
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      ::close(fd);
      ::unlink(path.c_str());
      return Failed("write", path, error);
    }
    written += static_cast<size_t>(n);
  }
  // umask cannot widen 0600, but a narrower one could leave the owner unable to read it.
  const bool ok = ::fchmod(fd, 0600) == 0 &&
                  (!owner || ::fchown(fd, owner->first, owner->second) == 0) && ::fsync(fd) == 0;
  const int error = errno;
  if (::close(fd) != 0 || !ok) return Failed("write", path, ok ? errno : error);
  return {};
}

}  // namespace perfwarden
