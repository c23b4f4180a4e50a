// What the server benchmarks (ingest_bench, verdict_bench) share: a data directory for the
// embedded PostgreSQL that the postgres system user can use when the bench runs as root.
#pragma once

#include <pwd.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace perfgate::bench {

// A new directory under the temp directory, named from `prefix`; "" when it cannot be made.
inline std::filesystem::path MakeServerDataDir(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (mkdtemp(pattern.data()) == nullptr) return {};
  if (geteuid() == 0) {
    if (const passwd* pg = getpwnam("postgres"); pg != nullptr) {
      if (chown(pattern.c_str(), pg->pw_uid, pg->pw_gid) != 0) return {};
    }
  }
  return pattern;
}

}  // namespace perfgate::bench
