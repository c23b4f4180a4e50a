// SPDX-License-Identifier: Apache-2.0
// A temporary directory for the runner's work trees (confirmation, bisect), made under a parent
// that is created when missing, and removed with everything in it when the object goes.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "core/result.h"

namespace perfwarden::run {

class TempDir {
 public:
  // `parent`/<prefix> plus six random characters (mkdtemp's template); kUnavailable when it
  // cannot be made.
  static Result<TempDir> Make(const std::filesystem::path& parent, const std::string& prefix) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    std::string pattern = (parent / (prefix + "XXXXXX")).string();
    if (mkdtemp(pattern.data()) == nullptr) {
      return MakeError(ErrorCode::kUnavailable, "cannot make a directory under " + parent.string());
    }
    TempDir dir;
    dir.path_ = pattern;
    return dir;
  }
  TempDir() = default;
  TempDir(TempDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  TempDir& operator=(TempDir&&) = delete;
  TempDir(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace perfwarden::run
