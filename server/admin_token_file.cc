#include "server/admin_token_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace perfgate::server {
namespace {

tl::unexpected<Error> Failed(const std::string& what, const std::string& path, int error) {
  return MakeError(ErrorCode::kUnavailable,
                   "cannot " + what + " " + path + ": " + std::strerror(error), "data_dir");
}

}  // namespace

Result<std::string> WriteAdminTokenFile(const std::string& dir, std::string_view token) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path folder = fs::absolute(dir.empty() ? fs::path(".") : fs::path(dir), ec);
  if (ec) return Failed("resolve", dir, ec.value());
  if (!fs::exists(folder, ec)) {
    fs::create_directories(folder, ec);
    if (ec) return Failed("create", folder.string(), ec.value());
    fs::permissions(folder, fs::perms::owner_all, ec);
  }
  const std::string path = (folder / kAdminTokenFileName).string();
  // A new inode each time: an older file (whatever its mode or links) is not written through.
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return Failed("replace", path, errno);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Failed("create", path, errno);
  std::string text(token);
  text += '\n';
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
  // umask cannot widen 0600, but a narrower umask could leave the owner unable to read it.
  if (::fchmod(fd, 0600) != 0 || ::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    return Failed("write", path, error);
  }
  if (::close(fd) != 0) return Failed("write", path, errno);
  return path;
}

}  // namespace perfgate::server
