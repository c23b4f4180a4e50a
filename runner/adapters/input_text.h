// SPDX-License-Identifier: Apache-2.0
// The whole text of an input file, or of standard input when the path is "-", for the readers
// of Google Benchmark JSON and of analyze's series: one place for how a missing file, a folder
// or an unreadable one is reported ("PATH: cannot read: no such file").
#pragma once

#include <filesystem>
#include <string>

#include "core/result.h"

namespace perfwarden::adapters {

struct InputText {
  std::string source;  // the path as given, or "<stdin>"
  std::string text;
};

// kInvalidArgument naming the source when the file is missing, a directory or unreadable.
Result<InputText> ReadInputText(const std::filesystem::path& path);

}  // namespace perfwarden::adapters
