// SPDX-License-Identifier: Apache-2.0
#include "server/admin_token_file.h"

#include <filesystem>
#include <string>
#include <system_error>

#include "core/private_file.h"

namespace perfwarden::server {

Result<std::string> WriteAdminTokenFile(const std::string& dir, std::string_view token) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path folder = fs::absolute(dir.empty() ? fs::path(".") : fs::path(dir), ec);
  if (!ec && !fs::exists(folder, ec)) {
    fs::create_directories(folder, ec);
    if (!ec) fs::permissions(folder, fs::perms::owner_all, ec);
  }
  if (ec) {
    return MakeError(ErrorCode::kUnavailable, "cannot create " + dir + ": " + ec.message(),
                     "data_dir");
  }
  const fs::path path = folder / kAdminTokenFileName;
  if (auto written = WritePrivateFile(path, std::string(token) + "\n"); !written) {
    Error error = written.error();
    error.field = "data_dir";
    return tl::unexpected(error);
  }
  return path.string();
}

}  // namespace perfwarden::server
